#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace fabricproof {

// Ordered by severity so that std::max gives the worst verdict. `not_proven`: something that was
// selected (or declared in the cluster spec) was not measured; it outranks a warning, since a run
// that did not look cannot pass, and is outranked by a failure, which says more.
enum class Verdict { pass = 0, skip = 1, warn = 2, not_proven = 3, fail = 4, error = 5 };

std::string_view to_string(Verdict verdict);
// "FAIL", "PASS", ...: how the human formats (console, Markdown, HTML) show a verdict.
std::string verdict_label(Verdict verdict);
std::optional<Verdict> parse_verdict(std::string_view text);
Verdict worst(Verdict a, Verdict b);

// Process exit code for a run: 0 nothing failed, 1 a check failed, 2 the suite could not run
// properly (bad input, a phase errored), 3 not proven (nothing failed, but a selected phase or a
// declared measurement did not run). An error outranks a failure: the run is not trustworthy.
int exit_code_for(Verdict verdict);

void to_json(nlohmann::json& j, Verdict verdict);
void from_json(const nlohmann::json& j, Verdict& verdict);

}  // namespace fabricproof
