#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "core/finding.hpp"
#include "core/inventory.hpp"
#include "core/profile.hpp"
#include "core/verbs_model.hpp"
#include "core/verbs_plan.hpp"
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

// The same matrix with explicit tests and memory: `verbs` replaces options.verbs, `memory` holds
// this rank's buffers, `adjust` (rank 0, may be empty) changes the plan before it is shared (e.g.
// which rank drives an HCA), and progress lines start with `name`. The GPUDirect phase runs it
// twice, on host and on GPU memory.
VerbsPhaseOutcome run_verbs_matrix(const RunOptions& options, const VerbsOptions& verbs, mpi::Session& session,
                                   const ClusterFacts& cluster, const Profile& profile, verbs::MemoryProvider& memory,
                                   const std::function<void(VerbsPlan&)>& adjust, const std::string& name,
                                   const std::function<void(const std::string&)>& progress,
                                   const std::function<void(const VerbsSection&)>& after_round);

}  // namespace fabricproof::app
