#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/verdict.hpp"

namespace fabricproof {

// The seed's order of what to check first for a slow or broken fabric: the step a finding belongs to.
enum class TriageStep { mtu, pfc, link, pcie, numa, gpudirect, nccl, software, other };
NLOHMANN_JSON_SERIALIZE_ENUM(TriageStep, {{TriageStep::other, "other"},
                                          {TriageStep::mtu, "mtu"},
                                          {TriageStep::pfc, "pfc"},
                                          {TriageStep::link, "link"},
                                          {TriageStep::pcie, "pcie"},
                                          {TriageStep::numa, "numa"},
                                          {TriageStep::gpudirect, "gpudirect"},
                                          {TriageStep::nccl, "nccl"},
                                          {TriageStep::software, "software"}})

// One judged fact. `id` names the check (snake_case, stable across releases), `subject` what was
// checked ("node1/mlx5_0:1", "cluster"), `rule` the condition with the profile key behind it, and
// `hint` what to check first when it did not pass.
struct Finding {
  Finding() = default;
  Finding(std::string id_, std::string subject_, Verdict verdict_, nlohmann::json measured_, nlohmann::json expected_, std::string rule_,
          std::string hint_ = "")
      : id(std::move(id_)), subject(std::move(subject_)), verdict(verdict_), measured(std::move(measured_)), expected(std::move(expected_)),
        rule(std::move(rule_)), hint(std::move(hint_)) {}

  std::string id;
  std::string subject;
  Verdict verdict = Verdict::pass;
  nlohmann::json measured;
  nlohmann::json expected;
  std::string rule;
  std::string hint;
  // Set by a rule that knows the cause (a verbs diagnosis: MTU before PFC before the cable, ...);
  // otherwise the check's id decides (triage_step). JSON: "triage", always written.
  std::optional<TriageStep> triage;
};

// The step of a finding: its own, else the one its check id belongs to, else "other".
TriageStep triage_step(const Finding& finding);

void to_json(nlohmann::json& j, const Finding& finding);
void from_json(const nlohmann::json& j, Finding& finding);

Verdict worst_verdict(const std::vector<Finding>& findings, Verdict start = Verdict::pass);

}  // namespace fabricproof
