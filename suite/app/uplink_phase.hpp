#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "core/finding.hpp"
#include "inventory/inventory.hpp"
#include "core/profile.hpp"
#include "uplink/uplink_model.hpp"
#include "mpi/session.hpp"

namespace fabricproof::app {

struct UplinkOutcome {
  UplinkSection section;
  std::vector<Finding> findings;
  std::string summary;
};

// The uplink to the outside world: the first rank of each node, one node after another, receives
// from its target with one TCP flow and then with K flows (iperf3 -R); then every node at once,
// each to its own target port. Every rank calls it; the outcome is meaningful on rank 0.
UplinkOutcome run_uplink_phase(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster, const Profile& profile,
                               const std::function<void(const std::string&)>& progress);

}  // namespace fabricproof::app
