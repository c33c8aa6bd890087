#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "collectives/collective_model.hpp"
#include "core/finding.hpp"
#include "inventory/inventory.hpp"
#include "core/profile.hpp"
#include "mpi/session.hpp"

namespace fabricproof::app {

// Which engine the sweeps use on this cluster ("nccl" or "mpi"), or why they cannot run:
// The engine the sweeps run with ("nccl" or "mpi"), or why they cannot run. Rank 0 decides from the inventory.
struct EngineChoice {
  std::string engine;
  std::optional<std::string> cannot_run;
};
EngineChoice choose_collective_engine(const SweepOptions& options, const ClusterFacts& cluster);

struct CollectivesOutcome {
  CollectivesSection section;
  std::vector<Finding> findings;
  std::vector<std::string> nccl_logs;  // per-rank NCCL_DEBUG logs kept in the report directory
  std::vector<std::string> nccl_logs_missing;  // "rank N: NCCL log file X not found (NCCL_DEBUG_FILE)"
  std::string summary;
};

// The scaling sweeps: groups of the first 1, 2, 4, ... and all nodes, each a sub-communicator,
// every op of the options on each, with the engine rank 0 chooses. Every rank calls it; ranks
// outside a group wait. Rank 0 prints rows as they complete and calls `after_group` with the
// section so far: after each row (false) and after each group (true).
// The outcome is meaningful on rank 0.
CollectivesOutcome run_collectives_phase(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster,
                                         const Profile& profile,
                                         const std::function<void(const std::string&)>& progress,
                                         const std::function<void(const CollectivesSection&, bool group_done)>& after_group);

}  // namespace fabricproof::app
