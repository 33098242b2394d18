// Every registry row states its op's facts (multigather/registry.hpp): the row's index rule is the
// policy its lowering sets (Lowering::options' index_mode and negative_indices) for the defaults
// of the attributes that select it, and every row states the framework's rules.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "multigather/lowering.hpp"
#include "multigather/registry.hpp"
#include "op_test_support.hpp"

namespace multigather {
namespace {

/// The attributes named by `rule.attribute` ("mode" or "mode, wrap_negative_indices").
std::set<std::string> rule_attributes(const IndexRule& rule) {
  std::set<std::string> names;
  std::stringstream list(rule.attribute);
  for (std::string name; std::getline(list, name, ',');) {
    name.erase(0, name.find_first_not_of(' '));
    if (!name.empty()) names.insert(name);
  }
  return names;
}

/// The sample's attributes less those that select the index rule (so that their defaults apply).
Attributes with_rule_defaults(const OpSpec& op, const Attributes& given) {
  const std::set<std::string> skip = rule_attributes(op.index_rule);
  Attributes kept;
  for (const auto& [name, arg] : given.items()) {
    if (skip.count(name) == 0) kept.set(name, arg.text);
  }
  return kept;
}

/// Zeros for every operand: a valid index everywhere, and any lowering may read them.
const void* zeros() {
  static const std::vector<std::int64_t> memory(1 << 16, 0);
  return memory.data();
}

DType index_dtype(const std::string& op) { return op.rfind("tosa.", 0) == 0 ? DType::kInt32 : DType::kInt64; }

void expect_rule(const OpSpec& op, const Status& lowered, const Lowering& l) {
  ASSERT_TRUE(lowered.ok()) << op.name << ": " << lowered.message();
  EXPECT_EQ(index_mode_name(l.options.index_mode), index_mode_name(op.index_rule.mode)) << op.name;
  EXPECT_EQ(l.options.negative_indices, op.index_rule.negative_indices) << op.name;
}

TEST(RegistryRows, IndexRuleIsTheLoweringsPolicyForDefaultAttributes) {
  std::set<std::string> checked;
  for (const testing::ExplainCase& c : testing::explain_cases()) {
    const OpSpec* op = find_op(c.op);
    ASSERT_NE(op, nullptr) << c.op;
    Lowering l;
    const Status s = lower_op(c.op, TensorView(zeros(), DType::kFloat32, c.x),
                              TensorView(zeros(), index_dtype(c.op), c.i), with_rule_defaults(*op, c.a), &l,
                              Device::kCPU);
    expect_rule(*op, s, l);
    checked.insert(c.op);
  }
  for (const testing::ExplainCase& c : testing::segment_explain_cases()) {
    const OpSpec* op = find_op(c.op);
    ASSERT_NE(op, nullptr) << c.op;
    Lowering l;
    const Status s = lower_op(c.op, TensorView(zeros(), DType::kFloat32, c.x), TensorView(zeros(), DType::kInt64, c.i),
                              with_rule_defaults(*op, c.a), &l, Device::kCPU);
    expect_rule(*op, s, l);
    checked.insert(c.op);
  }
  for (const testing::ScatterExplainCase& c : testing::scatter_explain_cases()) {
    const OpSpec* op = find_op(c.op);
    ASSERT_NE(op, nullptr) << c.op;
    Lowering l;
    const Status s = lower_op(c.op, TensorView(zeros(), DType::kFloat32, c.x),
                              TensorView(zeros(), index_dtype(c.op), c.i), TensorView(zeros(), DType::kFloat32, c.u),
                              with_rule_defaults(*op, c.a), &l, Device::kCPU);
    expect_rule(*op, s, l);
    checked.insert(c.op);
  }
  for (const OpSpec& op : op_registry()) EXPECT_EQ(checked.count(op.name), 1u) << op.name << " has no sample";
}

TEST(RegistryRows, AttributeSelectingTheIndexRuleIsAnAttributeOfTheOp) {
  for (const OpSpec& op : op_registry()) {
    for (const std::string& name : rule_attributes(op.index_rule)) {
      bool found = false;
      for (const AttrSpec& a : op.attrs) found = found || a.name == name;
      EXPECT_TRUE(found) << op.name << ": index rule attribute " << name;
    }
  }
}

TEST(RegistryRows, EveryRowStatesRulesAndAnIndexRuleText) {
  for (const OpSpec& op : op_registry()) {
    EXPECT_FALSE(op.rules.empty()) << op.name;
    EXPECT_FALSE(index_rule_text(op).empty()) << op.name;
  }
  const OpSpec* nd = find_op("onnx.GatherND");
  ASSERT_NE(nd, nullptr);
  EXPECT_EQ(index_rule_text(*nd),
            "negative indices wrap once ([-s, s-1]); any other index out of range is an error (IndexError in Python)");
}

}  // namespace
}  // namespace multigather
