#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "core/finding.hpp"
#include "inventory/inventory.hpp"
#include "core/profile.hpp"
#include "verbs/verbs_model.hpp"
#include "verbs/verbs_plan.hpp"
#include "mpi/session.hpp"
#include "verbs/memory.hpp"

namespace fabricproof::app {

struct VerbsPhaseOutcome {
  VerbsSection section;
  std::vector<Finding> findings;
};

// The pairwise verbs matrix. Every rank calls it; `cluster` matters on rank 0, which plans and
// broadcasts. Rounds run one after another; after each, the results reach rank 0, which reports
// progress and calls `after_round` (to rewrite the report). The outcome is meaningful on rank 0.
VerbsPhaseOutcome run_verbs_phase(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster,
                                  const Profile& profile, const std::function<void(const std::string&)>& progress,
                                  const std::function<void(const VerbsSection&)>& after_round);

// What one matrix runs: `verbs` (the tests and their options), `memory` (this rank's buffers),
// `adjust` (rank 0, may be empty: changes the plan before it is shared, e.g. which rank drives an
// HCA), `name` (starts the progress lines), and what rank 0 is told as it goes. The GPUDirect phase
// runs two, on host and on GPU memory.
struct MatrixRun {
  const VerbsOptions& verbs;
  verbs::MemoryProvider& memory;
  std::function<void(VerbsPlan&)> adjust;
  std::string name;
  std::function<void(const std::string&)> progress;
  std::function<void(const VerbsSection&)> after_round;
};

VerbsPhaseOutcome run_verbs_matrix(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster, const Profile& profile,
                                   const MatrixRun& run);

}  // namespace fabricproof::app
