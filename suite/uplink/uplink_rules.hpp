#pragma once
#include <optional>
// Judges the uplink phase: every measurement present (a missing one fails closed), the path to the
// storage target off the data fabric, all nodes together carrying the cluster's ingest need, and
// each node's share reachable with one flow or only with parallel streams (the seed: one TCP flow
// gets one link, so a dataloader must open several).
#include <vector>

#include "core/finding.hpp"
#include "uplink/uplink_model.hpp"

namespace fabricproof {

// The need is the section's (the phase resolves --uplink-need or the profile's uplink.ingest_gbps).
std::vector<Finding> check_uplink(const UplinkSection& section);

// All nodes together, counted over the window in which every node was measuring: each node's
// own average covers its own window, and windows that do not line up (one node still receiving
// after another stopped) add up to more than the shared link carried. Each node's intervals are
// placed on rank 0's clock by the instant its iperf3 exited (ended_at). nullopt when a node that
// measured has no intervals or no ended_at (a report from before they were kept).
struct TogetherAggregate {
  double gbps = 0;                     // the nodes' bytes inside the common window, over its length
  double window_s = 0;                 // 0 when the windows do not overlap at all
  double shortest_own_s = 0;           // the shortest of the nodes' own windows (their intervals' span)
  double sum_of_averages_gbps = 0;     // the nodes' own figures added up, for comparison
  std::vector<double> per_node_gbps;   // inside the common window, in the nodes' order
};
std::optional<TogetherAggregate> together_in_common_window(const std::vector<UplinkNode>& nodes);

}  // namespace fabricproof
