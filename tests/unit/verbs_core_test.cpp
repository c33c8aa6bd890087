// The verbs matrix's pure parts: the schedule, the plan, the model's JSON and matrix, the rules
// and the diagnosis.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "report/html.hpp"
#include "report/markdown.hpp"
#include "report/views.hpp"
#include "verbs/schedule.hpp"
#include "verbs/verbs_plan.hpp"
#include "verbs/verbs_rules.hpp"
#include "facts.hpp"

namespace fabricproof {
namespace {

using test::with_id;

void expect_valid_schedule(int n) {
  const Rounds rounds = round_robin(n);
  EXPECT_EQ(rounds.size(), static_cast<size_t>(n % 2 ? n : n - 1)) << n;
  std::set<Pair> seen;
  for (const auto& round : rounds) {
    std::set<int> busy;
    EXPECT_EQ(round.size(), static_cast<size_t>(n / 2)) << "n=" << n;
    for (const auto& [a, b] : round) {
      EXPECT_LT(a, b);
      EXPECT_TRUE(busy.insert(a).second) << "participant " << a << " twice in a round, n=" << n;
      EXPECT_TRUE(busy.insert(b).second) << "participant " << b << " twice in a round, n=" << n;
      EXPECT_TRUE(seen.insert({a, b}).second) << "pair " << a << "," << b << " twice, n=" << n;
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(n * (n - 1) / 2)) << "every unordered pair exactly once, n=" << n;
}

TEST(Schedule, EveryPairOnceNoParticipantTwiceInARound) {
  for (int n = 2; n <= 17; ++n) expect_valid_schedule(n);
}

TEST(Schedule, NoPairsBelowTwoParticipants) {
  EXPECT_TRUE(round_robin(0).empty());
  EXPECT_TRUE(round_robin(1).empty());
}

ClusterFacts cluster_of(int nodes, int hcas, int ranks_per_node) {
  std::vector<NodeFacts> list;
  for (int n = 0; n < nodes; ++n) {
    std::vector<RdmaDevice> devices;
    for (int h = 0; h < hcas; ++h) devices.push_back(test::hca("mlx5_" + std::to_string(h), test::roce_port()));
    list.push_back(test::node("node" + std::to_string(n + 1), devices, ranks_per_node));
  }
  return test::cluster(list);
}

TEST(VerbsPlan, MatchedRailsRunSideBySideOnDifferentRanks) {
  const auto plan = plan_verbs(cluster_of(4, 2, 2), default_profile(), VerbsOptions{});
  ASSERT_EQ(plan.endpoints.size(), 8u);
  EXPECT_EQ(plan.endpoints[1].label(), "node1/mlx5_1");
  EXPECT_EQ(plan.endpoints[0].rank, 0);
  EXPECT_EQ(plan.endpoints[1].rank, 1);  // rail 1 on local rank 1
  EXPECT_EQ(plan.endpoints[2].rank, 2);  // node2's first rank
  EXPECT_EQ(plan.endpoints[0].gid_index, 3);
  EXPECT_EQ(plan.rounds, 3);
  EXPECT_EQ(plan.tasks.size(), 12u);  // 6 node pairs x 2 rails
  for (const auto& t : plan.tasks) {
    EXPECT_EQ(plan.endpoints[t.a].device, plan.endpoints[t.b].device) << "rails are matched";
    EXPECT_NE(plan.endpoints[t.a].host, plan.endpoints[t.b].host);
    EXPECT_TRUE(t.skip_reason.empty());
  }
  std::map<int, std::set<int>> endpoints_in_round;
  for (const auto& t : plan.tasks) {
    EXPECT_TRUE(endpoints_in_round[t.round].insert(t.a).second);
    EXPECT_TRUE(endpoints_in_round[t.round].insert(t.b).second);
  }
}

// Two sockets, two ranks bound one per NUMA node (--bind-to numa), HCAs listed in the other order
// than the ranks: each HCA is driven from its own socket, not by rail index.
ClusterFacts two_socket_node(std::optional<int> hca0_numa, std::optional<int> hca1_numa) {
  auto c = cluster_of(2, 2, 2);
  for (auto& n : c.nodes) {
    n.numa_nodes = {{0, "0-7", std::nullopt}, {1, "8-15", std::nullopt}};
    n.rdma_devices[0].numa_node = hca0_numa;
    n.rdma_devices[1].numa_node = hca1_numa;
    n.ranks[0].cpus_allowed = "0-7";
    n.ranks[1].cpus_allowed = "8-15";
  }
  return c;
}

TEST(VerbsPlan, EachHcaIsDrivenFromItsOwnNumaNode) {
  const auto plan = plan_verbs(two_socket_node(1, 0), default_profile(), VerbsOptions{});
  ASSERT_EQ(plan.endpoints.size(), 4u);
  EXPECT_EQ(plan.endpoints[0].device, "mlx5_0");
  EXPECT_EQ(plan.endpoints[0].rank, 1) << plan.endpoints[0].placement;  // mlx5_0 on NUMA 1: the rank bound to 8-15
  EXPECT_EQ(plan.endpoints[1].rank, 0) << plan.endpoints[1].placement;
  EXPECT_EQ(plan.endpoints[2].rank, 3);
  EXPECT_EQ(plan.endpoints[0].placement, "rank 1: CPUs 8-15 on NUMA node 1 of mlx5_0");
}

// Both HCAs on one socket: one rank drives each (a rank runs its pairs of a round one after
// another), the closer rank the first, and the placement says the other is off the HCA's node.
TEST(VerbsPlan, RailsAreSpreadOverTheRanksBeforeCloseness) {
  const auto plan = plan_verbs(two_socket_node(1, 1), default_profile(), VerbsOptions{});
  ASSERT_EQ(plan.endpoints.size(), 4u);
  EXPECT_EQ(plan.endpoints[0].rank, 1);
  EXPECT_EQ(plan.endpoints[1].rank, 0);
  EXPECT_EQ(plan.endpoints[1].placement, "rank 0: CPUs 0-7 off NUMA node 1 of mlx5_1");
}

// Without a NUMA node for the HCA the rails go by index, as before, and the placement says why.
TEST(VerbsPlan, UnknownNumaFallsBackToRailOrderAndSaysSo) {
  const auto plan = plan_verbs(two_socket_node(std::nullopt, std::nullopt), default_profile(), VerbsOptions{});
  ASSERT_EQ(plan.endpoints.size(), 4u);
  EXPECT_EQ(plan.endpoints[0].rank, 0);
  EXPECT_EQ(plan.endpoints[1].rank, 1);
  EXPECT_EQ(plan.endpoints[0].placement, "rank 0: mlx5_0's NUMA node unknown");
}

// One rank per node and two rails: the two rail pairs would share both ranks in one round, which
// would run them one after the other anyway; they become two rounds, so that the pairs of every
// round can take each step together.
TEST(VerbsPlan, NoRankDrivesTwoPairsOfARound) {
  const auto plan = plan_verbs(cluster_of(4, 2, 1), default_profile(), VerbsOptions{});
  ASSERT_EQ(plan.tasks.size(), 12u);
  EXPECT_EQ(plan.rounds, 6);
  std::map<int, std::set<int>> ranks_in_round;
  for (const auto& t : plan.tasks)
    for (int e : {t.a, t.b}) EXPECT_TRUE(ranks_in_round[t.round].insert(plan.endpoints[e].rank).second) << "round " << t.round;
}

TEST(VerbsPlan, AllRailsPairsEveryHcaWithEveryRemoteHca) {
  VerbsOptions options;
  options.rails = "all";
  const auto plan = plan_verbs(cluster_of(2, 2, 2), default_profile(), options);
  EXPECT_EQ(plan.tasks.size(), 4u);  // 2 x 2 device combinations
  EXPECT_EQ(plan.rounds, 2);
  std::set<std::pair<std::string, std::string>> combos;
  for (const auto& t : plan.tasks) combos.insert({plan.endpoints[t.a].device, plan.endpoints[t.b].device});
  EXPECT_EQ(combos.size(), 4u);
}

TEST(VerbsPlan, IsolatedModeRunsOnePairPerRound) {
  VerbsOptions options;
  options.mode = "isolated";
  const auto plan = plan_verbs(cluster_of(4, 1, 1), default_profile(), options);
  EXPECT_EQ(plan.rounds, 6);
  std::set<int> rounds;
  for (const auto& t : plan.tasks) rounds.insert(t.round);
  EXPECT_EQ(rounds.size(), 6u);
}

TEST(VerbsPlan, DownPortIsPlannedButNotRun) {
  auto c = cluster_of(3, 1, 1);
  c.nodes[1].rdma_devices[0].ports[0].state = "DOWN";
  const auto plan = plan_verbs(c, default_profile(), VerbsOptions{});
  int skipped = 0;
  for (const auto& t : plan.tasks)
    if (!t.skip_reason.empty()) {
      ++skipped;
      EXPECT_EQ(t.skip_reason, "port DOWN on node2/mlx5_0");
    }
  EXPECT_EQ(skipped, 2);
  EXPECT_EQ(plan.rounds, 3);  // odd node count: one rests each round
}

TEST(VerbsPlan, ProfileDeviceListAndGidOverride) {
  VerbsOptions options;
  options.gid_index = 1;
  auto profile = load_profile_text(R"({"schema": "fabricproof.profile/1", "name": "x", "ports": {"devices": ["mlx5_1"]}})", "x").profile.value();
  const auto plan = plan_verbs(cluster_of(2, 2, 1), profile, options);
  ASSERT_EQ(plan.endpoints.size(), 2u);
  EXPECT_EQ(plan.endpoints[0].device, "mlx5_1");
  EXPECT_EQ(plan.endpoints[0].gid_index, 1);
}

// A measured 4-node section: every pair at `gbps`, except pairs with `slow_endpoint` at `slow`.
VerbsSection measured(int slow_endpoint = -1, double gbps = 190, double slow = 60) {
  VerbsSection s;
  for (int i = 0; i < 4; ++i) {
    VerbsEndpoint e;
    e.host = "node" + std::to_string(i + 1);
    e.device = "mlx5_0";
    e.rank = i;
    e.link_layer = "Ethernet";
    e.rate_gbps = 200;
    e.active_mtu = 4096;
    e.state = "ACTIVE";
    s.endpoints.push_back(e);
  }
  s.options.tests = {"write_bw", "write_lat"};
  int task = 0, round_index = 0;
  for (const auto& round : round_robin(4)) {
    for (const auto& [a, b] : round) {
      PairResult p;
      p.task = task++;
      p.round = round_index;
      p.a = a;
      p.b = b;
      for (auto t : planned_results(s.options, a, b)) {
        const bool is_slow = a == slow_endpoint || b == slow_endpoint;
        if (t.test == "write_lat") t.latency = latency_stats({1.8, 1.9, 2.0});
        else if (t.test == kVerbsSizesTest) t.gbps = (is_slow ? slow : gbps) * std::min(1.0, static_cast<double>(t.bytes) / 65536);
        else t.gbps = is_slow ? slow : gbps;
        p.tests.push_back(t);
      }
      s.pairs.push_back(p);
    }
    ++round_index;
  }
  return s;
}

ClusterFacts facts_for(const VerbsSection& s) {
  std::vector<NodeFacts> nodes;
  for (const auto& e : s.endpoints) nodes.push_back(test::node(e.host, {test::hca(e.device, test::roce_port())}));
  return test::cluster(nodes);
}

TEST(VerbsModel, JsonRoundTripAndMatrixCells) {
  auto s = measured();
  s.pairs[0].tests[0].status = Status::error;
  s.pairs[0].tests[0].reason = "node1/mlx5_0: transport retry counter exceeded (status 12, vendor error 0x81)";
  s.pairs[0].tests[0].gbps.reset();
  const nlohmann::json j = s;
  EXPECT_EQ(j.get<VerbsSection>().pairs.size(), s.pairs.size());
  const nlohmann::json again = j.get<VerbsSection>();
  EXPECT_EQ(j, again);
  EXPECT_EQ(j["matrix"]["labels"][2], "node3/mlx5_0");
  const auto& bw = j["matrix"]["write_bw"]["cells"];
  EXPECT_TRUE(bw[0][0].is_null());
  const int a = s.pairs[0].a, b = s.pairs[0].b;
  EXPECT_EQ(bw[a][b]["reason"], "error: node1/mlx5_0: transport retry counter exceeded (status 12, vendor error 0x81)");
  EXPECT_EQ(bw[b][a], 190.0);  // the other direction was measured
  const auto& lat = j["matrix"]["write_lat"]["cells"];
  EXPECT_EQ(lat[a][b], lat[b][a]);  // latency belongs to the pair
  EXPECT_EQ(j["matrix"]["write_lat"]["unit"], "usec (p50, one-way)");
}

TEST(VerbsModel, LatencyStatistics) {
  auto st = latency_stats({5, 1, 3, 2, 4, 100});
  EXPECT_EQ(st.samples, 6u);
  EXPECT_EQ(st.min_usec, 1);
  EXPECT_EQ(st.max_usec, 100);
  EXPECT_EQ(st.p50_usec, 3);
  EXPECT_EQ(st.p99_usec, 100);
  EXPECT_NEAR(st.avg_usec, 115.0 / 6, 1e-9);
  EXPECT_EQ(latency_stats({}).samples, 0u);
}

// A round's budget counts a latency test by its round trips: 100000 of them may take minutes on
// the lab, while the test sends no sign of life (it would disturb what it measures).
TEST(VerbsModel, StepBudgetCountsALatencyTestsRoundTrips) {
  VerbsOptions o;
  o.duration_s = 2;
  o.timeout_s = 30;
  const auto steps = planned_results(o, 0, 1);
  ASSERT_FALSE(steps.empty());
  const auto lat = std::find_if(steps.begin(), steps.end(), [](const TestResult& t) { return t.test == "write_lat"; });
  ASSERT_NE(lat, steps.end());
  EXPECT_DOUBLE_EQ(step_budget_s(o, steps.front()), 2) << steps.front().test;
  EXPECT_DOUBLE_EQ(step_budget_s(o, *lat), 2) << "1000 round trips: within the duration, as before";
  o.lat_iterations = 100000;
  EXPECT_DOUBLE_EQ(step_budget_s(o, *lat), 100000 * kSlowRoundTripS);
  EXPECT_DOUBLE_EQ(step_budget_s(o, steps.front()), 2) << "bandwidth tests do not change";
  o.iterations = 5000;
  EXPECT_DOUBLE_EQ(step_budget_s(o, steps.front()), 30) << "iteration mode: the pair's timeout";
}

TEST(VerbsRules, HealthyMatrixPasses) {
  const auto s = measured();
  const auto f = check_verbs(s, facts_for(s), default_profile());
  for (const auto& finding : f) EXPECT_EQ(finding.verdict, Verdict::pass) << finding.id << " " << finding.subject;
  EXPECT_EQ(with_id(f, "verbs_pair_bw").size(), 12u);  // 6 pairs x 2 directions
  EXPECT_EQ(with_id(f, "verbs_pair_latency").size(), 6u);
}

// The size curve: small sizes far below the port rate are what they are (read, not judged), a size
// that did not complete fails the pair, and the curve names the slowest pair per size.
TEST(VerbsRules, TheSizeCurveIsReadNotJudgedButAFailedSizeFails) {
  auto s = measured(2);
  s.options.sizes = {2, 4096, 65536};
  for (auto& p : s.pairs)
    for (const auto& t : planned_results(s.options, p.a, p.b))
      if (t.test == kVerbsSizesTest) {
        auto u = t;
        u.gbps = (p.a == 2 || p.b == 2 ? 60.0 : 190.0) * std::min(1.0, static_cast<double>(t.bytes) / 65536);
        p.tests.push_back(u);
      }
  auto f = check_verbs(s, facts_for(s), default_profile());
  ASSERT_FALSE(f.empty());
  for (const auto& finding : f) EXPECT_EQ(finding.subject.text().find(kVerbsSizesTest), std::string::npos) << finding.subject.text();
  const auto curve = view::verbs_curve(s);
  ASSERT_EQ(curve.size(), 3u);
  EXPECT_EQ(curve[0].bytes, 2u);
  EXPECT_EQ(curve[2].pairs, 6u);
  EXPECT_DOUBLE_EQ(curve[2].fastest, 190);
  EXPECT_DOUBLE_EQ(curve[2].slowest, 60);
  EXPECT_NE(curve[2].slowest_pair.find("node3/mlx5_0"), std::string::npos) << curve[2].slowest_pair;
  Report report;
  report.verbs = s;
  const auto md = render_markdown(report);
  EXPECT_NE(md.find("## Verbs: RDMA WRITE bandwidth by message size (Gb/s)"), std::string::npos) << md;
  EXPECT_NE(md.find("| 64K | 6 | 60 | 125 | 190 | node1/mlx5_0 -> node3/mlx5_0 |"), std::string::npos) << md;  // 3 of 6 pairs slow
  EXPECT_NE(render_html(report).find("RDMA WRITE bandwidth (Gb/s) vs message size"), std::string::npos);

  auto& broken = s.pairs[0].tests.back();
  broken.status = Status::error;
  broken.gbps.reset();
  broken.reason = "node1/mlx5_0: local protection error (status 4)";
  f = with_id(check_verbs(s, facts_for(s), default_profile()), "verbs_pair_error");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_EQ(view::verbs_curve(s)[2].not_measured, 1u);
}

TEST(VerbsRules, BandwidthAgainstTheSlowerPortRate) {
  auto s = measured(-1, 170);  // 0.85 x 200: between fail (0.8) and pass (0.9)
  auto f = with_id(check_verbs(s, facts_for(s), default_profile()), "verbs_pair_bw");
  EXPECT_EQ(f[0].verdict, Verdict::warn);
  s = measured(-1, 150);
  f = with_id(check_verbs(s, facts_for(s), default_profile()), "verbs_pair_bw");
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_NE(f[0].hint.find("(1)"), std::string::npos) << "a slow pair carries a diagnosis: " << f[0].hint;
  s = measured(-1, 150);
  s.endpoints[1].rate_gbps = 100;  // the slower port sets the expectation
  f = with_id(check_verbs(s, facts_for(s), default_profile()), "verbs_pair_bw");
  bool node2_pair_passes = false;
  for (const auto& x : f)
    if (x.subject.text().find("node2") != std::string::npos) node2_pair_passes |= x.verdict == Verdict::pass;
  EXPECT_TRUE(node2_pair_passes);
}

// The triage step of a slow pair's finding is its diagnosis's first cause, decided by the rule
// (not found later in the hint's words), and travels in the report's JSON.
TEST(VerbsRules, TriageStepIsTheFirstCauseOfTheDiagnosis) {
  auto s = measured(-1, 150);
  for (auto& e : s.endpoints) e.active_mtu = 4096;
  s.endpoints[1].active_mtu = 1024;
  const auto f = check_verbs(s, facts_for(s), default_profile());
  int mtu = 0, other = 0;
  for (const auto& x : with_id(f, "verbs_pair_bw")) {
    if (x.verdict == Verdict::pass) {
      EXPECT_FALSE(x.triage.has_value()) << x.subject;
      continue;
    }
    const bool node2 = x.subject.text().find("node2") != std::string::npos;
    ASSERT_TRUE(x.triage.has_value()) << x.subject;
    EXPECT_EQ(*x.triage, node2 ? TriageStep::mtu : TriageStep::pfc) << x.subject << ": " << x.hint;
    (node2 ? mtu : other) += 1;
  }
  EXPECT_GT(mtu, 0);
  EXPECT_GT(other, 0) << "RoCE pairs without evidence start with PFC";
  const nlohmann::json j = with_id(f, "verbs_pair_bw").at(0);
  EXPECT_TRUE(j.at("triage") == "mtu" || j.at("triage") == "pfc") << j.dump();
}

TEST(VerbsRules, SlowNodeIsAnOutlierAndNamed) {
  const auto s = measured(2);  // node3 at 60 of 190
  auto profile = load_profile("lab-soft-roce").profile.value();
  const auto f = check_verbs(s, facts_for(s), profile);
  int failing = 0;
  for (const auto& x : with_id(f, "verbs_pair_outlier")) {
    const bool involves_node3 = x.subject.text().find("node3") != std::string::npos;
    EXPECT_EQ(x.verdict, involves_node3 ? Verdict::fail : Verdict::pass) << x.subject;
    failing += x.verdict == Verdict::fail;
  }
  EXPECT_EQ(failing, 6);  // 3 pairs x 2 directions
  const auto suspect = with_id(f, "verbs_suspect_endpoint");
  ASSERT_EQ(suspect.size(), 1u);
  EXPECT_EQ(suspect[0].subject, "node3/mlx5_0");
  EXPECT_NE(suspect[0].hint.find("3 of its 3 pairs"), std::string::npos) << suspect[0].hint;
  EXPECT_TRUE(with_id(f, "verbs_pair_latency").empty()) << "the lab profile has no absolute latency limit";
  EXPECT_EQ(with_id(f, "verbs_pair_bw").at(0).verdict, Verdict::skip);
}

TEST(VerbsRules, ErrorCellsFailAndNameTheVerbsStatus) {
  auto s = measured();
  for (auto& p : s.pairs)
    if (p.a == 1 || p.b == 1)
      for (auto& t : p.tests) {
        t.status = Status::error;
        t.reason = "node2/mlx5_0: transport retry counter exceeded (status 12, vendor error 0x81)";
        t.gbps.reset();
        t.latency.reset();
      }
  const auto f = check_verbs(s, facts_for(s), default_profile());
  const auto errors = with_id(f, "verbs_pair_error");
  EXPECT_EQ(errors.size(), 9u);  // 3 pairs x (2 write_bw + 1 latency)
  EXPECT_EQ(errors[0].verdict, Verdict::fail);
  EXPECT_NE(errors[0].hint.find("stopped acknowledging"), std::string::npos);
  EXPECT_EQ(with_id(f, "verbs_suspect_endpoint").at(0).subject, "node2/mlx5_0");
}

TEST(VerbsRules, LatencyLimitsByLinkLayerAndPayload) {
  auto s = measured();
  for (auto& p : s.pairs)
    for (auto& t : p.tests)
      if (t.test == "write_lat") t.latency = latency_stats({6, 7, 8});
  auto f = with_id(check_verbs(s, facts_for(s), default_profile()), "verbs_pair_latency");
  EXPECT_EQ(f[0].verdict, Verdict::fail);  // Ethernet limit 5 us
  for (auto& e : s.endpoints) e.link_layer = "InfiniBand";
  f = with_id(check_verbs(s, facts_for(s), default_profile()), "verbs_pair_latency");
  EXPECT_NE(f[0].expected.get<std::string>().find("2.5"), std::string::npos);
  auto payload = measured();
  payload.pairs[0].tests[0].verified = 20;
  payload.pairs[0].tests[0].mismatches = 3;
  const auto pf = with_id(check_verbs(payload, facts_for(payload), default_profile()), "verbs_payload");
  ASSERT_EQ(pf.size(), 1u);
  EXPECT_EQ(pf[0].verdict, Verdict::fail);
}

// The lab profile's latency outlier factor (3) catches a node whose pairs run 3.5x the typical
// p50, names it as the suspect (a warning: latency outliers warn), and leaves 2.5x alone.
TEST(VerbsRules, LatencyOutlierFactorCatchesASlowNodeAndOnlyIt) {
  const auto profile = load_profile("lab-soft-roce").profile.value();
  ASSERT_EQ(profile.verbs.latency_outlier_factor, 3.0);
  for (const double slowdown : {3.5, 2.5}) {
    auto s = measured();
    for (auto& p : s.pairs)
      for (auto& t : p.tests)
        if (t.test == "write_lat")
          t.latency = (p.a == 2 || p.b == 2) ? latency_stats({400 * slowdown, 410 * slowdown}) : latency_stats({400, 410});
    const auto f = check_verbs(s, facts_for(s), profile);
    const auto outliers = with_id(f, "verbs_latency_outlier");
    ASSERT_EQ(outliers.size(), 6u) << "one per pair";
    for (const auto& x : outliers) {
      const bool slow = slowdown > 3 && x.subject.text().find("node3") != std::string::npos;
      EXPECT_EQ(x.verdict, slow ? Verdict::warn : Verdict::pass) << slowdown << "x: " << x.subject;
    }
    const auto suspect = with_id(f, "verbs_suspect_endpoint");
    if (slowdown > 3) {
      ASSERT_EQ(suspect.size(), 1u);
      EXPECT_EQ(suspect[0].subject, "node3/mlx5_0");
      EXPECT_EQ(suspect[0].verdict, Verdict::warn) << "latency outliers alone make a warning, not a failure";
    } else {
      EXPECT_TRUE(suspect.empty()) << "2.5x is within the factor of 3";
    }
  }
}

// The first measurement of one direction of one pair dips: its round (and only it) is measured
// again, with the broken test only, before judging.
TEST(VerbsRules, ARoundWithAPairThatBrokeARuleIsMeasuredAgainWithTheBrokenTestsOnly) {
  const auto profile = load_profile("lab-soft-roce").profile.value();
  auto s = measured();
  EXPECT_TRUE(rounds_to_remeasure(s, facts_for(s), profile).empty()) << "a healthy matrix runs nothing again";
  s.pairs[3].tests[0].gbps = 80;  // 0.42 x the typical 190, below the lab's 0.5
  const auto again = rounds_to_remeasure(s, facts_for(s), profile);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].round, s.pairs[3].round);
  EXPECT_EQ(again[0].tests, std::vector<std::string>{"write_bw"});
  for (auto& t : s.pairs[3].tests)
    if (t.test == "write_lat") t.latency = latency_stats({9.0, 9.5});  // 4.7x the typical p50
  EXPECT_EQ(rounds_to_remeasure(s, facts_for(s), profile).at(0).tests, (std::vector<std::string>{"write_bw", "write_lat"})) << "in run order";
  const auto node3 = rounds_to_remeasure(measured(2), facts_for(s), profile);
  EXPECT_EQ(node3.size(), 3u) << "a slow node is in every round of a 4-node matrix";
}

// Judged with its re-measurement: a dip that does not repeat is a warning flagged intermittent (and
// names no suspect); one that repeats, or a re-measurement that errs, fails as before.
TEST(VerbsRules, ADipTheRemeasurementDoesNotRepeatIsAnIntermittentWarning) {
  const auto profile = load_profile("lab-soft-roce").profile.value();
  auto s = measured();
  s.pairs[3].tests[0].gbps = 80;
  auto judged = [&](std::optional<double> again_gbps, const std::string& error) {
    auto copy = s;
    if (again_gbps || !error.empty()) {
      PairResult r = copy.pairs[3];
      r.tests.resize(2);  // write_bw both ways: the broken test only
      for (auto& t : r.tests) t.gbps = again_gbps.value_or(190);
      if (!error.empty()) {
        r.tests[0].status = Status::error;
        r.tests[0].gbps.reset();
        r.tests[0].reason = error;
      }
      copy.remeasured.push_back(r);
    }
    const auto f = check_verbs(copy, facts_for(copy), profile);
    std::vector<Finding> out;
    for (const auto& x : with_id(f, "verbs_pair_outlier"))
      if (x.verdict != Verdict::pass) out.push_back(x);
    EXPECT_TRUE(with_id(f, "verbs_suspect_endpoint").empty());
    return out;
  };
  auto f = judged(190.0, "");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::warn);
  EXPECT_EQ(f[0].measured.at("intermittent"), true);
  EXPECT_EQ(f[0].measured.at("remeasured"), 190.0);
  EXPECT_EQ(f[0].measured.at("gbps"), 80.0) << "the first figure stays the finding's";
  f = judged(85.0, "");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail) << "the dip repeated";
  EXPECT_EQ(f[0].measured.at("intermittent"), false);
  f = judged(std::nullopt, "IBV_WC_RETRY_EXC_ERR");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail) << "a re-measurement that errs confirms nothing";
  EXPECT_EQ(f[0].measured.at("remeasured"), "IBV_WC_RETRY_EXC_ERR");
  f = judged(std::nullopt, "");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail) << "not re-measured (--no-verbs-remeasure)";
  EXPECT_FALSE(f[0].measured.contains("intermittent"));
}

TEST(VerbsRules, ALatencyDipTheRemeasurementDoesNotRepeatNamesNoSuspect) {
  const auto profile = load_profile("lab-soft-roce").profile.value();
  auto s = measured();
  for (auto& p : s.pairs)
    for (auto& t : p.tests)
      if (t.test == "write_lat" && (p.a == 2 || p.b == 2)) t.latency = latency_stats({9.0, 9.5});
  ASSERT_EQ(with_id(check_verbs(s, facts_for(s), profile), "verbs_suspect_endpoint").size(), 1u) << "node3: 3 slow pairs";
  for (const auto& p : s.pairs) {
    PairResult r = p;
    r.tests = {p.tests.back()};
    ASSERT_EQ(r.tests[0].test, "write_lat");
    r.tests[0].latency = latency_stats({1.8, 1.9});
    s.remeasured.push_back(r);
  }
  const auto f = check_verbs(s, facts_for(s), profile);
  EXPECT_TRUE(with_id(f, "verbs_suspect_endpoint").empty());
  int intermittent = 0;
  for (const auto& x : with_id(f, "verbs_latency_outlier"))
    if (x.verdict != Verdict::pass) {
      EXPECT_EQ(x.verdict, Verdict::warn);
      intermittent += x.measured.value("intermittent", false);
    }
  EXPECT_EQ(intermittent, 3);
  EXPECT_EQ(nlohmann::json(s).get<VerbsSection>().remeasured.size(), s.remeasured.size()) << "the re-measurements travel in the report";
}

// Two RoCE endpoints of mlx5_0, one on each host.
std::pair<VerbsEndpoint, VerbsEndpoint> roce_pair(const std::string& host_a, const std::string& host_b) {
  VerbsEndpoint a, b;
  a.host = host_a;
  b.host = host_b;
  a.device = b.device = "mlx5_0";
  a.link_layer = b.link_layer = "Ethernet";
  return {a, b};
}

TEST(Diagnosis, FollowsTheSeedOrder) {
  auto [a, b] = roce_pair("node1", "node2");
  a.rank = 0;
  b.rank = 1;
  a.active_mtu = 1024;
  b.active_mtu = 4096;
  a.rate_gbps = 100;
  b.rate_gbps = 200;
  auto c = test::cluster({test::node("node1", {test::hca("mlx5_0", test::roce_port(100))}), test::node("node2", {test::hca("mlx5_0", test::roce_port())})});
  c.nodes[0].rdma_devices[0].pcie = {8.0, 16.0, 3, 4, 16, 16};
  c.nodes[0].rdma_devices[0].numa_node = 1;
  c.nodes[0].numa_nodes = {{0, "0-23", std::nullopt}, {1, "24-47", std::nullopt}};
  c.nodes[0].ranks[0].cpus_allowed = "0-23";
  PairResult pair;
  pair.counter_deltas["node2/mlx5_0"] = {{"out_of_sequence", 40}, {"symbol_error", 7}};
  const auto d = diagnose_pair(a, b, c, &pair);
  ASSERT_EQ(d.size(), 6u);
  const std::vector<TriageStep> steps = {TriageStep::mtu, TriageStep::pfc, TriageStep::link, TriageStep::link, TriageStep::pcie, TriageStep::numa};
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(d[i].step, steps[i]) << d[i].text;
  EXPECT_NE(d[0].text.find("MTU mismatch"), std::string::npos) << d[0].text;
  EXPECT_NE(d[1].text.find("PFC"), std::string::npos) << d[1].text;
  EXPECT_NE(d[2].text.find("trained at 100 Gb/s"), std::string::npos) << d[2].text;
  EXPECT_NE(d[3].text.find("symbol_error +7"), std::string::npos) << d[3].text;
  EXPECT_NE(d[4].text.find("PCIe link runs Gen3 x16 of Gen4 x16"), std::string::npos) << d[4].text;
  EXPECT_NE(d[5].text.find("NUMA node 1"), std::string::npos) << d[5].text;
  b.active_mtu = 1024;
  a.rate_gbps = 200;
  const auto none = diagnose_pair(a, b, test::cluster({test::node("node1", {}), test::node("node2", {})}), nullptr);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].text.find("RoCE MTU 1024 on both ends"), std::string::npos);
  EXPECT_EQ(none[0].step, TriageStep::mtu);
}

// A slow pair whose ends reach different leaves says so (the traffic crosses the spine); ends on
// one leaf, or a neighbour not read, say nothing of it.
TEST(Diagnosis, EndsOnDifferentLeavesCrossTheSpine) {
  auto [a, b] = roce_pair("gpu1", "gpu3");
  a.active_mtu = b.active_mtu = 4096;
  auto c = test::cluster({test::node("gpu1", {test::hca("mlx5_0", test::roce_port())}), test::node("gpu3", {test::hca("mlx5_0", test::roce_port())})});
  c.nodes[0].rdma_devices[0].ports[0].neighbour = PortNeighbour{"lldpd", "LEAF01", "mac 1", "Ethernet184", "", ""};
  c.nodes[1].rdma_devices[0].ports[0].neighbour = PortNeighbour{"lldpd", "LEAF02", "mac 2", "Ethernet184", "", ""};
  const auto d = diagnose_pair(a, b, c, nullptr);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].text, "gpu1/mlx5_0 is cabled to LEAF01 and gpu3/mlx5_0 to LEAF02: the pair crosses the spine (HCAs of one rail on one leaf keep it "
                       "there; check the cabling with --check-cabling).");
  c.nodes[1].rdma_devices[0].ports[0].neighbour->switch_name = "LEAF01";
  EXPECT_EQ(diagnose_pair(a, b, c, nullptr).at(0).text.find("crosses the spine"), std::string::npos);
  c.nodes[1].rdma_devices[0].ports[0].neighbour = PortNeighbour{"lldpd", "", "", "", "", "no LLDP neighbour heard on eth1"};
  EXPECT_EQ(diagnose_pair(a, b, c, nullptr).at(0).text.find("crosses the spine"), std::string::npos);
}

TEST(Diagnosis, NothingFoundSaysWhatToCheckInOrder) {
  VerbsEndpoint a, b;
  a.host = "node1";
  b.host = "node2";
  a.link_layer = b.link_layer = "InfiniBand";
  const auto d = diagnose_pair(a, b, test::cluster({test::node("node1", {}), test::node("node2", {})}), nullptr);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].text.find("Nothing in the inventory explains it"), std::string::npos);
  EXPECT_LT(d[0].text.find("Cable"), d[0].text.find("PCIe"));
  EXPECT_EQ(d[0].step, TriageStep::link) << "InfiniBand: the cable and the subnet manager come first";
}

// A dip that passes its re-measurement stays a warning only when the ports' error counters were
// clean during the failing pair run: a counter that moved (a RoCE retransmission, a symbol error)
// is the fault showing itself, and the dip fails naming the port and the counter.
TEST(VerbsRules, AnIntermittentDipWithAnErrorCounterThatMovedFails) {
  const auto profile = load_profile("lab-soft-roce").profile.value();
  auto s = measured();
  s.pairs[3].tests[0].gbps = 80;
  PairResult again = s.pairs[3];
  again.tests.resize(2);
  for (auto& t : again.tests) t.gbps = 190;
  s.remeasured.push_back(again);
  const auto label = s.endpoints[static_cast<size_t>(s.pairs[3].b)].label();
  s.pairs[3].counter_deltas[label] = {{"rcvd_pkts", 5000}};  // traffic, not an error: still a warning
  auto outlier = [&](const VerbsSection& section) {
    for (const auto& f : with_id(check_verbs(section, facts_for(section), profile), "verbs_pair_outlier"))
      if (f.verdict != Verdict::pass) return f;
    return Finding();
  };
  EXPECT_EQ(outlier(s).verdict, Verdict::warn);
  s.pairs[3].counter_deltas[label]["rcvd_seq_err"] = 3;
  const auto f = outlier(s);
  EXPECT_EQ(f.verdict, Verdict::fail);
  EXPECT_EQ(f.measured.at("intermittent"), true);
  EXPECT_EQ(f.measured.at("counters_moved"), label + ": rcvd_seq_err +3");
}

// A pair that was planned and not measured (a port DOWN on one side) is not proven, with the
// reason; a matrix without any pair proves nothing.
TEST(VerbsRules, APairNotMeasuredIsNotProvenAndAnEmptyMatrixToo) {
  const auto profile = load_profile("lab-soft-roce").profile.value();
  auto s = measured();
  for (auto& t : s.pairs[0].tests) {
    t.status = Status::not_measured;
    t.gbps.reset();
    t.latency.reset();
    t.reason = "port DOWN on node2/mlx5_0:1";
  }
  const auto f = with_id(check_verbs(s, facts_for(s), profile), "verbs_pair_not_measured");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::not_proven);
  EXPECT_EQ(f[0].measured, "port DOWN on node2/mlx5_0:1");
  EXPECT_EQ(worst_verdict(check_verbs(s, facts_for(s), profile)), Verdict::not_proven);
  VerbsSection empty = s;
  empty.pairs.clear();
  const auto none = check_verbs(empty, facts_for(empty), profile);
  ASSERT_EQ(with_id(none, "verbs_pairs").size(), 1u);
  EXPECT_EQ(worst_verdict(none), Verdict::not_proven);
}

}  // namespace

// --verbs-mode auto plans the full matrix up to 16 nodes and locate above, which plans no task
// ahead: the locator chooses each round from the results so far.
TEST(VerbsPlan, AutoModeLocatesAboveSixteenNodes) {
  VerbsOptions o;
  o.mode = "auto";
  const auto small = plan_verbs(cluster_of(16, 1, 1), default_profile(), o);
  EXPECT_EQ(small.options.mode, "rounds");
  EXPECT_EQ(small.rounds, 15);
  const auto large = plan_verbs(cluster_of(17, 2, 2), default_profile(), o);
  EXPECT_EQ(large.options.mode, "locate");
  EXPECT_TRUE(large.tasks.empty());
  EXPECT_EQ(large.endpoints.size(), 34u);
}

// A locate section: each named fault fails with its answer line, an unsettled suspect is not
// proven, and the report shows the answers and what was exercised instead of a square matrix.
TEST(VerbsRules, LocateFaultsFailUnsettledSuspectsAreNotProvenAndTheReportSaysWhatWasTested) {
  VerbsSection s;
  s.options.tests = {"write_bw"};
  VerbsLocate l;
  l.figure = "write_bw: Gb/s, the slower way";
  l.slow_below = 0.85;
  l.rounds = 7;
  l.nodes = 1024;
  l.rails = 8;
  l.pairs_tested = 4300;
  l.pairs_total = 4190208;
  l.faults.push_back({"node", "node0017: slow with every partner on all 8 rails, 0.68 of the typical pair, 40 test(s)", {"node0017"}, "", -1, 0.68, {1, 2}, {3}});
  l.unresolved.push_back("node0300 on rail 2: 2 slow test(s), not enough cleared partners to name or clear it");
  s.locate = l;
  const auto f = check_verbs(s, ClusterFacts{}, default_profile());
  const auto faults = with_id(f, "verbs_locate_fault");
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].verdict, Verdict::fail);
  EXPECT_EQ(faults[0].subject.text(), "node0017");
  EXPECT_NE(faults[0].hint.find("0.68 of the typical pair"), std::string::npos);
  EXPECT_EQ(faults[0].rule.rfind("a test under 0.85 of its rail's healthy rate is slow; ", 0), 0u) << faults[0].rule;
  const auto unsettled = with_id(f, "verbs_locate_unresolved");
  ASSERT_EQ(unsettled.size(), 1u);
  EXPECT_EQ(unsettled[0].verdict, Verdict::not_proven);
  const nlohmann::json j = s;
  EXPECT_FALSE(j.contains("matrix")) << "no square matrix of 8 192 endpoints";
  EXPECT_EQ(j["locate"]["faults"][0]["hosts"][0], "node0017");
  EXPECT_EQ(j.get<VerbsSection>().locate->pairs_tested, 4300u) << "read back";
  EXPECT_EQ(j["locate"]["slow_below"], 0.85);
  Report report;
  report.verbs = s;
  const auto md = render_markdown(report);
  EXPECT_NE(md.find("## Verbs: locate"), std::string::npos) << md;
  EXPECT_NE(md.find("- node0017: slow with every partner"), std::string::npos) << md;
  EXPECT_NE(md.find("pairs tested: 4300 of 4190208 (0.1%)"), std::string::npos) << md;
  EXPECT_NE(md.find("compared by write_bw: Gb/s, the slower way, slow under 0.85 of the rail's healthy rate; 7 round(s)"), std::string::npos) << md;
  EXPECT_NE(render_html(report).find("not settled: node0300 on rail 2"), std::string::npos);
  s.locate->faults.clear();
  s.locate->unresolved.clear();
  const auto pass = with_id(check_verbs(s, ClusterFacts{}, default_profile()), "verbs_locate_fault");
  ASSERT_EQ(pass.size(), 1u);
  EXPECT_EQ(pass[0].verdict, Verdict::pass);
  EXPECT_EQ(pass[0].measured["pairs_tested"], 4300) << "a pass says how much it tested";
}

namespace {

TestResult latency_test(double p50_usec) {
  TestResult t;
  t.test = "write_lat";
  t.latency = LatencyStats{p50_usec / 2, p50_usec, p50_usec, p50_usec * 2, p50_usec * 3, 50};
  return t;
}

}  // namespace

// Locate compares pairs by bandwidth where a bandwidth test runs, else by round trips per second:
// a 10x slower hop gives a tenth of the figure; a way that did not complete gives none.
TEST(VerbsLocateFigure, BandwidthFirstElseRoundTripsPerSecond) {
  EXPECT_EQ(locate_figure_test({"write_lat", "write_bw"}), "write_bw");
  EXPECT_EQ(locate_figure_test({"write_lat", "send_bw"}), "send_bw");
  EXPECT_EQ(locate_figure_test({"write_lat"}), "write_lat");
  PairResult r;
  r.tests = {latency_test(20), latency_test(40)};
  ASSERT_TRUE(locate_figure(r, "write_lat").has_value());
  EXPECT_DOUBLE_EQ(*locate_figure(r, "write_lat"), 1e6 / 40) << "the slower way";
  TestResult bw;
  bw.test = "write_bw";
  bw.gbps = 12.5;
  r.tests.push_back(bw);
  EXPECT_DOUBLE_EQ(*locate_figure(r, "write_bw"), 12.5);
  r.tests[0].status = Status::error;
  EXPECT_FALSE(locate_figure(r, "write_lat").has_value());
  r.tests[1].latency.reset();
  r.tests[0].status = Status::ok;
  EXPECT_FALSE(locate_figure(r, "write_lat").has_value()) << "no latency measured is no figure";
}

}  // namespace fabricproof
