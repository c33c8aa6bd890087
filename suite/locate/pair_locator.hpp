#pragma once
// Finds the bad nodes, ports, links and leaves of a fabric with verbs pair tests, in rounds of
// disjoint pairs (on each rail a node is in at most one test per round), without the full matrix:
// 1. screen: every node tested with a few different partners (every pair, up to 8 nodes) (with leaves known: one round inside
//    its leaf, then rounds across leaves chosen so that every leaf meets as many others as it can);
// 2. a test at or above `slow_below` of its rail's typical one clears both of its ends; a node with
//    slow tests only is tested again with nodes already cleared, from its own leaf first (so a leaf
//    fault does not pass for a node fault), until `confirmations` tests with cleared partners found it slow;
// 3. a slow test between two cleared nodes is repeated: a dip that does not come back is transient,
//    one that comes back every time is a link, unless the leaf explains it: a leaf whose tests
//    across are mostly slow in two rounds while its nodes are fine inside it is named instead.
// Nothing is named on one test: with dips of 1% a healthy node is named with odds of 1% to the
// power `confirmations`. Pure: no MPI, no device; the phase and the simulator drive it alike.
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "locate/fabric.hpp"

namespace fabricproof::locate {

struct PairSettings {
  double slow_below = 0.85;  // of the rail's typical test: a node at 0.7x is a fault, 3% noise is not
  // The healthy rate of a test when it is known beforehand (the profile's, from the ports' rate);
  // else the upper quartile of the rail's screening tests, which needs a quarter of them healthy.
  std::optional<double> expected;
  int screening_cross_rounds = 2;  // rounds across leaves (or of random partners when leaves are unknown)
  int confirmations = 5;     // slow tests with cleared partners (three different ones at least) before a node is named
  int pair_repeats = 4;      // repeats of a slow test between cleared nodes before a link is named
  int max_rounds = 64;
  uint64_t seed = 1;
};

struct PairAnswer {
  std::vector<Fault> faults;
  std::vector<std::string> unresolved;
  int transient_dips = 0;
};

class PairLocator {
 public:
  PairLocator(Fabric fabric, PairSettings settings = {});
  // The next round's tests; empty when every node is cleared or named (or nothing more can be learnt).
  std::vector<PairTest> next_round();
  // What the round's tests measured (one result per test of next_round(), any order).
  void record(const std::vector<PairResult>& round);
  // What the tests so far say: the faults named, the suspects they could not settle (no cleared
  // partner left: reported, never passed) and the slow tests that did not come back when repeated.
  PairAnswer answer() const;
  int rounds() const { return rounds_; }
  const PairSettings& settings() const { return settings_; }
  const std::vector<PairResult>& results() const { return results_; }
  Coverage coverage() const;
  const Fabric& fabric() const { return fabric_; }

 private:
  struct RailEvidence;
  struct Evidence;
  struct LeafTally {
    int leaf = -1, across = 0, slow = 0, inside_ok = 0;
    std::set<int> slow_leaves, slow_rounds;
    std::vector<size_t> implicating, clearing;
    std::vector<double> values;
  };
  std::map<int, LeafTally> tally_leaves(int rail, const RailEvidence& r, const std::vector<char>& slow) const;
  Evidence analyse() const;
  void flag_leaves(int rail, RailEvidence& r, const std::vector<char>& slow) const;
  void judge_endpoints(int rail, RailEvidence& r, const std::vector<char>& slow) const;
  void judge_pairs(int rail, RailEvidence& r, const std::vector<char>& slow) const;
  bool across_flagged(int rail, const RailEvidence& r, const PairTest& t) const;
  static constexpr int kEveryPairUpTo = 8;
  int screening_rounds() const;
  std::vector<PairTest> screening_round(int rail);
  std::vector<PairTest> inside_leaves(int rail);
  std::vector<PairTest> across_leaves(int rail);
  std::vector<PairTest> follow_up(int rail, const RailEvidence& e);
  bool tested(int rail, int a, int b) const;
  std::vector<Fault> merge_ports(std::vector<Fault> ports, const Evidence& e) const;
  void add_clearing(const RailEvidence& r, const std::vector<char>& slow, int node, Fault& f) const;

  Fabric fabric_;
  PairSettings settings_;
  std::mt19937_64 rng_;
  int rounds_ = 0;
  bool stalled_ = false;
  std::vector<PairResult> results_;
  std::set<std::tuple<int, int, int>> tested_;  // (rail, a, b)
  std::vector<std::map<std::pair<int, int>, int>> leaf_meetings_;  // per rail: leaf pair -> tests across it
};

}  // namespace fabricproof::locate
