#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "core/finding.hpp"
#include "core/inventory.hpp"
#include "core/profile.hpp"
#include "core/verbs_model.hpp"
#include "mpi/session.hpp"

namespace fabricproof::app {

struct VerbsPhaseOutcome {
  VerbsSection section;
  std::vector<Finding> findings;
};

// The pairwise verbs matrix. Every rank calls it; `cluster` matters on rank 0, which plans and
// broadcasts. Rounds run one after another; after each, the results reach rank 0, which reports
// progress and calls `after_round` (to rewrite the report). The outcome is meaningful on rank 0.
VerbsPhaseOutcome run_verbs_phase(const RunOptions& options, const mpi::Session& session, const ClusterFacts& cluster,
                                  const Profile& profile, const std::function<void(const std::string&)>& progress,
                                  const std::function<void(const VerbsSection&)>& after_round);

}  // namespace fabricproof::app
