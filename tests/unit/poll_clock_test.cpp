// The verbs polling loops' clock: the steady clock is read on progress and every 10 ms of cycles,
// never per empty poll (a system call where the clocksource has no vDSO, as in the lab's guests).
#include "verbs/poll_clock.hpp"

#include <gtest/gtest.h>

namespace fabricproof::verbs {
namespace {

// Clocks the test drives: a 1 GHz cycle counter it advances, a steady clock whose reads it counts.
struct TestClocks {
  static inline uint64_t cycle = 0;
  static inline int reads = 0;
  static inline Clock::time_point time{};
  static Clock::time_point now() {
    ++reads;
    return time;
  }
  static uint64_t cycles() { return cycle; }
  static double usec_per_cycle() { return 1e-3; }
};
using TestPollClock = BasicPollClock<TestClocks>;

class PollClockTest : public ::testing::Test {
 protected:
  void SetUp() override { TestClocks::cycle = 1000, TestClocks::reads = 0, TestClocks::time = Clock::time_point{} + std::chrono::seconds(1); }
  static void advance(std::chrono::microseconds us) {
    TestClocks::cycle += static_cast<uint64_t>(us.count()) * 1000;
    TestClocks::time += us;
  }
};

TEST_F(PollClockTest, EmptyPollsDoNotReadTheSteadyClock) {
  TestPollClock clock;
  const int made = TestClocks::reads;
  const auto start = clock.now();
  int moved = 0;
  for (int i = 0; i < 9999; ++i) {  // 9.999 ms of empty polls, 1 us apart
    advance(std::chrono::microseconds(1));
    moved += clock.tick(false) != start;
  }
  EXPECT_EQ(TestClocks::reads, made) << "the old clock read it every 64 empty polls: 156 reads here";
  EXPECT_EQ(moved, 0);
  advance(std::chrono::microseconds(1));  // 10 ms: the next empty poll reads it
  EXPECT_EQ(clock.tick(false), TestClocks::time);
  EXPECT_EQ(TestClocks::reads, made + 1);
}

TEST_F(PollClockTest, ProgressIsTimedByTheCyclesSinceTheLastReadAndFreshReadsTheClock) {
  TestPollClock clock;
  const int made = TestClocks::reads;
  for (int i = 0; i < 9; ++i) {  // a completion every ms, as a stream with every WR signalled
    advance(std::chrono::microseconds(1000));
    EXPECT_EQ(clock.tick(true), TestClocks::time) << "the time of a completion is a figure's edge: never stale";
  }
  EXPECT_EQ(TestClocks::reads, made) << "a read per completion: 9 here";
  advance(std::chrono::microseconds(1000));  // 10 ms since the last read: this tick reads it
  EXPECT_EQ(clock.tick(true), TestClocks::time);
  EXPECT_EQ(TestClocks::reads, made + 1);
  advance(std::chrono::microseconds(5));
  EXPECT_EQ(clock.fresh(), TestClocks::time);
  EXPECT_EQ(clock.now(), TestClocks::time);
  EXPECT_EQ(TestClocks::reads, made + 2);
}

TEST_F(PollClockTest, IdleTimeComesFromTheCyclesAtEveryPoll) {
  TestPollClock clock;
  clock.tick(true);
  EXPECT_DOUBLE_EQ(clock.idle_usec(), 0);
  advance(std::chrono::microseconds(1500));  // past the back-off's 1 ms, before any steady read
  clock.tick(false);
  EXPECT_DOUBLE_EQ(clock.idle_usec(), 1500);
  clock.tick(true);
  EXPECT_DOUBLE_EQ(clock.idle_usec(), 0);
}

}  // namespace
}  // namespace fabricproof::verbs
