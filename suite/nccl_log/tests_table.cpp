#include "nccl_log/tests_table.hpp"

#include <charconv>
#include <vector>

#include "nccl_log/scan.hpp"

namespace fabricproof::nccl {
namespace {

// Whitespace-separated tokens into a reused buffer (a row has at most 13; more is not a row).
const std::vector<std::string_view>& tokens(std::string_view s) {
  thread_local std::vector<std::string_view> out;
  out.clear();
  const char* p = s.data();
  const char* const end = p + s.size();
  while (p < end && out.size() < 32) {
    while (p < end && static_cast<unsigned char>(*p) <= ' ' && (*p == ' ' || *p == '\t')) ++p;
    const char* start = p;
    while (p < end && *p != ' ' && *p != '\t') ++p;
    if (p > start) out.emplace_back(start, static_cast<size_t>(p - start));
  }
  return out;
}

// "123.45" exactly as from_chars reads it, without its cost: a mantissa below 2^53 divided by
// an exact power of ten (10^0..10^22) is one correctly rounded IEEE division. Anything else
// (signs, exponents, long mantissas, "N/A") goes to from_chars.
std::optional<double> fast_decimal(std::string_view t) {
  static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  uint64_t mantissa = 0;
  int digits = 0, decimals = -1;
  for (char c : t) {
    if (c >= '0' && c <= '9') {
      mantissa = mantissa * 10 + static_cast<uint64_t>(c - '0');
      if (++digits > 15) return std::nullopt;
      if (decimals >= 0) ++decimals;
    } else if (c == '.' && decimals < 0) {
      decimals = 0;
    } else {
      return std::nullopt;
    }
  }
  if (digits == 0) return std::nullopt;
  return static_cast<double>(mantissa) / kPow10[decimals < 0 ? 0 : decimals];
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
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

bool is_word(std::string_view t) {
  if (t.empty()) return false;
  for (char c : t)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return !(t.front() >= '0' && t.front() <= '9');
}

std::optional<TestsHalf> half(const std::vector<std::string_view>& t, size_t at) {
  auto time = number(t[at]), alg = number(t[at + 1]), bus = number(t[at + 2]);
  if (!time || !alg || !bus) return std::nullopt;
  TestsHalf h;
  h.time_us = *time;
  h.algbw_GBps = *alg;
  h.busbw_GBps = *bus;
  h.wrong_raw = std::string(t[at + 3]);
  if (t[at + 3] != "N/A") {
    h.wrong = number(t[at + 3]);
    if (!h.wrong) return std::nullopt;
  }
  return h;
}

}  // namespace

std::optional<TestsRow> parse_tests_row(std::string_view line, std::optional<bool> has_redop, std::optional<bool> has_root, bool* partial) {
  if (partial) *partial = false;
  const auto& t = tokens(line);
  if (t.size() < 3) return std::nullopt;
  auto size = unsigned_number(t[0]);
  auto count = unsigned_number(t[1]);
  if (!size || !count || !is_word(t[2])) return std::nullopt;
  // The columns between type and time: 0 (oldest), 1 (redop or root) or 2 (redop and root).
  size_t extra = 0;
  if (has_redop || has_root) {
    extra = (has_redop.value_or(false) ? 1 : 0) + (has_root.value_or(false) ? 1 : 0);
  } else if (t.size() >= 11) {
    extra = t.size() - 11;
  }
  const size_t needed = 3 + extra + 8;
  if (t.size() < needed || extra > 2) {
    if (partial) *partial = true;
    return std::nullopt;
  }
  TestsRow row;
  row.size = *size;
  row.count = *count;
  row.type = std::string(t[2]);
  size_t at = 3;
  if (extra == 2 || (extra == 1 && (has_redop.value_or(false) || (!has_root && !number(t[3]))))) row.redop = std::string(t[at++]);
  if (at < 3 + extra) row.root = to_int(t[at++]);  // an integer column; anything else is no root
  auto oop = half(t, at), ip = half(t, at + 4);
  if (!oop || !ip) {
    if (partial) *partial = true;
    return std::nullopt;
  }
  row.out_of_place = *oop;
  row.in_place = *ip;
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

void TestsTableParser::add_line(std::string_view line, uint64_t line_no) {
  std::string_view s = trim(line);
  if (s.empty()) return;
  // Only comment/summary lines, rows (a size first) and command lines matter.
  const char first = s.front();
  if (first != '#' && !(first >= '0' && first <= '9') && first != 'O' && first != 'A' && first != 's' &&
      s.find("_perf") == std::string_view::npos)
    return;
  // The command line names the test: "./build/all_reduce_perf -b 8 -e 8G -g 8".
  if (auto p = s.find("_perf"); p != std::string_view::npos && test_.empty()) {
    size_t start = s.rfind('/', p);
    start = start == std::string_view::npos ? s.rfind(' ', p) : start;
    start = start == std::string_view::npos ? 0 : start + 1;
    test_ = std::string(s.substr(start, p + 5 - start));
    if (auto g = s.find(" -g "); g != std::string_view::npos) {
      std::string_view rest = s.substr(g + 4);
      gpus_per_process_ = to_int(rest.substr(0, rest.find(' ')));
    }
    if (table_) table_->test = test_;
  }
  const bool comment = s.front() == '#';
  std::string_view body = comment ? trim(s.substr(1)) : s;
  if (starts_with(body, "Rank ")) {  // "#  Rank  3 Group  0 Pid ... on host device 3 [0x..] name"
    std::string_view rest = trim(body.substr(5));
    if (auto r = to_int(rest.substr(0, rest.find(' ')))) {
      ranks_.insert(*r);
      if (table_) table_->nranks = static_cast<int>(ranks_.size());
    }
    return;
  }
  if (starts_with(body, "size ") || starts_with(body, "size\t")) {  // the column header
    const auto& words = tokens(body);
    has_redop_ = std::find(words.begin(), words.end(), "redop") != words.end();
    has_root_ = std::find(words.begin(), words.end(), "root") != words.end();
    wrong_column_ = std::find(words.begin(), words.end(), "#wrong") != words.end() ? "#wrong" : "error";
    if (table_) table_->wrong_column = wrong_column_;
    return;
  }
  if (starts_with(body, "Out of bounds values")) {
    const size_t colon = body.find(':');
    if (colon != std::string_view::npos) {
      std::string_view v = trim(body.substr(colon + 1));
      ensure().out_of_bounds = to_int(v.substr(0, v.find(' ')));
    }
    return;
  }
  if (starts_with(body, "Avg bus bandwidth")) {
    const size_t colon = body.find(':');
    if (colon != std::string_view::npos) ensure().avg_bus_bandwidth_GBps = number(trim(body.substr(colon + 1)));
    return;
  }
  if (comment) return;
  bool partial = false;
  auto row = parse_tests_row(s, has_redop_, has_root_, &partial);
  if (row) {
    auto& table = ensure();
    if (table.wrong_column.empty()) table.wrong_column = (row->out_of_place.wrong_raw.find('e') != std::string::npos) ? "error" : "#wrong";
    if (table.rows.size() < kMaxTestsRows) {
      row->file = file_;  // only for rows kept: a path is a heap string, and most rows of a huge log are counted, not kept
      row->line_no = line_no;
      table.rows.push_back(std::move(*row));
    } else {
      ++table.rows_dropped;
    }
    if (!table.nranks) {
      if (!ranks_.empty()) table.nranks = static_cast<int>(ranks_.size());
      else if (gpus_per_process_) table.nranks = gpus_per_process_;
    }
  } else if (partial && ensure().partial_row_lines.size() < kMaxTestsRows) {
    ensure().partial_row_lines.push_back(line_no);
  }
}

void TestsTableParser::merge(TestsTableParser&& next, uint64_t line_offset) {
  ranks_.insert(next.ranks_.begin(), next.ranks_.end());
  if (test_.empty()) test_ = next.test_;
  if (wrong_column_.empty()) wrong_column_ = next.wrong_column_;
  if (!has_redop_) has_redop_ = next.has_redop_;
  if (!has_root_) has_root_ = next.has_root_;
  if (!gpus_per_process_) gpus_per_process_ = next.gpus_per_process_;
  if (!next.table_) return;
  auto& mine = ensure();
  auto& theirs = *next.table_;
  for (auto& row : theirs.rows) {
    row.line_no += line_offset;
    if (mine.rows.size() < kMaxTestsRows) mine.rows.push_back(std::move(row));
    else ++mine.rows_dropped;
  }
  mine.rows_dropped += theirs.rows_dropped;
  for (auto line : theirs.partial_row_lines)
    if (mine.partial_row_lines.size() < kMaxTestsRows) mine.partial_row_lines.push_back(line + line_offset);
  if (theirs.avg_bus_bandwidth_GBps) mine.avg_bus_bandwidth_GBps = theirs.avg_bus_bandwidth_GBps;
  if (theirs.out_of_bounds) mine.out_of_bounds = theirs.out_of_bounds;
  if (!mine.nranks) mine.nranks = theirs.nranks;
  if (mine.test.empty()) mine.test = theirs.test;
  if (mine.wrong_column.empty()) mine.wrong_column = theirs.wrong_column;
}

}  // namespace fabricproof::nccl
