#include "mpi/session.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "core/located_error.hpp"

namespace fabricproof::mpi {

Session::Session(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // The thread level of MPI_Init, as the applications and nccl-tests the figures are compared
    // with: Open MPI turns on its library-wide locks for any level above SINGLE (ompi_mpi_init:
    // opal_set_using_threads), and with FUNNELED the shared-memory progress loop took a lock
    // each turn (3% of a rank's samples at 1 MiB) and the MPI engine measured 1.5% slower than a
    // bare MPI_Allreduce loop (900 pairs, 2026-12-07). Only the main thread makes MPI calls; the
    // watchdog's MPI_Abort at a job's end goes through PMIx, which locks on its own.
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
    finalize_ = true;
  }
  // Errors come back as codes so adapters can turn them into findings instead of aborting.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  // Local: no other rank takes part (MPI_Comm_split_type would be a blocking collective).
  const char* local_rank = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const char* local_size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (local_rank && local_size) {
    local_rank_ = std::atoi(local_rank);
    local_size_ = std::atoi(local_size);
  } else {
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
  }
  void* ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
  if (found && ub) tag_ub_ = *static_cast<int*>(ub);
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  host_ = name;
  set_process_location(host_, rank_);  // every LocatedError thrown from here on names this node and rank
  heartbeats_.assign(static_cast<size_t>(size_), MPI_REQUEST_NULL);
  heard_.assign(static_cast<size_t>(size_), Clock::time_point{});
  hosts_.assign(static_cast<size_t>(size_), "");
  hosts_[static_cast<size_t>(rank_)] = host_;
  if (const char* inject = std::getenv("FABRICPROOF_INJECT")) inject_ = inject;
}

Session::~Session() {
  {
    std::lock_guard lock(watch_mutex_);
    watch_stop_ = true;
  }
  if (watchdog_.joinable()) watchdog_.join();
  for (auto& request : heartbeats_)  // empty messages: nothing to keep for a peer that never takes them
    if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
  if (finalize_) MPI_Finalize();
}

std::string Session::library_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<size_t>(length));
  version = version.substr(0, version.find_first_of(",\n"));
  return version;
}

std::string Session::host_of(int rank) const {
  return rank >= 0 && static_cast<size_t>(rank) < hosts_.size() ? hosts_[static_cast<size_t>(rank)] : "";
}

std::string Session::rank_label(int rank) const {
  const auto host = host_of(rank);
  return host.empty() ? fmt::format("rank {} (host unknown)", rank) : fmt::format("rank {} ({})", rank, host);
}

void Session::set_step(const std::string& phase, const std::string& step, bool major) {
  const bool inner = !outer_phase_.empty() && phase != outer_phase_;
  phase_ = inner ? outer_phase_ : phase;
  step_ = inner ? phase + ": " + step : step;
  if (listener_) listener_(phase_, step_, major);
  if (!inject_.empty()) inject_fault_at_step();
}

void Session::inject_fault_at_step() {
  const auto first = inject_.find(':'), last = inject_.rfind(':');
  if (first == std::string::npos || last == first) return;
  if (std::atoi(inject_.substr(0, first).c_str()) != rank_) return;
  if (doing().find(inject_.substr(first + 1, last - first - 1)) == std::string::npos) return;
  const std::string action = inject_.substr(last + 1);
  inject_.clear();
  std::fprintf(stderr, "fabricproof: rank %d: FABRICPROOF_INJECT: %s at \"%s\"\n", rank_, action.c_str(), doing().c_str());
  std::fflush(stderr);
  if (action == "stop") raise(SIGSTOP);
  if (action == "kill") raise(SIGKILL);
  if (action == "exit") std::_Exit(4);  // not 3, a run's own "not proven"
  // An error of this rank alone, raised where the step is (a phase's adapter failing on one node).
  if (action == "throw") throw std::runtime_error("FABRICPROOF_INJECT: an error raised at \"" + doing() + "\"");
}

std::string Session::doing() const { return step_.empty() ? phase_ : phase_ + ": " + step_; }

int Session::next_tags(int count) {
  const int window = tag_ub_ - kTagSequenceBase;
  if (tag_seq_ + count > window) tag_seq_ = 0;  // after ~2^31 exchanges (Open MPI's tag_ub)
  const int first = kTagSequenceBase + tag_seq_;
  tag_seq_ += count;
  return first;
}

void Session::abandon(MPI_Request request, std::shared_ptr<void> buffer) { abandoned_.push_back({request, std::move(buffer)}); }

void Session::answer_roll_call() {
  if (is_root()) return;
  const auto now = Clock::now();
  if (now - last_roll_check_ < std::chrono::milliseconds(20)) return;
  last_roll_check_ = now;
  for (;;) {
    int flag = 0;
    MPI_Iprobe(0, kTagRollCall, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    if (!flag) return;
    int id = 0;
    MPI_Recv(&id, 1, MPI_INT, 0, kTagRollCall, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    // "id<TAB>what I am doing"; the buffer lives until the job ends (a roll call happens once).
    auto answer = std::make_shared<std::string>(fmt::format("{}\t{}", id, doing()));
    MPI_Request request;
    MPI_Isend(answer->data(), static_cast<int>(answer->size()), MPI_CHAR, 0, kTagRollAnswer, MPI_COMM_WORLD, &request);
    abandon(request, answer);
  }
}

void Session::heartbeat() {
  const auto now = Clock::now();
  if (now - last_sign_check_ < std::chrono::milliseconds(20)) return;
  last_sign_check_ = now;
  for (;;) {  // the signs the others sent
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(is_root() ? MPI_ANY_SOURCE : 0, kTagAlive, MPI_COMM_WORLD, &flag, &status);
    if (!flag) break;
    MPI_Recv(nullptr, 0, MPI_CHAR, status.MPI_SOURCE, kTagAlive, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    heard_[static_cast<size_t>(status.MPI_SOURCE)] = now;
  }
  if (now - last_heartbeat_ < std::chrono::seconds(1)) return;
  last_heartbeat_ = now;
  // Rank 0 tells everybody, the others tell rank 0; while a sign is still on its way (a peer that
  // stopped reading) no second one is sent, so nothing piles up.
  for (int r = is_root() ? 1 : 0; r < (is_root() ? size_ : 1); ++r) {
    auto& request = heartbeats_[static_cast<size_t>(r)];
    int done = 1;
    if (request != MPI_REQUEST_NULL) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) MPI_Isend(nullptr, 0, MPI_CHAR, r, kTagAlive, MPI_COMM_WORLD, &request);
  }
}

bool Session::alive(int rank) const {
  const auto heard = heard_.at(static_cast<size_t>(rank));
  return heard != Clock::time_point{} && Clock::now() - heard < kAliveWithin;
}

void Session::say_alive(const std::string& reason) const {
  const std::string line = nlohmann::json{{"rank", rank_}, {"host", host_}, {"what", reason}}.dump();
  std::fprintf(stderr, "fabricproof: alive: %s\n", line.c_str());
  std::fflush(stderr);
}

Clock::duration Session::watchdog_grace(Clock::duration span) {
  return std::clamp<Clock::duration>(span, kWatchdogGrace, std::chrono::seconds(30));
}

// A blocked rank fires by the time the roll call ends (its last call began before the wait that
// timed out); it then waits its grace and ends the job. Five seconds more for the abort to land.
Clock::duration Session::blocked_peers_wait() const {
  if (blocking_stall_ == Clock::duration::zero()) return Clock::duration::zero();
  return watchdog_grace(blocking_stall_) + std::chrono::seconds(5);
}

void with_blocking_calls(Session& s, Clock::duration stall, const std::function<void()>& body) {
  s.expect_blocking_calls(stall);
  try {
    body();
  } catch (const Lost&) {
    throw;
  } catch (...) {
    s.expect_blocking_calls({});
    throw;
  }
  s.expect_blocking_calls({});
}

void Session::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

namespace {

// The world ranks of a communicator's members, in its order.
std::vector<int> world_ranks_of(MPI_Comm comm) {
  MPI_Group group, world;
  int size = 0;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_size(group, &size);
  std::vector<int> mine(static_cast<size_t>(size)), out(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) mine[static_cast<size_t>(i)] = i;
  MPI_Group_translate_ranks(group, size, mine.data(), world, out.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  return out;
}

}  // namespace

Session::Watch::Watch(Session& s, Clock::time_point deadline, std::string what, MPI_Comm group) : session_(s) {
  auto members = world_ranks_of(group);  // before the lock: the watchdog thread must not wait on MPI
  std::lock_guard lock(s.watch_mutex_);
  s.watch_armed_ = true;
  s.watch_deadline_ = deadline;
  s.watch_stall_ = Clock::duration::zero();
  s.watch_span_ = deadline - Clock::now();
  s.watch_what_ = fmt::format("{} ({})", what, s.doing());
  s.watch_group_ = std::move(members);
  if (!s.watchdog_.joinable()) s.watchdog_ = std::thread([&s] { s.watchdog_loop(); });
}

Session::Watch::Watch(Session& s, Clock::duration stall, std::string what, MPI_Comm group)
    : Watch(s, Clock::now() + stall, std::move(what), group) {
  std::lock_guard lock(s.watch_mutex_);
  s.watch_stall_ = stall;
  s.watch_span_ = stall;
}

Session::Watch::~Watch() {
  std::lock_guard lock(session_.watch_mutex_);
  session_.watch_armed_ = false;
}

// Called by the watchdog thread with watch_mutex_ held: the main thread is blocked inside MPI.
// Every rank blocked in the same call says so on stderr, in words and as a line the launcher
// wrapper reads (report/finalize.hpp: of the call's group, the ranks that said neither this nor
// "alive" are the ones it names); the grace lets the others' watchdogs, and the ranks of the group
// that wait in a polled exchange one call ahead, say so too before the job ends. MPI_Abort is the
// one call that ends every rank; should it not return (a node gone whose daemon mpirun still
// waits for), SIGALRM ends this process and mpirun the job.
void Session::end_blocked_job() {
  std::fprintf(stderr, "fabricproof: rank %d (%s): %s did not return in time; ending the job\n", rank_, host_.c_str(), watch_what_.c_str());
  const std::string line = nlohmann::json{{"rank", rank_}, {"host", host_}, {"what", watch_what_}, {"group", watch_group_}}.dump();
  std::fprintf(stderr, "fabricproof: watchdog: %s\n", line.c_str());
  std::fflush(stderr);
  std::this_thread::sleep_for(watchdog_grace(watch_span_));
  alarm(30);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::_Exit(2);
}

void Session::watchdog_loop() {
  uint64_t seen = watch_progress_.load(std::memory_order_relaxed);
  for (;;) {
    {
      std::lock_guard lock(watch_mutex_);
      if (watch_stop_) return;
      // A watched loop that made progress since the last look has `stall` again from now.
      const uint64_t progress = watch_progress_.load(std::memory_order_relaxed);
      if (progress != seen && watch_stall_ != Clock::duration::zero()) watch_deadline_ = Clock::now() + watch_stall_;
      seen = progress;
      if (watch_armed_ && Clock::now() > watch_deadline_) end_blocked_job();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace fabricproof::mpi
