// The localisation planners (suite/locate) against the simulated fabric: each fault kind named with
// its evidence, no healthy node accused, the rounds far below the full matrix's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "locate/group_locator.hpp"
#include "locate/leaf_map.hpp"
#include "locate/pair_locator.hpp"
#include "locate/simulated_fabric.hpp"

using namespace fabricproof::locate;

namespace {

PairLocator run_pairs(const SimulatedFabric& sim, uint64_t seed = 1, std::optional<double> expected = {}) {
  PairSettings settings;
  settings.seed = seed;
  settings.expected = expected;
  PairLocator locator(sim.fabric, settings);
  std::mt19937_64 rng(seed + 100);
  for (auto tests = locator.next_round(); !tests.empty(); tests = locator.next_round()) {
    // On each rail a node is in at most one test of a round: the tests of a round run at once.
    std::set<std::pair<int, int>> busy;
    std::vector<PairResult> results;
    for (const auto& t : tests) {
      EXPECT_TRUE(busy.insert({t.rail, t.a}).second && busy.insert({t.rail, t.b}).second) << "node twice on a rail in round " << locator.rounds();
      results.push_back({t, 0, sim.measure(t, rng)});
    }
    locator.record(results);
  }
  return locator;
}

GroupLocator run_groups(const SimulatedFabric& sim, uint64_t seed = 1) {
  GroupSettings settings;
  settings.seed = seed;
  GroupLocator locator(sim.fabric, settings);
  std::mt19937_64 rng(seed + 100);
  for (auto tests = locator.next_round(); !tests.empty(); tests = locator.next_round()) {
    std::set<int> busy;
    std::vector<GroupResult> results;
    for (const auto& t : tests) {
      for (int n : t.nodes) EXPECT_TRUE(busy.insert(n).second) << "node in two groups of round " << locator.rounds();
      results.push_back({t, 0, sim.measure(t, rng)});
    }
    locator.record(results);
  }
  return locator;
}

SimulatedFabric fabric(int nodes, int rails, int leaf_size, std::vector<InjectedFault> faults = {}) {
  SimulatedFabric sim;
  sim.fabric = make_fabric(nodes, rails, leaf_size);
  sim.faults = std::move(faults);
  return sim;
}

}  // namespace

TEST(LocatePairs, AHealthyFabricIsClearedInAFewRoundsWithNobodyNamed) {
  const auto sim = fabric(256, 4, 32);
  const auto locator = run_pairs(sim);
  EXPECT_TRUE(locator.answer().faults.empty());
  EXPECT_TRUE(locator.answer().unresolved.empty());
  EXPECT_LE(locator.rounds(), 8) << "against 255 for the full matrix";
  const auto c = locator.coverage();
  EXPECT_EQ(c.nodes_tested, 256);
  EXPECT_EQ(c.leaf_paths_tested, c.leaf_paths_total) << "every leaf met every other leaf, on every rail";
  EXPECT_LT(c.pairs_tested, c.pairs_total / 10) << "and it says it tested a small share of the pairs";
}

TEST(LocatePairs, ASlowNodeIsNamedWithTheTestsThatImplicateItAndThoseThatClearedItsPartners) {
  const auto sim = fabric(256, 4, 32, {{FaultKind::node, 37, -1, -1, -1, 0.68}});
  const auto locator = run_pairs(sim);
  const auto faults = locator.answer().faults;
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].kind, FaultKind::node);
  EXPECT_EQ(faults[0].node, 37);
  EXPECT_NEAR(faults[0].ratio, 0.68, 0.05);
  EXPECT_GE(faults[0].implicating.size(), 4u * 5) << "five partners a rail";
  EXPECT_FALSE(faults[0].clearing.empty());
  EXPECT_NE(faults[0].summary.find("node0038: slow with every partner on all 4 rails"), std::string::npos) << faults[0].summary;
}

TEST(LocatePairs, ADeadNodeAPortAndALeafAtOnceAreEachNamedAsWhatTheyAre) {
  const auto sim = fabric(512, 8, 32,
                          {{FaultKind::node, 5, -1, -1, -1, 0}, {FaultKind::port, 300, -1, 6, -1, 0.6}, {FaultKind::leaf, -1, -1, 2, 9, 0.6}});
  const auto locator = run_pairs(sim);
  const auto s = score(sim.faults, locator.answer().faults);
  EXPECT_EQ(s.found, 3);
  EXPECT_EQ(s.false_named, 0);
  for (const auto& f : locator.answer().faults) {
    const char* says = f.kind == FaultKind::node ? "no test with it completed" : f.kind == FaultKind::port ? "on rail 6" : "fine among themselves";
    EXPECT_NE(f.summary.find(says), std::string::npos) << f.summary;
  }
  EXPECT_LE(locator.rounds(), 40);
}

// A link: one pair slow, both ends fine with everyone else. Up to 8 nodes every pair is screened.
TEST(LocatePairs, ALinkBetweenTwoGoodNodesIsNamedAfterItsRepeats) {
  const auto sim = fabric(4, 1, 0, {{FaultKind::link, 1, 3, 0, -1, 0.5}});
  const auto locator = run_pairs(sim);
  const auto faults = locator.answer().faults;
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].kind, FaultKind::link);
  EXPECT_EQ(std::minmax(faults[0].node, faults[0].peer), std::minmax(1, 3));
  EXPECT_GE(faults[0].implicating.size(), 5u) << "the first test and four repeats";
  EXPECT_NE(faults[0].summary.find("both fine with other partners"), std::string::npos);
}

// Four nodes, as the lab: a slow node has three partners only, and is tested with them again until
// five tests found it slow.
TEST(LocatePairs, ASlowNodeOfAFourNodeClusterIsNamedAfterRepeatsWithItsThreePartners) {
  const auto sim = fabric(4, 1, 0, {{FaultKind::node, 2, -1, -1, -1, 0.25}});
  const auto locator = run_pairs(sim);
  const auto faults = locator.answer().faults;
  ASSERT_EQ(faults.size(), 1u) << (locator.answer().unresolved.empty() ? "" : locator.answer().unresolved.front());
  EXPECT_EQ(faults[0].kind, FaultKind::node);
  EXPECT_EQ(faults[0].node, 2);
  EXPECT_GE(faults[0].implicating.size(), 5u);
}

// Dips come and go: a slow test repeated at the typical rate names nobody, and is counted.
TEST(LocatePairs, TransientDipsAreCountedNotNamed) {
  auto sim = fabric(128, 2, 16);
  sim.dip_rate = 0.05;
  const auto locator = run_pairs(sim, 7);
  EXPECT_TRUE(locator.answer().faults.empty()) << locator.answer().faults.front().summary;
  EXPECT_GT(locator.answer().transient_dips, 0);
}

// Two nodes and nothing else: a slow pair (against the rate expected beforehand: one test has no
// typical of its own) cannot say which end is at fault, and says so.
TEST(LocatePairs, WhatCannotBeSettledIsReportedUnresolvedNotPassed) {
  const auto sim = fabric(2, 1, 0, {{FaultKind::node, 0, -1, -1, -1, 0.5}});
  const auto locator = run_pairs(sim, 1, sim.typical);
  EXPECT_TRUE(locator.answer().faults.empty());
  ASSERT_FALSE(locator.answer().unresolved.empty());
  EXPECT_NE(locator.answer().unresolved.front().find("not enough cleared partners"), std::string::npos);
}

// Replays a lab run (lab_verbs-faults, 2026-12-06; write_bw, the slower way, Gb/s): node1 <-> node3
// shaped to a quarter, every other pair healthy but for node3 <-> node4, which came back at
// 0.41-0.45 in each of its five tests (one direction dipping in turn) against a healthy rate of
// 0.57. At the default 0.85 that pair is named a link beside the real one; at the lab profile's
// locate_slow_below (0.5, as its outlier ratio) only the shaped link is.
std::vector<Fault> replay_lab_link_run(double slow_below) {
  std::map<std::pair<int, int>, std::vector<double>> measured{
      {{0, 3}, {0.569}}, {{1, 2}, {0.522}}, {{0, 2}, {0.13, 0.13, 0.13, 0.131, 0.13}}, {{1, 3}, {0.572}},
      {{0, 1}, {0.474, 0.595}}, {{2, 3}, {0.451, 0.411, 0.432, 0.444, 0.451}}};
  PairSettings settings;
  settings.slow_below = slow_below;
  PairLocator locator(make_fabric(4, 1, 0), settings);
  std::map<std::pair<int, int>, size_t> asked;
  for (auto tests = locator.next_round(); !tests.empty(); tests = locator.next_round()) {
    std::vector<PairResult> results;
    for (const auto& t : tests) {
      const auto& values = measured.at({t.a, t.b});
      results.push_back({t, 0, values[std::min(asked[{t.a, t.b}]++, values.size() - 1)]});
    }
    locator.record(results);
  }
  return locator.answer().faults;
}

TEST(LocatePairs, TheLabsHealthySpreadIsNamedAtTheDefaultThresholdButNotAtTheLabProfiles) {
  const auto at_default = replay_lab_link_run(PairSettings{}.slow_below);
  ASSERT_EQ(at_default.size(), 2u);
  EXPECT_EQ(std::minmax(at_default[1].node, at_default[1].peer), std::minmax(2, 3)) << at_default[1].summary;
  const auto at_lab = replay_lab_link_run(0.5);
  ASSERT_EQ(at_lab.size(), 1u) << at_lab[1].summary;
  EXPECT_EQ(at_lab[0].kind, FaultKind::link);
  EXPECT_EQ(std::minmax(at_lab[0].node, at_lab[0].peer), std::minmax(0, 2));
}

TEST(LocatePairs, NoHealthyNodeIsNamedOverManyNoisyTrials) {
  int named = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) named += static_cast<int>(run_pairs(fabric(256, 8, 32), seed).answer().faults.size());
  EXPECT_EQ(named, 0);
}

TEST(LocateGroups, ASlowNodeIsFoundByHalvingInLog2Rounds) {
  const auto sim = fabric(1024, 8, 0, {{FaultKind::node, 700, -1, -1, -1, 0.7}});
  const auto locator = run_groups(sim);
  const auto faults = locator.faults();
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].node, 700);
  EXPECT_NEAR(faults[0].ratio, 0.7, 0.06);
  EXPECT_LE(locator.rounds(), 2 * 10 + 8);
  EXPECT_NE(faults[0].summary.find("node0701: slow with every cleared partner"), std::string::npos) << faults[0].summary;
}

TEST(LocateGroups, AHealthyClusterEndsAfterItsFirstRoundWithNobodyNamed) {
  const auto locator = run_groups(fabric(64, 8, 0));
  EXPECT_TRUE(locator.faults().empty());
  EXPECT_TRUE(locator.unresolved().empty());
  EXPECT_LE(locator.rounds(), 2);
}

TEST(LocateGroups, TwoDeadNodesAreBothNamed) {
  const auto sim = fabric(64, 4, 0, {{FaultKind::node, 3, -1, -1, -1, 0}, {FaultKind::node, 40, -1, -1, -1, 0}});
  const auto s = score(sim.faults, run_groups(sim).faults());
  EXPECT_EQ(s.found, 2);
  EXPECT_EQ(s.false_named, 0);
}

// A fabric as noisy as sixteen ranks on two cores (20% noise, a healthy group at 0.6 of its round
// now and then): the first round and the control groups show the noise, and no healthy node is
// named for it over many trials; a node at a tenth of the rest is named beyond it, or at worst left
// unsettled (not proven), never cleared.
TEST(LocateGroups, OnANoisyFabricNobodyHealthyIsNamedAndAVerySlowNodeIsNeverCleared) {
  int healthy_named = 0, found = 0, unsettled = 0, cleared = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    auto sim = fabric(16, 1, 0);
    sim.noise = 0.2;
    healthy_named += static_cast<int>(run_groups(sim, seed).faults().size());
    auto slow = fabric(16, 1, 0, {{FaultKind::node, 11, -1, -1, -1, 0.1}});
    slow.noise = 0.2;
    const auto locator = run_groups(slow, seed);
    const auto s = score(slow.faults, locator.faults());
    found += s.found;
    healthy_named += s.healthy_named;
    const auto u = locator.unresolved();
    const bool left = std::any_of(u.begin(), u.end(), [](const std::string& line) { return line.rfind("node0012:", 0) == 0; });
    unsettled += left;
    cleared += !s.found && !left;
  }
  EXPECT_EQ(healthy_named, 0);
  EXPECT_EQ(cleared, 0) << "the 0.1x node cleared: a false pass";
  EXPECT_GE(found, 180) << "of 200; unsettled in " << unsettled;
}

// Two slow nodes tested in a round that holds suspects only (no control group): the round's own
// upper quartile is one of them, and without the earlier rounds' healthy figure both would be
// cleared as normal.
TEST(LocateGroups, ARoundOfSuspectsOnlyIsJudgedAgainstTheEarlierHealthyGroups) {
  Fabric f = make_fabric(8, 1, 0);
  GroupSettings settings;
  settings.controls = 0;
  GroupLocator locator(f, settings);
  auto tests = locator.next_round();
  ASSERT_EQ(tests.size(), 4u);
  std::vector<GroupResult> first;
  for (size_t i = 0; i < tests.size(); ++i) first.push_back({tests[i], 0, i == 3 ? 30.0 : 100.0});
  locator.record(first);
  const auto suspects = tests[3].nodes;
  tests = locator.next_round();  // each suspect with a cleared partner, nothing else
  ASSERT_EQ(tests.size(), 2u);
  std::vector<GroupResult> second;
  for (const auto& t : tests) second.push_back({t, 0, 30.0});
  locator.record(second);
  EXPECT_EQ(locator.unresolved().size(), 2u) << "both suspects still open after one round";
  for (int round = 0; round < 3 && !(tests = locator.next_round()).empty(); ++round) {
    std::vector<GroupResult> more;
    for (const auto& t : tests) more.push_back({t, 0, 30.0});
    locator.record(more);
  }
  int named = 0;
  for (const auto& fault : locator.faults()) named += fault.node == suspects[0] || fault.node == suspects[1];
  EXPECT_EQ(named + static_cast<int>(locator.unresolved().size()), 2) << "each suspect named or unsettled, never cleared";
}

TEST(LocateGroups, ATestWithinTheNoiseLeavesItsNodeUnsettledNotNamed) {
  int named = 0, unsettled = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    auto sim = fabric(16, 1, 0, {{FaultKind::node, 5, -1, -1, -1, 0.75}});
    sim.noise = 0.25;
    const auto locator = run_groups(sim, seed);
    named += static_cast<int>(locator.faults().size());
    for (const auto& u : locator.unresolved()) unsettled += u.find("beyond this fabric's noise") != std::string::npos;
  }
  EXPECT_GT(unsettled, 0) << "a 0.75x node in 25% noise is unsettled in some trials";
  EXPECT_LT(named + unsettled, 400);
}

TEST(LocateLeafMap, LinesByHostOrDeviceAndEveryProblemNamedWithItsLine) {
  const auto map = parse_leaf_map("# rack A\nnode1 leafA\nnode2 mlx5_1 leafB  # rail 1 elsewhere\nnode2 leafA\n\nnode3\nnode1 leafC\n", "leaves.txt");
  EXPECT_EQ(map.leaf_of("node1", "mlx5_0"), "leafA");
  EXPECT_EQ(map.leaf_of("node2", "mlx5_1"), "leafB");
  EXPECT_EQ(map.leaf_of("node2", "mlx5_0"), "leafA");
  ASSERT_EQ(map.errors.size(), 2u);
  EXPECT_EQ(map.errors[0], "leaves.txt:6: 'node3' names no leaf; expected '<host> <leaf>' or '<host> <device> <leaf>'");
  EXPECT_EQ(map.errors[1], "leaves.txt:7: node1 is on leaf 'leafC' here and on 'leafA' above");
  Fabric f = make_fabric(3, 2, 0);
  f.names = {"node1", "node2", "node3"};
  const auto missing = assign_leaves(f, map, {{"mlx5_0", "mlx5_1"}, {"mlx5_0", "mlx5_1"}, {"mlx5_0", "mlx5_1"}});
  EXPECT_EQ(missing, (std::vector<std::string>{"node3 mlx5_0", "node3 mlx5_1"}));
  EXPECT_FALSE(f.leaves_known()) << "a map that leaves an HCA out is not used";
}
