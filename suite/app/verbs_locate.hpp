#pragma once
// --verbs-mode locate, rank 0's side: the localisation planner (suite/locate) over the plan's nodes
// and rails, its tests as verbs tasks, the tasks' figures back as its results (a bandwidth test's
// Gb/s, else write_lat's round trips per second), and what it found as the report's section. The
// ranks run each round's tasks as any matrix round.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/profile.hpp"
#include "locate/leaf_map.hpp"
#include "locate/pair_locator.hpp"
#include "verbs/verbs_plan.hpp"

namespace fabricproof::app {

class LocateDriver {
 public:
  // Nodes and rails from the plan's endpoints. Compared by latency, a test is slow beyond the
  // profile's latency outlier factor (the matrix's own rule: latency spreads more than bandwidth);
  // by bandwidth, below the profile's locate_slow_below of the rail's healthy rate (0.85; the lab's
  // 0.5). Leaves: the --leaf-map file, else `neighbours` (locate::leaf_map_of_ports) when they
  // cover every HCA.
  LocateDriver(const VerbsPlan& plan, const Profile::Verbs& limits, const locate::LeafMap& neighbours);
  // The next round's tasks, ids from `first_id`, all in round 0; empty when the locator is done.
  std::vector<VerbsTask> next_tasks(int first_id);
  void record(const std::vector<PairResult>& results);
  // The task that first measured the same two endpoints, or -1: a repeat is the report's re-measurement.
  int first_task_of(const PairResult& r) const;
  VerbsLocate outcome() const;
  const locate::PairLocator& locator() const { return *locator_; }

 private:
  void read_leaves(const std::string& name);
  void leaves_from_neighbours(const locate::LeafMap& neighbours);
  std::string device_of(int node, int rail) const;

  std::string figure_test_;  // the test whose figure the locator compares (figure_test)
  locate::Fabric fabric_;
  std::vector<std::vector<int>> endpoint_;       // [node][rail]: the endpoint index, or -1 where the node has no such rail
  std::vector<std::vector<std::string>> devices_;  // [node][rail]
  std::unique_ptr<locate::PairLocator> locator_;
  std::map<int, locate::PairTest> test_of_task_;
  std::vector<locate::PairTest> unrunnable_;     // a side without that rail: recorded as not completing
  std::vector<int> task_of_result_;              // locator result -> task id (-1: unrunnable)
  std::map<std::pair<int, int>, int> first_task_;  // (endpoint a, endpoint b) -> first task
  std::vector<std::string> leaf_map_problems_;
  std::string leaves_from_;  // where the leaves came from, or why there are none
};

}  // namespace fabricproof::app
