// The ops of `multigather run/explain/ops`, and the flag value parsers they share.
#include <charconv>

#include "op.hpp"

namespace multigather::cli {

std::vector<std::unique_ptr<CliOp>> make_cli_ops() {
  std::vector<std::unique_ptr<CliOp>> ops;
  ops.push_back(make_gather_multiaxis_cli_op());
  // The framework ops of include/multigather/ops.hpp, grouped by equivalence class.
  for (auto& op : make_framework_cli_ops()) ops.push_back(std::move(op));
  return ops;
}

Status parse_int_list(std::string_view text, std::string_view flag, std::vector<std::int64_t>* out) {
  out->clear();
  std::string_view s = text;
  const auto trim = [](std::string_view v) {
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    return v;
  };
  s = trim(s);
  if (s.size() >= 2 && ((s.front() == '[' && s.back() == ']') || (s.front() == '(' && s.back() == ')'))) {
    s = trim(s.substr(1, s.size() - 2));
  }
  if (s.empty()) return Status::Ok();
  while (true) {
    const std::size_t comma = s.find(',');
    const std::string_view item = trim(s.substr(0, comma));
    std::int64_t v = 0;
    const auto r = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || r.ec != std::errc() || r.ptr != item.data() + item.size()) {
      return InvalidArgument(std::string(flag) + ": '" + std::string(item) +
                             "' is not a 64-bit integer (expected a comma-separated list like "
                             "2,1; an empty list is " + std::string(flag) + "=)");
    }
    out->push_back(v);
    if (comma == std::string_view::npos) return Status::Ok();
    s = s.substr(comma + 1);
  }
}

Status parse_bool_flag(std::string_view text, std::string_view flag, bool* out) {
  for (std::string_view t : {"true", "1", "yes", "on"}) {
    if (text == t) { *out = true; return Status::Ok(); }
  }
  for (std::string_view f : {"false", "0", "no", "off"}) {
    if (text == f) { *out = false; return Status::Ok(); }
  }
  return InvalidArgument(std::string(flag) + ": '" + std::string(text) +
                         "' is not a boolean (expected true or false)");
}

}  // namespace multigather::cli
