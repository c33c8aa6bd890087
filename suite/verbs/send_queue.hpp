#pragma once
// The bandwidth stream's send queue bookkeeping. No hardware headers: the unit tests build it.
#include <algorithm>
#include <cstdint>
#include <deque>

namespace fabricproof::verbs {

// How many work requests share one signalled completion, by perftest's rule (perftest_parameters.c,
// 4.5-0.17 and later): messages above 8 KiB are all signalled ("CQ Moderation: 1" in ib_write_bw's
// header: moderation buys nothing there and skews the measured time), smaller ones one in 100, at
// most one per queue depth. The same rule keeps the queue as full as perftest's: with one in N
// signalled, up to N-1 slots wait for the next signalled completion before they can be reused.
inline int signal_interval(uint64_t message_bytes, int tx_depth) {
  constexpr uint64_t kModerationLimit = 8192;  // perftest's MSG_SIZE_CQ_MOD_LIMIT
  constexpr int kModeration = 100;             // perftest's DEF_CQ_MOD
  if (message_bytes > kModerationLimit) return 1;
  return std::max(1, std::min(kModeration, tx_depth));
}

// Work requests in flight on one QP when only one in `interval` is signalled: a signalled
// completion retires every WR posted before it (RC completes in order).
class SendQueue {
 public:
  SendQueue(int depth, int interval) : depth_(depth), interval_(interval) {}
  bool full() const { return outstanding_ >= depth_; }
  bool idle() const { return outstanding_ == 0; }
  // Unsignalled WRs with no signalled one after them: a closing signalled WR must follow.
  bool needs_flush() const { return unsignaled_ > 0; }
  bool next_is_signaled() const { return unsignaled_ + 1 >= interval_; }
  void posted(bool signaled, bool is_message) {
    ++outstanding_;
    ++unsignaled_;
    unsignaled_messages_ += is_message;
    if (!signaled) return;
    batches_.push_back({unsignaled_, unsignaled_messages_});
    unsignaled_ = unsignaled_messages_ = 0;
  }
  // A signalled completion: returns the messages it retires.
  int completed() {
    if (batches_.empty()) return 0;
    const Batch b = batches_.front();
    batches_.pop_front();
    outstanding_ -= b.wrs;
    return b.messages;
  }
  int outstanding() const { return outstanding_; }

 private:
  struct Batch {
    int wrs;
    int messages;
  };
  int depth_;
  int interval_;
  std::deque<Batch> batches_;
  int outstanding_ = 0;
  int unsignaled_ = 0;
  int unsignaled_messages_ = 0;
};

}  // namespace fabricproof::verbs
