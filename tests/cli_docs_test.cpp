// `multigather ops --format=text|md|json|reference` (tools/cli/op_tables.cpp) and the documents
// generated from it: docs/quick_reference.md and the op table in docs/cli.md's "### Framework
// ops" must be exactly what the registry generates today (tools/update_docs.sh rewrites both),
// and the JSON must hold every registry row.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "multigather/ops.hpp"

namespace multigather {
namespace {

struct CliResult {
  int code = -1;
  std::string out, err;
};

CliResult cli_run(std::vector<std::string> args) {
  args.insert(args.begin(), "multigather");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  CliResult r;
  r.code = cli::main(static_cast<int>(argv.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string source_file(const std::string& relative) {
  std::ifstream f(std::string(MULTIGATHER_SOURCE_DIR) + "/" + relative, std::ios::binary);
  EXPECT_TRUE(f.good()) << relative;
  return std::string(std::istreambuf_iterator<char>(f), {});
}

constexpr const char* kRegenerate = "regenerate it: cmake --build build && tools/update_docs.sh build/multigather";

TEST(CliDocs, QuickReferenceIsGeneratedFromTheRegistry) {
  const CliResult r = cli_run({"ops", "--format=reference"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(source_file("docs/quick_reference.md"), r.out)
      << "docs/quick_reference.md differs from `multigather ops --format=reference`; " << kRegenerate;
  for (const OpSpec& op : op_registry()) {
    EXPECT_NE(r.out.find("\n### " + op.name + "\n"), std::string::npos) << op.name;
    EXPECT_NE(r.out.find("- signature: `" + op.signature + "`\n"), std::string::npos) << op.name;
    EXPECT_NE(r.out.find("- follows: " + op.source + "\n"), std::string::npos) << op.name;
  }
}

TEST(CliDocs, ReadmeOpTableIsGeneratedFromTheRegistry) {
  const CliResult r = cli_run({"ops", "--format=md"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string readme = source_file("docs/cli.md");
  const std::size_t section = readme.find("\n### Framework ops\n");
  ASSERT_NE(section, std::string::npos);
  const std::size_t begin = readme.find("\n| class | ops | flags |\n", section);
  ASSERT_NE(begin, std::string::npos) << "no op table under ### Framework ops";
  ASSERT_LT(begin, readme.find("\n### ", section + 1)) << "the op table is not in ### Framework ops";
  // The table: the run of lines that start with '|'.
  std::size_t end = begin + 1;
  while (end < readme.size() && readme[end] == '|') end = readme.find('\n', end) + 1;
  EXPECT_EQ(readme.substr(begin + 1, end - begin - 1), r.out)
      << "docs/cli.md's op table differs from `multigather ops --format=md`; " << kRegenerate;
  // Every op appears once, in one row.
  for (const OpSpec& op : op_registry()) {
    const std::size_t at = r.out.find("`" + op.name + "`");
    ASSERT_NE(at, std::string::npos) << op.name;
    EXPECT_EQ(r.out.find("`" + op.name + "`", at + 1), std::string::npos) << op.name;
  }
}

TEST(CliDocs, JsonHoldsTheRegistryRows) {
  const CliResult r = cli_run({"ops", "--format=json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json rows = nlohmann::json::parse(r.out);
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), op_registry().size());
  for (const nlohmann::json& row : rows) {
    const OpSpec* op = find_op(row.at("name").get<std::string>());
    ASSERT_NE(op, nullptr) << row.dump();
    SCOPED_TRACE(op->name);
    EXPECT_EQ(row.at("family"), op->family);
    EXPECT_EQ(row.at("class"), op->equivalence_class);
    EXPECT_EQ(row.at("signature"), op->signature);
    EXPECT_EQ(row.at("formula"), op->formula);
    EXPECT_EQ(row.at("source"), op->source);
    EXPECT_EQ(row.at("input_name"), op->input_name);
    EXPECT_EQ(row.at("indices_name"), op->indices_name);
    const nlohmann::json& attrs = row.at("attributes");
    ASSERT_EQ(attrs.size(), op->attrs.size());
    for (std::size_t j = 0; j < op->attrs.size(); ++j) {
      const AttrSpec& a = op->attrs[j];
      EXPECT_EQ(attrs[j].at("name"), a.name);
      EXPECT_EQ(attrs[j].at("type"), std::string(attr_type_name(a.type)));
      EXPECT_EQ(attrs[j].at("default"), a.default_text);
      EXPECT_EQ(attrs[j].at("choices").get<std::vector<std::string>>(), a.choices);
      EXPECT_EQ(attrs[j].at("help"), a.help);
      EXPECT_EQ(attrs[j].at("required").get<bool>(), op->family == "core" && a.name == "axes");
    }
  }
  EXPECT_EQ(rows[0].at("name"), "gather_multiaxis");
  EXPECT_EQ(rows[0].at("attributes")[0].at("flag"), "--axes");
}

TEST(CliDocs, FormatTextIsTheDefaultAndOtherFormatsAreRejected) {
  const CliResult plain = cli_run({"ops"});
  const CliResult text = cli_run({"ops", "--format", "text"});
  ASSERT_EQ(plain.code, 0);
  EXPECT_EQ(plain.out, text.out);
  EXPECT_EQ(plain.out.substr(0, plain.out.find('\n')), "gather_multiaxis");
  const CliResult bad = cli_run({"ops", "--format=yaml"});
  EXPECT_EQ(bad.code, cli::kExitUsage);
  EXPECT_EQ(bad.err, "multigather: error: --format: yaml not in {text,md,json,reference}\n");
  EXPECT_EQ(bad.out, "");
}

}  // namespace
}  // namespace multigather
