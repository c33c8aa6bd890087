#pragma once
// The profiles in suite/profiles/, embedded at build time so the binary needs no data files.
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace fabricproof {
const std::vector<std::pair<std::string_view, std::string_view>>& builtin_profiles();
std::optional<std::string_view> builtin_profile_text(std::string_view name);
}  // namespace fabricproof
