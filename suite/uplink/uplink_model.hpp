#pragma once
// The uplink phase's facts: from every node, TCP ingest from a storage or gateway host (a stock
// `iperf3 -s`, run in reverse so that data flows towards the node, as a dataloader reads) with one
// flow and with several, each node alone and then all nodes together. One flow is capped by one
// link (bond and ECMP hash per flow; the seed), parallel flows may spread over the links.
#include <optional>
#include <string>
#include <vector>

#include "core/json_optional.hpp"
#include "core/located_error.hpp"
#include "core/status.hpp"

namespace fabricproof {

inline constexpr int kIperf3DefaultPort = 5201;

struct UplinkTarget {
  std::string host;
  int port = kIperf3DefaultPort;
};

// "HOST" or "HOST:PORT" ("[v6]:PORT" for IPv6); a LocatedError names the text and what is wrong.
UplinkTarget parse_uplink_target(const std::string& text);
std::string to_string(const UplinkTarget& target);

// One interval of iperf3's report after its --omit, in seconds of its own clock, and the bytes
// received in it.
struct UplinkInterval {
  double start = 0;
  double end = 0;
  double bytes = 0;
};

// One measurement: `flows` TCP streams for `seconds`, received by the node.
struct UplinkFlows {
  int flows = 0;
  Status status = Status::not_measured;
  std::string reason;                   // why not ok
  double gbps = 0;                      // all streams together, received
  std::vector<double> per_flow_gbps;
  double seconds = 0;
  std::optional<int64_t> retransmits;   // the sender's TCP retransmissions, when iperf3 reports them
  int server_busy_retries = 0;          // runs started again after the server said it was busy (uplink/iperf3)
  // All nodes together: when the window was on rank 0's clock. The last interval ended as iperf3
  // exited (epoch seconds, the node's clock offset taken out); nullopt when not recorded.
  std::vector<UplinkInterval> intervals;
  std::optional<double> ended_at;
};

// The path from a node to its target, as the node's kernel routes it.
struct UplinkPath {
  std::string interface;                // "" when the target does not resolve or route
  std::string local_address;
  bool rdma = false;                    // the interface is the netdev of an RDMA port: the data fabric
  std::optional<double> link_gbps;      // /sys/class/net/<if>/speed (a bond: the sum of its links)
  std::vector<std::string> links;       // a bond's slaves; empty for a plain interface
  std::string error;
};

struct UplinkNode {
  std::string host;
  int rank = 0;
  std::string target;                   // HOST:PORT it measured against
  UplinkPath path;
  UplinkFlows single;                   // one flow, this node alone
  UplinkFlows parallel;                 // K flows, this node alone
  UplinkFlows together;                 // K flows, every node at once
};

// What `run --phases ...,uplink` was asked to do.
struct UplinkOptions {
  std::vector<UplinkTarget> targets;    // node i measures against targets[i % size]
  double seconds = 5;                   // per measurement
  std::optional<int> flows;             // the parallel test's flows; 2 per link of the node otherwise
  std::optional<double> need_gbps;      // overrides the profile's uplink.ingest_gbps
  double timeout_s = 60;                // beyond the iperf3 runs themselves, for the slowest node to report
};

struct UplinkSection {
  std::vector<std::string> targets;
  double seconds = 0;
  std::optional<int> flows;             // --uplink-flows; per node 2 x its links otherwise
  std::optional<double> need_gbps;      // the cluster's ingest need (profile or --uplink-need)
  std::string need_source;
  std::string together_skipped;         // why the all-nodes-together test did not run
  std::vector<UplinkNode> nodes;
};

// The flows a node opens for the parallel test: --uplink-flows, or 2 per link (at least 2), so
// that hashing has a chance to use every link of a bond.
int uplink_flows_for(const std::optional<int>& requested, const UplinkPath& path);

// "; server busy, started again N time(s)" when it was, "" otherwise: for the lines people read.
std::string busy_retries_note(const UplinkFlows& f);

// A measurement that did not happen, and why.
UplinkFlows uplink_error(int flows, std::string reason);

// `iperf3 --json` output of one client run. A run iperf3 itself reports as failed (connection
// refused, server busy) is an error with its message; text that is not iperf3's JSON is an error
// naming what is missing.
UplinkFlows parse_iperf3_json(const std::string& text);

FABRICPROOF_JSON(UplinkTarget, host, port)
FABRICPROOF_JSON(UplinkInterval, start, end, bytes)
FABRICPROOF_JSON(UplinkFlows, flows, status, reason, gbps, per_flow_gbps, seconds, retransmits, server_busy_retries, intervals, ended_at)
FABRICPROOF_JSON(UplinkPath, interface, local_address, rdma, link_gbps, links, error)
FABRICPROOF_JSON(UplinkNode, host, rank, target, path, single, parallel, together)
FABRICPROOF_JSON(UplinkSection, targets, seconds, flows, need_gbps, need_source, together_skipped, nodes)

}  // namespace fabricproof
