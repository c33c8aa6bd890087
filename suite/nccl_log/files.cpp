// Reading inputs: whole files (big ones in parallel ranges merged in order), pipes, text.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <thread>

#include "nccl_log/parser.hpp"

namespace fabricproof::nccl {

void Parser::add_range(int fd, uint64_t begin, uint64_t end, bool last_chunk) {
  SharedRange range(begin, end);
  // A chunk that is not the file's last ends at a line start: its last line is complete.
  add_range(fd, range, last_chunk ? end : std::numeric_limits<uint64_t>::max());
}

namespace {

// Up to `size` bytes at `at`, fewer only at the end of the file (or on an error): a short read is
// followed by another, an interrupted one tried again.
size_t read_block(int fd, char* into, size_t size, uint64_t at) {
  size_t have = 0;
  while (have < size) {
    const ssize_t got = ::pread(fd, into + have, size - have, static_cast<off_t>(at + have));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    have += static_cast<size_t>(got);
  }
  return have;
}

}  // namespace

void Parser::add_range(int fd, SharedRange& range, uint64_t file_size) {
  std::vector<char> block(kReadBlock + kScanPadding);
  carry_.clear();
  uint64_t at = 0;
  for (uint64_t size; (size = range.claim(kReadBlock, at)) > 0;) {
    const size_t got = read_block(fd, block.data(), static_cast<size_t>(size), at);
    if (got > 0) feed(std::string_view(block.data(), got));
    if (got < size) break;  // the file shrank: what was read is what there is
  }
  if (!carry_.empty()) {
    add_line(carry_, range.end() < file_size);  // a line without its newline is cut only at the file's end
    carry_.clear();
  }
}

uint64_t SharedRange::end() const {
  std::lock_guard lock(mutex_);
  return end_;
}

uint64_t SharedRange::unread() const {
  std::lock_guard lock(mutex_);
  return end_ - next_;
}

uint64_t SharedRange::claim(uint64_t most, uint64_t& at) {
  std::lock_guard lock(mutex_);
  at = next_;
  const uint64_t size = std::min(most, end_ - next_);
  next_ += size;
  return size;
}

void Parser::merge(Parser&& next) {
  const uint64_t offset = line_no_;
  std::vector<size_t> process_map(next.facts_.processes.size());
  for (size_t i = 0; i < next.facts_.processes.size(); ++i) {
    auto& p = next.facts_.processes[i];
    const std::string key = process_key(file_id_, pid_key(p.pid, p.launcher_rank), p.cuda_dev.value_or(-1), p.host);
    auto [it, inserted] = process_index_.emplace(key, facts_.processes.size());
    if (inserted) {
      facts_.processes.push_back(std::move(p));
    } else {
      auto& mine = facts_.processes[it->second];
      for (std::optional<int> Process::*field : {&Process::rank, &Process::launcher_rank, &Process::nranks, &Process::nnodes})
        if (!(mine.*field)) mine.*field = p.*field;
    }
    process_map[i] = it->second;
  }
  for (auto& c : next.facts_.connections) {
    auto [it, inserted] = connection_index_.emplace(connection_key(c), facts_.connections.size());
    if (inserted) {
      c.line_no += offset;
      facts_.connections.push_back(std::move(c));
    } else {
      facts_.connections[it->second].count += c.count;
    }
  }
  for (auto& w : next.facts_.warnings) {
    auto [it, inserted] = warning_index_.emplace(std::make_tuple(w.message, w.location, w.host), facts_.warnings.size());
    if (inserted) {
      w.line_no += offset;
      facts_.warnings.push_back(std::move(w));
    } else {
      facts_.warnings[it->second].count += w.count;
    }
  }
  if (!facts_.version) facts_.version = next.facts_.version;
  facts_.ranks.insert(next.facts_.ranks.begin(), next.facts_.ranks.end());
  facts_.hosts.insert(next.facts_.hosts.begin(), next.facts_.hosts.end());
  known_hosts_.insert(next.known_hosts_.begin(), next.known_hosts_.end());
  if (next.facts_.nranks) facts_.nranks = std::max(facts_.nranks.value_or(0), *next.facts_.nranks);
  if (next.nnodes_) nnodes_ = std::max(nnodes_.value_or(0), *next.nnodes_);
  libibverbs_missing_ |= next.libibverbs_missing_;
  auto& net = facts_.net;
  const auto& other = next.facts_.net;
  for (auto [mine, theirs] : {std::pair{&net.selected, &other.selected}, {&net.ib_devices, &other.ib_devices},
                              {&net.socket_interfaces, &other.socket_interfaces}, {&net.oob_interfaces, &other.oob_interfaces},
                              {&net.ib_no_device_hosts, &other.ib_no_device_hosts}, {&net.gdr, &other.gdr}, {&net.plugin, &other.plugin}})
    for (const auto& v : *theirs) add_unique(*mine, v);
  net.ib_no_device |= other.ib_no_device;
  net.nvls |= other.nvls;
  if (other.ib_disabled) net.ib_disabled = other.ib_disabled;
  facts_.lines += next.facts_.lines;
  facts_.info_lines += next.facts_.info_lines;
  facts_.warn_lines += next.facts_.warn_lines;
  facts_.truncated_lines += next.facts_.truncated_lines;
  tests_.merge(std::move(next.tests_), offset);
  line_no_ += next.line_no_;
}

namespace {

// Where the first line that starts at or after `at` begins (`size` when none does).
uint64_t line_start_from(int fd, uint64_t at, uint64_t size) {
  char buffer[4096];
  while (at < size) {
    const size_t got = read_block(fd, buffer, sizeof buffer, at);
    if (got == 0) return size;
    if (const void* nl = std::memchr(buffer, '\n', got)) return at + static_cast<uint64_t>(static_cast<const char*>(nl) - buffer) + 1;
    at += got;
  }
  return size;
}

}  // namespace

std::optional<std::pair<uint64_t, uint64_t>> SharedRange::split(int fd, uint64_t least, uint64_t head_start) {
  std::lock_guard lock(mutex_);
  const uint64_t unread = end_ - next_;
  if (unread < std::max<uint64_t>({least, head_start, 1})) return std::nullopt;
  const uint64_t cut = line_start_from(fd, next_ + (unread + head_start) / 2, end_);
  if (cut >= end_) return std::nullopt;  // no line starts in the second half
  const std::pair given{cut, end_};
  end_ = cut;
  return given;
}

namespace {

// Byte offsets that cut a file into `parts` ranges at line boundaries.
std::vector<uint64_t> chunk_starts(int fd, uint64_t size, unsigned parts) {
  std::vector<uint64_t> starts{0};
  for (unsigned k = 1; k < parts; ++k) {
    const uint64_t at = line_start_from(fd, std::max(size * k / parts, starts.back()), size);
    if (at >= size) break;
    starts.push_back(at);
  }
  starts.push_back(size);
  return starts;
}

// The hosts that line-start headers name in the last few MiB before `start`. A part that assumes
// them cuts glued headers as one pass would unless one of its glued headers names a host last
// seen further back: a log's hosts print all the time, so the part is seldom read again (the
// benchmark's part two always was, half the file parsed twice).
constexpr uint64_t kWindow = 4ull << 20;
KnownHosts hosts_just_before(int fd, uint64_t start, const std::string& path, const ParseOptions& options) {
  if (start == 0) return {};
  Parser window(options);
  window.begin_file(path);
  window.add_range(fd, start > kWindow ? line_start_from(fd, start - kWindow, start) : 0, start, false);
  return window.line_start_hosts();
}

// Runs job(k) for every k < count on `threads` threads, each taking the next k when it is done.
void on_cores(size_t count, unsigned threads, const std::function<void(size_t)>& job) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> running;
  for (unsigned c = 0; c < std::min<size_t>(threads, count); ++c)
    running.emplace_back([&] {
      for (size_t k; (k = next++) < count;) job(k);
    });
  for (auto& t : running) t.join();
}

// One part of a big file and the parser that reads it.
struct Part {
  Part(uint64_t begin, uint64_t end, const ParseOptions& options) : range(begin, end), parser(options) {}
  SharedRange range;
  Parser parser;
  bool stolen = false;
};

// The parts of a big file. A part added by a steal leaves the others where they are (a deque), as
// their readers hold them.
class Parts {
 public:
  Parts(int fd, const ParseOptions& options) : fd_(fd), options_(options) {}
  Part& add(uint64_t begin, uint64_t end) {
    std::lock_guard lock(mutex_);
    return parts_.emplace_back(begin, end, options_);
  }
  // A new part from the unread second half of the part with the most left; null when no part has
  // `least` bytes unread.
  Part* steal(uint64_t least) {
    std::lock_guard lock(mutex_);
    Part* victim = nullptr;
    uint64_t most = 0;
    for (auto& part : parts_) {
      if (const uint64_t left = part.range.unread(); left > most) {
        victim = &part;
        most = left;
      }
    }
    const auto given = victim ? victim->range.split(fd_, least, kWindow) : std::nullopt;
    if (!given) return nullptr;
    Part& part = parts_.emplace_back(given->first, given->second, options_);
    part.stolen = true;
    return &part;
  }
  // In file order, once every reader is done.
  std::vector<Part*> in_order() {
    std::vector<Part*> out;
    for (auto& part : parts_) out.push_back(&part);
    std::sort(out.begin(), out.end(), [](const Part* a, const Part* b) { return a->range.begin() < b->range.begin(); });
    return out;
  }

 private:
  std::mutex mutex_;
  int fd_;
  ParseOptions options_;
  std::deque<Part> parts_;
};

unsigned threads_for(const ParallelPlan& plan) { return plan.threads ? plan.threads : std::max(1u, std::thread::hardware_concurrency()); }

// A big file: parts read on every core, each with a parser of its own, merged in file order, so
// that the facts are those of one pass (line numbers, "first seen", counts). A core that is done
// takes half of what another has left unread: a core slowed by other work (a busy node, a shared
// virtual machine) then does not hold up the parse (on 2 shared vCPUs, the slower half of a static
// split took up to 1.6x the faster one's time). The one thing a part cannot know on its own, the
// hosts named before it (they decide where a glued header starts), is exact after the first round:
// a part that looked for one of them is read again, starting from them. Each part starts from the
// hosts named just before it, so that this seldom happens.
void parse_in_parts(Parser& parser, int fd, uint64_t size, const std::string& path, const ParseOptions& options, const ParallelPlan& plan,
                    ParallelStats& stats) {
  const unsigned threads = threads_for(plan);
  const auto starts = chunk_starts(fd, size, plan.parts ? plan.parts : threads);
  Parts parts(fd, options);
  std::vector<Part*> first;
  for (size_t k = 0; k + 1 < starts.size(); ++k) first.push_back(&parts.add(starts[k], starts[k + 1]));
  auto read = [&](Part& part, const KnownHosts& hosts_before, SharedRange& range) {
    part.parser = Parser(options);
    part.parser.begin_file(path);
    part.parser.assume_line_start_hosts(hosts_before);
    part.parser.add_range(fd, range, size);
  };
  auto read_first = [&](Part& part) { read(part, hosts_just_before(fd, part.range.begin(), path, options), part.range); };
  std::atomic<size_t> next{0};
  on_cores(threads, threads, [&](size_t) {
    for (size_t k; (k = next++) < first.size();) read_first(*first[k]);
    while (Part* part = parts.steal(plan.least_steal)) read_first(*part);
  });
  const auto ordered = parts.in_order();
  std::vector<KnownHosts> before(ordered.size());
  std::vector<size_t> again;
  for (size_t k = 1; k < ordered.size(); ++k) {
    before[k] = before[k - 1];
    before[k].insert(ordered[k - 1]->parser.line_start_hosts().begin(), ordered[k - 1]->parser.line_start_hosts().end());
    if (ordered[k]->parser.looked_for_any_of(before[k])) again.push_back(k);
  }
  on_cores(again.size(), threads, [&](size_t i) {
    Part& part = *ordered[again[i]];
    SharedRange whole(part.range.begin(), part.range.end());
    read(part, before[again[i]], whole);
  });
  stats.parts += ordered.size();
  stats.read_again += again.size();
  for (auto* part : ordered) {
    stats.stolen += part->stolen;
    parser.merge(std::move(part->parser));
  }
}

}  // namespace

LogFacts parse_files(const std::vector<std::string>& paths, const ParseOptions& options) { return parse_files(paths, options, ParallelPlan{}); }

LogFacts parse_files(const std::vector<std::string>& paths, const ParseOptions& options, const ParallelPlan& plan, ParallelStats* stats) {
  ParallelStats ignored;
  Parser parser(options);
  for (const auto& path : paths) {
    parser.begin_file(path);
    if (path == "-") {
      parser.add_stream(std::cin);
      continue;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
    struct stat st {};
    ::fstat(fd, &st);
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (!S_ISREG(st.st_mode)) {  // a pipe or FIFO (nccl-audit <(zcat log.gz)): no pread, stream it
      ::close(fd);
      std::ifstream in(path, std::ios::binary);
      parser.add_stream(in);
      continue;
    }
    // Smaller files are parsed faster than threads start.
    if (size < plan.parallel_from || threads_for(plan) == 1) parser.add_range(fd, 0, size, true);
    else parse_in_parts(parser, fd, size, path, options, plan, stats ? *stats : ignored);
    ::close(fd);
  }
  return parser.finish();
}

LogFacts parse_text(std::string_view text, const ParseOptions& options) {
  Parser parser(options);
  parser.begin_file("");
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) parser.add_line(text.substr(start), false);
      break;
    }
    parser.add_line(text.substr(start, end - start));
    start = end + 1;
  }
  return parser.finish();
}

}  // namespace fabricproof::nccl
