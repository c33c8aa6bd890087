#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "core/finding.hpp"
#include "core/profile.hpp"
#include "inventory/inventory.hpp"
#include "mpi/session.hpp"
#include "soak/soak_model.hpp"

namespace fabricproof::app {

// Which parts of the load can run on this cluster (rank 0 decides from the inventory, as the
// verbs and collectives phases do): nullopt, or why not.
struct SoakLoadPlan {
  std::optional<std::string> verbs_not_run;
  std::optional<std::string> collective_not_run;
  std::optional<std::string> gpudirect_not_run;  // "": no GPU anywhere (nothing to soak), not a gap
};

struct SoakPhaseOutcome {
  SoakSection section;
  std::vector<Finding> findings;
  std::string summary;
};

// The soak: passes of the load (the verbs matrix, write_bw both ways on every rail; the collective
// at one large size on the whole cluster) until the duration is up, while one rank per node
// samples its ports' counters at the interval. After every pass the samples reach rank 0, which
// calls `after_pass` with the section so far (the report is rewritten: evidence that survives a
// crash). Every rank calls it; the outcome is meaningful on rank 0.
SoakPhaseOutcome run_soak_phase(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster, const Profile& profile,
                                const SoakLoadPlan& load, const std::function<void(const std::string&)>& progress,
                                const std::function<void(const SoakSection&)>& after_pass);

}  // namespace fabricproof::app
