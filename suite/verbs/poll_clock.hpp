#pragma once
// The clocks of the verbs engine's polling loops. No hardware headers: the unit tests build it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace fabricproof::verbs {

using Clock = std::chrono::steady_clock;

// The CPU's cycle counter, as perftest's get_cycles(): read without a system call, where
// clock_gettime is one if the clocksource has no vDSO (HPET: the lab's guests). Calibrated once
// against the steady clock.
#if defined(__x86_64__) || defined(__i386__)
inline uint64_t cycles() { return __rdtsc(); }
inline double usec_per_cycle() {
  static const double value = [] {
    const auto t0 = Clock::now();
    const uint64_t c0 = cycles();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const uint64_t c1 = cycles();
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / static_cast<double>(std::max<uint64_t>(c1 - c0, 1));
  }();
  return value;
}
#else
inline uint64_t cycles() { return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count()); }
inline double usec_per_cycle() { return 1e-3; }
#endif

struct MachineClocks {
  static Clock::time_point now() { return Clock::now(); }
  static uint64_t cycles() { return verbs::cycles(); }
  static double usec_per_cycle() { return verbs::usec_per_cycle(); }
};

// The clock of a polling loop. The steady clock is read once the cycle counter says 10 ms have
// passed, never per empty poll and never per completion: where a read is a system call (and, under
// TCG, an HPET read is an exit to the emulator) one per 64 empty polls made the stream's sender read
// it thousands of times a second (strace -c: 75 % of its system-call time, twice perftest's system
// time), CPU that Soft-RoCE, on the guest's one vCPU, then lacked; and with every WR signalled (as
// perftest does above 8 KiB) one per completion still took 0.6 % of the sender's vCPU (perf, in
// read_hpet). The time of a progress tick, a figure's edge, is the last steady read plus the cycles
// since, as perftest times its completions by the cycle counter: at most 10 ms extrapolated, so a
// calibration off by 0.1 % moves it by 10 us. What uses the possibly stale now() of an empty poll
// (timeouts, progress notes, the end of a duration) can be 10 ms late; fresh() reads the steady
// clock itself; the idle time that decides the back-off comes from the cycles, exact at every poll.
template <class Clocks = MachineClocks>
class BasicPollClock {
 public:
  BasicPollClock() : read_every_(static_cast<uint64_t>(10000 / Clocks::usec_per_cycle())) {}
  Clock::time_point now() const { return now_; }
  Clock::time_point tick(bool progress) {
    ticked_at_ = Clocks::cycles();
    if (progress) progress_at_ = ticked_at_;
    if (ticked_at_ - read_at_ >= read_every_) return fresh_at(ticked_at_);
    if (progress) now_ = read_time_ + cycles_as_duration(ticked_at_ - read_at_);
    return now_;
  }
  Clock::time_point fresh() { return fresh_at(Clocks::cycles()); }
  // Microseconds since the last progress tick (or since the clock was made), as of the last tick.
  double idle_usec() const { return static_cast<double>(ticked_at_ - progress_at_) * Clocks::usec_per_cycle(); }

 private:
  static Clock::duration cycles_as_duration(uint64_t cycles) {
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double, std::micro>(static_cast<double>(cycles) * Clocks::usec_per_cycle()));
  }
  Clock::time_point fresh_at(uint64_t cycle) {
    read_at_ = cycle;
    return now_ = read_time_ = Clocks::now();
  }
  uint64_t read_every_;
  uint64_t read_at_ = Clocks::cycles(), ticked_at_ = read_at_, progress_at_ = read_at_;
  Clock::time_point read_time_ = Clocks::now(), now_ = read_time_;
};
using PollClock = BasicPollClock<>;

}  // namespace fabricproof::verbs
