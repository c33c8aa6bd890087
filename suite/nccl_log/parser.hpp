#pragma once
// Streaming parser for NCCL_DEBUG=INFO output of any NCCL 2.x, as launchers deliver it: prefixed
// (Open MPI --tag-output, srun -l, torchrun, Ray, Python logging, timestamps), interleaved from many
// ranks, duplicated, truncated or glued lines, CRLF, non-UTF-8 bytes. Memory grows with what the
// log describes (ranks, distinct connections), not with its length.
#include <istream>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <string>
#include <tuple>
#include <vector>

#include "nccl_log/hashes.hpp"
#include "nccl_log/model.hpp"
#include "nccl_log/scan.hpp"
#include "nccl_log/tests_table.hpp"

namespace fabricproof::nccl {

struct ParseOptions {
  // What the caller knows beyond the log (fabricproof's own run knows its node map): whether the
  // job spans nodes. Unset: decided from the log (distinct hosts, nNodes).
  std::optional<bool> multi_node;
};

// Bytes [begin, end) of a file, read block by block by one parser while another thread may take
// the unread second half of them (split): a core slowed by other work then holds up only what it
// has not read yet, not the whole parse.
class SharedRange {
 public:
  SharedRange(uint64_t begin, uint64_t end) : begin_(begin), next_(begin), end_(end) {}
  uint64_t begin() const { return begin_; }
  uint64_t end() const;  // final once the range's reader is done
  uint64_t unread() const;
  // The next block to read, at most `most` bytes, at `at`: its size, 0 when the range is read.
  uint64_t claim(uint64_t most, uint64_t& at);
  // Gives up the second part of the unread bytes, when at least `least` are unread: the range then
  // ends at the first line start after the middle of them, moved on by half of `head_start` (what
  // the taker reads before them), so that both end together. Returns the bytes given up,
  // [cut, old end).
  std::optional<std::pair<uint64_t, uint64_t>> split(int fd, uint64_t least, uint64_t head_start = 0);

 private:
  mutable std::mutex mutex_;
  const uint64_t begin_;
  uint64_t next_, end_;
};

// How a big file is read on several cores. The defaults: from 64 MiB on, a part per core; a core
// whose part is done takes half of the unread rest of the part with the most left, while that part
// has at least 16 MiB unread (a taker first reads the 4 MiB before its share to learn the hosts
// named there: below, that costs more CPU than the wait it saves). Tests ask for more threads,
// fewer parts and smaller takes.
struct ParallelPlan {
  uint64_t parallel_from = 64ull << 20;
  unsigned threads = 0;  // 0: every core
  unsigned parts = 0;    // parts to begin with; 0: one a thread
  uint64_t least_steal = 16ull << 20;
};
// What the parallel reading did (for tests and benchmarks).
struct ParallelStats {
  size_t parts = 0;       // read in the end, steals included
  size_t stolen = 0;      // parts taken from another part's unread rest
  size_t read_again = 0;  // parts read a second time from the hosts named before them
};

// alignas: the parsers of a parallel parse sit side by side in one container and each thread
// writes its parser's counters on every line, so neighbours must not share a cache line.
class alignas(64) Parser {
 public:
  explicit Parser(ParseOptions options = {});
  // Starts a new input (one rank's NCCL_DEBUG_FILE, or one combined log); line numbers restart.
  void begin_file(std::string name);
  // One physical line, without its newline. `complete` is false for a file's last line that had
  // no newline: the writer was cut off, so a connection on it is not trusted.
  // `scan`: what feed() found in one pass over the line, or none (then the line is searched).
  void add_line(std::string_view line, bool complete = true, const LineScan* scan = nullptr);
  // Reads a whole stream in large blocks, splitting lines itself (bounded line length).
  void add_stream(std::istream& in);
  // Reads bytes [begin, end) of an open file (a chunk that starts and ends at line boundaries).
  void add_range(int fd, uint64_t begin, uint64_t end, bool last_chunk);
  // The same for a range whose end another thread may cut (at a line start) while it is read.
  void add_range(int fd, SharedRange& range, uint64_t file_size);
  // Folds a parser that read the next part of the same input into this one; its line numbers
  // continue this one's.
  void merge(Parser&& next);
  // A part of a file parsed on its own reads a line differently from one pass only where a glued
  // header was cut with the hosts named so far (by headers that start their lines), and one of the
  // names it looked for in vain was named before the part began. Such a part is read again,
  // starting from those hosts.
  const KnownHosts& line_start_hosts() const { return known_hosts_; }
  bool looked_for_any_of(const KnownHosts& hosts) const;
  void assume_line_start_hosts(const KnownHosts& hosts) { known_hosts_ = hosts; }
  LogFacts finish();

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  // The caches keep short texts only, so that their memory stays bounded (a few MB) whatever the lines.
  static constexpr size_t kMaxCachedBytes = 512;
  // Bytes read at a time. Small enough that a block, copied in by pread, stays in L2 beside the
  // cache slots below instead of evicting them (1 MiB blocks measured 4-5% slower on a 1 MiB L2).
  static constexpr size_t kReadBlock = 128 << 10;

  void add_plain_line(std::string_view line);
  void split_names(std::string_view line);
  std::string_view without_colours(std::string_view line);
  struct LineSlot;
  enum class Cached { no, one_anchor, done };
  struct HeaderSlot;
  // `header`: for `one_anchor`, the header's slot, to be filled once the header is read.
  Cached add_from_caches(std::string_view line, const Anchor& anchor, LineAnchors& more, LineSlot*& line_slot, HeaderSlot*& header);
  size_t process_for(const Segment& seg, std::optional<int> prefix_rank, bool starts_line);
  void remember_header(std::string_view line, const Segment& seg, size_t process, HeaderSlot* header_to_fill);
  void handle(const Segment& seg, size_t process);
  void handle_info(std::string_view message, std::string_view host, size_t process);
  void handle_warning(const Segment& seg, size_t process);
  bool handle_communicator(std::string_view message, size_t process);  // true when the line was one
  bool parse_connection(std::string_view message, size_t process);
  void parse_network(std::string_view message, std::string_view host);
  void note_rank(size_t process, int rank);
  // Complete lines, plus a carried partial line. `data` must be followed by kScanPadding readable bytes.
  void feed(std::string_view data);
  std::string connection_key(const Connection& c) const;
  // The pid part of a process key, shared by the lookup and the merge of parallel parts.
  static int pid_key(std::optional<int> pid, std::optional<int> launcher_rank);
  std::string process_key(int file_id, int pid, int cuda_dev, std::string_view host) const;
  static void append_process_key(std::string& key, int file_id, int pid, int cuda_dev, std::string_view host);

  ParseOptions options_;
  std::string file_;
  uint64_t line_no_ = 0;
  LogFacts facts_;
  std::unordered_map<std::string, size_t> process_index_;  // (file, pid, cudaDev, host) as bytes
  std::string process_key_;
  int file_id_ = 0;
  // Connections folded by (rank, peer, channel, conn, direction, transport), keyed by a compact
  // byte string built in a reused buffer: a repeated line costs a hash lookup, no allocation.
  std::unordered_map<std::string, size_t> connection_index_;
  std::string key_;
  std::vector<Segment> segments_;
  // A direct-mapped cache in front of process_index_, by a hash of (host, pid, cudaDev): interleaved
  // output cycles through many processes, and a hash of the header's fields costs less than
  // building the key. Emptied per file, like the key's file id.
  struct ProcessSlot {
    size_t process = static_cast<size_t>(-1);
    int pid = 0;
    int cuda_dev = 0;
  };
  std::vector<ProcessSlot> process_slots_;
  // Headers seen, by a hash of their bytes (the line up to its message): every line a thread
  // prints starts with the same bytes (prefix, "host:pid:tid [dev] NCCL INFO "), so a line whose
  // header was read before reuses what it said and its process, even when many ranks' lines are
  // interleaved. Exact: a header's fields depend on its bytes alone. Emptied per file.
  struct HeaderSlot {
    size_t process = static_cast<size_t>(-1);  // none: the slot is empty
    std::optional<int> pid, cuda_dev;
    uint16_t host_at = 0, host_size = 0;  // the host name lies inside the header's bytes
    bool has_host = false;
    SlotBytes<128> bytes;
    std::string_view host() const { return bytes.view().substr(host_at, host_size); }
  };
  std::vector<HeaderSlot> headers_;
  // Whole INFO lines seen (repeat-safe ones), by a hash of their bytes, with the connection each
  // counted, if any: a line that comes again is counted without being read. Emptied per file.
  struct LineSlot {
    bool known = false;
    std::string bytes;
    size_t connection = static_cast<size_t>(-1);
  };
  std::vector<LineSlot> lines_;
  size_t last_connection_ = static_cast<size_t>(-1);  // what handle() counted for its line
  // Whether handle()'s line may be skipped when it comes again: all it did is count, or set
  // what the first occurrence already set (not "the last one wins" values).
  bool repeat_safe_ = false;
  // The line cache pays only where lines repeat: after 4096 lookups with under 1024 hits it is
  // left alone for the next 65536 INFO lines (a log of one run), then tried again; the pause
  // doubles with every trial that fails, up to 2^20 lines.
  struct {
    uint32_t lookups = 0, hits = 0, paused = 0, next_pause = 65536;
  } line_cache_;
  LineSlot* line_slot_for(std::string_view line);  // null while paused
  void remember_line(LineSlot* slot, std::string_view line);
  HeaderSlot& header_slot(std::string_view bytes);
  // The last connection lines seen, by a hash of (process, message): a repeated line (a log of
  // many runs, or a communicator re-created) is counted without parsing it again.
  struct SeenConnection {
    size_t process = static_cast<size_t>(-1);
    size_t connection = 0;
    SlotBytes<96> message;
  };
  std::vector<SeenConnection> seen_connections_;
  std::vector<bool> rank_seen_;  // ranks already in facts_.ranks (a set insert per line is costly)
  std::optional<int> nnodes_;
  bool libibverbs_missing_ = false;  // "Failed to open libibverbs.so": NCCL cannot use IB/RoCE
  TestsTableParser tests_;
  std::string carry_;  // add_stream: a line split across reads
  std::string clean_;  // add_line: the line without ANSI colour codes
  LineScan scan_;      // feed(): the line in hand
  KnownHosts known_hosts_;
  std::vector<bool> host_named_;  // by process: its host is in known_hosts_
  KnownHosts hosts_not_known_;  // looked up by split_segments and not found (at most kMaxNotKnown)
  bool hosts_not_known_overflow_ = false;
  std::vector<std::string_view> not_known_;  // split_segments' list for the line in hand
  // (message, location, host), looked up with views: no strings built per line. (Compared as
  // views: std::less<> between tuples of strings and of views is not portable, clang rejects it.)
  struct WarningKeyLess {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const { return views(a) < views(b); }
    template <class T>
    static std::tuple<std::string_view, std::string_view, std::string_view> views(const T& t) { return {std::get<0>(t), std::get<1>(t), std::get<2>(t)}; }
  };
  std::map<std::tuple<std::string, std::string, std::string>, size_t, WarningKeyLess> warning_index_;
  bool complete_ = true;
};

// Convenience: parse files (one per rank or combined); "-" is standard input.
LogFacts parse_files(const std::vector<std::string>& paths, const ParseOptions& options = {});
LogFacts parse_files(const std::vector<std::string>& paths, const ParseOptions& options, const ParallelPlan& plan, ParallelStats* stats = nullptr);
LogFacts parse_text(std::string_view text, const ParseOptions& options = {});

}  // namespace fabricproof::nccl
