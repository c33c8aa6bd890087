#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/checks.hpp"
#include "core/subject.hpp"
#include "core/verdict.hpp"

namespace fabricproof {

// One judged fact. `id` names the check (a CheckId of the registry, core/checks.def; a report of
// another version may hold ids this one does not know), `subject` what was checked
// ("node1/mlx5_0:1", "cluster"), `rule` the condition with the profile key behind it, and `hint`
// what to check first when it did not pass.
struct Finding {
  Finding() = default;
  Finding(CheckId check, Subject subject_, Verdict verdict_, nlohmann::json measured_, nlohmann::json expected_, std::string rule_,
          std::string hint_ = "")
      : id(check_of(check).name), subject(std::move(subject_)), verdict(verdict_), measured(std::move(measured_)), expected(std::move(expected_)),
        rule(std::move(rule_)), hint(std::move(hint_)) {}

  std::string id;
  Subject subject;
  Verdict verdict = Verdict::pass;
  nlohmann::json measured;
  nlohmann::json expected;
  std::string rule;
  std::string hint;
  // Set by a rule that knows the cause (a verbs diagnosis: MTU before PFC before the cable, ...);
  // otherwise the registry's step for the check decides (triage_step). JSON: "triage", always written.
  std::optional<TriageStep> triage;
};

// The step of a finding: its own, else its check's in the registry, else "other".
TriageStep triage_step(const Finding& finding);

void to_json(nlohmann::json& j, const Finding& finding);
void from_json(const nlohmann::json& j, Finding& finding);

Verdict worst_verdict(const std::vector<Finding>& findings, Verdict start = Verdict::pass);

}  // namespace fabricproof
