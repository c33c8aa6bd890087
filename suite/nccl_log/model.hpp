#pragma once
// What an NCCL_DEBUG=INFO log says, as plain facts: per process, per connection (rank, peer,
// channel, transport), the network NCCL selected, its warnings, and any nccl-tests result table.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_optional.hpp"

namespace fabricproof::nccl {

// What carries a connection, decided once from the transport text (NCCL's "via ..."): every
// reader (audit, report views, HTML) asks the Connection, none looks at the text again.
enum class TransportClass { other, net, p2p, shm, collnet };
NLOHMANN_JSON_SERIALIZE_ENUM(TransportClass, {{TransportClass::other, "other"},
                                              {TransportClass::net, "NET"},
                                              {TransportClass::p2p, "P2P"},
                                              {TransportClass::shm, "SHM"},
                                              {TransportClass::collnet, "COLLNET"}})
TransportClass transport_class_of(std::string_view transport);

struct Connection {
  int rank = -1;                   // the rank that printed the line
  std::optional<int> peer;         // null for CollNet lines
  int channel = 0;
  std::optional<int> conn_index;   // the /N after the channel (2.12+)
  std::string direction;           // "send" or "receive"
  bool direction_explicit = false; // [send]/[receive] printed (NET, CollNet); P2P/SHM lines are the sender's
  std::string transport;           // the exact text after "via", e.g. NET/IB/0/GDRDMA, P2P/IPC/read
  TransportClass transport_class = TransportClass::other;
  std::optional<int> proxy_rank;   // PXN: NET/<name>/<dev>(<proxy rank>)
  std::string host;                // of the printing process, empty when the line had no header
  std::string peer_host;           // when the peer rank's own lines name its host
  std::optional<bool> inter_node;
  std::string file;
  uint64_t line_no = 0;            // first occurrence (1-based, per file)
  uint64_t count = 1;              // identical lines folded into this one

  // NCCL's socket network: TCP where RDMA was meant to be (a fallback when it crosses nodes).
  bool socket() const { return transport_class == TransportClass::net && transport.rfind("NET/Socket", 0) == 0; }
  // An RDMA network (NET/IB, a plugin's net, CollNet): what inter-node traffic should use.
  bool rdma_net() const { return (transport_class == TransportClass::net || transport_class == TransportClass::collnet) && !socket(); }
};
FABRICPROOF_JSON(Connection, rank, peer, channel, conn_index, direction, direction_explicit, transport, transport_class,
                 proxy_rank, host, peer_host, inter_node, file, line_no, count)

struct Process {
  std::string host;
  std::optional<int> pid;
  std::optional<int> cuda_dev;
  std::optional<int> rank;          // NCCL rank when a line shows it
  std::optional<int> launcher_rank; // from an [1,N]<stdout>: / [rankN]: / "N: " prefix
  std::optional<int> nranks;
  std::optional<int> nnodes;
  std::string file;
};
FABRICPROOF_JSON(Process, host, pid, cuda_dev, rank, launcher_rank, nranks, nnodes, file)

struct NetworkFacts {
  std::vector<std::string> selected;          // "Using network X" / "Using internal Network X"
  std::vector<std::string> ib_devices;        // "mlx5_0:1/IB", "mlx5_2:1/RoCE" (from NET/IB lines)
  std::vector<std::string> socket_interfaces; // "eth0:10.0.0.34" (NET/Socket lines)
  std::vector<std::string> oob_interfaces;
  bool ib_no_device = false;                  // "NET/IB : No device found."
  std::vector<std::string> ib_no_device_hosts;
  std::optional<bool> ib_disabled;            // "NCCL_IB_DISABLE set by environment to N"
  std::vector<std::string> gdr;               // GPU Direct RDMA lines, verbatim
  std::vector<std::string> plugin;            // NET/Plugin lines
  bool nvls = false;                          // NVLS multicast available / NVLS tree connected
};
FABRICPROOF_JSON(NetworkFacts, selected, ib_devices, socket_interfaces, oob_interfaces, ib_no_device, ib_no_device_hosts, ib_disabled,
                 gdr, plugin, nvls)

struct Warning {
  std::string message;
  std::string location;  // file.cc:LINE
  std::string host;
  std::optional<int> rank;
  std::string file;
  uint64_t line_no = 0;  // first occurrence
  uint64_t count = 1;    // identical warnings (message, location, host) folded into this one
};
FABRICPROOF_JSON(Warning, message, location, host, rank, file, line_no, count)

// One row of an nccl-tests result table (all_reduce_perf, ...), out-of-place and in-place.
struct TestsHalf {
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::optional<double> wrong;  // #wrong count, or the old format's max error; null for N/A
  std::string wrong_raw;
};
FABRICPROOF_JSON(TestsHalf, time_us, algbw_GBps, busbw_GBps, wrong, wrong_raw)

struct TestsRow {
  uint64_t size = 0;
  uint64_t count = 0;
  std::string type;
  std::string redop;
  std::optional<int> root;
  TestsHalf out_of_place;
  TestsHalf in_place;
  std::string file;
  uint64_t line_no = 0;
};
FABRICPROOF_JSON(TestsRow, size, count, type, redop, root, out_of_place, in_place, file, line_no)

struct TestsTable {
  std::string test;               // "all_reduce_perf" when the command line or header says so
  std::optional<int> nranks;
  std::string wrong_column;       // "#wrong" or "error"
  std::vector<TestsRow> rows;            // the first kMaxTestsRows rows; the rest are counted
  uint64_t rows_dropped = 0;
  std::vector<uint64_t> partial_row_lines;
  std::optional<double> avg_bus_bandwidth_GBps;
  std::optional<int> out_of_bounds;
};
FABRICPROOF_JSON(TestsTable, test, nranks, wrong_column, rows, rows_dropped, partial_row_lines, avg_bus_bandwidth_GBps, out_of_bounds)

// A log of many repeated runs must not make memory (or the JSON) grow with its length: the first
// rows are kept (a full 8 B .. 8 GB sweep is 31 rows, so this is dozens of runs), the rest counted.
inline constexpr size_t kMaxTestsRows = 1024;

struct LogFacts {
  std::optional<std::string> version;
  std::vector<Process> processes;
  std::vector<Connection> connections;
  NetworkFacts net;
  std::vector<Warning> warnings;
  std::set<int> ranks;             // ranks shown to print lines
  std::set<std::string> hosts;
  std::optional<int> nranks;       // as declared by NCCL or nccl-tests
  std::optional<bool> multi_node;
  std::optional<bool> socket_fallback;  // inter-node traffic over NET/Socket; null: undecidable
  bool net_socket_used = false;    // any connection over NET/Socket, even inside a node
  uint64_t lines = 0;
  uint64_t info_lines = 0;
  uint64_t warn_lines = 0;
  uint64_t truncated_lines = 0;    // a file's last line without its newline: cut, not parsed as a connection
  std::optional<TestsTable> nccl_tests;
};
FABRICPROOF_JSON(LogFacts, version, processes, connections, net, warnings, ranks, hosts, nranks, multi_node, socket_fallback,
                 net_socket_used, lines, info_lines, warn_lines, truncated_lines, nccl_tests)

}  // namespace fabricproof::nccl
