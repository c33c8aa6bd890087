// The bandwidth stream's signalling, as perftest's: every WR above 8 KiB, else one in min(100, depth).
#include "verbs/send_queue.hpp"

#include <gtest/gtest.h>

namespace fabricproof::verbs {
namespace {

TEST(SendQueue, SignalIntervalIsPerftests) {
  EXPECT_EQ(signal_interval(65536, 128), 1);  // ib_write_bw -s 65536: "CQ Moderation : 1"
  EXPECT_EQ(signal_interval(8193, 128), 1);
  EXPECT_EQ(signal_interval(8192, 128), 100);  // at the limit: still moderated
  EXPECT_EQ(signal_interval(4096, 32), 32);    // never more than the queue depth
  EXPECT_EQ(signal_interval(64, 1), 1);
}

TEST(SendQueue, EverySignalledWrRetiresItselfAndFreesItsSlot) {
  SendQueue queue(4, signal_interval(65536, 4));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(queue.next_is_signaled());
    queue.posted(true, true);
  }
  EXPECT_TRUE(queue.full());
  EXPECT_FALSE(queue.needs_flush());
  EXPECT_EQ(queue.completed(), 1);  // one completion: one message, and room for one more at once
  EXPECT_FALSE(queue.full());
  EXPECT_EQ(queue.outstanding(), 3);
}

TEST(SendQueue, AModeratedBatchIsRetiredByItsSignalledWrAndAClosingFlush) {
  SendQueue queue(8, 4);
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(queue.next_is_signaled());
    queue.posted(false, true);
  }
  EXPECT_TRUE(queue.needs_flush());  // three messages with no signalled WR after them
  EXPECT_EQ(queue.completed(), 0);   // nothing signalled yet: nothing to retire
  queue.posted(true, false);         // the zero-length closing WR: signalled, not a message
  EXPECT_FALSE(queue.needs_flush());
  EXPECT_EQ(queue.completed(), 3);
  EXPECT_TRUE(queue.idle());
}

}  // namespace
}  // namespace fabricproof::verbs
