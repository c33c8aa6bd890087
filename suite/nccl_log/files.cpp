// Reading inputs: whole files (big ones in parallel ranges merged in order), pipes, text.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <thread>

#include "nccl_log/parser.hpp"

namespace fabricproof::nccl {

void Parser::add_range(int fd, uint64_t begin, uint64_t end, bool last_chunk) {
  std::vector<char> block(kReadBlock + kScanPadding);
  carry_.clear();
  for (uint64_t at = begin; at < end;) {
    const ssize_t got = ::pread(fd, block.data(), static_cast<size_t>(std::min<uint64_t>(block.size() - kScanPadding, end - at)), static_cast<off_t>(at));
    if (got <= 0) break;
    feed(std::string_view(block.data(), static_cast<size_t>(got)));
    at += static_cast<uint64_t>(got);
  }
  if (!carry_.empty()) {
    add_line(carry_, !last_chunk);
    carry_.clear();
  }
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
    const ssize_t got = ::pread(fd, buffer, sizeof buffer, static_cast<off_t>(at));
    if (got <= 0) return size;
    if (const void* nl = std::memchr(buffer, '\n', static_cast<size_t>(got)))
      return at + static_cast<uint64_t>(static_cast<const char*>(nl) - buffer) + 1;
    at += static_cast<uint64_t>(got);
  }
  return size;
}

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
KnownHosts hosts_just_before(int fd, uint64_t start, const std::string& path, const ParseOptions& options) {
  constexpr uint64_t kWindow = 4ull << 20;
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

// A big file: one range a core, each with a parser of its own, merged in order, so that the facts
// are those of one pass (line numbers, "first seen", counts). The one thing a range cannot know on
// its own, the hosts named before it (they decide where a glued header starts), is exact after the
// first round: a range that looked for one of them is read again, starting from them. Each range
// starts from the hosts named just before it, so that this seldom happens. (More ranges than
// cores, for balance, measured no faster: each starts with cold caches.)
void parse_in_parts(Parser& parser, int fd, uint64_t size, const std::string& path, const ParseOptions& options, unsigned cores) {
  const auto starts = chunk_starts(fd, size, cores);
  const size_t count = starts.size() - 1;
  std::vector<Parser> parts;
  auto read = [&](size_t k, const KnownHosts& hosts_before) {
    parts[k] = Parser(options);
    parts[k].begin_file(path);
    parts[k].assume_line_start_hosts(hosts_before);
    parts[k].add_range(fd, starts[k], starts[k + 1], k + 1 == count);
  };
  parts.resize(count, Parser(options));
  on_cores(count, cores, [&](size_t k) { read(k, hosts_just_before(fd, starts[k], path, options)); });
  std::vector<KnownHosts> before(count);
  std::vector<size_t> again;
  for (size_t k = 1; k < count; ++k) {
    before[k] = before[k - 1];
    before[k].insert(parts[k - 1].line_start_hosts().begin(), parts[k - 1].line_start_hosts().end());
    if (parts[k].looked_for_any_of(before[k])) again.push_back(k);
  }
  on_cores(again.size(), cores, [&](size_t i) { read(again[i], before[again[i]]); });
  for (auto& part : parts) parser.merge(std::move(part));
}

}  // namespace

LogFacts parse_files(const std::vector<std::string>& paths, const ParseOptions& options) {
  constexpr uint64_t kParallelFrom = 64ull << 20;  // smaller files are parsed faster than threads start
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
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    if (!S_ISREG(st.st_mode)) {  // a pipe or FIFO (nccl-audit <(zcat log.gz)): no pread, stream it
      ::close(fd);
      std::ifstream in(path, std::ios::binary);
      parser.add_stream(in);
      continue;
    }
    if (size < kParallelFrom || cores == 1) {
      parser.add_range(fd, 0, size, true);
      ::close(fd);
      continue;
    }
    parse_in_parts(parser, fd, size, path, options, cores);
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
