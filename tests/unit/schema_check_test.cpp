// report.json against the published schema (schemas/report.schema.json, embedded in the binary):
// what `report` and `compare` check before anything reads a saved report.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "paths.hpp"
#include "report/report.hpp"
#include "report/schema_check.hpp"

namespace fabricproof {
namespace {

using json = nlohmann::json;

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json lab_report() { return json::parse(read_file(test::fixture("reports/lab-rate-fault.json"))); }

// Every object and array of `v` with its JSON pointer, skipping the free-form parts: a finding's
// `measured` (any JSON by design), the embedded profile (checked by the profile loader) and `build`.
void containers(const json& v, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  if (!v.is_structured()) return;
  const std::string last = at.empty() ? "" : at.back();
  if (last == "measured" || last == "profile" || last == "build") return;
  if (!at.empty()) out.push_back(at);
  if (v.is_object())
    for (const auto& [key, child] : v.items()) containers(child, at / key, out);
  else
    for (size_t i = 0; i < v.size() && i < 2; ++i) containers(v[i], at / i, out);
}

}  // namespace

TEST(ReportSchema, TheEmbeddedSchemaIsThePublishedFile) {
  EXPECT_EQ(report_schema_text(), read_file(test::fixture("../../schemas/report.schema.json")));
}

TEST(ReportSchema, TheLabReportAndAModelReportConform) {
  EXPECT_EQ(report_shape_errors(lab_report()), std::vector<std::string>{});
  Report r;
  r.started_at = "2026-11-30T00:00:00Z";
  r.finished = false;
  r.in_flight = InFlight{"verbs", "round 1 of 6", "2026-11-30T00:00:01Z"};
  r.findings.push_back({CheckId::hca_count, "node1", Verdict::fail, 0, ">= 1", "every node has an HCA", "Check the cabling."});
  EXPECT_EQ(report_shape_errors(json(r)), std::vector<std::string>{});
}

// An integer field may hold 3.0 (JSON numbers have no integer type), and one far beyond any integer
// type (the fuzzer's 7.8e83, whose cast was undefined) is still whole; 2.5 is not an integer.
TEST(ReportSchema, IntegersAreWholeNumbersOfAnySize) {
  auto report = lab_report();
  report["world_size"] = 4.0;
  EXPECT_EQ(report_shape_errors(report), std::vector<std::string>{});
  report["world_size"] = 7.77778e+83;
  EXPECT_EQ(report_shape_errors(report), std::vector<std::string>{});
  report["world_size"] = 2.5;
  ASSERT_EQ(report_shape_errors(report).size(), 1u);
  EXPECT_NE(report_shape_errors(report)[0].find("/world_size"), std::string::npos) << report_shape_errors(report)[0];
}

// Any container of the lab's real report replaced by a number: the error names that place (its
// pointer, keys with '/' escaped as RFC 6901 asks) and what the schema expects there.
TEST(ReportSchema, EveryPlaceOfTheLabReportWithTheWrongShapeIsNamed) {
  const json report = lab_report();
  std::vector<json::json_pointer> places;
  containers(report, json::json_pointer(), places);
  ASSERT_GT(places.size(), 100u);
  for (const auto& place : places) {
    json bad = report;
    bad[place] = 5;
    const auto errors = report_shape_errors(bad);
    if (errors.empty()) {
      ADD_FAILURE() << place.to_string() << " = 5 was accepted";
      continue;
    }
    EXPECT_EQ(errors[0].rfind(place.to_string() + ": expected ", 0), 0u) << place.to_string() << ": " << errors[0];
  }
}

TEST(ReportSchema, MissingFieldsWrongValuesAndEscapedKeysAreNamed) {
  json bad = lab_report();
  bad["collectives"]["results"][0].erase("rows");
  bad["verbs"]["pairs"][0]["tests"][0]["status"] = "fine";
  bad["verbs"]["pairs"][0]["counter_deltas"]["node1/rxe0"]["rcvd_pkts"] = "many";
  bad["phases"][0]["duration_s"] = -1;
  const auto errors = report_shape_errors(bad, 10);
  const std::vector<std::string> expected = {
      "/verbs/pairs/0/tests/0/status: \"fine\" is not one of [\"ok\",\"error\",\"not_measured\"]",
      "/verbs/pairs/0/counter_deltas/node1~1rxe0/rcvd_pkts: expected integer, got string",
      "/phases/0/duration_s: -1 is below the minimum 0",
      "/collectives/results/0: missing \"rows\""};
  for (const auto& e : expected) EXPECT_NE(std::find(errors.begin(), errors.end(), e), errors.end()) << e << " not in:\n" << json(errors).dump(1);
  EXPECT_EQ(report_shape_errors(bad, 2).size(), 2u) << "the limit caps the list";
}

TEST(ReportSchema, TheValidatorsKeywordsOnASmallSchema) {
  const json schema = json::parse(R"({
    "$defs": {"n": {"type": "integer", "minimum": 1}},
    "type": "object", "required": ["a"],
    "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"oneOf": [{"type": "string"}, {"type": "null"}]}, "c": {"const": 3},
                   "d": {"type": "string", "pattern": "^x"}, "e": {"type": "object", "additionalProperties": false},
                   "f": {"oneOf": [{"type": "number"}, {"type": "integer"}]}},
    "additionalProperties": {"type": "array", "items": {"type": ["number", "null"]}}})");
  EXPECT_TRUE(schema_violations(schema, json::parse(R"({"a": 2, "b": null, "c": 3, "d": "xy", "e": {}, "z": [1.5, null]})")).empty());
  EXPECT_EQ(schema_violations(schema, json::parse(R"({"a": 0})")), std::vector<std::string>{"/a: 0 is below the minimum 1"});
  EXPECT_EQ(schema_violations(schema, json::parse(R"({"a": 1, "b": 4})")), std::vector<std::string>{"/b: expected string or null, got integer"});
  EXPECT_EQ(schema_violations(schema, json::parse(R"({"a": 1, "f": 1})")), std::vector<std::string>{"/f: matches 2 of the 2 alternatives, not exactly one"});
  EXPECT_EQ(schema_violations(schema, json::parse(R"({"a": 1, "c": 4})")), std::vector<std::string>{"/c: expected 3, got 4"});
  EXPECT_EQ(schema_violations(schema, json::parse(R"({"a": 1, "d": "yx"})")), std::vector<std::string>{"/d: \"yx\" does not match ^x"});
  EXPECT_EQ(schema_violations(schema, json::parse(R"({"a": 1, "e": {"k": 1}})")), std::vector<std::string>{"/e/k: is not allowed here"});
  EXPECT_EQ(schema_violations(schema, json::parse(R"({"a": 1, "z": ["s"]})")), std::vector<std::string>{"/z/0: expected number or null, got string"});
  EXPECT_EQ(schema_violations(schema, json::parse(R"({"b": "s"})")), std::vector<std::string>{"/: missing \"a\""});
  EXPECT_EQ(schema_violations(schema, json::parse("[]")), std::vector<std::string>{"/: expected object, got array"});
}

}  // namespace fabricproof

namespace fabricproof {
namespace {

// A GPUDirect comparison entry measured "ok" without its figures is named, not rendered silently;
// one that was not measured needs none.
TEST(ReportSchema, AGpudirectComparisonMeasuredOkMustCarryItsFigures) {
  auto report = json::parse(read_file(test::fixture("reports/lab-rate-fault.json")));
  report["gpudirect"] = {{"comparison", json::array({{{"pair", "node1/mlx5_0 -> node2/mlx5_0"}, {"gpu_status", "ok"}, {"host_gbps", 190.0}}})}};
  const auto errors = report_shape_errors(report);
  EXPECT_EQ(errors, (std::vector<std::string>{"/gpudirect/comparison/0: missing \"gpu_gbps\"", "/gpudirect/comparison/0: missing \"ratio\""}));
  report["gpudirect"]["comparison"][0] = {{"pair", "x -> y"}, {"gpu_status", "not_measured"}, {"gpu_reason", "no GPU"}};
  EXPECT_TRUE(report_shape_errors(report).empty());
}

}  // namespace
}  // namespace fabricproof
