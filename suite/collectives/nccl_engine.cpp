#include "collectives/nccl_engine.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <thread>

#include "collectives/nccl_library.hpp"
#include "collectives/collective_data.hpp"
#include "kernels/collective.hpp"
#include "mpi/exchange.hpp"

namespace fabricproof::collectives {
namespace {

using Clock = std::chrono::steady_clock;

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::float32: return ncclFloat32;
    case DataType::float64: return ncclFloat64;
    case DataType::int32: return ncclInt32;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::max ? ncclMax : op == ReduceOp::min ? ncclMin : ncclSum; }

std::string cuda_error(const char* call, cudaError_t e) {
  return e == cudaSuccess ? "" : fmt::format("{}: {}: {}", call, cudaGetErrorName(e), cudaGetErrorString(e));
}

// Owners of this rank's CUDA objects, freed in reverse order of declaration.
struct DeviceFree {
  decltype(&ncclMemFree) nccl_free = nullptr;  // set when ncclMemAlloc made the buffer
  void operator()(void* p) const {
    if (nccl_free) nccl_free(p);
    else cudaFree(p);
  }
};
struct StreamDestroy {
  void operator()(cudaStream_t s) const { cudaStreamDestroy(s); }
};
struct EventDestroy {
  void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
};
using DeviceBuffer = std::unique_ptr<void, DeviceFree>;
using Stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDestroy>;
using Event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, EventDestroy>;

// The communicator. It is created non-blocking, so that a rank that never joins is an error at a
// deadline, not a hang. But from NCCL 2.23 every call on a non-blocking communicator ends in a
// group launch on a thread of its own (group.cc: ncclGroupEndInternal, a pthread_create per call):
// a host cost per call (30-60 us on a 2-core VM) that nccl-tests, on a blocking communicator, does
// not pay, and at small sizes it would be most of the time measured. So the calls run on a child
// split off it with blocking = 1 (ncclCommSplit, NCCL >= 2.18; the split itself is non-blocking
// and settled against the deadline), timed as nccl-tests times them. An enqueue on it that never
// returns is ended by the session's watchdog (the job ends, and its report says so, as for any
// lost rank); the wait for completion keeps its own deadline. Without ncclCommSplit the calls stay
// on the non-blocking communicator, and the report says so. The owner ends the communicator
// cleanly (finalize, then destroy) or, when it is not quiescent (a failed or unfinished finalize,
// a peer gone), aborts it, as nccl-tests' testStreamSynchronize does.
class Communicator {
 public:
  Communicator(const NcclLibrary* nccl, mpi::Session& session, std::chrono::duration<double> timeout)
      : nccl_(nccl), session_(session), timeout_(timeout) {}
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator() { end(); }

  ncclComm_t get() const { return comm_; }
  bool blocking() const { return blocking_; }

  std::string init(int ranks, const ncclUniqueId& id, int rank) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const ncclResult_t r = watched("ncclCommInitRankConfig", [&] { return nccl_->CommInitRankConfig(&comm_, ranks, id, rank, &config); });
    if (r != ncclSuccess && r != ncclInProgress) {
      comm_ = nullptr;
      return fmt::format("ncclCommInitRankConfig: {}", nccl_->GetErrorString(r));
    }
    return settle("ncclCommInitRankConfig");
  }

  // Every rank of the group calls it, or none (the split is collective). Replaces the
  // communicator with its blocking child, then ends the parent.
  std::string split_blocking(int rank) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    ncclComm_t child = nullptr;
    const ncclResult_t r = watched("ncclCommSplit", [&] { return nccl_->CommSplit(comm_, 0, rank, &child, &config); });
    if (r != ncclSuccess && r != ncclInProgress) return fmt::format("ncclCommSplit: {} ({})", nccl_->GetErrorString(r), nccl_->GetLastError(comm_));
    // The parent's state is the split's (its group job); the child is written when it completes.
    if (auto e = settle("ncclCommSplit"); !e.empty()) return e;
    if (!child) return "ncclCommSplit: no communicator";
    end();
    comm_ = child;
    blocking_ = true;
    return "";
  }

  // Abort (which also frees it): after an error or a lost peer, nothing more is called on it.
  void abort() {
    if (!comm_) return;
    watched("ncclCommAbort", [&] { return nccl_->CommAbort(comm_); });
    comm_ = nullptr;
  }

  // Polls the communicator until it leaves ncclInProgress; an error or the deadline is returned.
  // busy: yield between polls (a timed enqueue); relaxed: sleep (init and finalize take seconds).
  enum class Settle { busy, relaxed };
  std::string settle(const char* what, Settle how = Settle::relaxed) const {
    const auto deadline = Clock::now() + timeout_;
    ncclResult_t state = ncclInProgress;
    while (true) {
      if (nccl_->CommGetAsyncError(comm_, &state) != ncclSuccess || state != ncclInProgress) break;
      if (Clock::now() > deadline) return fmt::format("{}: not done after {} s", what, timeout_.count());
      if (how == Settle::busy)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return state == ncclSuccess ? "" : fmt::format("{}: {} ({})", what, nccl_->GetErrorString(state), nccl_->GetLastError(comm_));
  }

 private:
  // A call that can block (any on the blocking child; on the parent, when NCCL_COMM_BLOCKING=1 is
  // set), under the session's watchdog: one that never returns ends the job.
  template <typename Call>
  ncclResult_t watched(const char* what, Call call) const {
    mpi::Session::Watch watch(session_, mpi::deadline_in(timeout_.count() + 30), what);
    return call();
  }

  // Finalize and destroy, or abort when the finalize fails or does not settle. A blocking
  // finalize that never returns (a peer gone since the last call) is the watchdog's.
  void end() {
    if (!comm_) return;
    const ncclResult_t r = watched("ncclCommFinalize", [&] { return nccl_->CommFinalize(comm_); });
    if (r == ncclSuccess || (r == ncclInProgress && settle("ncclCommFinalize").empty())) {
      watched("ncclCommDestroy", [&] { return nccl_->CommDestroy(comm_); });
      comm_ = nullptr;
    } else {
      abort();
    }
  }

  const NcclLibrary* nccl_;
  mpi::Session& session_;
  std::chrono::duration<double> timeout_;
  ncclComm_t comm_ = nullptr;
  bool blocking_ = false;
};

class NcclEngine : public Engine {
 public:
  NcclEngine(mpi::Session& session, MPI_Comm group, int device, uint64_t max_bytes, double timeout_s)
      : session_(session), nccl_(nccl_library(&nccl_missing_)), timeout_(std::chrono::duration<double>(timeout_s)), comm_(nccl_, session, timeout_) {
    rank_ = mpi::rank_in(group);
    ranks_ = mpi::size_of(group);
    max_bytes_ = max_bytes;
    error_ = setup(session, group, device, max_bytes);
  }

  std::string name() const override { return "nccl"; }
  std::string timing() const override { return timing_; }
  bool supports_in_place(CollOp op) const override { return coll_in_place_offset(op, 0, 1) >= 0; }

  // Only the root writes a broadcast's input: a non-root rank's buffer stays zero until the call
  // delivers (in place, a rank's own pattern there would hide a broadcast that never arrived).
  std::string fill(const CollCall& c) override {
    if (!error_.empty()) return error_;
    const uint64_t in_count = c.op == CollOp::broadcast && rank_ != 0 ? 0 : coll_input_elements(c.op, c.chunk, ranks_);
    const uint64_t out_count = coll_output_elements(c.op, c.chunk, ranks_);
    return kernels::fill_collective(input(c, 0), in_count, output(c, 0), out_count, c.dtype, rank_, stream_.get());
  }

  std::string run(const CollCall& c, int calls, double* seconds) override {
    if (!error_.empty()) return error_;
    if (auto e = cuda_error("cudaEventRecord", cudaEventRecord(start_.get(), stream_.get())); !e.empty()) return e;
    // All calls enqueued back to back between one event pair, as nccl-tests times them. A call on
    // a non-blocking communicator (no ncclCommSplit, or NCCL_COMM_BLOCKING=0 in the environment)
    // may return ncclInProgress: it is settled with a busy poll, not a sleep.
    {
      mpi::Session::Watch watch(session_, mpi::deadline_in(timeout_.count()), fmt::format("NCCL {} enqueue", to_string(c.op)));
      // Each call on the next slice of the buffers, as nccl-tests (coll_call_offset): the first
      // call, the one a check follows, on the filled one.
      const uint64_t span = std::max(coll_input_elements(c.op, c.chunk, ranks_), coll_output_elements(c.op, c.chunk, ranks_)) * size_of(c.dtype);
      for (int i = 0; i < calls; ++i) {
        const ncclResult_t r = enqueue(c, coll_call_offset(span, max_bytes_, i));
        if (r == ncclInProgress) {
          if (auto e = comm_.settle("enqueue", Communicator::Settle::busy); !e.empty()) return fail(e);
        } else if (r != ncclSuccess) {
          return fail(fmt::format("{}: {} ({})", to_string(c.op), nccl_->GetErrorString(r), nccl_->GetLastError(comm_.get())));
        }
      }
    }
    if (auto e = cuda_error("cudaEventRecord", cudaEventRecord(stop_.get(), stream_.get())); !e.empty()) return e;
    if (auto e = wait(stop_.get()); !e.empty()) return fail(e);
    float ms = 0;
    if (auto e = cuda_error("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start_.get(), stop_.get())); !e.empty()) return e;
    *seconds = ms / 1e3;
    return "";
  }

  void abandon() override {
    comm_.abort();
    error_ = "abandoned";
  }

  std::string count_wrong(const CollCall& c, uint64_t* wrong) override {
    if (!error_.empty()) return error_;
    const uint64_t out_count = coll_output_elements(c.op, c.chunk, ranks_);
    return kernels::count_collective_wrong(output(c, 0), out_count, c.op, c.redop, c.dtype, rank_, ranks_, c.chunk, wrong, stream_.get());
  }

 private:
  // CUDA resources of this rank; "" or the first error.
  std::string allocate(int device, uint64_t max_bytes) {
    if (auto e = cuda_error("cudaSetDevice", cudaSetDevice(device)); !e.empty()) return e;
    // The buffers come from ncclMemAlloc where NCCL has it, as nccl-tests (>= NCCL 2.19) takes
    // them: memory NCCL can register and map (user buffer registration, NVLink SHARP). On one
    // H200 the choice did not move a 1-rank allreduce (scripts/gpu-check's timing probe).
    // FABRICPROOF_GPU_BUFFERS=cudaMalloc takes plain cudaMalloc memory, to compare the two.
    const char* choice = std::getenv("FABRICPROOF_GPU_BUFFERS");
    const bool nccl_memory = nccl_->MemAlloc && !(choice && std::string(choice) == "cudaMalloc");
    buffers_ = nccl_memory ? "ncclMemAlloc" : "cudaMalloc";
    for (DeviceBuffer* buffer : {&send_, &recv_}) {
      void* p = nullptr;
      if (nccl_memory) {
        if (const ncclResult_t r = nccl_->MemAlloc(&p, max_bytes); r != ncclSuccess)
          return fmt::format("ncclMemAlloc of {} bytes: {}", max_bytes, nccl_->GetErrorString(r));
        *buffer = DeviceBuffer(p, DeviceFree{nccl_->MemFree});
      } else {
        if (auto e = cuda_error("cudaMalloc", cudaMalloc(&p, max_bytes)); !e.empty()) return e;
        buffer->reset(p);
      }
    }
    cudaStream_t stream = nullptr;
    if (auto e = cuda_error("cudaStreamCreate", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); !e.empty()) return e;
    stream_.reset(stream);
    for (Event* event : {&start_, &stop_}) {
      cudaEvent_t created = nullptr;
      if (auto e = cuda_error("cudaEventCreate", cudaEventCreate(&created)); !e.empty()) return e;
      event->reset(created);
    }
    return "";
  }

  std::string setup(mpi::Session& session, MPI_Comm group, int device, uint64_t max_bytes) {
    std::string mine = nccl_ ? allocate(device, max_bytes) : nccl_missing_;
    ncclUniqueId id{};
    if (rank_ == 0 && mine.empty())
      if (const ncclResult_t got = nccl_->GetUniqueId(&id); got != ncclSuccess) mine = fmt::format("ncclGetUniqueId: {}", nccl_->GetErrorString(got));
    // Every rank makes both calls whatever failed locally, so that no rank waits for another that
    // gave up; a CUDA or NCCL error of any rank is agreed, and then no rank creates the communicator.
    const auto deadline = mpi::deadline_in(timeout_.count());
    mpi::broadcast_bytes(session, group, &id, sizeof(id), 0, deadline, "the NCCL unique id");
    if (auto agreed = mpi::agree_on_error(session, group, mine, deadline); !agreed.empty()) return agreed;
    // The init's result is agreed too: the split that follows is collective, and so is the check
    // that every rank can make it (a node with an older NCCL keeps all on the parent).
    const std::string init_error = comm_.init(ranks_, id, rank_);
    const auto after_init = mpi::deadline_in(timeout_.count());
    if (auto agreed = mpi::agree_on_error(session, group, init_error, after_init); !agreed.empty()) return fail(agreed);
    const uint64_t can_split = nccl_->CommSplit != nullptr;
    if (mpi::allreduce(session, group, can_split, MPI_MIN, after_init, "whether every rank has ncclCommSplit") == 1)
      if (auto e = comm_.split_blocking(rank_); !e.empty()) return fail(e);
    // NCCL_COMM_BLOCKING in the environment overrides the config of every communicator.
    const char* env = std::getenv("NCCL_COMM_BLOCKING");
    const bool forced = env && std::string(env) == "0";
    timing_ = comm_.blocking() && !forced
                  ? "one CUDA event pair over the calls, enqueued on a blocking communicator (as nccl-tests)"
                  : fmt::format("one CUDA event pair over the calls, enqueued on a non-blocking communicator ({}): NCCL >= 2.23 starts a "
                                "thread per call, which small sizes' times include",
                                forced ? "NCCL_COMM_BLOCKING=0 in the environment" : "a rank's NCCL lacks ncclCommSplit, NCCL < 2.18");
    timing_ += fmt::format("; each call on the next slice of the buffers (from {}), as nccl-tests", buffers_);
    return "";
  }

  // Where a call `shift` bytes into the buffers reads (coll_call_offset).
  void* input(const CollCall& c, uint64_t shift) const {
    if (!c.in_place) return static_cast<char*>(send_.get()) + shift;
    return static_cast<char*>(recv_.get()) + shift + coll_in_place_offset(c.op, rank_, c.chunk) * size_of(c.dtype);
  }

  // Where the result lands: in-place reduce_scatter writes this rank's chunk inside its input, at
  // rank x chunk (NCCL's in-place rule: recvbuff == sendbuff + rank * recvcount).
  void* output(const CollCall& c, uint64_t shift) const {
    char* out = static_cast<char*>(recv_.get()) + shift;
    if (c.in_place && c.op == CollOp::reduce_scatter) return out + static_cast<size_t>(rank_) * c.chunk * size_of(c.dtype);
    return out;
  }

  ncclResult_t enqueue(const CollCall& c, uint64_t shift) {
    const auto type = nccl_type(c.dtype);
    const void* in = input(c, shift);
    void* out = output(c, shift);
    switch (c.op) {
      case CollOp::allreduce: return nccl_->AllReduce(in, out, c.chunk, type, nccl_op(c.redop), comm_.get(), stream_.get());
      case CollOp::allgather: return nccl_->AllGather(in, out, c.chunk, type, comm_.get(), stream_.get());
      case CollOp::reduce_scatter: return nccl_->ReduceScatter(in, out, c.chunk, type, nccl_op(c.redop), comm_.get(), stream_.get());
      case CollOp::broadcast: return nccl_->Broadcast(in, out, c.chunk, type, 0, comm_.get(), stream_.get());
      case CollOp::alltoall: {  // NCCL has no alltoall call: grouped send/recv, as nccl-tests does
        const size_t bytes = c.chunk * static_cast<size_t>(size_of(c.dtype));
        // Every call's result counts: a failed send or receive inside the group is the group's error.
        ncclResult_t first = nccl_->GroupStart();
        for (int peer = 0; peer < ranks_ && first == ncclSuccess; ++peer) {
          first = nccl_->Send(static_cast<const char*>(in) + peer * bytes, c.chunk, type, peer, comm_.get(), stream_.get());
          if (first == ncclSuccess) first = nccl_->Recv(static_cast<char*>(out) + peer * bytes, c.chunk, type, peer, comm_.get(), stream_.get());
        }
        const ncclResult_t end = nccl_->GroupEnd();
        return first != ncclSuccess ? first : end;
      }
    }
    return ncclInvalidArgument;
  }

  // Waits for `event`, checking the communicator for asynchronous errors (a peer that died, a
  // network error) on every poll, like nccl-tests' testStreamSynchronize.
  std::string wait(cudaEvent_t event) {
    const auto deadline = Clock::now() + timeout_;
    while (true) {
      const cudaError_t done = cudaEventQuery(event);
      if (done == cudaSuccess) return "";
      if (done != cudaErrorNotReady) return cuda_error("cudaEventQuery", done);
      ncclResult_t state = ncclSuccess;
      nccl_->CommGetAsyncError(comm_.get(), &state);
      if (state != ncclSuccess && state != ncclInProgress)
        return fmt::format("asynchronous NCCL error: {} ({})", nccl_->GetErrorString(state), nccl_->GetLastError(comm_.get()));
      if (Clock::now() > deadline) return fmt::format("the collective did not complete within {} s", timeout_.count());
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  // An error on the communicator ends it: abort (which also frees it) and refuse further calls.
  std::string fail(const std::string& error) {
    comm_.abort();
    error_ = error;
    return error;
  }

  std::string nccl_missing_;  // before nccl_: it is filled by nccl_'s initialiser
  mpi::Session& session_;
  const NcclLibrary* nccl_;
  std::chrono::duration<double> timeout_;
  int rank_ = 0;
  int ranks_ = 1;
  // Declared before the communicator: it ends (finalize or abort) before they are freed.
  uint64_t max_bytes_ = 0;  // each of send_ and recv_
  std::string buffers_;    // their allocator
  DeviceBuffer send_;
  DeviceBuffer recv_;
  Stream stream_;
  Event start_;
  Event stop_;
  Communicator comm_;
  std::string error_;
  std::string timing_;
};

}  // namespace

std::unique_ptr<Engine> make_nccl_engine(mpi::Session& session, MPI_Comm group, int device, uint64_t max_bytes, double timeout_s) {
  return std::make_unique<NcclEngine>(session, group, device, max_bytes, timeout_s);
}

Usable usable_gpu_memory(int device, int ranks_on_device) {
  size_t free_bytes = 0, total = 0;
  if (cudaSetDevice(device) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return {0, "cudaMemGetInfo failed"};
  const int ranks = ranks_on_device > 0 ? ranks_on_device : 1;
  // 90% of the free memory: NCCL allocates its own channel buffers at init.
  return {static_cast<uint64_t>(free_bytes * 0.9) / static_cast<uint64_t>(ranks),
          fmt::format("90% of GPU {}'s free memory ({} MiB) shared by {} rank(s)", device, free_bytes >> 20, ranks)};
}

}  // namespace fabricproof::collectives
