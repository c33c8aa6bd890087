#include "core/finding.hpp"

namespace fabricproof {

void to_json(nlohmann::json& j, const Finding& f) {
  j = {{"id", f.id},           {"subject", f.subject}, {"verdict", f.verdict},
       {"measured", f.measured}, {"expected", f.expected}, {"rule", f.rule},
       {"hint", f.hint}};
}

void from_json(const nlohmann::json& j, Finding& f) {
  f.id = j.at("id").get<std::string>();
  f.subject = j.at("subject").get<std::string>();
  f.verdict = j.at("verdict").get<Verdict>();
  f.measured = j.value("measured", nlohmann::json());
  f.expected = j.value("expected", nlohmann::json());
  f.rule = j.value("rule", "");
  f.hint = j.value("hint", "");
}

Verdict worst_verdict(const std::vector<Finding>& findings, Verdict start) {
  for (const auto& f : findings) start = worst(start, f.verdict);
  return start;
}

}  // namespace fabricproof
