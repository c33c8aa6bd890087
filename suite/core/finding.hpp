#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/verdict.hpp"

namespace fabricproof {

// One judged fact. `id` names the check (snake_case, stable across releases), `subject` what was
// checked ("node1/mlx5_0:1", "cluster"), `rule` the condition with the profile key behind it, and
// `hint` what to check first when it did not pass.
struct Finding {
  std::string id;
  std::string subject;
  Verdict verdict = Verdict::pass;
  nlohmann::json measured;
  nlohmann::json expected;
  std::string rule;
  std::string hint;
};

void to_json(nlohmann::json& j, const Finding& finding);
void from_json(const nlohmann::json& j, Finding& finding);

Verdict worst_verdict(const std::vector<Finding>& findings, Verdict start = Verdict::pass);

}  // namespace fabricproof
