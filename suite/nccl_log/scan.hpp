#pragma once
// Low-level scanning of one log line, without regular expressions (the audit must keep up with
// grep on gigabyte logs): NCCL's "host:pid:tid [dev] NCCL INFO" header, read backwards from the
// anchor, and the launcher prefix in front of it.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fabricproof::nccl {

enum class Level { info, warn };

// One NCCL message inside a physical line. Unbuffered multi-process output can glue several into
// one line; each anchor ("NCCL INFO", a corrupted "CCL INFO", "NCCL WARN") starts one.
struct Segment {
  Level level = Level::info;
  std::string_view host;        // may be empty (stripped or redacted headers)
  bool has_host = false;
  std::optional<int> pid;
  std::optional<int> cuda_dev;
  std::string_view location;    // WARN: "misc/socket.cc:46"
  std::string_view prefix;      // text before the header (launcher tags, timestamps)
  std::string_view message;     // after "NCCL INFO " up to the next segment
};

// Where an NCCL message starts: "NCCL INFO ", "CCL INFO " (the N lost to interleaving), "NCCL WARN".
struct Anchor {
  size_t at = 0;      // index of the anchor text
  size_t length = 0;  // of the anchor text including the trailing space
  Level level = Level::info;
};
// The first anchor at or after `from`; advances `from` past it. False when there is none.
bool next_anchor(std::string_view line, size_t& from, Anchor& anchor);

// The anchor whose "CCL " starts at `c` (a position where those four bytes are), if it is one.
bool anchor_at(std::string_view line, size_t c, Anchor& anchor);

// One pass over the next line of a block (16 bytes at a time): where it ends, whether it holds an
// ESC (colour codes), and where "CCL " occurs in it, the only places an anchor can start. The
// parser then neither searches for the line's end, nor for its anchors, nor for colours again.
// Reads up to kScanPadding bytes past `n`: the block must have them (their values do not matter).
struct LineScan {
  static constexpr size_t kMaxCandidates = 6;
  size_t length = 0;       // bytes before the '\n' (all `n` when there is none)
  bool newline = false;
  bool escape = false;
  bool overflow = false;   // more candidates than kMaxCandidates: search the line instead
  uint8_t candidates = 0;
  uint32_t at[kMaxCandidates];
};
constexpr size_t kScanPadding = 64;
void scan_line(const char* p, size_t n, LineScan& out);

// AVX2 (32 bytes a step) where the CPU has it, chosen at run time: the build targets any x86-64.
namespace detail {  // scan_line's implementations, for the test that compares them
void scan_line_sse2(const char* p, size_t n, LineScan& out);  // SSE2, or bytes without it
bool scan_line_avx2(const char* p, size_t n, LineScan& out);  // false: not built with AVX2
bool has_avx2();
}  // namespace detail

// The anchors of one line in order: from its scan's candidates when it has a usable one, else
// searched with next_anchor.
class LineAnchors {
 public:
  LineAnchors(std::string_view line, const LineScan* scan) : line_(line), scan_(scan && !scan->overflow ? scan : nullptr) {}
  bool next(Anchor& anchor) {
    if (!scan_) return next_anchor(line_, from_, anchor);
    while (candidate_ < scan_->candidates)
      if (anchor_at(line_, scan_->at[candidate_++], anchor)) return true;
    return false;
  }

 private:
  std::string_view line_;
  const LineScan* scan_;
  size_t from_ = 0;
  size_t candidate_ = 0;
};

using KnownHosts = std::set<std::string, std::less<>>;

// Splits a line into its NCCL segments (empty when the line has no anchor). A header glued to the
// previous message ("via P2P/IPC/readgpu-b07:901:915 [0] NCCL INFO") is told apart with the hosts
// seen in clean headers so far.
// `out` is cleared and refilled (its capacity is reused: no allocation per line). `not_known`, when
// given, gets the names looked up among the known hosts in vain whose being known would have cut
// the line elsewhere (a part of a file parsed on its own is read again only for those).
void split_segments(std::string_view line, const KnownHosts& known_hosts, std::vector<Segment>& out,
                    std::vector<std::string_view>* not_known = nullptr);

// What split_segments gives for a line known (by the caller) to hold this one anchor only.
Segment single_segment(std::string_view line, const Anchor& anchor);

// The rank a launcher put in front of the line: Open MPI --tag-output "[1,N]<stdout>:", PyTorch
// "[rankN]:", a bare "[N] " tag before the header, srun -l "N: ".
std::optional<int> launcher_rank(std::string_view prefix);

// Small helpers shared by the parser.
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
std::optional<int> to_int_slow(std::string_view digits);
// Inline: the hot path parses millions of small numbers (pids, devices, ranks, channels).
inline std::optional<int> to_int(std::string_view digits) {
  if (digits.empty() || digits.size() > 9 || digits[0] == '-') return to_int_slow(digits);
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}
// The value of bytes already known to be digits; to_int's answer for them. The int is assigned
// directly: building the optional in to_int and copying it cost a store-forwarding stall
// (profiled: a third of read_header's time).
inline void set_digits(std::optional<int>& out, std::string_view digits) {
  if (digits.empty() || digits.size() > 9) {
    out = to_int_slow(digits);
    return;
  }
  int value = 0;
  for (char c : digits) value = value * 10 + (c - '0');
  out = value;
}
// Inline: called several times on every line (profiled: a call each cost more than the compare).
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
// A byte loop, not memcmp: the prefixes are short and most comparisons fail on the first byte.
inline bool starts_with(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (s[i] != prefix[i]) return false;
  return true;
}
void add_unique(std::vector<std::string>& list, std::string_view value);

}  // namespace fabricproof::nccl
