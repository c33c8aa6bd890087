#pragma once
// The uplink engine: a stock iperf3 client (Debian's iperf3) against a stock `iperf3 -s` on the
// storage or gateway host, in reverse mode (-R: the server sends, the node receives, as a
// dataloader reads), its --json output parsed by uplink/uplink_model. The target side is whatever a
// user can start on a host that is not a cluster node.
//
// iperf3 before 3.16 runs all streams of one process in one thread: past ~40 Gb/s per process the
// parallel figure is the client's CPU, not the network (NVIDIA's ngc_multinode_perf runs one
// process per stream for this reason). The JSON's version is kept with the result.
#include <chrono>
#include <string>

#include "uplink/uplink_model.hpp"

namespace fabricproof::uplink {

struct Iperf3Run {
  UplinkTarget target;
  int flows = 1;
  double seconds = 5;          // measured, after the omitted start
  int omit_seconds = 1;        // --omit: TCP slow start (and, all nodes together, the start skew) left out
  std::string bind_address;   // -B: leave through the interface the route picked
  std::string program = "iperf3";
};

// A run the server refuses as busy is started again after 0.25, 0.5, 1 and 2 s (3.75 s at most).
inline constexpr int kIperf3BusyRetries = 4;
inline constexpr double kIperf3FirstBusyWaitS = 0.25;
inline constexpr double kIperf3BusyWaitS = kIperf3FirstBusyWaitS * ((1 << kIperf3BusyRetries) - 1);

// Runs the client and waits at most omit + seconds + 20 s (connect, the server's reply); a client that
// does not end by then is killed and the result is an error saying so. A server busy with another
// test is tried again (above), each run with that bound. Never throws.
UplinkFlows run_iperf3(const Iperf3Run& run);

// "iperf 3.12 (cJSON 1.7.15)" or "" when the program is not there.
std::string iperf3_version(const std::string& program = "iperf3");

}  // namespace fabricproof::uplink
