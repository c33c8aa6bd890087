#include "verbs/pair.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <thread>

#include "core/payload_pattern.hpp"
#include "inventory/file_reader.hpp"
#include "inventory/sysfs_rdma.hpp"
#include "verbs/poll_clock.hpp"
#include "verbs/rc_endpoint.hpp"
#include "verbs/send_queue.hpp"

namespace fabricproof::verbs {
namespace {

using nlohmann::json;

constexpr size_t kLatencySourceOffset = 2048;  // the peer writes at offset 0, we send from here

// Spinning is right while work flows (microseconds on real hardware); once a wait has been idle
// for a millisecond something is slow or broken, and a spinning rank would only steal the CPU from
// the peer it waits for (oversubscribed nodes, the TCG lab): then sleep between polls.
// FABRICPROOF_VERBS_SPIN=1 always spins, as perftest does: its benchmark compares like with like
// where the NIC is software (Soft-RoCE shares the CPU with the poller, so the back-off changes the
// rate there; a hardware HCA does not care).
bool always_spin() {
  static const bool spin = [] {
    const char* v = std::getenv("FABRICPROOF_VERBS_SPIN");
    return v && std::string_view(v) == "1";
  }();
  return spin;
}

// The one back-off rule of every polling loop: after a millisecond without progress, 50 us sleeps.
void back_off(double idle_usec) {
  if (!always_spin() && idle_usec > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
}

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

Clock::time_point after(double seconds) { return Clock::now() + std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6)); }

std::string wc_error(const ibv_wc& wc) {
  return fmt::format("{} (status {}, vendor error 0x{:x})", ibv_wc_status_str(wc.status), static_cast<int>(wc.status), wc.vendor_err);
}

// The tests of a pair, as perftest's: RDMA WRITE streams one way (ib_write_bw) or both ways at once
// (ib_write_bw -b), SEND streams whose payload the receiver checks (ib_send_bw), and the RDMA
// WRITE ping-pong (ib_write_lat). The name is the report's; the kind decides what runs.
enum class Kind { write_bw, write_bw_bidir, send_bw, write_lat };
Kind kind_of(const std::string& test) {
  static const std::map<std::string, Kind> kinds = {{"write_bw", Kind::write_bw},   {kVerbsSizesTest, Kind::write_bw},
                                                    {"write_bw_bidir", Kind::write_bw_bidir}, {"send_bw", Kind::send_bw},
                                                    {"write_lat", Kind::write_lat}};
  return kinds.at(test);  // the command line accepts only these (kVerbsTests)
}

// A test step: one test in one direction ('>' a to b, '<' b to a) or both at once ('=').
struct Step {
  std::string test;
  Kind kind;
  char direction;
  uint64_t bytes;  // message size
};

std::vector<Step> steps_for(const VerbsOptions& options) {
  std::vector<Step> steps;
  for (const auto& t : planned_results(options, 0, 1)) {
    const Kind kind = kind_of(t.test);
    steps.push_back({t.test, kind, kind == Kind::write_lat || kind == Kind::write_bw_bidir ? '=' : (t.from == 0 ? '>' : '<'), t.bytes});
  }
  return steps;
}

// What one side measured in a step.
struct Local {
  std::string error;
  uint64_t messages = 0;  // the measured ones (duration mode: inside the window)
  uint64_t total = 0;     // every message sent: what a SEND receiver waits for
  double seconds = 0;
  std::vector<double> latency_usec;
  uint64_t verified = 0;
  uint64_t mismatches = 0;
  bool has_payload_check = false;
};

json to_json_local(const Local& l) {
  json j = {{"error", l.error}, {"messages", l.messages}, {"total", l.total}, {"seconds", l.seconds}};
  if (l.has_payload_check) j["verified"] = l.verified, j["mismatches"] = l.mismatches;
  return j;
}

struct StreamParams {
  ibv_wr_opcode opcode = IBV_WR_RDMA_WRITE;
  uint64_t bytes = 0;
  double duration_s = 0;
  uint64_t iterations = 0;
  int tx_depth = 128;
  size_t qps = 1;
  int slots = 1;  // SEND: cycle through the pattern-filled send slots
  double timeout_s = 30;
  double margin_s = 0;  // duration mode: the window leaves out this much at each end
  Channel* peer = nullptr;  // gets a progress note every few seconds while the stream runs
};

// While a sender streams, the peer hears nothing else from it: an iteration-mode test has no length
// known in advance (20000 x 64 KiB take 4 s on a 100 Gb/s link and 100 s in the TCG lab), so the
// sender proves itself alive with a note every few seconds and each note restarts the peer's wait.
bool is_progress_note(const json& message) { return message.contains("progress"); }
double progress_note_interval(double timeout_s) { return std::min(5.0, timeout_s / 2); }

// Posts one send-queue work request (a VerbsError when the provider refuses it).
void post_send(ibv_qp* qp, ibv_wr_opcode opcode, void* local, uint32_t length, uint32_t lkey, uint64_t remote_addr,
               uint32_t rkey, uint32_t imm, unsigned flags) {
  ibv_sge sge{reinterpret_cast<uint64_t>(local), length, lkey};
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  wr.sg_list = &sge;
  wr.num_sge = length ? 1 : 0;  // a zero-length flush carries no data
  wr.opcode = opcode;
  wr.send_flags = flags;
  wr.wr.rdma.remote_addr = remote_addr;
  wr.wr.rdma.rkey = rkey;
  wr.imm_data = imm;
  if (int rc = ibv_post_send(qp, &wr, &bad); rc != 0) throw VerbsError("ibv_post_send", rc, "");
}

// Reaps send completions; a completion in error (or a failed poll) is a failure of the stream.
void reap(ibv_cq* cq, std::vector<SendQueue>& queues, const RcEndpoint& ep, uint64_t& completed_messages) {
  ibv_wc wc[16];
  const int n = ibv_poll_cq(cq, 16, wc);
  if (n < 0) throw LocatedError("", "ibv_poll_cq failed");
  for (int i = 0; i < n; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) throw LocatedError("", wc_error(wc[i]));
    if (wc[i].opcode & IBV_WC_RECV) continue;  // not a send's (the send CQ has none; checked all the same)
    const int q = ep.qp_index(wc[i].qp_num);
    if (q >= 0) completed_messages += static_cast<uint64_t>(queues[static_cast<size_t>(q)].completed());
  }
}

// The window of a duration run (perftest's -D): opened `margin` after the start, closed `margin`
// before the end, each edge on a fresh clock reading, with the completions counted at each edge.
struct MeasureWindow {
  bool open = false, closed = false;
  Clock::time_point since{}, until{};
  uint64_t first = 0, last = 0;

  void update(const StreamParams& p, double elapsed, uint64_t completed, PollClock& clock) {
    if (!open && elapsed >= p.margin_s) {
      const auto edge = clock.fresh();
      *this = {true, false, edge, edge, completed, completed};
    }
    if (open && !closed && elapsed >= p.duration_s - p.margin_s) {
      closed = true;
      until = clock.fresh();
      last = completed;
    }
  }
  void figures(Local& out) const {
    out.messages = last - first;
    out.seconds = seconds_between(since, until);
  }
};

// Tells the peer the stream is alive (its deadline waits for progress notes, not for the end).
void note_progress(const StreamParams& p, uint64_t completed, Clock::time_point now, Clock::time_point& last_note) {
  if (!p.peer || seconds_between(last_note, now) < progress_note_interval(p.timeout_s)) return;
  p.peer->send(json_text(json{{"progress", completed}}));
  last_note = now;
}

// Posts RDMA WRITEs (or SENDs) back to back, keeping tx_depth in flight per QP, like ib_write_bw /
// ib_send_bw. Iteration mode measures from the first post to the last completion; duration mode,
// like perftest's -D, counts the completions inside a window that leaves out `margin` at each end
// (the ramp-up while the queue fills, and the drain), so a short run is not flattered or penalised.
Local stream(RcEndpoint& ep, const ConnectionInfo& remote, const StreamParams& p) {
  Local out;
  std::vector<SendQueue> queues(p.qps, SendQueue(p.tx_depth, signal_interval(p.bytes, p.tx_depth)));
  uint64_t posted = 0, completed = 0;
  bool stop = false;
  PollClock clock;
  const auto start = clock.now();
  auto last_completion = start, last_note = start;
  MeasureWindow window;
  const bool windowed = p.duration_s > 0;
  auto post = [&](size_t q, uint32_t length, bool is_message) {
    auto& queue = queues[q];
    const bool signaled = !is_message || queue.next_is_signaled();
    const int slot = static_cast<int>(posted % static_cast<uint64_t>(p.slots));
    post_send(ep.qp(q), p.opcode, ep.tx_slot(slot), length, ep.buffer().mr->lkey, remote.addr, remote.rkey,
              htonl(static_cast<uint32_t>(slot)), signaled ? IBV_SEND_SIGNALED : 0);
    queue.posted(signaled, is_message);
  };
  // A failed post or completion, or a silent queue, ends the stream: the step's failure, sent to
  // the peer with its figures.
  const auto failed = failure_of([&] {
    while (true) {
      for (size_t q = 0; q < p.qps && !stop; ++q)
        while (!queues[q].full()) {
          stop = p.duration_s > 0 ? seconds_between(start, clock.now()) >= p.duration_s : posted >= p.iterations;
          if (stop) break;
          post(q, static_cast<uint32_t>(p.bytes), true);
          ++posted;
        }
      if (stop)  // unsignalled WRs at the end: a zero-length signalled WR completes after them,
        // posted once the queue has room for it (never beyond max_send_wr)
        for (size_t q = 0; q < p.qps; ++q)
          if (queues[q].needs_flush() && !queues[q].full()) post(q, 0, false);
      const uint64_t before = completed;
      reap(ep.send_cq(), queues, ep, completed);
      const auto now = clock.tick(completed != before);
      if (completed != before) last_completion = now;
      else back_off(clock.idle_usec());
      note_progress(p, completed, now, last_note);
      if (windowed) window.update(p, seconds_between(start, now), completed, clock);
      if (stop && std::all_of(queues.begin(), queues.end(), [](const SendQueue& q) { return q.idle(); })) return;
      if (seconds_between(last_completion, now) > p.timeout_s)
        throw LocatedError("", fmt::format("no completion for {} s ({} messages outstanding)", p.timeout_s, posted - completed));
    }
  });
  if (failed) out.error = *failed;
  out.total = completed;
  if (windowed && window.closed && window.last > window.first) window.figures(out);
  else {  // iteration mode (or a window that saw nothing): first post to last completion
    out.messages = completed;
    out.seconds = seconds_between(start, last_completion);
  }
  return out;
}

// The SEND receiver: pre-posted receives on every slot, reposted as they complete; checks the
// payload of the first messages and then one in 64 against the pattern of the slot the sender
// named in the immediate data.
class Receiver {
 public:
  Receiver(RcEndpoint& ep, MemoryProvider& memory, uint64_t bytes, int slots) : ep_(ep), memory_(memory), bytes_(bytes), slots_(slots) {}

  void post_all() {
    for (int i = 0; i < slots_; ++i) post(i);
  }

  // Runs until the sender's figure arrives and that many messages were received (or the deadline).
  Local run(Channel& channel, double timeout_s, json& sender_result) {
    Local out;
    out.has_payload_check = true;
    std::optional<uint64_t> expected;
    PollClock clock;
    auto last_progress = clock.now();
    ibv_wc wc[16];
    uint64_t polls = 0;
    while (true) {
      const int n = ibv_poll_cq(ep_.recv_cq(), 16, wc);
      if (n < 0) {
        out.error = "ibv_poll_cq failed";
        return out;
      }
      const auto now = clock.tick(n != 0);
      if (n == 0) back_off(clock.idle_usec());
      else last_progress = now;
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) {
          out.error = wc_error(wc[i]);
          return out;
        }
        const int slot = static_cast<int>(wc[i].wr_id);
        if (wc[i].byte_len > 0) {  // zero bytes: the sender's flush, not a message
          if (out.messages < 16 || out.messages % 64 == 0) {
            const uint64_t seed = 0xfab0000ull + ntohl(wc[i].imm_data);
            out.mismatches += memory_.mismatches(ep_.buffer(), static_cast<size_t>(slot) * ep_.config().slot_bytes, wc[i].byte_len, seed);
            ++out.verified;
          }
          ++out.messages;
        }
        if (auto failed = failure_of([&] { post(slot); })) {
          out.error = *failed;
          return out;
        }
      }
      if ((++polls & 0xff) == 0 && !expected) {
        if (auto message = channel.poll(); message) {
          if (json parsed = json::parse(*message); !is_progress_note(parsed)) {
            sender_result = std::move(parsed);
            if (!sender_result.value("error", "").empty()) return out;  // the sender failed: stop
            expected = sender_result.value("total", sender_result.value("messages", uint64_t{0}));
          }
        }
      }
      if (expected && out.messages >= *expected) return out;
      if (seconds_between(last_progress, now) > timeout_s) {
        out.error = fmt::format("no SEND arrived for {} s ({} received{})", timeout_s, out.messages,
                                expected ? fmt::format(" of {}", *expected) : "");
        return out;
      }
    }
  }

 private:
  void post(int slot) {
    ibv_sge sge{reinterpret_cast<uint64_t>(ep_.rx_slot(slot)), static_cast<uint32_t>(bytes_), ep_.buffer().mr->lkey};
    ibv_recv_wr wr{};
    ibv_recv_wr* bad = nullptr;
    wr.wr_id = static_cast<uint64_t>(slot);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (int rc = ibv_post_recv(ep_.qp(0), &wr, &bad); rc != 0) throw VerbsError("ibv_post_recv", rc, "");
  }

  RcEndpoint& ep_;
  MemoryProvider& memory_;
  uint64_t bytes_;
  int slots_;
};

// RDMA WRITE ping-pong as ib_write_lat (perftest's run_iter_lat_write): each side writes into the
// other's buffer, waits for its own write's completion, then spins on its buffer until the peer's
// write lands. One-way latency = half the round trip.
Local ping_pong(RcEndpoint& ep, const ConnectionInfo& remote, bool initiator, uint64_t bytes, uint64_t iterations, double timeout_s) {
  Local out;
  volatile uint8_t* mine = ep.latency_buffer();
  auto* source = const_cast<uint8_t*>(mine + kLatencySourceOffset);
  const size_t last = bytes - 1;
  const unsigned flags = IBV_SEND_SIGNALED | (bytes <= ep.max_inline() ? IBV_SEND_INLINE : 0);
  // Waits are timed with the cycle counter, not the steady clock: a clock read is a system call
  // where the clocksource has no vDSO (HPET in the lab), two per wait would add their cost to each
  // round trip, and the spin must stay as tight as ib_write_lat's.
  const double usec_per_tick = usec_per_cycle();
  auto spin_until = [&](auto&& done, const char* what) -> bool {
    const uint64_t since = cycles();
    for (uint32_t spins = 1; !done(); ++spins) {
      if ((spins & 0xffff) == 0) {
        const double idle_usec = static_cast<double>(cycles() - since) * usec_per_tick;
        if (idle_usec > timeout_s * 1e6) {
          if (out.error.empty()) out.error = fmt::format("{} within {} s", what, timeout_s);
          return false;
        }
        back_off(idle_usec);
      }
    }
    return out.error.empty();
  };
  auto write = [&](uint8_t value) -> bool {
    source[last] = value;
    auto post = [&] { post_send(ep.qp(0), IBV_WR_RDMA_WRITE, source, static_cast<uint32_t>(bytes), ep.latency_lkey(), remote.lat_addr, remote.lat_rkey, 0, flags); };
    if (const auto failed = failure_of(post)) out.error = *failed;
    if (!out.error.empty()) return false;
    ibv_wc wc{};
    return spin_until(
        [&] {
          const int n = ibv_poll_cq(ep.send_cq(), 1, &wc);
          if (n < 0) out.error = "ibv_poll_cq failed";
          if (n > 0 && wc.status != IBV_WC_SUCCESS) out.error = wc_error(wc);
          return n != 0;
        },
        "no completion for the latency write");
  };
  auto arrived = [&](uint8_t value) { return spin_until([&] { return mine[last] == value; }, "the peer's write did not arrive"); };
  out.latency_usec.reserve(iterations);
  const double scale = usec_per_tick / 2;  // one-way: half the round trip
  uint64_t previous = cycles();
  for (uint64_t i = 0; i < iterations; ++i) {
    const auto value = static_cast<uint8_t>((i + 1) & 0xff);
    if (initiator) {
      // Like perftest, time from post to post: one cycle-counter read per round trip.
      const uint64_t now = cycles();
      if (i > 0) out.latency_usec.push_back(static_cast<double>(now - previous) * scale);
      previous = now;
      if (!write(value) || !arrived(value)) break;
      if (i + 1 == iterations) out.latency_usec.push_back(static_cast<double>(cycles() - previous) * scale);
    } else if (!arrived(value) || !write(value)) {
      break;
    }
  }
  out.messages = out.latency_usec.size();
  return out;
}

// Discards completions left from an earlier step (the closing zero-length SEND's receive, a
// batch that completed after its step ended).
void drain(RcEndpoint& ep) {
  ibv_wc wc[16];
  for (ibv_cq* cq : {ep.send_cq(), ep.recv_cq()})
    while (ibv_poll_cq(cq, 16, wc) > 0) {
    }
}

std::map<std::string, uint64_t> counters(const PairPlan& plan) {
  probe::FileReader files(plan.sysfs_root);
  return probe::read_port_counters(files, plan.self.device, plan.self.port);
}

std::map<std::string, int64_t> deltas(const std::map<std::string, uint64_t>& before, const std::map<std::string, uint64_t>& after) {
  std::map<std::string, int64_t> d;
  for (const auto& [name, value] : after) {
    auto it = before.find(name);
    const int64_t change = static_cast<int64_t>(value) - static_cast<int64_t>(it == before.end() ? 0 : it->second);
    if (change != 0) d[name] = change;
  }
  return d;
}

TestResult result_of(const Step& step, const PairPlan& plan, Status status, const std::string& reason) {
  TestResult t;
  t.test = step.test;
  const int a = plan.reporter ? plan.self_index : plan.peer_index;
  const int b = plan.reporter ? plan.peer_index : plan.self_index;
  t.from = step.direction == '<' ? b : a;
  t.to = step.direction == '<' ? a : b;
  t.status = status;
  t.reason = reason;
  t.bytes = step.bytes;
  return t;
}

// Side a merges its own and the peer's measurements into the step's result.
TestResult merge(const Step& step, const PairPlan& plan, const Local& mine, const json& theirs) {
  const std::string their_error = theirs.value("error", "");
  const std::string self_label = plan.self.label(), peer_label = plan.peer.label();
  if (!mine.error.empty() || !their_error.empty()) {  // both sides' view: the second often explains the first
    std::string reason = mine.error.empty() ? "" : self_label + ": " + mine.error;
    if (!their_error.empty()) reason += (reason.empty() ? "" : "; ") + peer_label + ": " + their_error;
    return result_of(step, plan, Status::error, reason);
  }
  TestResult t = result_of(step, plan, Status::ok, "");
  auto gbps = [&](uint64_t messages, double seconds) {
    return seconds > 0 ? static_cast<double>(messages) * static_cast<double>(t.bytes) * 8 / seconds / 1e9 : 0.0;
  };
  const uint64_t their_messages = theirs.value("messages", uint64_t{0});
  const double their_seconds = theirs.value("seconds", 0.0);
  if (step.kind == Kind::write_lat) {
    t.messages = mine.messages;
    t.latency = latency_stats(mine.latency_usec);
  } else if (step.kind == Kind::write_bw_bidir) {
    t.messages = mine.messages + their_messages;
    t.seconds = std::max(mine.seconds, their_seconds);
    t.gbps = gbps(mine.messages, mine.seconds) + gbps(their_messages, their_seconds);
  } else {
    const bool sender_is_me = step.direction == '>';
    t.messages = sender_is_me ? mine.messages : their_messages;
    t.seconds = sender_is_me ? mine.seconds : their_seconds;
    t.gbps = gbps(t.messages, t.seconds);
    if (step.kind == Kind::send_bw) {
      t.verified = sender_is_me ? theirs.value("verified", uint64_t{0}) : mine.verified;
      t.mismatches = sender_is_me ? theirs.value("mismatches", uint64_t{0}) : mine.mismatches;
    }
  }
  return t;
}

// One pair, on one side: bring-up and the out-of-band exchange, then each step in turn. Side a
// (the reporter) keeps the results; a failure marks the steps that cannot run any more.
class PairRun {
 public:
  PairRun(const PairPlan& plan, Channel& channel, MemoryProvider& memory, StepGate* gate)
      : plan_(plan), o_(plan.options), channel_(channel), memory_(memory), gate_(gate), steps_(steps_for(plan.options)), before_(counters(plan)) {}

  PairOutcome run() {
    try {
      try {
        if (bring_up())
          for (; step_index_ < steps_.size(); ++step_index_) {
            pass_gate();
            if (!run_step(steps_[step_index_])) break;
          }
        const auto own = deltas(before_, counters(plan_));
        const json peer_counters = exchange(own, o_.timeout_s);
        outcome_.counter_deltas[plan_.self.label()] = own;
        outcome_.counter_deltas[plan_.peer.label()] = peer_counters.get<std::map<std::string, int64_t>>();
      } catch (const PeerTimeout& e) {
        fail_rest(std::min(step_index_, steps_.size()), Status::error, plan_.peer.label() + " did not answer: " + e.what());
      } catch (const std::exception& e) {
        fail_rest(std::min(step_index_, steps_.size()), Status::error, plan_.self.label() + ": " + e.what());
      }
      while (gates_passed_ < steps_.size()) pass_gate();  // the steps this pair no longer runs
    } catch (const GateClosed&) {
      std::rethrow_exception(gate_error_);  // not the pair's failure: the round cannot go on
    }
    if (!plan_.reporter) outcome_.tests.clear();
    return outcome_;
  }

 private:
  struct GateClosed {};  // not a std::exception: no handler of the pair's own failures takes it

  void pass_gate() {
    if (gate_) try {
        gate_->wait(gates_passed_, steps_.size());
      } catch (...) {
        gate_error_ = std::current_exception();
        throw GateClosed{};
      }
    ++gates_passed_;
  }

  void fail_rest(size_t from, Status status, const std::string& reason) {
    if (!plan_.reporter) return;
    for (size_t i = from; i < steps_.size(); ++i) outcome_.tests.push_back(result_of(steps_[i], plan_, status, reason));
  }

  json exchange(const json& mine, double seconds) {
    channel_.send(json_text(mine));
    return receive(seconds);
  }

  // The peer's next message but its progress notes, each of which restarts the wait.
  json receive(double seconds) {
    for (;;)
      if (json message = json::parse(channel_.receive(after(seconds))); !is_progress_note(message)) return message;
  }

  // A local failure and the peer's: both sides' view, every step failed with it.
  bool agreed(const std::string& mine, const std::string& peers) {
    if (mine.empty() && peers.empty()) return true;
    fail_rest(0, Status::error, mine.empty() ? plan_.peer.label() + ": " + peers : plan_.self.label() + ": " + mine);
    step_index_ = steps_.size();
    return false;
  }

  // The endpoint, the exchange of {lid, qpn, psn, gid} and buffers, and the connection.
  bool bring_up() {
    config_.device = plan_.self.device;
    config_.port = plan_.self.port;
    config_.gid_index = o_.gid_index ? o_.gid_index : plan_.self.gid_index;
    config_.traffic_class = o_.traffic_class;
    config_.qps = std::max(1, o_.qps);
    config_.tx_depth = std::max(2, o_.tx_depth);
    // Receives outnumber sends in flight, as in perftest (rx_depth 512 vs tx_depth 128), so a
    // receiver that reposts a little late does not push the sender into RNR retries.
    config_.rx_depth = 4 * config_.tx_depth;
    config_.rx_slots = config_.rx_depth;
    config_.tx_slots = config_.tx_depth;
    // Large enough that the curve's largest WRITE fits in the send slots from slot 0 on.
    const uint64_t largest = o_.sizes.empty() ? 0 : *std::max_element(o_.sizes.begin(), o_.sizes.end());
    config_.slot_bytes = std::max<uint64_t>({o_.bw_bytes, 64, (largest + config_.tx_slots - 1) / config_.tx_slots});
    std::string setup_error;
    try {
      ep_ = std::make_unique<RcEndpoint>(config_, memory_);
    } catch (const std::exception& e) {
      setup_error = e.what();
    }
    json hello = {{"error", setup_error}};
    if (ep_) hello["info"] = ep_->local_info();
    const json peer_hello = exchange(hello, o_.timeout_s);
    if (!agreed(setup_error, peer_hello.value("error", ""))) return false;
    remote_ = peer_hello.at("info").get<ConnectionInfo>();
    std::string connect_error;
    try {
      ep_->connect(remote_);
    } catch (const std::exception& e) {
      connect_error = e.what();
    }
    const json peer_connected = exchange({{"error", connect_error}}, o_.timeout_s);
    if (!agreed(connect_error, peer_connected.value("error", ""))) return false;
    // Each SEND slot carries its own pattern, so a misplaced or stale message is caught too.
    for (int s = 0; s < config_.tx_slots; ++s)
      memory_.fill(ep_->buffer(), ep_->tx_offset(s), config_.slot_bytes, 0xfab0000ull + static_cast<uint64_t>(s));
    return true;
  }

  bool sends(const Step& step) const { return step.direction == '=' || (step.direction == '>') == plan_.reporter; }

  // One step: both sides ready, then the measurement, then the figures exchanged. false: the pair stops.
  bool run_step(const Step& step) {
    drain(*ep_);  // nothing of the previous step may count in this one
    std::unique_ptr<Receiver> receiver;
    std::string ready_error;
    if (step.kind == Kind::send_bw && !sends(step)) {
      receiver = std::make_unique<Receiver>(*ep_, memory_, o_.bw_bytes, config_.rx_slots);
      ready_error = failure_of([&] { receiver->post_all(); }).value_or("");  // receives are in place before the sender starts
    }
    if (step.kind == Kind::write_lat) std::memset(const_cast<uint8_t*>(ep_->latency_buffer()), 0, 4096);
    const json peer_ready = exchange({{"ready", step.test}, {"error", ready_error}}, o_.timeout_s);
    if (!ready_error.empty() || !peer_ready.value("error", "").empty()) {
      Local failed;
      failed.error = ready_error;
      if (plan_.reporter) outcome_.tests.push_back(merge(step, plan_, failed, peer_ready));
      fail_rest(step_index_ + 1, Status::not_measured, "the pair failed in " + step.test);
      return false;
    }
    json theirs;
    const Local mine = measure(step, receiver.get(), theirs);
    if (plan_.reporter) outcome_.tests.push_back(merge(step, plan_, mine, theirs));
    if (!mine.error.empty() || !theirs.value("error", "").empty()) {
      // The QP is in the error state now: the rest of this pair cannot be measured.
      fail_rest(step_index_ + 1, Status::not_measured, "the QP failed in " + step.test);
      step_index_ = steps_.size();
      return false;
    }
    return true;
  }

  // This side's part of a step and the peer's figures.
  Local measure(const Step& step, Receiver* receiver, json& theirs) {
    const double wait = (o_.iterations ? o_.timeout_s : o_.duration_s) + o_.timeout_s + 10;
    Local mine;
    if (step.kind == Kind::write_lat) {
      mine = ping_pong(*ep_, remote_, plan_.reporter, o_.lat_bytes, o_.lat_iterations, o_.timeout_s);  // <= kLatencySourceOffset (the CLI bounds it)
      theirs = exchange(to_json_local(mine), wait);
    } else if (receiver) {
      mine = receiver->run(channel_, o_.timeout_s, theirs);
      if (theirs.is_null()) theirs = receive(wait);
      channel_.send(json_text(to_json_local(mine)));
    } else if (sends(step)) {
      mine = stream(*ep_, remote_, stream_params(step));
      theirs = exchange(to_json_local(mine), wait);
    } else {  // the target of a one-sided write: nothing to do but wait for the figure
      theirs = receive(wait);
      channel_.send(json_text(to_json_local(mine)));
    }
    return mine;
  }

  StreamParams stream_params(const Step& step) const {
    StreamParams p;
    p.bytes = step.bytes;  // a size of the curve may span several send slots: a WRITE reads from slot 0 on
    p.duration_s = o_.iterations ? 0 : o_.duration_s;
    p.iterations = o_.iterations;
    p.tx_depth = config_.tx_depth;
    p.qps = ep_->qp_count();
    p.timeout_s = o_.timeout_s;
    p.margin_s = o_.margin();
    p.peer = &channel_;
    if (step.kind == Kind::send_bw) {
      p.opcode = IBV_WR_SEND_WITH_IMM;
      p.qps = 1;
      p.slots = config_.tx_slots;
    }
    return p;
  }

  const PairPlan& plan_;
  const VerbsOptions& o_;
  Channel& channel_;
  MemoryProvider& memory_;
  StepGate* gate_;
  size_t gates_passed_ = 0;
  std::exception_ptr gate_error_;
  const std::vector<Step> steps_;
  const std::map<std::string, uint64_t> before_;
  EndpointConfig config_;
  std::unique_ptr<RcEndpoint> ep_;
  ConnectionInfo remote_;
  PairOutcome outcome_;
  size_t step_index_ = 0;
};

}  // namespace

PairOutcome run_pair(const PairPlan& plan, Channel& channel, MemoryProvider& memory, StepGate* gate) {
  return PairRun(plan, channel, memory, gate).run();
}

}  // namespace fabricproof::verbs
