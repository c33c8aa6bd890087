// What one NCCL message says: connections of every 2.x format, network selection, communicator
// lines, ring and tree lines. Parser::handle() is called for each message of each line.
#include <algorithm>
#include <cstring>

#include "nccl_log/hashes.hpp"
#include "nccl_log/parser.hpp"

namespace fabricproof::nccl {
namespace {

// Reads digits at the front of s; advances s.
std::optional<int> take_int(std::string_view& s) {
  size_t n = 0;
  while (n < s.size() && is_digit(s[n])) ++n;
  if (n == 0) return std::nullopt;
  auto v = to_int(s.substr(0, n));
  s.remove_prefix(n);
  return v;
}

bool take(std::string_view& s, std::string_view token) {
  if (!starts_with(s, token)) return false;
  s.remove_prefix(token.size());
  return true;
}

// Whether " via " occurs, found from its 'v', rare before it in NCCL's messages: one memchr for
// most lines. (rfind compared five bytes at every position from the end, through the whole of a
// long ring list: a third of parse_connection's time.)
bool says_via(std::string_view m) {
  for (size_t from = 1; from + 3 < m.size();) {
    const void* v = std::memchr(m.data() + from, 'v', m.size() - 3 - from);
    if (!v) return false;
    const auto at = static_cast<size_t>(static_cast<const char*>(v) - m.data());
    if (m[at - 1] == ' ' && m[at + 1] == 'i' && m[at + 2] == 'a' && m[at + 3] == ' ') return true;
    from = at + 1;
  }
  return false;
}

// "[3d000]" / "[0]" after a rank: the busId or device, not needed.
void skip_bracket(std::string_view& s) {
  if (s.empty() || s.front() != '[') return;
  const size_t close = s.find(']');
  if (close != std::string_view::npos && s.substr(1, close - 1).find(' ') == std::string_view::npos) s.remove_prefix(close + 1);
}


// The number after "->" that is followed by another "->": the printing rank of a Trees line
// ("Trees [0] 22->23->-1/-1/-1" in 2.4, "Trees [0] 17/24/-1->16->0" later).
std::optional<int> trees_rank(std::string_view message) {
  const size_t first = message.find("->");
  if (first == std::string_view::npos) return std::nullopt;
  std::string_view rest = message.substr(first + 2);
  auto rank = take_int(rest);
  if (!rank || !starts_with(rest, "->")) return std::nullopt;
  return rank;
}

// "Channel 00/02 :    0   1   2" (and 2.4's "Channel 00 :    0   1"): the ring order, printed by
// rank 0 alone.
bool is_ring_list(std::string_view message) {
  if (!starts_with(message, "Channel ")) return false;
  const size_t colon = message.find(" : ");
  if (colon == std::string_view::npos) return false;
  const std::string_view rest = message.substr(colon + 3);
  bool digit = false;
  for (char c : rest) {
    if (is_digit(c)) digit = true;
    else if (c != ' ') return false;
  }
  return digit;
}

// The numbers after the first " rank ", " nranks ", " nRanks " and " nNodes " of a communicator
// line, each as find() would take it, in one pass (four find() calls stopped at every space).
struct CommNumbers {
  std::optional<int> rank, nranks, nRanks, nnodes;
};
CommNumbers comm_numbers(std::string_view m) {
  CommNumbers out;
  bool rank = false, nranks = false, nRanks = false, nnodes = false;
  auto grab = [](std::string_view rest, std::string_view key, bool& found, std::optional<int>& value) {
    if (found || !starts_with(rest, key)) return;
    found = true;
    rest.remove_prefix(key.size());
    value = take_int(rest);
  };
  grab(m, "rank ", rank, out.rank);  // 2.3: "rank R nranks N"
  for (size_t i = 0; i + 1 < m.size(); ++i) {
    if (m[i] != ' ' || (m[i + 1] != 'r' && m[i + 1] != 'n')) continue;  // every key is " r..." or " n..."
    const std::string_view rest = m.substr(i);
    grab(rest, " rank ", rank, out.rank);
    grab(rest, " nranks ", nranks, out.nranks);
    grab(rest, " nRanks ", nRanks, out.nRanks);
    grab(rest, " nNodes ", nnodes, out.nnodes);
    if (rank && nranks && nRanks && nnodes) break;
  }
  return out;
}

// Tokens "[0]mlx5_0:1/IB" or "[0]eth0:10.0.0.1<0>" of a "Using" list, up to "; OOB" / end.
std::vector<std::string_view> bracket_items(std::string_view list) {
  std::vector<std::string_view> items;
  size_t at = 0;
  while ((at = list.find('[', at)) != std::string_view::npos) {
    const size_t close = list.find(']', at);
    if (close == std::string_view::npos) break;
    if (!to_int(list.substr(at + 1, close - at - 1))) {  // "[RO]" is a flag of the previous item
      at = close + 1;
      continue;
    }
    size_t end = close + 1;
    while (end < list.size() && list[end] != ' ' && list[end] != '[' && list[end] != ';') ++end;
    std::string_view item = list.substr(close + 1, end - close - 1);
    item = item.substr(0, item.find('<'));  // "<0>" address family
    if (!item.empty()) items.push_back(item);
    at = end;
  }
  return items;
}

}  // namespace

TransportClass transport_class_of(std::string_view t) {
  if (starts_with(t, "NET/")) return TransportClass::net;
  if (starts_with(t, "P2P/")) return TransportClass::p2p;
  if (starts_with(t, "SHM/") || t == "direct shared memory") return TransportClass::shm;
  if (starts_with(t, "COLLNET/")) return TransportClass::collnet;
  return TransportClass::other;
}

void Parser::note_rank(size_t process, int rank) {
  if (rank >= 0 && rank < (1 << 20)) {
    const auto r = static_cast<size_t>(rank);
    if (r >= rank_seen_.size()) rank_seen_.resize(r + 1);
    if (!rank_seen_[r]) facts_.ranks.insert(rank);
    rank_seen_[r] = true;
  } else {
    facts_.ranks.insert(rank);
  }
  if (process != kNone && !facts_.processes[process].rank) facts_.processes[process].rank = rank;
}

namespace {

// The fields of a connection line: "Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA",
// "Ring 00 : 3 -> 0 via P2P/IPC", CollNet's "CollNet 00 : 1 [receive] via COLLNET/...".
struct ConnectionText {
  bool collnet = false;
  int channel = 0;
  std::optional<int> conn_index;
  int left = 0;
  std::optional<int> right;
  bool explicit_direction = false;
  bool receive = false;
  bool truncated = false;       // the line was cut after "via": the transport may be cut too
  std::string_view transport;
};

std::optional<ConnectionText> read_connection_text(std::string_view s, bool complete) {
  ConnectionText c;
  if (take(s, "Ring ") || take(s, "Channel ")) {
  } else if (take(s, "CollNet ") || take(s, "Coll ")) {
    c.collnet = true;
  } else {
    return std::nullopt;
  }
  auto channel = take_int(s);
  if (!channel) return std::nullopt;
  c.channel = *channel;
  if (take(s, "/")) {
    c.conn_index = take_int(s);
    if (!c.conn_index) return std::nullopt;
  }
  if (!take(s, " : ")) return std::nullopt;
  auto left = take_int(s);
  if (!left) return std::nullopt;
  c.left = *left;
  if (!c.collnet) {
    skip_bracket(s);
    if (!take(s, " -> ")) return std::nullopt;
    c.right = take_int(s);
    if (!c.right) return std::nullopt;
    skip_bracket(s);
  }
  if (take(s, " [send]")) {
    c.explicit_direction = true;
  } else if (take(s, " [receive]")) {
    c.explicit_direction = true;
    c.receive = true;
  }
  if (!take(s, " via ")) return std::nullopt;  // GRAPH "Ring 00 : 7 -> 0 -> 1", truncated "[sen"
  if (!complete) {  // "via P2P/I": the transport itself may be cut
    c.truncated = true;
    return c;
  }
  c.transport = trim(s);
  // A vendor fork appends " comm 0x... nRanks N" after the transport (052).
  if (auto suffix = c.transport.find(" comm 0x"); suffix != std::string_view::npos) c.transport = trim(c.transport.substr(0, suffix));
  if (c.transport.empty()) return std::nullopt;
  return c;
}

// A connection seen for the first time.
Connection make_connection(const ConnectionText& t, int rank, int peer, std::string host, const std::string& file, uint64_t line_no) {
  Connection c;
  c.rank = rank;
  if (!t.collnet) c.peer = peer;
  c.channel = t.channel;
  c.conn_index = t.conn_index;
  c.direction = t.receive ? "receive" : "send";
  c.direction_explicit = t.explicit_direction;
  c.transport = std::string(t.transport);
  c.transport_class = t.collnet ? TransportClass::collnet : transport_class_of(t.transport);
  if (c.transport_class == TransportClass::net) {  // PXN: NET/<name>/<dev>(<proxy rank>)
    const size_t open = c.transport.find('(');
    const size_t close = c.transport.find(')', open);
    if (open != std::string::npos && close != std::string::npos) c.proxy_rank = to_int(std::string_view(c.transport).substr(open + 1, close - open - 1));
  }
  c.host = std::move(host);
  c.file = file;
  c.line_no = line_no;
  return c;
}

}  // namespace

bool Parser::parse_connection(std::string_view m, size_t process) {
  constexpr size_t kSeen = 4096;
  SeenConnection* seen = nullptr;
  // Every connection says " via "; the ring lists ("Channel 00/64 : 0 1 2 3"), nearly half of the
  // lines that start alike, do not, and are let go before the cold cache slot.
  if ((m.front() != 'C' && m.front() != 'R') || !says_via(m)) return false;
  if (complete_) {
    if (seen_connections_.empty()) seen_connections_.resize(kSeen);
    seen = &seen_connections_[message_hash(m, process) & (kSeen - 1)];
    if (seen->process == process && seen->message.equals(m)) {
      ++facts_.connections[last_connection_ = seen->connection].count;
      return true;
    }
  }
  const auto text = read_connection_text(m, complete_);
  if (!text) return false;
  if (text->truncated) {
    ++facts_.truncated_lines;
    return true;
  }
  const auto& t = *text;
  const int rank = t.collnet ? t.left : (t.receive ? *t.right : t.left);  // "peer -> me [receive]": the receiver prints it
  const int peer = t.collnet ? -1 : (t.receive ? t.left : *t.right);
  note_rank(process, rank);
  key_.clear();
  for (int v : {rank, peer, t.channel, t.conn_index.value_or(-1), t.receive ? 1 : 0}) key_.append(reinterpret_cast<const char*>(&v), sizeof v);
  key_.append(t.transport);  // as connection_key() builds it from a stored Connection
  auto remember = [&](size_t connection) {
    if (!seen || !seen->message.assign(m)) return;
    seen->process = process;
    seen->connection = connection;
  };
  if (auto hit = connection_index_.find(key_); hit != connection_index_.end()) {
    ++facts_.connections[last_connection_ = hit->second].count;
    remember(hit->second);
    return true;
  }
  remember(last_connection_ = facts_.connections.size());
  connection_index_.emplace(key_, facts_.connections.size());
  facts_.connections.push_back(make_connection(t, rank, peer, process != kNone ? facts_.processes[process].host : std::string(), file_, line_no_));
  return true;
}

void Parser::parse_network(std::string_view m, std::string_view host) {
  auto& net = facts_.net;
  if (take(m, "Using network ")) {
    add_unique(net.selected, trim(m));
  } else if (take(m, "Using internal Network ")) {  // 2.3
    add_unique(net.selected, trim(m));
  } else if (starts_with(m, "NET/IB : No device found")) {
    net.ib_no_device = true;
    if (!host.empty()) add_unique(net.ib_no_device_hosts, host);
  } else if (starts_with(m, "NET/IB : Using [") || starts_with(m, "NET/IB: [")) {
    const size_t oob = m.find("OOB ");
    for (auto d : bracket_items(m.substr(0, oob))) add_unique(net.ib_devices, d);
    if (oob != std::string_view::npos) {
      std::string_view o = trim(m.substr(oob + 4));
      if (auto lt = o.find('<'); lt != std::string_view::npos) o = o.substr(0, lt);
      add_unique(net.oob_interfaces, o);
    }
  } else if (starts_with(m, "NET/Socket : Using [")) {
    for (auto i : bracket_items(m)) add_unique(net.socket_interfaces, i);
  } else if (starts_with(m, "NCCL_IB_DISABLE set by environment to ")) {
    repeat_safe_ = false;  // the last one printed wins
    net.ib_disabled = m.substr(std::strlen("NCCL_IB_DISABLE set by environment to ")).substr(0, 1) != "0";
  } else if ((starts_with(m, "NET/") && m.find("GPU Direct RDMA") != std::string_view::npos) ||
             (starts_with(m, "Connected all") && m.find(" GDR ") != std::string_view::npos)) {
    add_unique(net.gdr, m);
  } else if (starts_with(m, "NET/Plugin") || starts_with(m, "Using non-device net plugin")) {
    add_unique(net.plugin, m);
  } else if (starts_with(m, "NVLS multicast support is available") || starts_with(m, "Connected NVLS")) {
    net.nvls = true;
  }
}

// A WARN line. A retry loop can print one warning millions of times: keep it once, with its count
// (found without building its strings).
void Parser::handle_warning(const Segment& seg, size_t process) {
  const std::string_view m = seg.message;
  ++facts_.warn_lines;
  if (auto it = warning_index_.find(std::make_tuple(m, seg.location, seg.host)); it != warning_index_.end()) {
    ++facts_.warnings[it->second].count;
    return;
  }
  Warning w;
  w.message = std::string(m);
  w.location = std::string(seg.location);
  w.host = std::string(seg.host);
  if (process != kNone) w.rank = facts_.processes[process].rank ? facts_.processes[process].rank : facts_.processes[process].launcher_rank;
  w.file = file_;
  w.line_no = line_no_;
  if (m.find("Failed to open libibverbs") != std::string_view::npos) libibverbs_missing_ = true;
  warning_index_.emplace(std::make_tuple(w.message, w.location, w.host), facts_.warnings.size());
  facts_.warnings.push_back(std::move(w));
}

// Communicator lines: "comm 0x... rank R nranks N ...", 2.20+ "nRanks N nNodes M", 2.3's
// "rank R nranks N". Not "... from local rank 0" (proxy lines).
// ("comm 0x..." up to 2.20, "ncclCommInitRank comm 0x..." / "ncclCommSplit comm ..." later.)
bool Parser::handle_communicator(std::string_view m, size_t process) {
  const bool comm_line = starts_with(m, "comm 0x") || starts_with(m, "rank ") || (starts_with(m, "nccl") && m.find(" comm 0x") != std::string_view::npos);
  if (!comm_line || m.find("local rank") != std::string_view::npos) return false;
  repeat_safe_ = false;  // a process's last communicator sets its nranks and nnodes
  auto [rank, nranks, nRanks, nodes] = comm_numbers(m);
  if (!nranks) nranks = nRanks;
  if (rank) note_rank(process, *rank);
  if (nranks) {
    facts_.nranks = std::max(facts_.nranks.value_or(0), *nranks);
    if (process != kNone) facts_.processes[process].nranks = nranks;
  }
  if (nodes) {
    nnodes_ = std::max(nnodes_.value_or(0), *nodes);
    if (process != kNone) facts_.processes[process].nnodes = nodes;
  }
  return true;
}

void Parser::handle(const Segment& seg, size_t process) {
  if (seg.message.empty()) return;
  if (seg.level == Level::warn) return handle_warning(seg, process);
  handle_info(seg.message, seg.host, process);
}

// An INFO message (not empty); `host` from its header.
void Parser::handle_info(std::string_view m, std::string_view host, size_t process) {
  ++facts_.info_lines;
  last_connection_ = kNone;
  repeat_safe_ = true;
  // Dispatch on the first letter: most INFO lines ("Connected all rings", "threadThresholds",
  // "Channel 00/02 : 0 1") need one or two comparisons, not the whole list.
  switch (m.front()) {
    case 'R':
    case 'C':
    case 'T':
    case 'N':
    case 'U':
    case 'c':
    case 'n':
    case 'r':
      break;
    default:
      return;
  }
  if (starts_with(m, "NCCL version ")) {
    std::string_view v = m.substr(13);
    v = v.substr(0, v.find(' '));
    if (!facts_.version) facts_.version = std::string(v);
    return;
  }
  if (parse_connection(m, process)) return;
  if (is_ring_list(m)) {
    note_rank(process, 0);
    return;
  }
  if (starts_with(m, "Trees ")) {
    if (auto r = trees_rank(m)) note_rank(process, *r);
    return;
  }
  if (handle_communicator(m, process)) return;
  parse_network(m, host);
}

}  // namespace fabricproof::nccl
