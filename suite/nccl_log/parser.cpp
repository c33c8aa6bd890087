#include "nccl_log/parser.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <iostream>

namespace fabricproof::nccl {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);
constexpr size_t kProcessSlots = 1024;  // powers of two
constexpr size_t kHeaderSlots = 1024;
constexpr size_t kLineSlots = 4096;
// The caches keep short texts only, so that their memory stays bounded (a few MB) whatever the lines.
constexpr size_t kMaxCachedBytes = 512;
constexpr size_t kMaxLine = 1 << 16;  // longer lines are cut: no input can make a line buffer grow without bound

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Whether "CCL " occurs (the tail of any NCCL INFO/WARN anchor): memchr for the rare 'L', like
// next_anchor; memmem's setup costs more than the search on a 50-byte message.
bool contains_ccl(std::string_view s) {
  for (size_t from = 2; from + 1 < s.size();) {
    const void* l = std::memchr(s.data() + from, 'L', s.size() - from - 1);
    if (!l) return false;
    const size_t at = static_cast<size_t>(static_cast<const char*>(l) - s.data());
    if (s[at - 1] == 'C' && s[at - 2] == 'C' && s[at + 1] == ' ') return true;
    from = at + 1;
  }
  return false;
}

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

// "[3d000]" / "[0]" after a rank: the busId or device, not needed.
void skip_bracket(std::string_view& s) {
  if (s.empty() || s.front() != '[') return;
  const size_t close = s.find(']');
  if (close != std::string_view::npos && s.substr(1, close - 1).find(' ') == std::string_view::npos) s.remove_prefix(close + 1);
}

std::string transport_class(std::string_view t) {
  if (starts_with(t, "NET/")) return "NET";
  if (starts_with(t, "P2P/")) return "P2P";
  if (starts_with(t, "SHM/") || t == "direct shared memory") return "SHM";
  if (starts_with(t, "COLLNET/")) return "COLLNET";
  return "other";
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
  for (size_t i = 0; i < m.size() && !(rank && nranks && nRanks && nnodes); ++i) {
    if (m[i] != ' ') continue;
    const std::string_view rest = m.substr(i);
    grab(rest, " rank ", rank, out.rank);
    grab(rest, " nranks ", nranks, out.nranks);
    grab(rest, " nRanks ", nRanks, out.nRanks);
    grab(rest, " nNodes ", nnodes, out.nnodes);
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

// A hash for the caches' slots (a collision costs a miss, never a wrong answer): the first and
// last 24 bytes and the length, each word multiplied on its own so the products run in parallel
// instead of as one dependency chain (it was 7% of the parse as a chain).
uint64_t message_hash(std::string_view m, uint64_t seed) {
  const size_t n = m.size();
  auto word = [&](size_t at) {
    uint64_t w;
    std::memcpy(&w, m.data() + at, 8);
    return w;
  };
  uint64_t h = seed ^ (n * 0x9E3779B97F4A7C15ull);
  if (n >= 8) {
    h += (word(0) ^ 0x2545F4914F6CDD1Dull) * 0xff51afd7ed558ccdull + (word(n - 8) ^ 0x9FB21C651E98DF25ull) * 0xc4ceb9fe1a85ec53ull;
    if (n > 16) h += (word(8) ^ 0x27D4EB2F165667C5ull) * 0x94D049BB133111EBull + (word(n - 16) ^ 0x165667B19E3779F9ull) * 0xBF58476D1CE4E5B9ull;
    if (n > 32) h += (word(16) ^ 0x85EBCA77C2B2AE63ull) * 0xD6E8FEB86659FD93ull + (word(n - 24) ^ 0xC2B2AE3D27D4EB4Full) * 0xA0761D6478BD642Full;
  } else {
    uint64_t w = 0;
    if (n) std::memcpy(&w, m.data(), n);
    h += (w ^ 0x2545F4914F6CDD1Dull) * 0xff51afd7ed558ccdull;
  }
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

// A hash of every byte, for keys that differ anywhere (whole lines: "Channel 03/0" sits in the
// middle). Four independent lanes, so the multiplications overlap instead of forming one chain.
uint64_t full_hash(std::string_view m) {
  const size_t n = m.size();
  auto word = [&](size_t at) {  // 8 bytes (a fixed-size copy is one load)
    uint64_t w;
    std::memcpy(&w, m.data() + at, 8);
    return w;
  };
  auto round = [](uint64_t lane, uint64_t w) { return std::rotl((lane ^ w) * 0x9E3779B97F4A7C15ull, 29); };
  uint64_t a = n, b = 0x2545F4914F6CDD1Dull, c = 0x9FB21C651E98DF25ull, d = 0xc4ceb9fe1a85ec53ull;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a = round(a, word(i));
    b = round(b, word(i + 8));
    c = round(c, word(i + 16));
    d = round(d, word(i + 24));
  }
  for (; i + 8 <= n; i += 8) b = round(b, word(i));
  if (i < n) {  // the last 1..7 bytes: the final word, overlapping the previous one when it can
    uint64_t w = 0;
    if (n >= 8) w = word(n - 8);
    else std::memcpy(&w, m.data(), n);
    c = round(c, w);
  }
  uint64_t h = a ^ std::rotl(b, 16) ^ std::rotl(c, 32) ^ std::rotl(d, 48);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

}  // namespace

Parser::Parser(ParseOptions options) : options_(options) {}

void Parser::begin_file(std::string name) {
  file_ = std::move(name);
  ++file_id_;
  process_slots_.assign(kProcessSlots, ProcessSlot{});
  for (auto& slot : headers_) slot.process = kNone;
  for (auto& slot : lines_) slot.known = false;
  line_no_ = 0;
  tests_.begin_file(file_);
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

size_t Parser::process_for(const Segment& seg, std::optional<int> prefix_rank) {
  if (!seg.has_host && !seg.cuda_dev) return kNone;
  // Without pid the launcher rank is the best identity of a process (stripped headers).
  const int pid = seg.pid ? *seg.pid : (prefix_rank ? -2 - *prefix_rank : -1);
  const int cuda_dev = seg.cuda_dev.value_or(-1);
  if (process_slots_.empty()) process_slots_.resize(kProcessSlots);
  ProcessSlot& slot = process_slots_[message_hash(seg.host, static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32 | static_cast<uint32_t>(cuda_dev)) & (kProcessSlots - 1)];
  size_t index = slot.process;
  if (index == kNone || slot.pid != pid || slot.cuda_dev != cuda_dev || facts_.processes[index].host != seg.host) {
    process_key_.clear();  // built in place: no allocation per lookup
    append_process_key(process_key_, file_id_, pid, cuda_dev, seg.host);
    auto [it, inserted] = process_index_.try_emplace(process_key_, facts_.processes.size());
    if (inserted) {
      Process p;
      p.host = std::string(seg.host);
      p.pid = seg.pid;
      p.cuda_dev = seg.cuda_dev;
      p.file = file_;
      facts_.processes.push_back(p);
      if (seg.has_host && !seg.host.empty()) {
        facts_.hosts.insert(std::string(seg.host));
        known_hosts_.insert(std::string(seg.host));
      }
    }
    index = it->second;
    slot = {index, pid, cuda_dev};
  }
  if (prefix_rank && !facts_.processes[index].launcher_rank) facts_.processes[index].launcher_rank = prefix_rank;
  return index;
}

bool Parser::parse_connection(std::string_view m, size_t process) {
  constexpr size_t kSeen = 4096;
  SeenConnection* seen = nullptr;
  if (complete_ && (m.front() == 'C' || m.front() == 'R')) {
    if (seen_connections_.empty()) seen_connections_.resize(kSeen);
    seen = &seen_connections_[message_hash(m, process) & (kSeen - 1)];
    if (seen->process == process && seen->message == m) {
      ++facts_.connections[last_connection_ = seen->connection].count;
      return true;
    }
  }
  std::string_view s = m;
  bool collnet = false;
  if (take(s, "Ring ") || take(s, "Channel ")) {
  } else if (take(s, "CollNet ") || take(s, "Coll ")) {
    collnet = true;
  } else {
    return false;
  }
  auto channel = take_int(s);
  if (!channel) return false;
  std::optional<int> conn_index;
  if (take(s, "/")) {
    conn_index = take_int(s);
    if (!conn_index) return false;
  }
  if (!take(s, " : ")) return false;
  auto left = take_int(s);
  if (!left) return false;
  std::optional<int> right;
  if (!collnet) {
    skip_bracket(s);
    if (!take(s, " -> ")) return false;
    right = take_int(s);
    if (!right) return false;
    skip_bracket(s);
  }
  std::string direction = "send";
  bool explicit_direction = false;
  if (take(s, " [send]")) {
    explicit_direction = true;
  } else if (take(s, " [receive]")) {
    direction = "receive";
    explicit_direction = true;
  }
  if (!take(s, " via ")) return false;  // GRAPH "Ring 00 : 7 -> 0 -> 1", truncated "[sen"
  if (!complete_) {  // "via P2P/I": the transport itself may be cut
    ++facts_.truncated_lines;
    return true;
  }
  std::string_view transport = trim(s);
  // A vendor fork appends " comm 0x... nRanks N" after the transport (052).
  if (auto suffix = transport.find(" comm 0x"); suffix != std::string_view::npos) transport = trim(transport.substr(0, suffix));
  if (transport.empty()) return false;

  const bool receive = explicit_direction && direction == "receive";
  const int rank = collnet ? *left : (receive ? *right : *left);  // "peer -> me [receive]": the receiver prints it
  const int peer = collnet ? -1 : (receive ? *left : *right);
  note_rank(process, rank);
  key_.clear();
  for (int v : {rank, peer, *channel, conn_index.value_or(-1), receive ? 1 : 0}) key_.append(reinterpret_cast<const char*>(&v), sizeof v);
  key_.append(transport);  // as connection_key() builds it from a stored Connection
  auto remember = [&](size_t connection) {
    if (!seen || m.size() > kMaxCachedBytes) return;
    seen->process = process;
    seen->message.assign(m);
    seen->connection = connection;
  };
  if (auto hit = connection_index_.find(key_); hit != connection_index_.end()) {
    ++facts_.connections[last_connection_ = hit->second].count;
    remember(hit->second);
    return true;
  }
  Connection c;
  c.rank = rank;
  if (!collnet) c.peer = peer;
  c.channel = *channel;
  c.conn_index = conn_index;
  c.direction = direction;
  c.direction_explicit = explicit_direction;
  c.transport = std::string(transport);
  c.transport_class = collnet ? "COLLNET" : transport_class(transport);
  if (c.transport_class == "NET") {  // PXN: NET/<name>/<dev>(<proxy rank>)
    const size_t open = c.transport.find('(');
    const size_t close = c.transport.find(')', open);
    if (open != std::string::npos && close != std::string::npos) c.proxy_rank = to_int(std::string_view(c.transport).substr(open + 1, close - open - 1));
  }
  if (process != kNone) c.host = facts_.processes[process].host;
  c.file = file_;
  c.line_no = line_no_;
  connection_index_.emplace(key_, facts_.connections.size());
  remember(last_connection_ = facts_.connections.size());
  facts_.connections.push_back(std::move(c));
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

void Parser::handle(const Segment& seg, size_t process) {
  const std::string_view m = seg.message;
  if (m.empty()) return;
  if (seg.level == Level::warn) {
    ++facts_.warn_lines;
    Warning w;
    w.message = std::string(m);
    w.location = std::string(seg.location);
    w.host = std::string(seg.host);
    if (process != kNone) w.rank = facts_.processes[process].rank ? facts_.processes[process].rank : facts_.processes[process].launcher_rank;
    w.file = file_;
    w.line_no = line_no_;
    if (m.find("Failed to open libibverbs") != std::string_view::npos) libibverbs_missing_ = true;
    // A retry loop can print one warning millions of times: keep it once, with its count.
    auto [it, inserted] = warning_index_.emplace(std::make_tuple(w.message, w.location, w.host), facts_.warnings.size());
    if (inserted) facts_.warnings.push_back(std::move(w));
    else ++facts_.warnings[it->second].count;
    return;
  }
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
  // Communicator lines: "comm 0x... rank R nranks N ...", 2.20+ "nRanks N nNodes M", 2.3's
  // "rank R nranks N". Not "... from local rank 0" (proxy lines).
  // ("comm 0x..." up to 2.20, "ncclCommInitRank comm 0x..." / "ncclCommSplit comm ..." later.)
  const bool comm_line = starts_with(m, "comm 0x") || starts_with(m, "rank ") || (starts_with(m, "nccl") && m.find(" comm 0x") != std::string_view::npos);
  if (comm_line && m.find("local rank") == std::string_view::npos) {
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
    return;
  }
  parse_network(m, seg.host);
}

void Parser::add_line(std::string_view line, bool complete) {
  ++line_no_;
  ++facts_.lines;
  complete_ = complete;
  if (line.size() > kMaxLine) line = line.substr(0, kMaxLine);
  // Coloured terminal output: drop ANSI escape sequences ("\x1b[31m") before reading headers.
  if (std::memchr(line.data(), '\x1b', line.size())) {
    clean_.clear();
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
        i += 2;
        while (i < line.size() && !((line[i] >= '@' && line[i] <= '~'))) ++i;
        continue;
      }
      clean_ += line[i];
    }
    line = clean_;
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  Anchor anchor;
  size_t from = 0;
  const bool has_anchor = next_anchor(line, from, anchor);
  LineSlot* line_slot = nullptr;
  bool one_anchor = false;
  if (has_anchor && anchor.level == Level::info) {
    // An INFO line printed before in this file, byte for byte (a communicator created again, a
    // log of several runs), changes nothing but counters: the rest was noted the first time.
    if (complete_ && (line_slot = line_slot_for(line)) && line_slot->known && line_slot->bytes == line) {
      ++line_cache_.hits;
      ++facts_.info_lines;
      if (line_slot->connection != kNone) ++facts_.connections[line_slot->connection].count;
      return;
    }
    // A single INFO message whose header was read before: no need to read it again.
    size_t begin = anchor.at + anchor.length;
    while (begin < line.size() && (line[begin] == ' ' || line[begin] == '\t')) ++begin;
    const std::string_view rest = line.substr(begin);
    // A second header glued into the message needs the full split; "CCL " finds any of them.
    if (!rest.empty() && !contains_ccl(rest)) {
      const HeaderSlot& slot = header_slot(line.substr(0, begin));
      if (slot.process != kNone && slot.bytes == line.substr(0, begin)) {
        Segment seg;
        seg.host = slot.host;
        seg.has_host = slot.has_host;
        seg.pid = slot.pid;
        seg.cuda_dev = slot.cuda_dev;
        seg.message = trim(rest);
        handle(seg, slot.process);
        remember_line(line_slot, line);
        return;
      }
      one_anchor = true;
    }
  }
  if (one_anchor) segments_.assign(1, single_segment(line, anchor));  // no second search for anchors
  else if (has_anchor) split_segments(line, known_hosts_, segments_);
  else segments_.clear();
  const auto& segments = segments_;
  if (segments.empty()) {
    tests_.add_line(line, line_no_);  // nccl-tests output never carries an NCCL header
    // The first "NCCL_IB_DISABLE=" and "NCCL version " (as find() would give them), in one pass
    // over the line's "NCCL"s, found from their rare 'L'.
    size_t ib_disable = std::string_view::npos, v = std::string_view::npos;
    for (size_t at = 3; at < line.size();) {
      const void* l = std::memchr(line.data() + at, 'L', line.size() - at);
      if (!l) break;
      at = static_cast<size_t>(static_cast<const char*>(l) - line.data());
      if (line[at - 1] == 'C' && line[at - 2] == 'C' && line[at - 3] == 'N') {
        const std::string_view after = line.substr(at + 1);
        if (ib_disable == std::string_view::npos && starts_with(after, "_IB_DISABLE=")) ib_disable = at - 3;
        if (v == std::string_view::npos && starts_with(after, " version ")) v = at - 3;
      }
      ++at;
    }
    // The environment of the launch line: "-x NCCL_IB_DISABLE=1", "NCCL_IB_DISABLE=1 ./all_reduce_perf".
    if (ib_disable != std::string_view::npos) facts_.net.ib_disabled = line.substr(ib_disable + 16, 1) != "0";
    // A message whose header went to another line (interleaved output): still a connection.
    const std::string_view orphan = trim(line);
    if ((starts_with(orphan, "Ring ") || starts_with(orphan, "Channel ")) && parse_connection(orphan, kNone)) return;
    // The version banner has no header: "NCCL version 2.11.4+cuda11.4" (maybe after a prefix).
    if (v != std::string_view::npos && !facts_.version) {
      std::string_view rest = line.substr(v + 13);
      rest = trim(rest.substr(0, rest.find(' ')));
      if (!rest.empty() && is_digit(rest.front())) facts_.version = std::string(rest);
    }
    return;
  }
  const auto prefix_rank = launcher_rank(segments.front().prefix);
  for (size_t i = 0; i < segments.size(); ++i) {
    const auto& seg = segments[i];
    const size_t process = process_for(seg, i == 0 ? prefix_rank : std::nullopt);
    if (segments.size() == 1 && seg.level == Level::info && process != kNone && !seg.message.empty()) {
      const std::string_view header = line.substr(0, static_cast<size_t>(seg.message.data() - line.data()));
      if (header.size() <= kMaxCachedBytes) {
        HeaderSlot& slot = header_slot(header);
        slot.process = process;
        slot.bytes.assign(header);
        slot.host.assign(seg.host);
        slot.has_host = seg.has_host;
        slot.pid = seg.pid;
        slot.cuda_dev = seg.cuda_dev;
      }
      handle(seg, process);
      remember_line(line_slot, line);
      return;
    }
    handle(seg, process);
  }
}

Parser::LineSlot* Parser::line_slot_for(std::string_view line) {
  if (line_cache_.paused) {
    --line_cache_.paused;
    return nullptr;
  }
  if (++line_cache_.lookups == 4096) {  // where lines do not repeat, hashing them is wasted work
    if (line_cache_.hits < 256) line_cache_.paused = 65536;
    line_cache_.lookups = line_cache_.hits = 0;
  }
  if (lines_.empty()) lines_.resize(kLineSlots);
  return &lines_[full_hash(line) & (kLineSlots - 1)];
}

void Parser::remember_line(LineSlot* slot, std::string_view line) {
  if (!slot || !repeat_safe_ || line.size() > kMaxCachedBytes) return;
  slot->known = true;
  slot->bytes.assign(line);
  slot->connection = last_connection_;
}

Parser::HeaderSlot& Parser::header_slot(std::string_view bytes) {
  if (headers_.empty()) headers_.resize(kHeaderSlots);
  return headers_[message_hash(bytes, 0) & (kHeaderSlots - 1)];
}

std::string Parser::process_key(int file_id, int pid, int cuda_dev, std::string_view host) const {
  std::string key;
  append_process_key(key, file_id, pid, cuda_dev, host);
  return key;
}

void Parser::append_process_key(std::string& key, int file_id, int pid, int cuda_dev, std::string_view host) {
  for (int v : {file_id, pid, cuda_dev}) key.append(reinterpret_cast<const char*>(&v), sizeof v);
  key.append(host);
}

std::string Parser::connection_key(const Connection& c) const {
  std::string key;
  const int receive = c.direction_explicit && c.direction == "receive";
  for (int v : {c.rank, c.peer.value_or(-1), c.channel, c.conn_index.value_or(-1), receive}) key.append(reinterpret_cast<const char*>(&v), sizeof v);
  key.append(c.transport);
  return key;
}

void Parser::feed(std::string_view data) {
  while (!data.empty()) {
    const void* nl = std::memchr(data.data(), '\n', data.size());
    if (!nl) {
      if (carry_.size() < kMaxLine) carry_.append(data.substr(0, kMaxLine - carry_.size()));
      return;
    }
    const size_t n = static_cast<size_t>(static_cast<const char*>(nl) - data.data());
    if (carry_.empty()) {
      add_line(data.substr(0, n));
    } else {
      if (carry_.size() < kMaxLine) carry_.append(data.substr(0, std::min(n, kMaxLine - carry_.size())));
      add_line(carry_);
      carry_.clear();
    }
    data.remove_prefix(n + 1);
  }
}

void Parser::add_stream(std::istream& in) {
  std::vector<char> block(1 << 20);
  carry_.clear();
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const size_t got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    feed(std::string_view(block.data(), got));
  }
  if (!carry_.empty()) {
    add_line(carry_, false);
    carry_.clear();
  }
}

LogFacts Parser::finish() {
  LogFacts out = std::move(facts_);
  // Ranks without an NCCL rank of their own: the launcher's rank (Open MPI, torchrun) first; else,
  // in a single-node job (where the local rank is the rank), the header's CUDA device when every
  // process whose rank is known sits at the same offset from its device (027, 033). Across nodes
  // that guess is not safe and is not made.
  const bool single_node = options_.multi_node == false || (!options_.multi_node && nnodes_ == 1);
  std::map<std::string, std::set<int>> offsets;  // host -> rank - cudaDev
  for (const auto& p : out.processes)
    if (p.rank && p.cuda_dev) offsets[p.host].insert(*p.rank - *p.cuda_dev);
  for (const auto& p : out.processes) {
    if (p.rank) continue;
    if (p.launcher_rank) {
      out.ranks.insert(*p.launcher_rank);
    } else if (single_node && p.cuda_dev && p.pid && offsets[p.host].size() == 1) {
      out.ranks.insert(*p.cuda_dev + *offsets[p.host].begin());
    }
  }
  for (const auto& r : tests_.ranks()) out.ranks.insert(r);
  std::map<int, std::string> host_of_rank;
  for (const auto& p : out.processes)
    if (p.rank && !p.host.empty()) host_of_rank.emplace(*p.rank, p.host);
  if (options_.multi_node) out.multi_node = options_.multi_node;
  else if (out.hosts.size() > 1 || nnodes_.value_or(1) > 1) out.multi_node = true;
  else if (nnodes_ == 1) out.multi_node = false;

  bool socket_inter_node = false, socket_unknown = false, other_net = false;
  for (auto& c : out.connections) {
    if (c.peer)
      if (auto it = host_of_rank.find(*c.peer); it != host_of_rank.end()) c.peer_host = it->second;
    if (c.host.empty())
      if (auto it = host_of_rank.find(c.rank); it != host_of_rank.end()) c.host = it->second;
    if (!c.host.empty() && !c.peer_host.empty()) c.inter_node = c.host != c.peer_host;
    else if (c.transport_class == "P2P" || c.transport_class == "SHM") c.inter_node = false;  // intra-node transports
    else if (out.multi_node == false) c.inter_node = false;
    const bool socket = starts_with(c.transport, "NET/Socket");
    out.net_socket_used |= socket;
    if (socket && c.inter_node == true) socket_inter_node = true;
    if (socket && !c.inter_node) socket_unknown = true;
    if ((c.transport_class == "NET" || c.transport_class == "COLLNET") && !socket) other_net = true;
  }
  const bool selected_socket = std::find(out.net.selected.begin(), out.net.selected.end(), "Socket") != out.net.selected.end();
  // 2.4-2.6 print no "Using network" line: a NET/IB device list means NCCL took IB.
  const bool ib_listed = !out.net.ib_devices.empty() && !out.net.ib_no_device;
  const bool selected_rdma = ib_listed || std::any_of(out.net.selected.begin(), out.net.selected.end(), [](const std::string& n) { return n != "Socket"; });
  const bool rdma_unusable = out.net.ib_no_device || out.net.ib_disabled == true || libibverbs_missing_;
  // NCCL uses NET between nodes; a socket connection whose ends cannot be placed counts as
  // inter-node when the job spans nodes.
  if (socket_inter_node || (socket_unknown && out.multi_node == true)) out.socket_fallback = true;
  else if (out.multi_node == true && (selected_socket || (rdma_unusable && !other_net && !selected_rdma))) out.socket_fallback = true;
  else if (other_net || out.multi_node == false) out.socket_fallback = false;
  else if (out.multi_node == true && selected_rdma) out.socket_fallback = false;
  if (!out.nranks && tests_.table() && tests_.table()->nranks) out.nranks = tests_.table()->nranks;
  out.nccl_tests = tests_.table();
  return out;
}

}  // namespace fabricproof::nccl
