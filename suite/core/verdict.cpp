#include "core/verdict.hpp"

#include <algorithm>
#include <array>

namespace fabricproof {
namespace {
constexpr std::array<std::string_view, 6> kNames = {"pass", "skip", "warn", "not_proven", "fail", "error"};
}

std::string_view to_string(Verdict verdict) { return kNames.at(static_cast<size_t>(verdict)); }

std::string verdict_label(Verdict verdict) {
  std::string out(to_string(verdict));
  for (auto& c : out) c = c == '_' ? ' ' : static_cast<char>(c - 'a' + 'A');  // lowercase ASCII and '_' ("NOT PROVEN")
  return out;
}

std::optional<Verdict> parse_verdict(std::string_view text) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == text) return static_cast<Verdict>(i);
  }
  return std::nullopt;
}

Verdict worst(Verdict a, Verdict b) { return std::max(a, b); }

int exit_code_for(Verdict verdict) {
  switch (verdict) {
    case Verdict::error:
      return 2;
    case Verdict::fail:
      return 1;
    case Verdict::not_proven:
      return 3;
    default:
      return 0;
  }
}

void to_json(nlohmann::json& j, Verdict verdict) { j = std::string(to_string(verdict)); }

void from_json(const nlohmann::json& j, Verdict& verdict) {
  auto parsed = parse_verdict(j.get<std::string>());
  if (!parsed) throw nlohmann::json::other_error::create(501, "unknown verdict " + j.dump(), &j);
  verdict = *parsed;
}

}  // namespace fabricproof
