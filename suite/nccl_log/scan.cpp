#include "nccl_log/scan.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// The AVX2 scan is compiled (for that target alone) where GCC or clang build for x86-64.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FABRICPROOF_SCAN_AVX2 1
#include <immintrin.h>
#else
#define FABRICPROOF_SCAN_AVX2 0
#endif

namespace fabricproof::nccl {
namespace {

constexpr size_t kMaxHost = 255;  // DNS names are shorter; a longer run is not a host name
// Characters of a host name in a header; '<' and '>' appear in redacted names ("<cluster_name>").
// A table: this runs for every byte of every host name read backwards from a header.
constexpr auto kHostChars = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c)
    t[static_cast<size_t>(c)] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                                c == '<' || c == '>';
  return t;
}();
bool is_host_char(char c) { return kHostChars[static_cast<unsigned char>(c)]; }

// Finds "NCCL INFO ", "CCL INFO " (the N lost to interleaving) and "NCCL WARN".
void find_anchors(std::string_view line, std::vector<Anchor>& anchors) {
  anchors.clear();
  Anchor a;
  for (size_t from = 0; next_anchor(line, from, a);) anchors.push_back(a);
}

// "host:pid:tid" ending at `j`: the host and pid into `seg`. Where the host starts, or npos.
inline size_t read_host_pid(std::string_view line, size_t j, Segment& seg) {
  size_t k = j;
  while (k > 0 && is_digit(line[k - 1])) --k;
  if (k == j || k == 0 || line[k - 1] != ':') return std::string_view::npos;
  const size_t p = k - 1;
  size_t q = p;
  while (q > 0 && is_digit(line[q - 1])) --q;
  if (q == p || q == 0 || line[q - 1] != ':') return std::string_view::npos;
  set_digits(seg.pid, line.substr(q, p - q));
  const size_t h = q - 1;
  size_t hs = h;
  const size_t stop = h > kMaxHost ? h - kMaxHost : 0;
  while (hs > stop && is_host_char(line[hs - 1])) --hs;
  std::string_view host = line.substr(hs, h - hs);
  // Glued to the previous process's header ("...:166015g183:1612..."): its tid digits ran into
  // this host name.
  if (hs > 0 && line[hs - 1] == ':')
    while (!host.empty() && is_digit(host.front())) host.remove_prefix(1);
  seg.host = host;
  seg.has_host = true;
  return hs;
}

// Reads the header backwards from the anchor. Returns where the header starts.
size_t read_header(std::string_view line, size_t anchor, Level level, Segment& seg) {
  size_t j = anchor;
  auto skip_space = [&] {
    while (j > 0 && line[j - 1] == ' ') --j;
  };
  skip_space();
  if (level == Level::warn) {  // "file.cc:LINE " (or a function name "process_err_completion:1723")
    size_t k = j;
    while (k > 0 && line[k - 1] != ' ' && line[k - 1] != ']') --k;
    const std::string_view token = line.substr(k, j - k);
    if (token.find(':') != std::string_view::npos) {
      seg.location = token;
      j = k;
      skip_space();
    }
  }
  if (j > 0 && line[j - 1] == ']') {  // "[cudaDev]"
    size_t k = j - 1;
    while (k > 0 && is_digit(line[k - 1])) --k;
    if (k > 0 && line[k - 1] == '[' && k < j - 1) {
      set_digits(seg.cuda_dev, line.substr(k, j - 1 - k));
      j = k - 1;
      skip_space();
    }
  }
  if (const size_t host_start = read_host_pid(line, j, seg); host_start != std::string_view::npos) return host_start;
  // No pid:tid (2.26+ WARN lines, edited pastes): "host [dev]".
  if (level == Level::warn) {
    size_t hs = j;
    while (hs > 0 && is_host_char(line[hs - 1])) --hs;
    if (hs < j && (hs == 0 || line[hs - 1] == ' ') && !is_digit(line[hs])) {
      seg.host = line.substr(hs, j - hs);
      seg.has_host = true;
      return hs;
    }
  }
  return j;
}

}  // namespace

bool anchor_at(std::string_view line, size_t c, Anchor& anchor) {
  const std::string_view rest = line.substr(c + 4);
  const bool has_n = c > 0 && line[c - 1] == 'N';
  const size_t start = has_n ? c - 1 : c;
  const size_t length = (c + 8 < line.size() && line[c + 8] == ' ') ? c + 9 - start : c + 8 - start;
  if (rest.substr(0, 4) == "INFO") {
    anchor = {start, length, Level::info};
    return true;
  }
  if (has_n && rest.substr(0, 4) == "WARN") {
    anchor = {start, length, Level::warn};
    return true;
  }
  return false;
}

bool next_anchor(std::string_view line, size_t& from, Anchor& anchor) {
  while (from < line.size()) {
    // Look for the 'L' of "CCL ": far rarer in log text than 'C', so memchr skips further.
    const void* l = from + 2 < line.size() ? std::memchr(line.data() + from + 2, 'L', line.size() - from - 2) : nullptr;
    if (!l) break;
    const size_t at_l = static_cast<size_t>(static_cast<const char*>(l) - line.data());
    if (line[at_l - 1] != 'C' || line[at_l - 2] != 'C' || at_l + 1 >= line.size() || line[at_l + 1] != ' ') {
      from = at_l - 1;
      continue;
    }
    const size_t c = at_l - 2;
    from = c + 4;
    if (anchor_at(line, c, anchor)) return true;
  }
  from = line.size();
  return false;
}

namespace {

// Notes one chunk of a line, bytes [base, base + width), from its masks (bit i: byte base + i):
// colours, and each 'L' (rare in log text) with the "CC" before it and the ' ' after it. True when
// the line ends in the chunk. The byte after an 'L' before the newline is inside the line or is the
// newline itself (which is no ' ').
[[gnu::always_inline]] inline bool note_chunk(const char* p, size_t n, size_t base, unsigned width, uint64_t newline, uint64_t escape,
                                              uint64_t l, LineScan& out) {
  // Bits past the data are not the line's.
  uint64_t valid = n - base >= width ? ~uint64_t{0} >> (64 - width) : (uint64_t{1} << (n - base)) - 1;
  const bool ends = (newline & valid) != 0;
  const auto end = static_cast<unsigned>(std::countr_zero(newline & valid));
  if (ends) valid = (uint64_t{1} << end) - 1;
  out.escape |= (escape & valid) != 0;
  for (uint64_t bits = l & valid; bits; bits &= bits - 1) {
    const size_t at = base + static_cast<size_t>(std::countr_zero(bits));
    if (at < 2 || p[at - 2] != 'C' || p[at - 1] != 'C' || p[at + 1] != ' ') continue;
    if (out.candidates == LineScan::kMaxCandidates) {
      out.overflow = true;
      break;
    }
    out.at[out.candidates++] = static_cast<uint32_t>(at - 2);
  }
  if (ends) {
    out.length = base + end;
    out.newline = true;
  }
  return ends;
}

void clear_scan(LineScan& out) {
  out.candidates = 0;
  out.escape = out.overflow = out.newline = false;
}

}  // namespace

namespace detail {

void scan_line_sse2(const char* p, size_t n, LineScan& out) {
  clear_scan(out);
  for (size_t base = 0; base < n; base += 16) {
    const char* q = p + base;
    uint32_t newline = 0, escape = 0, l = 0;
#if defined(__SSE2__)
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const __m128i is_newline = _mm_cmpeq_epi8(v, _mm_set1_epi8('\n')), is_escape = _mm_cmpeq_epi8(v, _mm_set1_epi8('\x1b')),
                  is_l = _mm_cmpeq_epi8(v, _mm_set1_epi8('L'));
    // Most chunks hold none of the three: one mask for them.
    if (!_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(is_newline, is_escape), is_l)) && n - base >= 16) continue;
    newline = static_cast<uint32_t>(_mm_movemask_epi8(is_newline));
    escape = static_cast<uint32_t>(_mm_movemask_epi8(is_escape));
    l = static_cast<uint32_t>(_mm_movemask_epi8(is_l));
#else
    for (int i = 0; i < 16; ++i) {
      newline |= static_cast<uint32_t>(q[i] == '\n') << i;
      escape |= static_cast<uint32_t>(q[i] == '\x1b') << i;
      l |= static_cast<uint32_t>(q[i] == 'L') << i;
    }
#endif
    if (note_chunk(p, n, base, 16, newline, escape, l, out)) return;
  }
  out.length = n;
}

#if FABRICPROOF_SCAN_AVX2
// The same, 32 bytes at a time (lines average ~90 bytes: 3 chunks instead of 6). Compiled for
// AVX2 on its own; scan_line calls it only on a CPU that has AVX2.
__attribute__((target("avx2"))) bool scan_line_avx2(const char* p, size_t n, LineScan& out) {
  clear_scan(out);
  for (size_t base = 0; base < n; base += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + base));
    const __m256i is_newline = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\n')), is_escape = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\x1b')),
                  is_l = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('L'));
    const __m256i any = _mm256_or_si256(_mm256_or_si256(is_newline, is_escape), is_l);
    if (_mm256_testz_si256(any, any) && n - base >= 32) continue;
    if (note_chunk(p, n, base, 32, static_cast<uint32_t>(_mm256_movemask_epi8(is_newline)), static_cast<uint32_t>(_mm256_movemask_epi8(is_escape)),
                   static_cast<uint32_t>(_mm256_movemask_epi8(is_l)), out))
      return true;
  }
  out.length = n;
  return true;
}

// Asked once, when the program loads (__builtin_cpu_init: before other constructors may run).
const bool kHasAvx2 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
}();
#else
const bool kHasAvx2 = false;
bool scan_line_avx2(const char*, size_t, LineScan&) { return false; }
#endif
bool has_avx2() { return kHasAvx2; }

}  // namespace detail

void scan_line(const char* p, size_t n, LineScan& out) {
  if (detail::kHasAvx2) {
    detail::scan_line_avx2(p, n, out);
    return;
  }
  detail::scan_line_sse2(p, n, out);
}

std::optional<int> to_int_slow(std::string_view digits) {
  size_t i = 0;
  bool negative = false;
  if (!digits.empty() && digits[0] == '-') {
    negative = true;
    i = 1;
  }
  if (i == digits.size() || digits.size() - i > 9) {  // empty, or could overflow int
    if (digits.size() - i > 9) {
      int value = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec == std::errc() && end == digits.data() + digits.size()) return value;
    }
    return std::nullopt;
  }
  int value = 0;
  for (; i < digits.size(); ++i) {
    const char c = digits[i];
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return negative ? -value : value;
}


void add_unique(std::vector<std::string>& list, std::string_view value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.emplace_back(value);
}

Segment single_segment(std::string_view line, const Anchor& anchor) {
  Segment seg;
  seg.level = anchor.level;
  const size_t start = read_header(line, anchor.at, anchor.level, seg);
  seg.message = trim(line.substr(anchor.at + anchor.length));
  seg.prefix = line.substr(0, start);
  return seg;
}

void split_segments(std::string_view line, const KnownHosts& known_hosts, std::vector<Segment>& segments,
                    std::vector<std::string_view>* not_known) {
  segments.clear();
  thread_local std::vector<Anchor> anchors;  // reused: no allocation per line
  thread_local std::vector<size_t> header_starts;
  find_anchors(line, anchors);
  header_starts.clear();
  for (const auto& a : anchors) {
    Segment seg;
    seg.level = a.level;
    size_t start = read_header(line, a.at, a.level, seg);
    // Only a header after another message can be glued to it; the first one starts after a
    // prefix delimiter.
    // The header is cut at the longest known tail of the name read; `not_known` gets the names
    // whose being known would have cut it elsewhere: each shorter tail tried in vain, and the whole
    // name only when a tail was cut (uncut, the whole name reads the same known or not, so a part
    // of a file that meets it before its own header names it need not be read again).
    if (!segments.empty() && seg.has_host && !seg.host.empty() && !known_hosts.count(seg.host)) {
      const std::string_view whole = seg.host;
      for (size_t k = 1; k < whole.size(); ++k) {
        if (known_hosts.count(whole.substr(k))) {  // the head belongs to the previous message
          seg.host.remove_prefix(k);
          start += k;
          if (not_known) not_known->push_back(whole);
          break;
        }
        if (not_known) not_known->push_back(whole.substr(k));
      }
    }
    header_starts.push_back(start);
    segments.push_back(seg);
  }
  for (size_t i = 0; i < anchors.size(); ++i) {
    const size_t begin = anchors[i].at + anchors[i].length;
    const size_t end = i + 1 < anchors.size() ? std::max(header_starts[i + 1], begin) : line.size();
    segments[i].message = trim(line.substr(begin, end - begin));
    const size_t prefix_start = i == 0 ? 0 : anchors[i - 1].at + anchors[i - 1].length;
    segments[i].prefix = header_starts[i] > prefix_start ? line.substr(prefix_start, header_starts[i] - prefix_start) : std::string_view{};
  }
}

std::optional<int> launcher_rank(std::string_view prefix) {
  // Open MPI --tag-output: "[1,3]<stdout>:" (possibly after a timestamp).
  if (auto p = prefix.find("]<std"); p != std::string_view::npos) {
    const size_t open = prefix.rfind('[', p);
    const size_t comma = prefix.find(',', open == std::string_view::npos ? 0 : open);
    if (open != std::string_view::npos && comma != std::string_view::npos && comma < p) return to_int(prefix.substr(comma + 1, p - comma - 1));
  }
  // PyTorch: "[rank3]:"
  if (auto p = prefix.find("[rank"); p != std::string_view::npos) {
    const size_t close = prefix.find(']', p);
    if (close != std::string_view::npos) return to_int(prefix.substr(p + 5, close - p - 5));
  }
  const std::string_view t = trim(prefix);
  // A bare launcher tag "[N] " in front of the header.
  if (t.size() >= 3 && t.front() == '[' && t.back() == ']') return to_int(t.substr(1, t.size() - 2));
  // srun -l: "N: "
  if (t.size() >= 2 && t.back() == ':') return to_int(t.substr(0, t.size() - 1));
  return std::nullopt;
}

}  // namespace fabricproof::nccl
