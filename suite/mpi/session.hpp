#pragma once
// MPI adapter: the session (init/finalize) and what every wait on another rank needs to know: the
// step this rank is in, fresh tags, requests given up at a deadline, and rank 0's roll call. The
// exchanges themselves are in mpi/exchange.hpp.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fabricproof::mpi {

using Clock = std::chrono::steady_clock;

// A wait on other ranks passed its deadline. The exchange is half done, so the communicator it was
// on can no longer be trusted: the run ends (app/run.cpp: rank 0 names the silent ranks, writes
// the report and aborts the job). `silent` lists the ranks known not to have answered (empty when
// the wait cannot tell, as with a collective; rank 0's roll call then finds them).
class Lost : public std::runtime_error {
 public:
  explicit Lost(const std::string& what, std::vector<int> silent = {}) : std::runtime_error(what), silent_(std::move(silent)) {}
  const std::vector<int>& silent() const { return silent_; }

 private:
  std::vector<int> silent_;
};

class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  bool is_root() const { return rank_ == 0; }
  MPI_Comm world() const { return MPI_COMM_WORLD; }
  const std::string& host() const { return host_; }
  std::string library_version() const;  // "Open MPI v4.1.4, ..." first line

  // Host of each rank, once share_hosts() (mpi/exchange.hpp) ran on rank 0; "" where unknown.
  std::string host_of(int rank) const;
  std::string rank_label(int rank) const;  // "rank 3 (node2)"
  void set_hosts(std::vector<std::string> hosts) { hosts_ = std::move(hosts); }

  // What this rank is doing now: the phase and the step within it ("round 2: node1/rxe0 <->
  // node3/rxe0", "allreduce 32 MiB on 4 nodes"). Answered to rank 0's roll call, printed when a
  // wait times out, and passed to the listener (rank 0 writes it into the report). `major` marks a
  // new phase, round or sweep, as opposed to the next size of a sweep.
  using StepListener = std::function<void(const std::string& phase, const std::string& step, bool major)>;
  void set_step(const std::string& phase, const std::string& step, bool major = true);
  // A phase that runs others' code (the soak runs the verbs matrix and the collectives): while set,
  // every step is this phase's, the inner phase's name leading its step ("collectives: allreduce
  // ..."), so the report and a lost rank's finding name the phase that was running. "" ends it.
  void set_outer_phase(std::string phase) { outer_phase_ = std::move(phase); }
  void set_step_listener(StepListener listener) { listener_ = std::move(listener); }
  const std::string& phase() const { return phase_; }
  const std::string& step() const { return step_; }
  std::string doing() const;  // "collectives: allreduce 32 MiB on 4 nodes"

  // Fault injection for tests (FABRICPROOF_INJECT="RANK:TEXT:ACTION", ACTION stop | kill | exit |
  // throw): the rank RANK stops itself (SIGSTOP), dies (SIGKILL), exits (status 4) or throws (an
  // error of that rank alone, caught at the phase boundary) the first time its
  // "phase: step" contains TEXT. Real faults, landed at a step rather than after a delay, so that
  // the localhost tests hit the same step on a slow machine as on a fast one.
  void inject_fault_at_step();

  // The first of `count` fresh point-to-point tags. Every rank calls it in the same order, so an
  // answer that arrives after its exchange gave up can never match a later exchange.
  int next_tags(int count = 1);

  // A request given up at a deadline and the buffer it may still write into or read from: both
  // are kept until the job ends, so a late message never lands in freed memory.
  void abandon(MPI_Request request, std::shared_ptr<void> buffer);
  size_t abandoned() const { return abandoned_.size(); }

  // Answers rank 0's roll call if one is pending (every wait loop calls it; cheap when none is).
  void answer_roll_call();

  // Signs of life, for the waits that may outlast their deadline while the rank they wait for is
  // still at work (a verbs round whose iteration-mode stream has no length known in advance).
  // heartbeat(), called from the relaxed wait loops and the verbs pairs' channel (a streaming rank
  // sends its peer a note every few seconds), tells rank 0 at most once a second that this rank
  // lives (rank 0 tells every other rank) and takes the signs the others sent. alive(rank): a sign
  // from `rank` within the last kAliveWithin. A stopped or dead rank sends none, so a wait on it
  // still ends at its deadline.
  void heartbeat();
  bool alive(int rank) const;
  static constexpr std::chrono::seconds kAliveWithin{15};

  // Ends the whole job with `code`.
  [[noreturn]] void abort(int code) const;

  // A rank that stopped waiting (mpi::Lost) says on stderr that it lives ("fabricproof: alive:
  // {json}"), so that a finaliser naming by elimination (report/finalize.hpp) leaves it out.
  void say_alive(const std::string& reason) const;

  // A phase whose calls may block inside MPI (the timed collectives under a Watch of `stall`):
  // while set, a rank silent to the roll call may be blocked rather than lost, and its watchdog
  // ends the job within blocked_peers_wait(). Zero clears it.
  void expect_blocking_calls(Clock::duration stall) { blocking_stall_ = stall; }
  Clock::duration blocked_peers_wait() const;
  // How long a watchdog that fired waits before ending the job: long enough for the ranks of its
  // group that wait in a polled exchange (a call ahead of it, the same deadline) to time out and
  // say they live. At least kWatchdogGrace, at most 30 s.
  static Clock::duration watchdog_grace(Clock::duration span);

  // Ends the job if the blocking call that follows (one MPI has no non-blocking form of, or a
  // timed collective, which must be the blocking call applications make) does not return before
  // `deadline`; disarmed when the guard goes out of scope. The watchdog prints what was watched,
  // the step and the world ranks of `group` (the communicator the call is on: report/finalize.hpp
  // names those of them that said nothing), waits its grace, and calls MPI_Abort; the launcher
  // wrapper then finalises the report.
  class Watch {
   public:
    Watch(Session& s, Clock::time_point deadline, std::string what, MPI_Comm group = MPI_COMM_WORLD);
    // A loop of blocking calls: the job ends when no call completes (progress()) within `stall`.
    // progress() is one relaxed atomic increment, so the timed loop pays nothing measurable.
    Watch(Session& s, Clock::duration stall, std::string what, MPI_Comm group = MPI_COMM_WORLD);
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    void progress() { session_.watch_progress_.fetch_add(1, std::memory_order_relaxed); }

   private:
    Session& session_;
  };

 private:
  void watchdog_loop();
  [[noreturn]] void end_blocked_job();
  static constexpr std::chrono::seconds kWatchdogGrace{5};

  bool finalize_ = false;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  int tag_ub_ = 32767;
  int tag_seq_ = 0;
  std::string host_;
  std::vector<std::string> hosts_;
  std::string phase_ = "start";
  std::string outer_phase_;
  std::string step_;
  StepListener listener_;
  std::string inject_;  // FABRICPROOF_INJECT, cleared once fired
  Clock::time_point last_roll_check_{};
  Clock::time_point last_heartbeat_{}, last_sign_check_{};
  std::vector<MPI_Request> heartbeats_;  // at most one in flight per rank told
  std::vector<Clock::time_point> heard_;  // when each rank's last sign of life came
  struct Abandoned {
    MPI_Request request;
    std::shared_ptr<void> buffer;
  };
  std::vector<Abandoned> abandoned_;
  // The watchdog thread (started on first use). It calls only MPI_Abort.
  std::mutex watch_mutex_;
  bool watch_armed_ = false;
  bool watch_stop_ = false;
  Clock::time_point watch_deadline_{};
  Clock::duration watch_stall_{};  // zero: a fixed deadline
  std::atomic<uint64_t> watch_progress_{0};
  std::string watch_what_;
  std::vector<int> watch_group_;  // world ranks of the watched call's communicator
  Clock::duration watch_span_{};  // the stall, or the deadline from the start
  Clock::duration blocking_stall_{};
  std::thread watchdog_;
};

// Runs `body` as a phase whose calls may block (Session::expect_blocking_calls(stall)). The mark is
// cleared when body returns or fails with a phase's error, so that a later phase's roll call does
// not take a silent rank for one blocked in these calls; it stays set when a wait gave up (Lost):
// the roll call that ends the run needs it then.
void with_blocking_calls(Session& s, Clock::duration stall, const std::function<void()>& body);

// Tags of the session's own messages; sequenced exchanges use tags from kTagSequenceBase up.
inline constexpr int kTagRollCall = 90;
inline constexpr int kTagRollAnswer = 91;
inline constexpr int kTagAlive = 92;
inline constexpr int kTagSequenceBase = 1000;

}  // namespace fabricproof::mpi
