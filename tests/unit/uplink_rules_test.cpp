// The uplink phase's pure parts: target syntax, iperf3's JSON (real output of Debian's iperf3
// 3.12, tests/fixtures/iperf3/README.md), the flows per node, and each finding passing and failing.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "uplink/uplink_model.hpp"
#include "uplink/uplink_rules.hpp"
#include "facts.hpp"
#include "paths.hpp"

namespace fabricproof {
namespace {

using test::with_id;

std::string fixture_text(const std::string& name) {
  std::ifstream in(test::fixture("iperf3/" + name));
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(UplinkTarget, HostPortAndTheirErrors) {
  auto t = parse_uplink_target("storage1");
  EXPECT_EQ(t.host, "storage1");
  EXPECT_EQ(t.port, 5201);
  t = parse_uplink_target("10.0.0.9:5203");
  EXPECT_EQ(t.port, 5203);
  EXPECT_EQ(to_string(t), "10.0.0.9:5203");
  t = parse_uplink_target("[fd00::9]:5202");
  EXPECT_EQ(t.host, "fd00::9");
  EXPECT_EQ(to_string(t), "[fd00::9]:5202");
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {"host:0", "port '0' is not 1-65535"}, {"host:99999", "is not 1-65535"}, {"host:", "empty port"}, {":5201", "no host"},
           {"fd00::9", "in brackets"}, {"[fd00::9", "no ']'"}, {"host:52x", "port '52x'"}}) {
    const auto error = failure_of([&] { parse_uplink_target(bad); });
    ASSERT_TRUE(error) << bad;
    EXPECT_NE(error->find(says), std::string::npos) << bad << ": " << *error;
  }
}

TEST(Iperf3Json, ReverseRunWithTwoFlowsReadsTheReceivedFigures) {
  const auto f = parse_iperf3_json(fixture_text("reverse-2-flows.json"));
  ASSERT_EQ(f.status, Status::ok) << f.reason;
  ASSERT_EQ(f.per_flow_gbps.size(), 2u);
  EXPECT_EQ(f.flows, 2);
  double sum = 0;
  for (double g : f.per_flow_gbps) {
    EXPECT_GT(g, 0);
    sum += g;
  }
  EXPECT_NEAR(f.gbps, sum, sum * 0.02) << "the sum over the streams is the total received";
  EXPECT_GT(f.seconds, 0.5);
  EXPECT_TRUE(f.retransmits.has_value());
  ASSERT_EQ(f.intervals.size(), 1u) << "one 1-s interval, none omitted";
  EXPECT_EQ(f.intervals[0].start, 0);
  EXPECT_NEAR(f.intervals[0].bytes * 8 / f.intervals[0].end / 1e9, f.gbps, f.gbps * 0.02);
}

// iperf3 3.12 once gave the first interval after --omit a start after its end (the figures of a
// real run under the integration test): each interval is placed where the one before ended, the
// first at 0, so that the window is its 2 s, not 1 s.
TEST(Iperf3Json, IntervalsStartWhereTheOneBeforeEnded) {
  const std::string text = R"({"start": {}, "intervals": [
    {"sum": {"start": 0, "end": 1.0003, "seconds": 1.0003, "bytes": 100, "omitted": true}},
    {"sum": {"start": 1.00001, "end": 1.000003, "seconds": 1.0, "bytes": 3119120278, "omitted": false}},
    {"sum": {"start": 1.000003, "end": 2.000009, "seconds": 1.0, "bytes": 2966814720, "omitted": false}}],
    "end": {"sum_received": {"seconds": 2.000009, "bits_per_second": 24343630445.663}}})";
  const auto f = parse_iperf3_json(text);
  ASSERT_EQ(f.status, Status::ok) << f.reason;
  ASSERT_EQ(f.intervals.size(), 2u);
  EXPECT_EQ(f.intervals[0].start, 0);
  EXPECT_EQ(f.intervals[0].end, 1.000003);
  EXPECT_EQ(f.intervals[1].start, 1.000003);
  EXPECT_EQ(f.intervals[1].end, 2.000009);
}

TEST(Iperf3Json, ErrorsAreNamedNeverAZeroThatPasses) {
  auto f = parse_iperf3_json(fixture_text("refused.json"));
  EXPECT_EQ(f.status, Status::error);
  EXPECT_EQ(f.reason, "iperf3: unable to connect to server: Connection refused");
  f = parse_iperf3_json("");
  EXPECT_EQ(f.status, Status::error);
  EXPECT_EQ(f.reason, "iperf3 printed nothing");
  f = parse_iperf3_json("iperf3: error - the server is busy running a test. try again later\n");
  EXPECT_EQ(f.status, Status::error);
  EXPECT_NE(f.reason.find("not iperf3 JSON output"), std::string::npos);
  f = parse_iperf3_json(R"({"start": {}, "end": {"sum_received": {"bytes": 5}}})");
  EXPECT_EQ(f.status, Status::error);
  EXPECT_NE(f.reason.find("end.sum_received.bits_per_second"), std::string::npos);
}

TEST(UplinkFlowsFor, TwoPerLinkOfTheBondOrAsAsked) {
  UplinkPath plain, bond;
  bond.links = {"ens1f0", "ens1f1"};
  EXPECT_EQ(uplink_flows_for(std::nullopt, plain), 2);
  EXPECT_EQ(uplink_flows_for(std::nullopt, bond), 4);
  EXPECT_EQ(uplink_flows_for(8, bond), 8);
}

UplinkFlows ok(int flows, double gbps) {
  UplinkFlows f;
  f.flows = flows;
  f.status = Status::ok;
  f.gbps = gbps;
  for (int i = 0; i < flows; ++i) f.per_flow_gbps.push_back(gbps / flows);
  return f;
}

// Two nodes on a bond of two 25 GbE links: one flow gets one link, four flows both.
UplinkSection two_nodes(std::optional<double> need) {
  UplinkSection s;
  s.targets = {"storage:5201", "storage:5202"};
  s.seconds = 5;
  s.need_gbps = need;
  s.need_source = "test";
  for (const char* host : {"node1", "node2"}) {
    UplinkNode n;
    n.host = host;
    n.target = "storage:5201";
    n.path.interface = "bond0";
    n.path.links = {"ens2f0", "ens2f1"};
    n.path.link_gbps = 50;
    n.single = ok(1, 23.5);
    n.parallel = ok(4, 46);
    n.together = ok(4, 40);
    s.nodes.push_back(n);
  }
  return s;
}

TEST(UplinkRules, ANeedOneFlowCarriesPassesEverything) {
  const auto f = check_uplink(two_nodes(40));  // 20 Gb/s per node
  ASSERT_FALSE(f.empty());
  for (const auto& x : f) EXPECT_EQ(x.verdict, Verdict::pass) << x.id << " " << x.subject << " " << x.measured.dump();
  EXPECT_EQ(with_id(f, "uplink_single_flow").size(), 2u);
  EXPECT_EQ(with_id(f, "uplink_aggregate").at(0).measured["gbps"], 80);
}

TEST(UplinkRules, OneFlowBelowTheShareWarnsWithTheParallelStreamsHint) {
  const auto f = check_uplink(two_nodes(80));  // 40 per node: one flow 23.5, four 46
  const auto single = with_id(f, "uplink_single_flow");
  ASSERT_EQ(single.size(), 2u);
  for (const auto& x : single) {
    EXPECT_EQ(x.verdict, Verdict::warn);
    EXPECT_NE(x.hint.find("parallel streams"), std::string::npos) << x.hint;
    EXPECT_NE(x.hint.find("one of 2 links"), std::string::npos) << x.hint;
  }
  for (const auto& x : with_id(f, "uplink_node_share")) EXPECT_EQ(x.verdict, Verdict::pass);
  EXPECT_EQ(with_id(f, "uplink_aggregate").at(0).verdict, Verdict::pass);
}

TEST(UplinkRules, ANeedAboveTheUplinkFailsTheAggregateAndTheNodes) {
  auto s = two_nodes(120);  // 60 per node; together 80 in all
  s.nodes[1].parallel = ok(4, 24);  // node2's bond runs on one link
  const auto f = check_uplink(s);
  EXPECT_EQ(with_id(f, "uplink_aggregate").at(0).verdict, Verdict::fail);
  const auto share = with_id(f, "uplink_node_share");
  ASSERT_EQ(share.size(), 2u);
  EXPECT_EQ(share[0].verdict, Verdict::fail);
  EXPECT_EQ(share[1].verdict, Verdict::fail);
  EXPECT_NE(share[1].hint.find("bond slaves"), std::string::npos);
  const auto single = with_id(f, "uplink_single_flow");
  ASSERT_EQ(single.size(), 2u);
  EXPECT_NE(single[0].hint.find("parallel streams"), std::string::npos) << "node1: 4 flows carry twice one";
  EXPECT_NE(single[1].hint.find("the limit is not per flow"), std::string::npos) << "node2: 4 flows carry no more than one: " << single[1].hint;
}

TEST(UplinkRules, AMissingMeasurementFailsClosed) {
  auto s = two_nodes(40);
  s.nodes[1].together = uplink_error(4, "iperf3: the server is busy running a test. try again later");
  const auto f = check_uplink(s);
  const auto measured = with_id(f, "uplink_measured");
  ASSERT_EQ(measured.size(), 1u);
  EXPECT_EQ(measured[0].verdict, Verdict::error);
  EXPECT_NE(measured[0].subject.text().find("node2 (all nodes together"), std::string::npos) << measured[0].subject;
  EXPECT_EQ(with_id(f, "uplink_aggregate").at(0).verdict, Verdict::error) << "an aggregate with a node missing is unknown, not passed";
  EXPECT_EQ(check_uplink(UplinkSection{}).at(0).verdict, Verdict::error) << "no node at all";
}

TEST(UplinkRules, ThePathOverTheDataFabricWarns) {
  auto s = two_nodes(40);
  s.nodes[0].path.rdma = true;
  s.nodes[1].path = UplinkPath{};
  s.nodes[1].path.error = "'storage' does not resolve: Name or service not known";
  const auto f = check_uplink(s);
  const auto path = with_id(f, "uplink_path");
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].verdict, Verdict::warn);
  EXPECT_NE(path[0].hint.find("RDMA fabric"), std::string::npos);
  EXPECT_EQ(path[1].verdict, Verdict::error);
}

TEST(UplinkRules, NoNeedOrNoTogetherRunIsASkipWithTheReason) {
  auto f = check_uplink(two_nodes(std::nullopt));
  EXPECT_EQ(with_id(f, "uplink_aggregate").at(0).verdict, Verdict::skip);
  EXPECT_NE(with_id(f, "uplink_aggregate").at(0).hint.find("plan-uplink"), std::string::npos);
  EXPECT_TRUE(with_id(f, "uplink_single_flow").empty()) << "nothing to judge one flow against";
  auto s = two_nodes(40);
  s.together_skipped = "all nodes together needs one target port per node";
  f = check_uplink(s);
  EXPECT_EQ(with_id(f, "uplink_aggregate").at(0).verdict, Verdict::skip);
  EXPECT_EQ(with_id(f, "uplink_aggregate").at(0).hint, s.together_skipped);
}

// A node's all-together measurement: `seconds` 1-s intervals at `gbps`, its iperf3 exiting at
// `ended_at` on rank 0's clock.
UplinkFlows windowed(double gbps, int seconds, double ended_at) {
  UplinkFlows f = ok(4, gbps);
  f.seconds = seconds;
  for (int i = 0; i < seconds; ++i) f.intervals.push_back({double(i), double(i + 1), gbps * 1e9 / 8});
  f.ended_at = ended_at;
  return f;
}

// The lab's failure of 2026-12-04 in small: two nodes share a 50 Gb/s link; node2 starts 2 s late,
// so for 2 s each has the link alone. Their own averages add up to 60 (more than the link); over
// the 6 s both measured they carried 50.
TEST(UplinkRules, TogetherCountsOnlyTheWindowEveryNodeMeasured) {
  auto s = two_nodes(55);
  s.nodes[0].together = windowed(30, 8, 1000);  // 992..1000
  s.nodes[1].together = windowed(30, 8, 1002);  // 994..1002
  // Inside 994..1000 each had 25 Gb/s, outside it alone 50: rewrite the intervals to say so.
  for (int i = 0; i < 8; ++i) {
    s.nodes[0].together.intervals[i].bytes = (i < 2 ? 50 : 25) * 1e9 / 8;
    s.nodes[1].together.intervals[i].bytes = (i >= 6 ? 50 : 25) * 1e9 / 8;
  }
  const auto common = together_in_common_window(s.nodes);
  ASSERT_TRUE(common);
  EXPECT_DOUBLE_EQ(common->window_s, 6);
  EXPECT_DOUBLE_EQ(common->gbps, 50);
  EXPECT_DOUBLE_EQ(common->sum_of_averages_gbps, 60);
  const auto aggregate = with_id(check_uplink(s), "uplink_aggregate").at(0);
  EXPECT_EQ(aggregate.verdict, Verdict::fail) << "50 < 55: the sum of the averages (60) would have passed";
  EXPECT_DOUBLE_EQ(aggregate.measured["gbps"].get<double>(), 50);
  EXPECT_DOUBLE_EQ(aggregate.measured["common_window_s"].get<double>(), 6);
  EXPECT_DOUBLE_EQ(aggregate.measured["per_node_gbps"]["node2"].get<double>(), 25);
}

// Part of an interval inside the window counts in proportion; windows that barely overlap are not
// "together": the aggregate fails closed (error), whatever the figures.
TEST(UplinkRules, TogetherSplitsIntervalsAndRefusesWindowsThatBarelyOverlap) {
  auto s = two_nodes(10);
  s.nodes[0].together = windowed(40, 8, 1000.0);
  s.nodes[1].together = windowed(40, 8, 1000.5);  // 992.5..1000.5: 7.5 s in common
  const auto common = together_in_common_window(s.nodes);
  ASSERT_TRUE(common);
  EXPECT_DOUBLE_EQ(common->window_s, 7.5);
  EXPECT_NEAR(common->gbps, 80, 1e-9);
  EXPECT_EQ(with_id(check_uplink(s), "uplink_aggregate").at(0).verdict, Verdict::pass);
  s.nodes[1].together = windowed(40, 8, 1005);  // 997..1005: 3 s in common, less than half of 8
  const auto apart = with_id(check_uplink(s), "uplink_aggregate").at(0);
  EXPECT_EQ(apart.verdict, Verdict::error);
  EXPECT_NE(apart.hint.find("not measured together"), std::string::npos) << apart.hint;
  s.nodes[1].together = windowed(40, 8, 1020);  // no overlap at all
  EXPECT_EQ(together_in_common_window(s.nodes)->window_s, 0);
  EXPECT_EQ(with_id(check_uplink(s), "uplink_aggregate").at(0).verdict, Verdict::error);
}

// One node is together with itself, however few intervals iperf3 marked measured (the CI of
// f98aa62: one of two, the other flagged omitted, against its 2 s `seconds`: "apart" then).
TEST(UplinkRules, OneNodeIsAlwaysTogetherWithItself) {
  auto s = two_nodes(10);
  s.nodes.pop_back();
  s.nodes[0].together = windowed(40, 1, 1000);
  s.nodes[0].together.seconds = 2;
  const auto common = together_in_common_window(s.nodes);
  ASSERT_TRUE(common);
  EXPECT_DOUBLE_EQ(common->window_s, 1);
  EXPECT_DOUBLE_EQ(common->shortest_own_s, 1);
  EXPECT_EQ(with_id(check_uplink(s), "uplink_aggregate").at(0).verdict, Verdict::pass);
}

// A report from before the windows were kept: the averages' sum, as before.
TEST(UplinkRules, WithoutWindowsTheAggregateIsTheSumOfTheAverages) {
  const auto s = two_nodes(40);
  EXPECT_FALSE(together_in_common_window(s.nodes));
  EXPECT_EQ(with_id(check_uplink(s), "uplink_aggregate").at(0).measured["gbps"], 80);
}

}  // namespace
}  // namespace fabricproof
