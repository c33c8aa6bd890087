#include "collectives/nccl_engine.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <type_traits>
#include <thread>

#include "collectives/nccl_library.hpp"
#include "collectives/collective_data.hpp"
#include "core/located_error.hpp"
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

// A failed CUDA call as a LocatedError naming the call and the GPU.
void check_cuda(const char* call, cudaError_t e) {
  if (e == cudaSuccess) return;
  int device = -1;
  cudaGetDevice(&device);
  throw LocatedError(fmt::format("GPU {}", device), fmt::format("{}: {}: {}", call, cudaGetErrorName(e), cudaGetErrorString(e)));
}

// A failure of the communicator (NCCL's words, with its last error).
[[noreturn]] void nccl_failure(const std::string& what) { throw LocatedError("", what); }

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

// The communicator, in one of three forms (--nccl-comm), since the small sizes' per-call time
// depends on it:
//   blocking (the default): ncclCommInitRankConfig with blocking = 1, as nccl-tests creates its
//     communicators. Every call on it may block: each runs under the session's watchdog, which
//     ends the job (the launcher wrapper finalises the report) when one does not return.
//   split: created non-blocking, so that a rank that never joins is an error at a deadline, not
//     the end of the job, then the calls run on a child split off it with blocking = 1
//     (ncclCommSplit, NCCL >= 2.18). On one H200 it cost 1.3-2.1 us a call more than the
//     non-blocking parent (tests/fixtures/gpu/2026-12-04-NVIDIA-H200/blocking-vs-nonblocking.txt).
//   nonblocking: every call on the non-blocking communicator, settled with a busy poll. From NCCL
//     2.23 each call ends in a group launch on a thread of its own (group.cc: a pthread_create per
//     call), 30-60 us on a 2-core VM.
// The owner ends the communicator cleanly (finalize, then destroy) or, when it is not quiescent
// (a failed or unfinished finalize, a peer gone), aborts it, as nccl-tests' testStreamSynchronize.
class Communicator {
 public:
  Communicator(const NcclLibrary* nccl, mpi::Session& session, MPI_Comm group, std::chrono::duration<double> timeout)
      : nccl_(nccl), session_(session), group_(group), timeout_(timeout) {}
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator() { end(); }

  ncclComm_t get() const { return comm_; }
  bool blocking() const { return blocking_; }

  void init(int ranks, const ncclUniqueId& id, int rank, bool blocking) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = blocking ? 1 : 0;
    const ncclResult_t r = watched("ncclCommInitRankConfig", [&] { return nccl_->CommInitRankConfig(&comm_, ranks, id, rank, &config); });
    if (r != ncclSuccess && r != ncclInProgress) {
      comm_ = nullptr;
      // NCCL's last WARN says why ("Duplicate GPU detected ..."); its result code only "invalid usage".
      nccl_failure(fmt::format("ncclCommInitRankConfig: {} ({})", nccl_->GetErrorString(r), nccl_->GetLastError(nullptr)));
    }
    settle("ncclCommInitRankConfig");  // at once on a blocking one (NCCL_COMM_BLOCKING=0 may override)
    blocking_ = blocking;
  }

  // Every rank of the group calls it, or none (the split is collective). Replaces the
  // communicator with its blocking child, then ends the parent.
  void split_blocking(int rank) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    ncclComm_t child = nullptr;
    const ncclResult_t r = watched("ncclCommSplit", [&] { return nccl_->CommSplit(comm_, 0, rank, &child, &config); });
    if (r != ncclSuccess && r != ncclInProgress) nccl_failure(fmt::format("ncclCommSplit: {} ({})", nccl_->GetErrorString(r), nccl_->GetLastError(comm_)));
    // The parent's state is the split's (its group job); the child is written when it completes.
    settle("ncclCommSplit");
    if (!child) nccl_failure("ncclCommSplit: no communicator");
    end();
    comm_ = child;
    blocking_ = true;
  }

  // Abort (which also frees it): after an error or a lost peer, nothing more is called on it.
  void abort() {
    if (!comm_) return;
    watched("ncclCommAbort", [&] { return nccl_->CommAbort(comm_); });
    comm_ = nullptr;
  }

  // Polls the communicator until it leaves ncclInProgress; an error or the deadline is a failure.
  // busy: yield between polls (a timed enqueue); relaxed: sleep (init and finalize take seconds).
  enum class Settle { busy, relaxed };
  void settle(const char* what, Settle how = Settle::relaxed) const {
    const auto deadline = Clock::now() + timeout_;
    ncclResult_t state = ncclInProgress;
    while (true) {
      if (nccl_->CommGetAsyncError(comm_, &state) != ncclSuccess || state != ncclInProgress) break;
      if (Clock::now() > deadline) nccl_failure(fmt::format("{}: not done after {} s", what, timeout_.count()));
      if (how == Settle::busy)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (state != ncclSuccess) nccl_failure(fmt::format("{}: {} ({})", what, nccl_->GetErrorString(state), nccl_->GetLastError(comm_)));
  }

 private:
  // A call that can block (any on the blocking child; on the parent, when NCCL_COMM_BLOCKING=1 is
  // set), under the session's watchdog: one that never returns ends the job.
  template <typename Call>
  ncclResult_t watched(const char* what, Call call) const {
    mpi::Session::Watch watch(session_, mpi::deadline_in(timeout_.count() + 30), what, group_);
    return call();
  }

  // Finalize and destroy, or abort when the finalize fails or does not settle. A blocking
  // finalize that never returns (a peer gone since the last call) is the watchdog's.
  void end() {
    if (!comm_) return;
    const ncclResult_t r = watched("ncclCommFinalize", [&] { return nccl_->CommFinalize(comm_); });
    if (r == ncclSuccess || (r == ncclInProgress && !failure_of([&] { settle("ncclCommFinalize"); }))) {
      watched("ncclCommDestroy", [&] { return nccl_->CommDestroy(comm_); });
      comm_ = nullptr;
    } else {
      abort();
    }
  }

  const NcclLibrary* nccl_;
  mpi::Session& session_;
  MPI_Comm group_;  // the ranks whose NCCL communicator this is: the watchdog names them
  std::chrono::duration<double> timeout_;
  ncclComm_t comm_ = nullptr;
  bool blocking_ = false;
};

class NcclEngine : public Engine {
 public:
  NcclEngine(mpi::Session& session, MPI_Comm group, int device, uint64_t max_bytes, double timeout_s, const NcclChoices& choices)
      : session_(session), nccl_(library_or_null()), timeout_(std::chrono::duration<double>(timeout_s)), choices_(choices),
        comm_(nccl_, session, group, timeout_), group_(group) {
    rank_ = mpi::rank_in(group);
    ranks_ = mpi::size_of(group);
    max_bytes_ = max_bytes;
    failure_ = setup(session, group, device, max_bytes);
  }

  std::string name() const override { return "nccl"; }
  std::string timing() const override { return timing_; }
  bool supports_in_place(CollOp op) const override { return coll_in_place_offset(op, 0, 1) >= 0; }

  // Only the root writes a broadcast's input: a non-root rank's buffer stays zero until the call
  // delivers (in place, a rank's own pattern there would hide a broadcast that never arrived).
  void fill(const CollCall& c) override {
    refuse_after_failure();
    const uint64_t in_count = c.op == CollOp::broadcast && rank_ != 0 ? 0 : coll_input_elements(c.op, c.chunk, ranks_);
    const uint64_t out_count = coll_output_elements(c.op, c.chunk, ranks_);
    kernels::fill_collective(input(c, 0), in_count, output(c, 0), out_count, c.dtype, rank_, stream_.get());
  }

  double run(const CollCall& c, int calls) override {
    refuse_after_failure();
    check_cuda("cudaEventRecord", cudaEventRecord(start_.get(), stream_.get()));
    // All calls enqueued back to back between one event pair, as nccl-tests times them. A call on
    // a non-blocking communicator (no ncclCommSplit, or NCCL_COMM_BLOCKING=0 in the environment)
    // may return ncclInProgress: it is settled with a busy poll, not a sleep.
    {
      // The job ends when no enqueue returns within the timeout (a blocking communicator's call
      // waits for its peers); progress() is one atomic increment: nothing else in the loop.
      mpi::Session::Watch watch(session_, std::chrono::duration_cast<mpi::Clock::duration>(timeout_), fmt::format("NCCL {} enqueue", to_string(c.op)), group_);
      // Each call on the next slice of the buffers, as nccl-tests (coll_call_offset): the first
      // call, the one a check follows, on the filled one.
      const uint64_t span = std::max(coll_input_elements(c.op, c.chunk, ranks_), coll_output_elements(c.op, c.chunk, ranks_)) * size_of(c.dtype);
      for (int i = 0; i < calls; ++i) {
        const ncclResult_t r = enqueue(c, coll_call_offset(span, max_bytes_, i));
        if (r == ncclInProgress) {
          if (auto e = failure_of([&] { comm_.settle("enqueue", Communicator::Settle::busy); })) fail(*e);
        } else if (r != ncclSuccess) {
          fail(fmt::format("{}: {} ({})", to_string(c.op), nccl_->GetErrorString(r), nccl_->GetLastError(comm_.get())));
        }
        watch.progress();
      }
    }
    check_cuda("cudaEventRecord", cudaEventRecord(stop_.get(), stream_.get()));
    if (auto e = failure_of([&] { wait(stop_.get()); })) fail(*e);
    float ms = 0;
    check_cuda("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return ms / 1e3;
  }

  void abandon() override {
    comm_.abort();
    failure_ = "abandoned";
  }

  uint64_t count_wrong(const CollCall& c) override {
    refuse_after_failure();
    const uint64_t out_count = coll_output_elements(c.op, c.chunk, ranks_);
    return kernels::count_collective_wrong(output(c, 0), out_count, c.op, c.redop, c.dtype, rank_, ranks_, c.chunk, stream_.get());
  }

 private:
  // After a failure of the communicator (or of the setup) every call is refused with it.
  void refuse_after_failure() const {
    if (failure_) throw LocatedError("", *failure_);
  }

  // CUDA resources of this rank.
  void allocate(int device, uint64_t max_bytes) {
    check_cuda("cudaSetDevice", cudaSetDevice(device));
    // Plain cudaMalloc by default: with it the 1-rank allreduce at 1-4 MiB took 4.31-4.67 us a
    // call on an H200, against 5.65-5.90 us from ncclMemAlloc (nccl-tests' allocator from NCCL
    // 2.19; memory NCCL can register and map for NVLink SHARP), in the same run
    // (tests/fixtures/gpu/2026-12-04-NVIDIA-H200/timing-probe.txt). --gpu-buffers ncclMemAlloc
    // takes NCCL's, where the library has it.
    const bool nccl_memory = choices_.buffers == "ncclMemAlloc";
    if (nccl_memory && !nccl_->MemAlloc) nccl_failure("--gpu-buffers ncclMemAlloc: this NCCL has no ncclMemAlloc (NCCL < 2.19)");
    buffers_ = nccl_memory ? "ncclMemAlloc" : "cudaMalloc";
    for (DeviceBuffer* buffer : {&send_, &recv_}) {
      void* p = nullptr;
      if (nccl_memory) {
        if (const ncclResult_t r = nccl_->MemAlloc(&p, max_bytes); r != ncclSuccess)
          nccl_failure(fmt::format("ncclMemAlloc of {} bytes: {}", max_bytes, nccl_->GetErrorString(r)));
        *buffer = DeviceBuffer(p, DeviceFree{nccl_->MemFree});
      } else {
        check_cuda("cudaMalloc", cudaMalloc(&p, max_bytes));
        buffer->reset(p);
      }
    }
    cudaStream_t stream = nullptr;
    check_cuda("cudaStreamCreate", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    stream_.reset(stream);
    for (Event* event : {&start_, &stop_}) {
      cudaEvent_t created = nullptr;
      check_cuda("cudaEventCreate", cudaEventCreate(&created));
      event->reset(created);
    }
  }

  // The communicator and its buffers; the group's agreed failure, if any (kept by the engine,
  // which then refuses every call with it).
  std::optional<std::string> setup(mpi::Session& session, MPI_Comm group, int device, uint64_t max_bytes) {
    // Without a loadable NCCL, nccl_library() says why again.
    std::optional<std::string> mine = nccl_ ? failure_of([&] { allocate(device, max_bytes); }) : failure_of([] { nccl_library(); });
    ncclUniqueId id{};
    if (rank_ == 0 && !mine)
      if (const ncclResult_t got = nccl_->GetUniqueId(&id); got != ncclSuccess) mine = fmt::format("ncclGetUniqueId: {}", nccl_->GetErrorString(got));
    // Every rank makes both calls whatever failed locally, so that no rank waits for another that
    // gave up; a CUDA or NCCL error of any rank is agreed, and then no rank creates the communicator.
    const auto deadline = mpi::deadline_in(timeout_.count());
    mpi::broadcast_bytes(session, group, &id, sizeof(id), 0, deadline, "the NCCL unique id");
    if (auto agreed = mpi::agree_on_error(session, group, mine, deadline)) return agreed;
    // The init's result is agreed too: the split that may follow is collective, and so is the
    // check that every rank can make it.
    const auto init_failure = failure_of([&] { comm_.init(ranks_, id, rank_, choices_.comm == "blocking"); });
    const auto after_init = mpi::deadline_in(timeout_.count());
    if (auto agreed = mpi::agree_on_error(session, group, init_failure, after_init)) return ended(*agreed);
    if (choices_.comm == "split") {
      const uint64_t can_split = nccl_->CommSplit != nullptr;
      if (mpi::allreduce(session, group, can_split, MPI_MIN, after_init, "whether every rank has ncclCommSplit") == 0)
        return ended("--nccl-comm split: a rank's NCCL has no ncclCommSplit (NCCL < 2.18)");
      if (auto e = failure_of([&] { comm_.split_blocking(rank_); })) return ended(*e);
    }
    timing_ = timing_text();
    return std::nullopt;
  }

  std::string timing_text() const {
    // NCCL_COMM_BLOCKING in the environment overrides the config of every communicator.
    const char* env = std::getenv("NCCL_COMM_BLOCKING");
    const std::string forced = env ? fmt::format(" (NCCL_COMM_BLOCKING={} in the environment overrides it)", env) : "";
    const std::string comm = choices_.comm == "blocking" ? "a blocking communicator, as nccl-tests"
                             : choices_.comm == "split"  ? "the blocking child of a non-blocking communicator (ncclCommSplit)"
                                                         : "a non-blocking communicator (NCCL >= 2.23 starts a thread per call)";
    return fmt::format("one CUDA event pair over the calls, enqueued on {}{}; each call on the next slice of the buffers (from {}), "
                       "as nccl-tests",
                       comm, forced, buffers_);
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
  void wait(cudaEvent_t event) {
    const auto deadline = Clock::now() + timeout_;
    while (true) {
      const cudaError_t done = cudaEventQuery(event);
      if (done == cudaSuccess) return;
      if (done != cudaErrorNotReady) check_cuda("cudaEventQuery", done);
      ncclResult_t state = ncclSuccess;
      nccl_->CommGetAsyncError(comm_.get(), &state);
      if (state != ncclSuccess && state != ncclInProgress)
        nccl_failure(fmt::format("asynchronous NCCL error: {} ({})", nccl_->GetErrorString(state), nccl_->GetLastError(comm_.get())));
      if (Clock::now() > deadline) nccl_failure(fmt::format("the collective did not complete within {} s", timeout_.count()));
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  // A failure of the communicator ends it: abort (which also frees it); the failure is kept.
  std::string ended(const std::string& failure) {
    comm_.abort();
    return failure;
  }

  // The same during a call: every later call is refused with it.
  [[noreturn]] void fail(const std::string& failure) {
    failure_ = ended(failure);
    throw LocatedError("", failure);
  }

  // The library, or null when none loads (setup agrees on why, and every call is refused).
  static const NcclLibrary* library_or_null() {
    const NcclLibrary* library = nullptr;
    (void)failure_of([&] { library = &nccl_library(); });
    return library;
  }

  mpi::Session& session_;
  const NcclLibrary* nccl_;
  std::chrono::duration<double> timeout_;
  NcclChoices choices_;
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
  MPI_Comm group_;
  std::optional<std::string> failure_;
  std::string timing_;
};

}  // namespace

std::unique_ptr<Engine> make_nccl_engine(mpi::Session& session, MPI_Comm group, int device, uint64_t max_bytes, double timeout_s,
                                         const NcclChoices& choices) {
  return std::make_unique<NcclEngine>(session, group, device, max_bytes, timeout_s, choices);
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
