#include "nccl_log/tests_table.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "nccl_log/scan.hpp"

namespace fabricproof::nccl {
namespace {

constexpr size_t kMaxFields = 32;  // a row has at most 13 fields; more is not a row
using Fields = std::array<std::string_view, kMaxFields>;

// Bit i set where p[i] is a blank (' ' or '\t'), for the first `n` <= 64 bytes; the bits past `n`
// are set too (the end of a row is a blank). SSE2 compares 16 bytes at once on x86-64.
uint64_t blank_bits(const char* p, size_t n) {
  char padded[64];
  if (n < 64) {  // never read past the row: the tail goes into a buffer padded with blanks
    std::memset(padded, ' ', sizeof padded);
    std::memcpy(padded, p, n);
    p = padded;
  }
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t');
  uint64_t bits = 0;
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const auto mask = static_cast<uint16_t>(_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, tab))));
    bits |= static_cast<uint64_t>(mask) << (16 * k);
  }
  return bits;
#else
  uint64_t bits = 0;
  for (size_t i = 0; i < 64; ++i)
    if (p[i] == ' ' || p[i] == '\t') bits |= uint64_t{1} << i;
  return bits;
#endif
}

// Splits s at blanks into `out`; returns the number of fields. A row is ~110 bytes of
// right-aligned columns: a byte loop over it cost more than all the number parsing after it, so
// fields are cut from a bit mask of its blanks, 64 bytes at a time.
size_t split_fields(std::string_view s, Fields& out) {
  size_t n = 0, start = 0;
  bool inside = false;           // a field is open
  uint64_t blank_before = 1;     // bit 0: whether the byte before the chunk is a blank (or none)
  for (size_t base = 0; base < s.size(); base += 64) {
    const uint64_t blank = blank_bits(s.data() + base, std::min<size_t>(64, s.size() - base));
    const uint64_t after_blank = blank << 1 | blank_before;
    uint64_t starts = ~blank & after_blank, ends = blank & ~after_blank;  // first and past-the-last bytes
    blank_before = blank >> 63;
    // Starts and ends alternate: each step takes the next of the one that is due.
    for (;;) {
      if (!inside) {
        if (!starts) break;
        start = base + static_cast<size_t>(std::countr_zero(starts));
        starts &= starts - 1;
        inside = true;
      } else {
        if (!ends) break;
        out[n++] = std::string_view(s.data() + start, base + static_cast<size_t>(std::countr_zero(ends)) - start);  // in range: no check
        ends &= ends - 1;
        inside = false;
        if (n == kMaxFields) return n;
      }
    }
  }
  if (inside) out[n++] = s.substr(start);
  return n;
}

// "123.45" or "1.2e-05" as a mantissa below 10^15 and a power of ten within 10^-22..10^22 (the
// forms fast_decimal computes exactly); nullopt for anything else (signs, long mantissas, "N/A").
struct Decimal {
  uint64_t mantissa = 0;
  int scale = 0;
};
std::optional<Decimal> decimal_form(std::string_view t) {
  Decimal d;
  int digits = 0, decimals = 0;
  size_t i = 0;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i, ++digits) d.mantissa = d.mantissa * 10 + static_cast<uint64_t>(t[i] - '0');
  if (i < t.size() && t[i] == '.')
    for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i, ++digits, ++decimals) d.mantissa = d.mantissa * 10 + static_cast<uint64_t>(t[i] - '0');
  if (digits == 0 || digits > 15) return std::nullopt;
  int exponent = 0;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {  // old nccl-tests "error" column: 0e+00
    bool negative = false;
    if (++i < t.size() && (t[i] == '+' || t[i] == '-')) negative = t[i++] == '-';
    const size_t first = i;
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9' && i - first < 3; ++i) exponent = exponent * 10 + (t[i] - '0');
    if (i == first) return std::nullopt;
    if (negative) exponent = -exponent;
  }
  d.scale = exponent - decimals;
  if (i != t.size() || d.scale > 22 || d.scale < -22) return std::nullopt;
  return d;
}

// Such a decimal exactly as from_chars reads it, without its cost (Clinger's fast path): a mantissa
// below 2^53 times or divided by an exact power of ten (10^0..10^22) is one correctly rounded IEEE
// operation. Anything else goes to from_chars.
std::optional<double> fast_decimal(std::string_view t) {
  static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const auto d = decimal_form(t);
  if (!d) return std::nullopt;
  const auto mantissa = static_cast<double>(d->mantissa);
  return d->scale >= 0 ? mantissa * kPow10[d->scale] : mantissa / kPow10[-d->scale];
}

std::optional<double> number(std::string_view t) {
  if (auto v = fast_decimal(t)) return v;
  double v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> unsigned_number(std::string_view t) {
  uint64_t v = 0;
  if (t.size() > 19) {  // may overflow: from_chars says
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
    return v;
  }
  if (t.empty()) return std::nullopt;
  for (char c : t) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// Whether number(t) has a value (exactly), without its division.
// The usual field ("12.34", "0"), up to 16 digits with at most one '.', is told without
// decimal_form's arithmetic (a twentieth of the parse of a big log went to it): from_chars reads
// every such text, and at 16 characters none is out of a double's range.
bool is_number(std::string_view t) {
  if (!t.empty() && t.size() <= 16) {
    size_t i = 0;
    while (i < t.size() && is_digit(t[i])) ++i;
    if (i < t.size() && t[i] == '.')
      for (++i; i < t.size() && is_digit(t[i]);) ++i;
    if (i == t.size() && t != ".") return true;
  }
  return decimal_form(t) || number(t);
}

bool is_word(std::string_view t) {
  if (t.empty()) return false;
  for (char c : t)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return !(t.front() >= '0' && t.front() <= '9');
}

// time, algbw, busbw, #wrong from fields [at, at + 4) into h; false when they are not numbers.
// `h` null: only whether they are (a row past kMaxTestsRows is counted, its values are not kept).
bool read_half(const Fields& t, size_t at, TestsHalf* half) {
  if (!half) return is_number(t[at]) && is_number(t[at + 1]) && is_number(t[at + 2]) && (t[at + 3] == "N/A" || is_number(t[at + 3]));
  TestsHalf& h = *half;
  auto time = number(t[at]), alg = number(t[at + 1]), bus = number(t[at + 2]);
  if (!time || !alg || !bus) return false;
  h.time_us = *time;
  h.algbw_GBps = *alg;
  h.busbw_GBps = *bus;
  h.wrong_raw.assign(t[at + 3]);
  h.wrong.reset();
  if (t[at + 3] != "N/A") {
    h.wrong = number(t[at + 3]);
    if (!h.wrong) return false;
  }
  return true;
}

}  // namespace

RowStatus read_tests_row(std::string_view line, std::optional<bool> has_redop, std::optional<bool> has_root, TestsRow* row) {
  thread_local Fields t;  // reused, not a local: zeroing its 32 views per row was 70% of this function
  const size_t fields = split_fields(line, t);
  if (fields < 3) return RowStatus::not_a_row;
  auto size = unsigned_number(t[0]);
  auto count = unsigned_number(t[1]);
  if (!size || !count || !is_word(t[2])) return RowStatus::not_a_row;
  // The columns between type and time: 0 (oldest), 1 (redop or root) or 2 (redop and root).
  size_t extra = 0;
  if (has_redop || has_root) {
    extra = (has_redop.value_or(false) ? 1 : 0) + (has_root.value_or(false) ? 1 : 0);
  } else if (fields >= 11) {
    extra = fields - 11;
  }
  const size_t needed = 3 + extra + 8;
  if (fields < needed || extra > 2) return RowStatus::partial;
  const size_t at = 3 + extra;
  if (!row) return read_half(t, at, nullptr) && read_half(t, at + 4, nullptr) ? RowStatus::row : RowStatus::partial;
  row->size = *size;
  row->count = *count;
  row->type.assign(t[2]);
  row->redop.clear();
  row->root.reset();
  const bool redop = extra == 2 || (extra == 1 && (has_redop.value_or(false) || (!has_root && !number(t[3]))));
  if (redop) row->redop.assign(t[3]);
  if (extra == 2 || (extra == 1 && !redop)) row->root = to_int(t[at - 1]);  // an integer column; anything else is no root
  if (!read_half(t, at, &row->out_of_place) || !read_half(t, at + 4, &row->in_place)) return RowStatus::partial;
  return RowStatus::row;
}

std::optional<TestsRow> parse_tests_row(std::string_view line, std::optional<bool> has_redop, std::optional<bool> has_root, bool* partial) {
  TestsRow row;
  const RowStatus status = read_tests_row(line, has_redop, has_root, &row);
  if (partial) *partial = status == RowStatus::partial;
  if (status != RowStatus::row) return std::nullopt;
  return row;
}

TestsTable& TestsTableParser::ensure() {
  if (!table_) {
    table_.emplace();
    table_->test = test_;
    table_->wrong_column = wrong_column_;
  }
  return *table_;
}

// The command line names the test: "./build/all_reduce_perf -b 8 -e 8G -g 8".
void TestsTableParser::note_command_line(std::string_view s, size_t perf) {
  size_t start = s.rfind('/', perf);
  start = start == std::string_view::npos ? s.rfind(' ', perf) : start;
  start = start == std::string_view::npos ? 0 : start + 1;
  test_ = std::string(s.substr(start, perf + 5 - start));
  if (auto g = s.find(" -g "); g != std::string_view::npos) {
    std::string_view rest = s.substr(g + 4);
    gpus_per_process_ = to_int(rest.substr(0, rest.find(' ')));
  }
  if (table_) table_->test = test_;
}

// The lines around the rows: rank lines, the column header, the summary. True when `body` was one.
bool TestsTableParser::read_annotation(std::string_view body) {
  if (starts_with(body, "Rank ")) {  // "#  Rank  3 Group  0 Pid ... on host device 3 [0x..] name"
    std::string_view rest = trim(body.substr(5));
    if (auto r = to_int(rest.substr(0, rest.find(' ')))) {
      ranks_.insert(*r);
      if (table_) table_->nranks = static_cast<int>(ranks_.size());
    }
    return true;
  }
  if (starts_with(body, "size ") || starts_with(body, "size\t")) {  // the column header
    Fields words;
    const auto words_end = words.begin() + static_cast<std::ptrdiff_t>(split_fields(body, words));
    auto has = [&](std::string_view word) { return std::find(words.begin(), words_end, word) != words_end; };
    has_redop_ = has("redop");
    has_root_ = has("root");
    wrong_column_ = has("#wrong") ? "#wrong" : "error";
    if (table_) table_->wrong_column = wrong_column_;
    return true;
  }
  if (starts_with(body, "Out of bounds values")) {
    const size_t colon = body.find(':');
    if (colon != std::string_view::npos) {
      std::string_view v = trim(body.substr(colon + 1));
      ensure().out_of_bounds = to_int(v.substr(0, v.find(' ')));
    }
    return true;
  }
  if (starts_with(body, "Avg bus bandwidth")) {
    const size_t colon = body.find(':');
    if (colon != std::string_view::npos) ensure().avg_bus_bandwidth_GBps = number(trim(body.substr(colon + 1)));
    return true;
  }
  return false;
}

// One row object, reused: most rows of a huge log are counted, not kept (nor their values read).
void TestsTableParser::add_row(std::string_view s, uint64_t line_no) {
  const bool keep = !table_ || table_->rows.size() < kMaxTestsRows;
  const RowStatus status = read_tests_row(s, has_redop_, has_root_, keep ? &row_ : nullptr);
  if (status == RowStatus::row) {
    auto& table = ensure();
    if (keep && table.wrong_column.empty()) table.wrong_column = (row_.out_of_place.wrong_raw.find('e') != std::string::npos) ? "error" : "#wrong";
    if (keep) {
      table.rows.push_back(row_);
      table.rows.back().file = file_;
      table.rows.back().line_no = line_no;
    } else {
      ++table.rows_dropped;
    }
    if (!table.nranks) {
      if (!ranks_.empty()) table.nranks = static_cast<int>(ranks_.size());
      else if (gpus_per_process_) table.nranks = gpus_per_process_;
    }
  } else if (status == RowStatus::partial && ensure().partial_row_lines.size() < kMaxTestsRows) {
    ensure().partial_row_lines.push_back(line_no);
  }
}

void TestsTableParser::add_line(std::string_view line, uint64_t line_no) {
  std::string_view s = trim(line);
  if (s.empty()) return;
  // Only comment/summary lines, rows (a size first) and command lines matter.
  const char first = s.front();
  if (first != '#' && !(first >= '0' && first <= '9') && first != 'O' && first != 'A' && first != 's' &&
      (!test_.empty() || s.find("_perf") == std::string_view::npos))  // once the test is named, "_perf" changes nothing
    return;
  if (size_t p; test_.empty() && (p = s.find("_perf")) != std::string_view::npos) note_command_line(s, p);
  const bool comment = s.front() == '#';
  if (read_annotation(comment ? trim(s.substr(1)) : s) || comment) return;
  add_row(s, line_no);
}

// As one pass would have left it: the first command line names the test, the last column header
// names the #wrong/error column (every header line sets it, on the table too).
void TestsTableParser::merge(TestsTableParser&& next, uint64_t line_offset) {
  ranks_.insert(next.ranks_.begin(), next.ranks_.end());
  if (test_.empty()) test_ = next.test_;
  const bool header_in_next = !next.wrong_column_.empty();
  if (header_in_next) {
    wrong_column_ = next.wrong_column_;
    has_redop_ = next.has_redop_;
    has_root_ = next.has_root_;
  }
  if (!gpus_per_process_) gpus_per_process_ = next.gpus_per_process_;
  if (next.table_) {
    auto& theirs = *next.table_;
    for (auto& row : theirs.rows) row.line_no += line_offset;
    for (auto& line : theirs.partial_row_lines) line += line_offset;
    if (!table_) {
      // One pass would have made it with the column of the header before it, if there was one.
      if (!header_in_next && !wrong_column_.empty()) theirs.wrong_column = wrong_column_;
      table_ = std::move(next.table_);
    } else {
      auto& mine = *table_;
      for (auto& row : theirs.rows) {
        if (mine.rows.size() < kMaxTestsRows) mine.rows.push_back(std::move(row));
        else ++mine.rows_dropped;
      }
      mine.rows_dropped += theirs.rows_dropped;
      for (auto line : theirs.partial_row_lines)
        if (mine.partial_row_lines.size() < kMaxTestsRows) mine.partial_row_lines.push_back(line);
      if (theirs.avg_bus_bandwidth_GBps) mine.avg_bus_bandwidth_GBps = theirs.avg_bus_bandwidth_GBps;
      if (theirs.out_of_bounds) mine.out_of_bounds = theirs.out_of_bounds;
      if (!mine.nranks) mine.nranks = theirs.nranks;
      if (mine.wrong_column.empty()) mine.wrong_column = theirs.wrong_column;
    }
  }
  if (table_ && header_in_next) table_->wrong_column = wrong_column_;
  if (table_ && !test_.empty()) table_->test = test_;
}

}  // namespace fabricproof::nccl
