#pragma once
// The collective engine interface the sweep harness drives: an engine owns its buffers and its
// communicator for one group of ranks; the harness owns sizes, timing agreement and rows.
// An engine's call that fails throws a LocatedError (core/located_error.hpp); the harness catches
// it right there (failure_of), before the group's agreement step, so that every rank still reaches
// that step (no exception crosses an MPI collective; design.md). mpi::Lost is not caught: a wait
// on another rank passed its deadline, and the run ends.
#include <cstdint>
#include <memory>
#include <string>

#include <mpi.h>

#include "collectives/collective_model.hpp"
#include "mpi/session.hpp"

namespace fabricproof::collectives {

struct CollCall {
  CollOp op = CollOp::allreduce;
  DataType dtype = DataType::float32;
  ReduceOp redop = ReduceOp::sum;
  uint64_t chunk = 0;  // elements per rank-local chunk (chunk_elements())
  bool in_place = false;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string name() const = 0;
  // How run() times its calls, for the report (the small sizes' figures depend on it).
  virtual std::string timing() const = 0;
  virtual bool supports_in_place(CollOp op) const = 0;
  // Writes this rank's input pattern (collectives/collective_data.hpp) and clears the output.
  virtual void fill(const CollCall& call) = 0;
  // Runs `calls` calls back to back; the seconds they took on this rank.
  virtual double run(const CollCall& call, int calls) = 0;
  // The output elements that differ from the expected result.
  virtual uint64_t count_wrong(const CollCall& call) = 0;
  // The run is ending after mpi::Lost: give up the communicator without waiting on any peer.
  virtual void abandon() {}
};

// MPI collectives on host memory: a host-network baseline that runs everywhere. Each call is the
// blocking collective applications make, under the session's watchdog with a stall of `timeout_s`
// (a rank of the group that stops answering ends the job there; mpi/session.hpp).
std::unique_ptr<Engine> make_mpi_engine(mpi::Session& session, MPI_Comm group, uint64_t max_bytes, double timeout_s);

// Memory a rank may use for an engine's buffers, and where the figure comes from.
struct Usable {
  uint64_t bytes = 0;
  std::string why;
};
Usable usable_host_memory(int ranks_on_node);

}  // namespace fabricproof::collectives
