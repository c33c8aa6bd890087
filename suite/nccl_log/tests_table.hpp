#pragma once
// The result table nccl-tests prints (all_reduce_perf and friends): rows of size, count, type,
// [redop], [root], then time, algbw, busbw and #wrong (or the old "error") for out-of-place and
// in-place; "# Out of bounds values" and "# Avg bus bandwidth". Old and new layouts, '#' or not.
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "nccl_log/model.hpp"

namespace fabricproof::nccl {

class TestsTableParser {
 public:
  void begin_file(std::string name) { file_ = std::move(name); }
  void add_line(std::string_view line, uint64_t line_no);
  // Null until a row or a summary line was seen.
  const std::optional<TestsTable>& table() const { return table_; }
  // Ranks listed under "# Using devices" ("#  Rank  3 Group  0 Pid ... on host device 3").
  const std::set<int>& ranks() const { return ranks_; }
  // Folds the parser of the next part of the same input (line numbers offset by `line_offset`).
  void merge(TestsTableParser&& next, uint64_t line_offset);

 private:
  TestsTable& ensure();
  void note_command_line(std::string_view line, size_t perf);
  bool read_annotation(std::string_view body);
  void add_row(std::string_view line, uint64_t line_no);
  std::string file_;
  std::optional<TestsTable> table_;
  std::set<int> ranks_;
  std::optional<bool> has_redop_;  // from the header line, when one was seen
  std::optional<bool> has_root_;
  std::string wrong_column_;
  std::string test_;
  std::optional<int> gpus_per_process_;
  TestsRow row_;  // reused for every row read
};

enum class RowStatus { not_a_row, partial, row };
// Reads one data row into `row` (every field but file and line_no); partial: it starts like a row
// but is cut short (then `row` holds part of it). A null `row`: only the status (the same).
RowStatus read_tests_row(std::string_view line, std::optional<bool> has_redop, std::optional<bool> has_root, TestsRow* row);
// Parses one data row; nullopt when the line is not a (complete) row. Sets *partial when the line
// starts like a row but is cut short.
std::optional<TestsRow> parse_tests_row(std::string_view line, std::optional<bool> has_redop, std::optional<bool> has_root, bool* partial);

}  // namespace fabricproof::nccl
