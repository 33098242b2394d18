// `multigather ops --format=text|md|json|reference`: the registry rows as text, as docs/cli.md's
// framework-op table, as JSON and as docs/quick_reference.md. Everything here is generated from
// the registry (multigather/registry.hpp); tools/update_docs.sh writes the two documents and
// tests/cli_docs_test.cpp fails when they differ from what this file generates.
#include <algorithm>
#include <string>

#include "op.hpp"

namespace multigather::cli {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? std::string(sep) : "") + parts[i];
  return s;
}

/// Markdown inline code: `text`, with a longer fence when the text holds backticks.
std::string code(std::string_view text) {
  const std::string fence = text.find('`') == std::string_view::npos ? "`" : "``";
  const std::string pad = fence.size() > 1 ? " " : "";
  return fence + pad + std::string(text) + pad + fence;
}

/// A markdown table cell: '|' escaped (also inside code spans, as GitHub requires).
std::string cell(std::string_view text) {
  std::string s;
  for (char c : text) {
    if (c == '|') s += '\\';
    s += c;
  }
  return s;
}

std::string json_string(std::string_view text) {
  std::string s = "\"";
  for (char c : text) {
    switch (c) {
      case '"': s += "\\\""; break;
      case '\\': s += "\\\\"; break;
      case '\n': s += "\\n"; break;
      case '\t': s += "\\t"; break;
      case '\r': s += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static const char* hex = "0123456789abcdef";
          s += "\\u00";
          s += hex[(c >> 4) & 0xf];
          s += hex[c & 0xf];
        } else {
          s += c;
        }
    }
  }
  return s + "\"";
}

/// The class's description (equivalence_classes()), or "" for a class not listed there.
std::string class_description(const std::string& cls) {
  for (const auto& [name, what] : equivalence_classes()) {
    if (name == cls) return what;
  }
  return "";
}

/// The classes in listing order, each with its ops.
std::vector<std::pair<std::string, std::vector<const OpSpec*>>> ops_by_class() {
  std::vector<std::pair<std::string, std::vector<const OpSpec*>>> groups;
  for (const OpSpec* op : ops_in_listing_order()) {
    if (groups.empty() || groups.back().first != op->equivalence_class) {
      groups.emplace_back(op->equivalence_class, std::vector<const OpSpec*>{});
    }
    groups.back().second.push_back(op);
  }
  return groups;
}

/// "int list, required" / "enum: error|clamp|wrap|fill, default `error`" for the reference.
std::string attribute_facts(const OpSpec& op, const AttrSpec& a) {
  std::string s(attr_type_name(a.type));
  if (!a.choices.empty()) {
    std::vector<std::string> choices;
    for (const std::string& c : a.choices) choices.push_back(code(c));
    s += " " + join(choices, " / ");
  }
  if (flag_is_required(op, a)) return s + ", required";
  return s + ", default " + (a.default_text.empty() ? std::string("empty") : code(a.default_text));
}

}  // namespace

std::string ops_text() {
  std::string s;
  for (const OpSpec* op : ops_in_listing_order()) {
    s += op->name + "\n    [" + op->equivalence_class + "] " + op->signature + ": " + op->formula + "\n";
  }
  return s;
}

std::string ops_markdown_table() {
  std::string s = "| class | ops | flags |\n|---|---|---|\n";
  for (const auto& [cls, ops] : ops_by_class()) {
    std::vector<std::string> names, flags;
    for (const OpSpec* op : ops) {
      names.push_back(code(op->name));
      for (const AttrSpec& a : op->attrs) {
        const std::string f = code(flag_of(a.name));
        if (std::find(flags.begin(), flags.end(), f) == flags.end()) flags.push_back(f);
      }
    }
    const std::string what = class_description(cls);
    std::string row = "|";
    for (const std::string& text : {what.empty() ? cls : cls + " (" + what + ")", join(names, ", "), join(flags, ", ")}) {
      row += (text.empty() ? " " : " " + cell(text) + " ") + "|";
    }
    s += row + "\n";
  }
  return s;
}

std::string ops_json() {
  std::string s = "[\n";
  const std::vector<const OpSpec*> ops = ops_in_listing_order();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpSpec& op = *ops[i];
    s += "  {\n";
    s += "    \"name\": " + json_string(op.name) + ",\n";
    s += "    \"family\": " + json_string(op.family) + ",\n";
    s += "    \"class\": " + json_string(op.equivalence_class) + ",\n";
    s += "    \"signature\": " + json_string(op.signature) + ",\n";
    s += "    \"formula\": " + json_string(op.formula) + ",\n";
    s += "    \"source\": " + json_string(op.source) + ",\n";
    s += "    \"input_name\": " + json_string(op.input_name) + ",\n";
    s += "    \"indices_name\": " + json_string(op.indices_name) + ",\n";
    s += "    \"kind\": " + json_string(op.kind == OpKind::kScatter ? "scatter" : "gather") + ",\n";
    if (op.kind == OpKind::kScatter) s += "    \"updates_name\": " + json_string(op.updates_name) + ",\n";
    s += "    \"attributes\": [";
    for (std::size_t j = 0; j < op.attrs.size(); ++j) {
      const AttrSpec& a = op.attrs[j];
      std::vector<std::string> choices;
      for (const std::string& c : a.choices) choices.push_back(json_string(c));
      s += std::string(j ? "," : "") + "\n      {\"name\": " + json_string(a.name) +
           ", \"flag\": " + json_string(flag_of(a.name)) +
           ", \"type\": " + json_string(attr_type_name(a.type)) +
           ", \"default\": " + json_string(a.default_text) +
           ", \"choices\": [" + join(choices, ", ") + "]" +
           ", \"required\": " + (flag_is_required(op, a) ? "true" : "false") +
           ", \"help\": " + json_string(a.help) + "}";
    }
    s += std::string(op.attrs.empty() ? "" : "\n    ") + "],\n";
    s += "    \"rules\": " + json_string(op.rules) + ",\n";
    s += "    \"index_rule\": {\"mode\": " + json_string(index_mode_name(op.index_rule.mode)) +
         ", \"negative_indices\": " + (op.index_rule.negative_indices ? "true" : "false") +
         ", \"attribute\": " + json_string(op.index_rule.attribute) +
         ", \"text\": " + json_string(index_rule_text(op)) + "}\n";
    s += std::string("  }") + (i + 1 < ops.size() ? "," : "") + "\n";
  }
  return s + "]\n";
}

std::string ops_quick_reference() {
  std::string s =
      "# Quick reference: every op\n"
      "\n"
      "<!-- Generated from the op registry by `multigather ops --format=reference`\n"
      "     (tools/update_docs.sh); tests/cli_docs_test.cpp fails when this file differs. -->\n"
      "\n"
      "Every op of `multigather ops`, grouped by the seed's equivalence classes: its signature,\n"
      "its formula, its attributes (the flags of `multigather run OP` and `multigather explain\n"
      "OP`, with their type, choices and default; text values are parsed by the library's one\n"
      "attribute parser: bools `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off` in any case, lists\n"
      "`2,1`, `[2,1]`, `(2, 1)`, and the empty list `--flag=`) and the document it follows.\n"
      "Each op's rules are the framework's shape and dtype constraints; its index rule (negative\n"
      "indices, out of range) is the policy its lowering sets, for the defaults of an attribute\n"
      "that selects one; `multigather explain OP` prints the one a call uses.\n";
  for (const auto& [cls, ops] : ops_by_class()) {
    const std::string what = class_description(cls);
    s += "\n## " + cls + (what.empty() ? "" : ": " + what) + "\n";
    for (const OpSpec* op : ops) {
      s += "\n### " + op->name + "\n\n";
      s += "- signature: " + code(op->signature) + "\n";
      s += "- formula: " + code(op->formula) + "\n";
      s += "- operands: " + code(op->input_name) + ", " + code(op->indices_name) +
           (op->kind == OpKind::kScatter ? ", " + code(op->updates_name) : std::string()) + "\n";
      if (op->attrs.empty()) {
        s += "- attributes: none\n";
      } else {
        s += "- attributes:\n";
        for (const AttrSpec& a : op->attrs) {
          s += "  - " + code(flag_of(a.name)) + " (" + attribute_facts(*op, a) + "): " + a.help + "\n";
        }
      }
      s += "- rules: " + op->rules + "\n";
      s += "- index rule: " + index_rule_text(*op) + "\n";
      s += "- follows: " + op->source + "\n";
    }
  }
  return s;
}

}  // namespace multigather::cli
