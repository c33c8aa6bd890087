#pragma once
#include "cli/options.hpp"
#include "inventory/inventory.hpp"
#include "mpi/session.hpp"

namespace fabricproof::app {

// What this rank sees of its node (files, then verbs, CUDA and NCCL where built), plus its own
// RankFacts. Never throws: a failing adapter becomes a probe error in the facts.
NodeFacts probe_this_rank(const RunOptions& options, mpi::Session& session);

// Every rank probes; rank 0 receives all of them (serialized JSON over MPI, with the deadline),
// merges them per node and measures each node's clock offset. Meaningful on rank 0 only.
ClusterFacts gather_inventory(const RunOptions& options, mpi::Session& session);

}  // namespace fabricproof::app
