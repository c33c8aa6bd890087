#pragma once
// Finds the bad nodes of a cluster with collectives on groups of nodes run at the same time (as an
// allreduce over everything says that something is slow, not what): the nodes split into groups,
// a group below `slow_below` of the reference splits in halves, tested side by side, down to two
// or three nodes; each of those is then tested with nodes already cleared, and named once
// `confirmations` such partners found it slow beyond the noise floor that the first round and the
// control groups (cleared nodes measured again) show: on a noisy fabric a test below `slow_below` of the
// reference but above that floor says nothing, and a node with twice `confirmations` slow tests
// and too few beyond the noise is left unsettled (not proven), neither named nor cleared. A round's reference for a size is the upper quartile of
// its groups of that size, with control groups of cleared nodes added so that a round of mostly
// suspect groups is still compared like with like (bus bandwidth moves with the group's size).
// Pure: no MPI, no device.
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "locate/fabric.hpp"

namespace fabricproof::locate {

struct GroupSettings {
  double slow_below = 0.85;
  int first_groups = 8;      // the first round's groups (fewer when the nodes are few)
  int controls = 3;          // control groups per size and round, where cleared nodes allow
  int confirmations = 3;
  int max_rounds = 64;
  uint64_t seed = 1;
};

class GroupLocator {
 public:
  GroupLocator(Fabric fabric, GroupSettings settings = {});
  std::vector<GroupTest> next_round();  // empty: done
  void record(const std::vector<GroupResult>& round);  // in next_round()'s order
  std::vector<Fault> faults() const { return named_; }
  std::vector<std::string> unresolved() const;
  int transient_dips() const { return dips_; }
  int rounds() const { return rounds_; }
  const std::vector<GroupResult>& results() const { return results_; }

 private:
  enum class Role { split, single, control };
  struct Planned {
    Role role = Role::split;
    int single = -1;  // Role::single: the node under test (the other is its cleared partner)
    int sibling = -1;  // Role::split after the first round: the other half's index in the round
  };
  std::vector<int> cleared_pool() const;
  void add_controls(std::vector<GroupTest>& tests, std::vector<int>& pool, std::vector<bool>& busy);
  void judge_single(int node, int partner, bool slow, size_t result);
  std::map<size_t, double> references(const std::vector<GroupResult>& round) const;
  double naming_bar() const;  // a single test below this ratio implicates its node
  void name_node(int node, const std::vector<size_t>& implicating);

  Fabric fabric_;
  GroupSettings settings_;
  std::mt19937_64 rng_;
  int rounds_ = 0;
  int dips_ = 0;
  std::vector<GroupResult> results_;
  std::vector<double> ratios_;  // by result: against its round's reference for its size
  std::vector<std::vector<int>> to_split_;  // slow groups not yet split
  std::vector<int> singles_;                // nodes to test with cleared partners
  std::vector<bool> cleared_, named_node_;
  std::vector<std::vector<int>> slow_partners_;  // per node: cleared partners that found it slow
  std::map<size_t, std::vector<double>> healthy_values_;  // per group size: controls, the first round's groups not slow
  std::vector<double> noise_ratios_;  // the first round's and every control group's ratio: the fabric's noise
  bool noise_known() const { return noise_ratios_.size() >= 12; }
  std::vector<std::string> unsettled_;
  std::vector<std::vector<size_t>> implicating_;  // per node: result indices
  std::vector<Planned> planned_;
  std::vector<Fault> named_;
};

}  // namespace fabricproof::locate
