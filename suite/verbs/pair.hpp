#pragma once
// Runs the verbs tests between two ranks: RC bring-up, the out-of-band exchange over a Channel
// (MPI in the product), then RDMA WRITE bandwidth (each direction, then both at once), SEND
// bandwidth with payload checks, and RDMA WRITE ping-pong latency. Every wait has a deadline; a
// failure becomes an error result with the verbs status, never an exception out of run_pair.
#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "verbs/verbs_model.hpp"
#include "verbs/memory.hpp"

namespace fabricproof::verbs {

using Clock = std::chrono::steady_clock;

// A message pipe to the peer rank of the pair, in order. Implemented over MPI by the app.
class Channel {
 public:
  virtual ~Channel() = default;
  virtual void send(const std::string& message) = 0;
  // The next message; throws PeerTimeout when none arrives before the deadline.
  virtual std::string receive(Clock::time_point deadline) = 0;
  // The next message if one is there, without waiting.
  virtual std::optional<std::string> poll() = 0;
};

class PeerTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PairPlan {
  VerbsOptions options;
  int self_index = 0;  // endpoint indices in the verbs section
  int peer_index = 1;
  VerbsEndpoint self;
  VerbsEndpoint peer;
  bool reporter = false;  // side a: merges and returns the results
  std::string sysfs_root = "/";
};

struct PairOutcome {
  std::vector<TestResult> tests;                       // side a only
  std::map<std::string, std::map<std::string, int64_t>> counter_deltas;  // endpoint label -> deltas
};

// Where the pairs of a round meet before each step (the app: every rank of the world, through
// rank 0), so that one pair's latency test never runs while another pair on the same node still
// streams. wait() may throw (a rank lost): run_pair lets that through. Every rank passes the gate
// exactly verbs_step_count(options) times per round, whatever its pair did.
class StepGate {
 public:
  virtual ~StepGate() = default;
  virtual void wait(size_t step, size_t steps) = 0;
};

PairOutcome run_pair(const PairPlan& plan, Channel& channel, MemoryProvider& memory, StepGate* gate = nullptr);

}  // namespace fabricproof::verbs
