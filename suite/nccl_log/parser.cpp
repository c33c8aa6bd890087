// Lines: the caches that spare most lines a full reading (header, whole line, process), the split
// into NCCL messages, streams, and the decisions made once the whole input was read.
#include "nccl_log/parser.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>

#include "nccl_log/hashes.hpp"

namespace fabricproof::nccl {
namespace {

constexpr size_t kProcessSlots = 1024;  // powers of two
constexpr size_t kHeaderSlots = 1024;
constexpr size_t kLineSlots = 4096;
constexpr size_t kMaxLine = 1 << 16;  // longer lines are cut: no input can make a line buffer grow without bound

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

size_t Parser::process_for(const Segment& seg, std::optional<int> prefix_rank, bool starts_line) {
  if (!seg.has_host && !seg.cuda_dev) return kNone;
  const int pid = pid_key(seg.pid, prefix_rank);
  const int cuda_dev = seg.cuda_dev.value_or(-1);
  if (process_slots_.empty()) process_slots_.resize(kProcessSlots);
  ProcessSlot& slot = process_slots_[message_hash(seg.host, static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32 | static_cast<uint32_t>(cuda_dev)) & (kProcessSlots - 1)];
  size_t index = slot.process;
  if (index == kNone || slot.pid != pid || slot.cuda_dev != cuda_dev || !same_bytes(facts_.processes[index].host, seg.host)) {
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
      if (seg.has_host && !seg.host.empty()) facts_.hosts.insert(std::string(seg.host));
    }
    index = it->second;
    slot = {index, pid, cuda_dev};
  }
  // Only a header that starts its line names a host to cut glued headers with (where a glued
  // header starts was itself a guess); the first such header of each process names it.
  if (starts_line && seg.has_host && !seg.host.empty()) {
    if (index >= host_named_.size()) host_named_.resize(facts_.processes.size());
    if (!host_named_[index]) {
      known_hosts_.emplace(seg.host);
      host_named_[index] = true;
    }
  }
  if (prefix_rank && !facts_.processes[index].launcher_rank) facts_.processes[index].launcher_rank = prefix_rank;
  return index;
}

// The header of a one-message INFO line, cached so that the next line with the same header is
// read without scanning it again.
void Parser::remember_header(std::string_view line, const Segment& seg, size_t process, HeaderSlot* header_to_fill) {
  const std::string_view header = line.substr(0, static_cast<size_t>(seg.message.data() - line.data()));
  // seg.host is a view into the line (read_header cuts it from there), inside the header.
  const size_t host_at = seg.host.empty() ? 0 : static_cast<size_t>(seg.host.data() - line.data());
  HeaderSlot& slot = header_to_fill ? *header_to_fill : header_slot(header);
  if (host_at + seg.host.size() <= header.size() && slot.bytes.assign(header)) {
    slot.process = process;
    slot.host_at = static_cast<uint16_t>(host_at);
    slot.host_size = static_cast<uint16_t>(seg.host.size());
    slot.has_host = seg.has_host;
    slot.pid = seg.pid;
    slot.cuda_dev = seg.cuda_dev;
  }
}

void Parser::add_line(std::string_view line, bool complete, const LineScan* scan) {
  ++line_no_;
  ++facts_.lines;
  complete_ = complete;
  if (line.size() > kMaxLine) {
    line = line.substr(0, kMaxLine);
    scan = nullptr;
  }
  if (!scan || scan->escape) {
    line = without_colours(line);
    scan = nullptr;  // its positions were those of the line with its colours
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  Anchor anchor;
  LineAnchors anchors(line, scan);
  const bool has_anchor = anchors.next(anchor);
  LineSlot* line_slot = nullptr;
  HeaderSlot* header_to_fill = nullptr;
  bool one_anchor = false;
  if (has_anchor && anchor.level == Level::info) {
    const auto cached = add_from_caches(line, anchor, anchors, line_slot, header_to_fill);
    if (cached == Cached::done) return;
    one_anchor = cached == Cached::one_anchor;
  }
  if (!has_anchor) {
    add_plain_line(line);
    return;
  }
  // A WARN line is split like a single INFO message when it holds no second anchor.
  if (anchor.level == Level::warn) {
    Anchor second;
    one_anchor = !anchors.next(second);
  }
  if (one_anchor) segments_.assign(1, single_segment(line, anchor));  // no second search for anchors
  else split_names(line);
  const auto& segments = segments_;
  const auto prefix_rank = launcher_rank(segments.front().prefix);
  for (size_t i = 0; i < segments.size(); ++i) {
    const auto& seg = segments[i];
    const size_t process = i == 0 ? process_for(seg, prefix_rank, true) : process_for(seg, std::nullopt, false);
    if (segments.size() == 1 && seg.level == Level::info && process != kNone && !seg.message.empty()) {
      remember_header(line, seg, process, header_to_fill);
      handle(seg, process);
      remember_line(line_slot, line);
      return;
    }
    handle(seg, process);
  }
}

// A line of several messages, cut with the hosts seen so far; the names looked for in vain are kept.
void Parser::split_names(std::string_view line) {
  constexpr size_t kMaxNotKnown = 4096;
  not_known_.clear();
  split_segments(line, known_hosts_, segments_, &not_known_);
  for (auto name : not_known_) {
    // Looked up before it is added: emplace would build the string (an allocation) first, and
    // most names were noted before.
    const auto at = hosts_not_known_.lower_bound(name);
    if (at != hosts_not_known_.end() && *at == name) continue;
    if (hosts_not_known_.size() < kMaxNotKnown) hosts_not_known_.emplace_hint(at, name);
    else hosts_not_known_overflow_ = true;
  }
}

bool Parser::looked_for_any_of(const KnownHosts& hosts) const {
  if (hosts_not_known_overflow_) return !hosts.empty();
  return std::any_of(hosts_not_known_.begin(), hosts_not_known_.end(), [&](const std::string& h) { return hosts.count(h) > 0; });
}

// Coloured terminal output: ANSI escape sequences ("\x1b[31m") dropped before headers are read.
std::string_view Parser::without_colours(std::string_view line) {
  if (!std::memchr(line.data(), '\x1b', line.size())) return line;
  clean_.clear();
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && !((line[i] >= '@' && line[i] <= '~'))) ++i;
      continue;
    }
    clean_ += line[i];
  }
  return clean_;
}

// An INFO line the caches spare a full reading: `done` when it was handled; `one_anchor` when it
// needs a reading but holds a single message. `line_slot` is where the line will be remembered.
Parser::Cached Parser::add_from_caches(std::string_view line, const Anchor& anchor, LineAnchors& more, LineSlot*& line_slot, HeaderSlot*& header) {
  // An INFO line printed before in this file, byte for byte (a communicator created again, a
  // log of several runs), changes nothing but counters: the rest was noted the first time.
  if (complete_ && (line_slot = line_slot_for(line)) && line_slot->known && same_bytes(line_slot->bytes, line)) {
    ++line_cache_.hits;
    ++facts_.info_lines;
    if (line_slot->connection != kNone) ++facts_.connections[line_slot->connection].count;
    return Cached::done;
  }
  // A single INFO message whose header was read before: no need to read it again. (A second
  // anchor, a header glued into the message, needs the full split.)
  size_t begin = anchor.at + anchor.length;
  while (begin < line.size() && (line[begin] == ' ' || line[begin] == '\t')) ++begin;
  const std::string_view rest = line.substr(begin);
  Anchor second;
  if (rest.empty() || more.next(second)) return Cached::no;
  HeaderSlot& slot = header_slot(line.substr(0, begin));
  if (slot.process == kNone || !slot.bytes.equals(line.substr(0, begin))) {
    header = &slot;  // the same bytes add_line will keep there: hashed once
    return Cached::one_anchor;
  }
  // No Segment built: zeroing its 96 bytes compiled to a `rep stos`, whose start-up cost was a
  // fifth of this function's time (profiled).
  if (const std::string_view message = trim(rest); !message.empty()) handle_info(message, slot.host(), slot.process);
  remember_line(line_slot, line);
  return Cached::done;
}

// A line without an NCCL header: nccl-tests output, the launch command, the version banner, a
// message whose header went to another line.
void Parser::add_plain_line(std::string_view line) {
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
}

Parser::LineSlot* Parser::line_slot_for(std::string_view line) {
  if (line_cache_.paused) {
    --line_cache_.paused;
    return nullptr;
  }
  if (++line_cache_.lookups == 4096) {  // where lines do not repeat, hashing them is wasted work
    // Each trial that fails doubles the pause (65536 lines up to 2^20): a log of one run stops
    // paying for the trials, and one that turns repetitive is still caught within ~100 MB.
    // A miss costs a hash and a cold slot, a hit spares the header's and message's reading: at
    // 7% hits (the benchmark's log of distinct thread ids) the cache cost a fifth of the parse,
    // and a quarter measured break-even.
    if (line_cache_.hits < 1024) {
      line_cache_.paused = line_cache_.next_pause;
      line_cache_.next_pause = std::min<uint32_t>(line_cache_.next_pause * 2, 1u << 20);
    } else {
      line_cache_.next_pause = 65536;
    }
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

int Parser::pid_key(std::optional<int> pid, std::optional<int> launcher_rank) {
  // Without pid the launcher rank is the best identity of a process (stripped headers).
  return pid ? *pid : (launcher_rank ? -2 - *launcher_rank : -1);
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
    size_t n = 0;
    if (carry_.empty()) {  // the usual case: the whole line is in this block, scanned once
      scan_line(data.data(), data.size(), scan_);
      n = scan_.length;
      if (scan_.newline) add_line(data.substr(0, n), true, &scan_);
    } else {  // the rest of a line begun in the previous block
      const void* nl = std::memchr(data.data(), '\n', data.size());
      n = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data.data()) : data.size();
      if (carry_.size() < kMaxLine) carry_.append(data.substr(0, std::min(n, kMaxLine - carry_.size())));
      if (nl) {
        add_line(carry_);
        carry_.clear();
      }
    }
    if (n == data.size()) {  // no newline: the line goes on in the next block
      if (carry_.empty()) carry_.assign(data.substr(0, std::min(n, kMaxLine)));
      return;
    }
    data.remove_prefix(n + 1);
  }
}

void Parser::add_stream(std::istream& in) {
  std::vector<char> block(kReadBlock + kScanPadding);
  carry_.clear();
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size() - kScanPadding));
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
    else if (c.transport_class == TransportClass::p2p || c.transport_class == TransportClass::shm) c.inter_node = false;  // intra-node transports
    else if (out.multi_node == false) c.inter_node = false;
    const bool socket = c.socket();
    out.net_socket_used |= socket;
    if (socket && c.inter_node == true) socket_inter_node = true;
    if (socket && !c.inter_node) socket_unknown = true;
    if (c.rdma_net()) other_net = true;
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
