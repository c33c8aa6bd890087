#pragma once
// Typed messages between ranks: any struct with nlohmann to_json/from_json (FABRICPROOF_JSON)
// crosses the wire as JSON text and is read back here, once, so that no phase parses JSON. Each
// one-off message has its named struct below.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/json_optional.hpp"
#include "mpi/exchange.hpp"

namespace fabricproof::mpi {

template <typename T>
struct GatheredOf {
  std::vector<std::optional<T>> parts;  // rank 0: one per rank (nullopt: not in time, or unreadable)
  std::vector<std::string> unreadable;  // rank 0: "rank R: why" for a part that did not read as T
  Gathered raw;
  // Throws Lost naming the silent ranks, if any.
  void require_all(const Session& s, const std::string& what) const { raw.require_all(s, what); }
};

// Every rank sends `mine` to rank 0 (gather_to_root, with its deadline), which reads each as T.
template <typename T>
GatheredOf<T> gather_message(Session& s, const T& mine, Clock::time_point deadline, const std::string& what,
                             Patience patience = Patience::until_deadline) {
  GatheredOf<T> out;
  out.raw = gather_to_root(s, json_text(nlohmann::json(mine)), deadline, what, patience);
  out.parts.resize(out.raw.parts.size());
  for (size_t rank = 0; rank < out.raw.parts.size(); ++rank) {
    if (!out.raw.parts[rank]) continue;
    try {
      out.parts[rank] = nlohmann::json::parse(*out.raw.parts[rank]).template get<T>();
    } catch (const std::exception& e) {
      out.unreadable.push_back(fmt::format("rank {}: {}", rank, e.what()));
    }
  }
  return out;
}

// Rank 0's `value` on every rank (what other ranks pass is ignored). A value that does not read
// back is a bug on rank 0's side, not bad input: the exception says which message.
template <typename T>
T broadcast_message(Session& s, const T& value, Clock::time_point deadline, const std::string& what,
                    Patience patience = Patience::until_deadline) {
  const std::string text = broadcast_from_root(s, s.is_root() ? json_text(nlohmann::json(value)) : std::string(), deadline, what, patience);
  try {
    return nlohmann::json::parse(text).template get<T>();
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: rank 0's message does not read back: {}", what, e.what()));
  }
}

// The run plan rank 0 shares before the phases: its profile, whether it is valid, and whether the
// output could be prepared (a failure there ends the run on every rank).
struct RunPlanMessage {
  bool ok = false;
  nlohmann::json profile;  // the effective profile document (every rank loads it with its checks)
  std::optional<std::string> out_error;
};
FABRICPROOF_JSON(RunPlanMessage, ok, profile, out_error)

// One rank's NCCL_DEBUG log, shipped to rank 0 to be kept beside the report.
struct NcclLogMessage {
  std::string path;
  bool found = false;
  std::string error;
  std::string text;
};
FABRICPROOF_JSON(NcclLogMessage, path, found, error, text)

// --collective-mode locate: rank 0's next round, each world rank's group in it (-1: none), or done.
struct LocateRoundMessage {
  bool done = false;
  std::vector<int> colour;
};
FABRICPROOF_JSON(LocateRoundMessage, done, colour)

// What one rank's group measured in a locate round: only the group's first rank (the leader) speaks for it.
struct LocateGroupMessage {
  int colour = -1;
  bool leader = false;
  std::optional<double> busbw_GBps;
  std::string reason;
};
FABRICPROOF_JSON(LocateGroupMessage, colour, leader, busbw_GBps, reason)

}  // namespace fabricproof::mpi
