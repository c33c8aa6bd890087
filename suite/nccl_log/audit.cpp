#include "nccl_log/audit.hpp"

#include <fmt/format.h>

#include <map>
#include <regex>
#include <tuple>

namespace fabricproof::nccl {
namespace {

using nlohmann::json;

constexpr const char* kDebugHint = "set NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,NET (and NCCL_DEBUG_FILE=/path/nccl.%h.%p.log per rank)";
constexpr const char* kSocketHint =
    "NCCL fell back to TCP between nodes. Check in order: NCCL_IB_DISABLE is not set; the RDMA "
    "devices are visible in the container/namespace (/dev/infiniband, ibv_devices); NCCL_IB_HCA "
    "names existing devices; rdma-core/libibverbs is installed where NCCL runs ('Failed to open "
    "libibverbs' warnings); on RoCE, NCCL_IB_GID_INDEX points at a RoCE v2 GID; every NCCL_* "
    "variable is exported to remote ranks (mpirun -x).";

std::string who(int rank, const std::string& host) { return host.empty() ? fmt::format("rank {}", rank) : fmt::format("rank {} ({})", rank, host); }

struct Group {
  std::vector<int> channels;
  std::string host, peer_host;
  std::optional<bool> inter_node;
  bool socket = false;
  uint64_t lines = 0;
};
using GroupKey = std::tuple<int, int, std::string, std::string>;  // rank, peer, direction, transport

std::map<GroupKey, Group> grouped(const LogFacts& facts) {
  std::map<GroupKey, Group> groups;
  for (const auto& c : facts.connections) {
    auto& g = groups[{c.rank, c.peer.value_or(-1), c.direction, c.transport}];
    if (std::find(g.channels.begin(), g.channels.end(), c.channel) == g.channels.end()) g.channels.push_back(c.channel);
    g.host = c.host;
    g.peer_host = c.peer_host;
    g.inter_node = c.inter_node;
    g.socket = c.socket();
    g.lines += c.count;
  }
  for (auto& [k, g] : groups) std::sort(g.channels.begin(), g.channels.end());
  return groups;
}

std::string channels_text(const std::vector<int>& channels) { return fmt::format("{}", fmt::join(channels, ",")); }

}  // namespace

namespace {

const char* const kRuleSocket = "no connection between nodes uses NET/Socket";
const char* const kRuleLines = "the log shows which transport every rank uses";

// A log without connection lines: nothing to check (one rank), or an error saying why.
void check_lines(const LogFacts& facts, std::vector<Finding>& out) {
  const std::string rule_lines = kRuleLines;
  if (facts.connections.empty() && facts.nranks == 1) {
    // Every communicator of the log has one rank (nranks is the largest declared): NCCL connects
    // nothing, so there is no transport to show. Not a pass: nothing was checked.
    out.push_back({CheckId::nccl_transport_lines, "log", Verdict::skip, 0, "connection lines ('... via NET/IB/0')", rule_lines,
                   "Every communicator in the log has 1 rank, so NCCL opens no connection: run 2 or more ranks to see the transports."});
  } else if (facts.connections.empty()) {
    // With NCCL's warnings in the log, the communicator most likely failed before it connected
    // (on a GPU: "Duplicate GPU detected", two ranks on one GPU): the logging was not the problem.
    const std::string hint = facts.warnings.empty()
                                 ? std::string("No transport lines in the log: ") + kDebugHint + "."
                                 : "NCCL warned and connected nothing: the communicator most likely failed before it connected; "
                                   "read the nccl_warning findings (and the collectives' error).";
    out.push_back({CheckId::nccl_transport_lines, "log", Verdict::error, 0, "connection lines ('... via NET/IB/0')", rule_lines, hint});
  }
}

// Socket fallback: every inter-node NET/Socket connection, one finding per rank, peer and direction;
// else one finding for the whole log.
void check_socket_fallback(const LogFacts& facts, std::vector<Finding>& out) {
  const std::string rule_socket = kRuleSocket;
  bool named = false;
  for (const auto& [key, g] : grouped(facts)) {
    const auto& [rank, peer, direction, transport] = key;
    if (!g.socket) continue;
    const bool inter = g.inter_node.value_or(facts.multi_node == true);
    if (!inter) continue;
    named = true;
    const auto subject = Subject::connection(rank, who(rank, g.host), peer, who(peer, g.peer_host), direction == "receive");
    out.push_back({CheckId::nccl_socket_fallback, subject, Verdict::fail,
                   {{"transport", transport}, {"channels", g.channels}, {"direction", direction}, {"rank", rank}, {"peer", peer}, {"host", g.host}},
                   "NET/IB (or another RDMA network)", rule_socket, kSocketHint});
  }
  if (!named) {
    if (facts.socket_fallback == true) {
      out.push_back({CheckId::nccl_socket_fallback, "log", Verdict::fail,
                     {{"networks", facts.net.selected}, {"ib_no_device", facts.net.ib_no_device}}, "an RDMA network between nodes",
                     rule_socket, std::string("The multi-node job selected NCCL's socket network. ") + kSocketHint});
    } else if (facts.socket_fallback == false) {
      std::vector<std::string> transports;
      for (const auto& c : facts.connections)
        if (c.transport_class == TransportClass::net && std::find(transports.begin(), transports.end(), c.transport) == transports.end()) transports.push_back(c.transport);
      out.push_back({CheckId::nccl_socket_fallback, "log", Verdict::pass, json{{"net_transports", transports}, {"networks", facts.net.selected}},
                     "no NET/Socket between nodes", rule_socket, ""});
    } else {
      out.push_back({CheckId::nccl_socket_fallback, "log", Verdict::skip, nullptr, "no NET/Socket between nodes", rule_socket,
                     std::string("Undecidable from this log: no inter-node connection lines and no network selection. ") + kDebugHint + "."});
    }
  }
}

// NCCL's own warnings, one finding per distinct message, and NET/IB without GPUDirect where
// GPUDirect is expected.
void check_warnings_and_gdr(const LogFacts& facts, const AuditOptions& options, std::vector<Finding>& out) {
  // NET/IB without GPUDirect where GPUDirect is expected.
  if (options.expect_gdr) {
    std::map<int, std::vector<std::string>> without;
    for (const auto& c : facts.connections)
      if (c.transport_class == TransportClass::net && !c.socket() && c.transport.find("GDRDMA") == std::string::npos)
        without[c.rank].push_back(c.transport);
    for (const auto& [rank, transports] : without)
      out.push_back({CheckId::nccl_gdr, fmt::format("rank {}", rank), Verdict::warn, transports.front(), "NET/.../GDRDMA",
                     "RDMA connections use GPUDirect (profile expects it)",
                     "The NIC copies through host memory: load nvidia_peermem or enable DMA-BUF, check NCCL_NET_GDR_LEVEL (PHB) "
                     "and that GPU and NIC share a PCIe switch or host bridge."});
  }
  // NCCL's own warnings, one finding per distinct message.
  // Keyed without addresses: every rank's "job 0x5595bff13410 failed" is one warning.
  static const std::regex address(R"(0x[0-9a-fA-F]{6,})");
  std::map<std::string, std::pair<uint64_t, const Warning*>> warnings;
  for (const auto& w : facts.warnings) {
    auto& entry = warnings[std::regex_replace(w.message, address, "0x...")];
    if (entry.first == 0) entry.second = &w;
    entry.first += w.count;
  }
  for (const auto& [message, entry] : warnings) {
    const Warning& w = *entry.second;
    out.push_back({CheckId::nccl_warning, w.host.empty() ? "log" : w.host, Verdict::warn,
                   {{"message", message}, {"location", w.location}, {"count", entry.first}}, "no NCCL WARN", "NCCL printed no warning",
                   "Read the warning: it usually names the missing library, device or setting."});
  }
}

}  // namespace

std::vector<Finding> audit(const LogFacts& facts, const AuditOptions& options) {
  std::vector<Finding> out;
  check_lines(facts, out);
  check_socket_fallback(facts, out);
  // No usable RDMA device in a multi-node job.
  const bool no_rdma_net = std::none_of(facts.connections.begin(), facts.connections.end(), [](const Connection& c) {
    return c.transport_class == TransportClass::net && !c.socket();
  });
  if (facts.net.ib_no_device || facts.net.ib_disabled == true) {
    const bool matters = facts.multi_node != false && no_rdma_net;
    const std::string where = facts.net.ib_no_device_hosts.empty() ? std::string("log") : fmt::format("{}", fmt::join(facts.net.ib_no_device_hosts, ", "));
    out.push_back({CheckId::nccl_rdma_device, where, matters ? Verdict::fail : Verdict::warn,
                   facts.net.ib_no_device ? "NET/IB : No device found" : "NCCL_IB_DISABLE set",
                   "NCCL finds the RDMA devices", "NCCL sees a usable RDMA device (NET/IB)",
                   "NCCL found no usable IB/RoCE device: check /dev/infiniband and ibv_devices where the ranks run, the provider "
                   "libraries (libibverbs, libmlx5), NCCL_IB_DISABLE and NCCL_IB_HCA."});
  }
  check_warnings_and_gdr(facts, options, out);
  return out;
}

void to_json(json& j, const AuditSection& a) {
  const auto& facts = a.facts;
  json connections = json::array();
  for (const auto& c : facts.connections)
    connections.push_back({{"rank", c.rank}, {"peer", c.peer}, {"channel", c.channel}, {"conn_index", c.conn_index}, {"direction", c.direction},
                           {"transport", c.transport}, {"transport_class", c.transport_class}, {"host", c.host}, {"peer_host", c.peer_host},
                           {"inter_node", c.inter_node}, {"file", c.file}, {"line_no", c.line_no}, {"count", c.count}});
  j = {{"socket_fallback", facts.socket_fallback},
       {"nccl_version", facts.version},
       {"ranks", facts.ranks},
       {"hosts", facts.hosts},
       {"nranks", facts.nranks},
       {"multi_node", facts.multi_node},
       {"net_socket_used", facts.net_socket_used},
       {"connections", connections},
       {"networks", facts.net.selected},
       {"net", facts.net},
       {"warnings", facts.warnings},
       {"processes", facts.processes},
       {"nccl_tests", facts.nccl_tests},
       {"lines", facts.lines},
       {"findings", a.findings}};
}

void from_json(const json& j, AuditSection& a) {
  auto& f = a.facts;
  f = {};
  f.socket_fallback = j.value("socket_fallback", f.socket_fallback);
  f.version = j.value("nccl_version", f.version);
  f.ranks = j.value("ranks", f.ranks);
  f.hosts = j.value("hosts", f.hosts);
  f.nranks = j.value("nranks", f.nranks);
  f.multi_node = j.value("multi_node", f.multi_node);
  f.net_socket_used = j.value("net_socket_used", f.net_socket_used);
  f.connections = j.value("connections", f.connections);  // direction_explicit and proxy_rank are not kept in the report
  f.net = j.value("net", f.net);
  f.warnings = j.value("warnings", f.warnings);
  f.processes = j.value("processes", f.processes);
  f.nccl_tests = j.value("nccl_tests", f.nccl_tests);
  f.lines = j.value("lines", f.lines);
  a.findings = j.value("findings", a.findings);
}

std::string audit_table(const LogFacts& facts, const std::vector<Finding>& findings) {
  std::string out = fmt::format("NCCL {}: {} line(s), {} rank(s) seen, {} host(s), network {}\n", facts.version.value_or("version not printed"),
                                facts.lines, facts.ranks.size(), facts.hosts.size(),
                                facts.net.selected.empty() ? std::string("not printed") : fmt::format("{}", fmt::join(facts.net.selected, ", ")));
  out += fmt::format("socket fallback between nodes: {}\n\n",
                     facts.socket_fallback ? (*facts.socket_fallback ? "YES" : "no") : "undecidable from this log");
  const auto groups = grouped(facts);
  if (!groups.empty()) {
    out += fmt::format("{:>5}  {:<20} {:>5}  {:<20} {:<8} {:<10} {:<24} {}\n", "rank", "host", "peer", "peer host", "dir", "where", "transport", "channels");
    for (const auto& [key, g] : groups) {
      const auto& [rank, peer, direction, transport] = key;
      const char* where = g.inter_node ? (*g.inter_node ? "inter-node" : "intra-node") : "?";
      out += fmt::format("{:>5}  {:<20} {:>5}  {:<20} {:<8} {:<10} {:<24} {}\n", rank, g.host.empty() ? "-" : g.host,
                         peer < 0 ? std::string("-") : std::to_string(peer), g.peer_host.empty() ? "-" : g.peer_host, direction, where,
                         transport, channels_text(g.channels));
    }
    out += "\n";
  }
  for (const auto& f : findings)
    if (f.verdict != Verdict::pass)
      out += fmt::format("{:<5} {:<22} {}: {}\n", std::string(to_string(f.verdict)), f.id, f.subject,
                         f.measured.is_string() ? f.measured.get<std::string>() : json_text(f.measured));
  return out;
}

}  // namespace fabricproof::nccl
