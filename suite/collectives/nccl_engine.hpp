#pragma once
// NCCL collectives on GPU memory. Needs CUDA and NCCL (FABRICPROOF_WITH_NCCL).
#include <string>

#include "collectives/engine.hpp"

namespace fabricproof::collectives {

// One communicator over `group` (the unique id travels over MPI) on CUDA device `device`, with
// send and receive buffers of `max_bytes`. Every wait for completion polls ncclCommGetAsyncError
// against `timeout_s` and aborts the communicator on an error or at the deadline; a call that may
// block runs under the session's watchdog (the job ends when it does not return); an engine whose set-up
// failed (on any rank of the group: the error is agreed) returns that error from every call.
// The communicator's form and the buffers' allocator (--nccl-comm, --gpu-buffers; nccl_engine.cpp
// says what each costs).
struct NcclChoices {
  std::string comm = "blocking";    // blocking | split | nonblocking
  std::string buffers = "cudaMalloc";  // cudaMalloc | ncclMemAlloc
};
std::unique_ptr<Engine> make_nccl_engine(mpi::Session& session, MPI_Comm group, int device, uint64_t max_bytes, double timeout_s,
                                         const NcclChoices& choices);

// Free memory of CUDA device `device` (cudaMemGetInfo), shared by `ranks_on_device` ranks.
Usable usable_gpu_memory(int device, int ranks_on_device);

}  // namespace fabricproof::collectives
