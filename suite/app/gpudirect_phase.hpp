#pragma once
#include <functional>
#include <string>
#include <vector>

#include "app/verbs_phase.hpp"
#include "cli/options.hpp"
#include "core/finding.hpp"
#include "gpudirect/gpudirect_rules.hpp"
#include "inventory/inventory.hpp"
#include "core/profile.hpp"
#include "mpi/session.hpp"

namespace fabricproof::app {

struct GpudirectOutcome {
  GpudirectSection section;
  std::vector<Finding> findings;
  std::string summary;
};

// GPUDirect RDMA: the verbs matrix twice with the same sizes and durations, RDMA WRITE on host
// memory and then on GPU memory (plus SENDs into GPU memory, checked by a kernel on the receiving
// GPU). Each HCA is driven by the rank whose GPU is closest to it (the node's hwloc topology), the
// pairing NCCL would use. Every rank calls it; the outcome is meaningful on rank 0.
// One verbs matrix of `tests` on GPU memory, each HCA driven by the rank whose GPU is closest to
// it, as the phase's second matrix (the soak repeats it). Every rank calls it.
VerbsPhaseOutcome run_gpu_memory_matrix(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster, const Profile& profile,
                                        const VerbsOptions& tests, const std::string& name,
                                        const std::function<void(const std::string&)>& progress);

GpudirectOutcome run_gpudirect_phase(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster,
                                     const Profile& profile, const std::function<void(const std::string&)>& progress);

}  // namespace fabricproof::app
