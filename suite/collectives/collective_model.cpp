#include "collectives/collective_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/units.hpp"

namespace fabricproof {

std::string_view to_string(CollOp op) { return collective_op(op).name; }

const std::vector<std::string>& collective_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& c : kCollectiveOps) v.emplace_back(c.name);
    return v;
  }();
  return names;
}

std::string_view to_string(DataType type) {
  switch (type) {
    case DataType::float32: return "float";
    case DataType::float64: return "double";
    case DataType::int32: return "int32";
  }
  return "?";
}

std::string_view to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
  }
  return "?";
}

std::optional<CollOp> coll_op_from(std::string_view name) {
  if (name == "reduce-scatter" || name == "reducescatter") name = "reduce_scatter";
  for (const auto& c : kCollectiveOps)
    if (c.name == name) return c.op;
  return std::nullopt;
}

std::optional<DataType> data_type_from(std::string_view name) {
  if (name == "float" || name == "float32" || name == "f32") return DataType::float32;
  if (name == "double" || name == "float64" || name == "f64") return DataType::float64;
  if (name == "int32" || name == "int") return DataType::int32;
  return std::nullopt;
}

std::optional<ReduceOp> reduce_op_from(std::string_view name) {
  if (name == "sum") return ReduceOp::sum;
  if (name == "max") return ReduceOp::max;
  if (name == "min") return ReduceOp::min;
  return std::nullopt;
}

int size_of(DataType type) { return type == DataType::float64 ? 8 : 4; }

bool reduces(CollOp op) { return collective_op(op).reduces; }

double bus_factor(CollOp op, int ranks) { return collective_op(op).bus_factor(std::max(ranks, 1)); }

namespace {
bool chunked(CollOp op) { return collective_op(op).chunked; }
}  // namespace

uint64_t chunk_elements(CollOp op, uint64_t bytes, DataType type, int ranks) {
  const uint64_t elements = bytes / static_cast<uint64_t>(size_of(type));
  if (!chunked(op)) return elements;
  // nccl-tests' per-rank count, rounded down to 16 bytes (all_gather.cu: (count/nranks) & ~(16/eltSize-1)),
  // so that the same -b/-e sizes move the same bytes.
  const uint64_t per_16_bytes = 16 / static_cast<uint64_t>(size_of(type));
  return elements / static_cast<uint64_t>(std::max(ranks, 1)) / per_16_bytes * per_16_bytes;
}

uint64_t call_elements(CollOp op, uint64_t bytes, DataType type, int ranks) {
  const uint64_t chunk = chunk_elements(op, bytes, type, ranks);
  return chunked(op) ? chunk * static_cast<uint64_t>(std::max(ranks, 1)) : chunk;
}

std::vector<uint64_t> sweep_sizes(uint64_t min_bytes, uint64_t max_bytes, double factor) {
  std::vector<uint64_t> sizes;
  if (min_bytes == 0 || min_bytes > max_bytes) return sizes;
  if (!(factor > 1)) return {min_bytes};
  for (double size = static_cast<double>(min_bytes); size <= static_cast<double>(max_bytes) * (1 + 1e-12); size *= factor) {
    const auto bytes = static_cast<uint64_t>(std::llround(size));
    if (sizes.empty() || bytes > sizes.back()) sizes.push_back(std::min(bytes, max_bytes));
  }
  return sizes;
}

SizeClip clip_max_bytes(uint64_t min_bytes, uint64_t max_bytes, double factor, uint64_t usable_bytes, int buffers,
                        uint64_t max_call_bytes, const std::string& usable_why) {
  const uint64_t per_buffer = usable_bytes / static_cast<uint64_t>(std::max(buffers, 1));
  const uint64_t limit = std::min(per_buffer, max_call_bytes);
  SizeClip clip{max_bytes, ""};
  if (max_bytes <= limit) return clip;
  const auto sizes = sweep_sizes(min_bytes, max_bytes, factor);
  auto fits = std::find_if(sizes.rbegin(), sizes.rend(), [&](uint64_t s) { return s <= limit; });
  clip.max_bytes = fits == sizes.rend() ? 0 : *fits;
  clip.reason = per_buffer <= max_call_bytes
                    ? fmt::format("{} clipped to {}: each rank can use {} ({}) for {} buffers of the top size", format_size(max_bytes),
                                  format_size(clip.max_bytes), format_size(usable_bytes), usable_why, buffers)
                    : fmt::format("{} clipped to {}: one call takes at most {} bytes (counts of at most 2^31-1 elements per rank)",
                                  format_size(max_bytes), format_size(clip.max_bytes), max_call_bytes);
  return clip;
}

uint64_t max_call_bytes(CollOp op, DataType type, int ranks, uint64_t max_count) {
  if (!chunked(op)) return UINT64_MAX;  // split_count
  const uint64_t per_rank = max_count / (16 / static_cast<uint64_t>(size_of(type))) * (16 / static_cast<uint64_t>(size_of(type)));
  const uint64_t bytes_per_rank = per_rank * static_cast<uint64_t>(size_of(type));
  const uint64_t n = static_cast<uint64_t>(std::max(ranks, 1));
  return bytes_per_rank > UINT64_MAX / n ? UINT64_MAX : bytes_per_rank * n;
}

std::vector<std::pair<uint64_t, uint64_t>> split_count(uint64_t count, uint64_t max_count) {
  std::vector<std::pair<uint64_t, uint64_t>> pieces;
  if (max_count == 0) return pieces;
  for (uint64_t offset = 0; offset < count; offset += max_count) pieces.emplace_back(offset, std::min(max_count, count - offset));
  return pieces;
}

CollTiming coll_timing(CollOp op, uint64_t bytes, int ranks, double seconds_per_call, uint64_t wrong) {
  CollTiming t;
  t.time_us = seconds_per_call * 1e6;
  t.algbw_GBps = seconds_per_call > 0 ? static_cast<double>(bytes) / seconds_per_call / 1e9 : 0;
  t.busbw_GBps = t.algbw_GBps * bus_factor(op, ranks);
  t.wrong = wrong;
  return t;
}

double peak_busbw(const std::vector<CollRow>& rows) {
  double peak = 0;
  for (const auto& r : rows) {
    peak = std::max(peak, r.out_of_place.busbw_GBps);
    if (r.in_place) peak = std::max(peak, r.in_place->busbw_GBps);
  }
  return peak;
}

std::string coll_header_line() {
  return fmt::format("{:>12} {:>12} {:>6} {:>5}  {:>10} {:>7} {:>7} {:>6}  {:>10} {:>7} {:>7} {:>6}", "size", "count", "type",
                     "redop", "time(us)", "algbw", "busbw", "#wrong", "in-place", "algbw", "busbw", "#wrong");
}

std::string coll_row_line(const CollRow& row) {
  auto form = [](const CollTiming& t) { return fmt::format("{:>10.1f} {:>7.2f} {:>7.2f} {:>6}", t.time_us, t.algbw_GBps, t.busbw_GBps, t.wrong); };
  return fmt::format("{:>12} {:>12} {:>6} {:>5}  {}  {}", row.bytes, row.count, row.dtype, row.redop, form(row.out_of_place),
                     row.in_place ? form(*row.in_place) : fmt::format("{:>10} {:>7} {:>7} {:>6}", "-", "-", "-", "-"));
}

std::vector<int> scaling_node_counts(int nodes) {
  std::vector<int> counts;
  for (int n = 1; n < nodes; n *= 2) counts.push_back(n);
  if (nodes > 0) counts.push_back(nodes);
  return counts;
}

}  // namespace fabricproof
