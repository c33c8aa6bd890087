#pragma once
// Whether a measurement happened: a figure, the error that stopped it, or the reason it was not
// made (a pair that was not scheduled, a test after a failed one). JSON: "ok", "error",
// "not_measured". A verdict is something else: it judges a figure (core/verdict.hpp).
#include <nlohmann/json.hpp>
#include <string>

namespace fabricproof {

enum class Status { ok, error, not_measured };
NLOHMANN_JSON_SERIALIZE_ENUM(Status, {{Status::error, "error"}, {Status::ok, "ok"}, {Status::not_measured, "not_measured"}})

inline std::string to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::error: return "error";
    case Status::not_measured: return "not_measured";
  }
  return "error";
}

}  // namespace fabricproof
