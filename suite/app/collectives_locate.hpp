#pragma once
// --collective-mode locate, every rank: rank 0's GroupLocator (suite/locate) picks each round's
// groups of nodes from the results so far; the groups run one allreduce size side by side, each on
// its own communicator with the phase's engine; the group leaders' bus bandwidth goes back to the
// locator, until every slow node is named or every node cleared.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/collective_model.hpp"
#include "collectives/engine.hpp"
#include "mpi/session.hpp"

namespace fabricproof::app {

struct CollLocateRun {
  const SweepOptions& options;
  std::vector<std::string> node_names;  // the locator's nodes: hosts, or "rankN" with --locate-ranks-as-nodes
  std::vector<int> node_of_rank;        // per world rank: its index in node_names
  uint64_t bytes = 0;                   // the one size each group runs
  std::function<std::unique_ptr<collectives::Engine>(MPI_Comm)> make_engine;
  std::function<void(const std::string&)> progress;
  std::function<void(const CollLocate&)> after_round;  // rank 0, after each round: the section so far
};

// Meaningful on rank 0; the other ranks return an empty outcome.
CollLocate run_collective_locate(mpi::Session& session, const CollLocateRun& run);

}  // namespace fabricproof::app
