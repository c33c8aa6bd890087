#include "core/finding.hpp"

#include <algorithm>
#include <utility>

namespace fabricproof {
namespace {

// Reports written before findings carried their step: the id, else the first step the hint
// names (their verbs diagnoses listed causes in order, "(1) MTU ... (2) PFC").
TriageStep step_of_older_finding(const Finding& f) {
  // A check with a fixed step; the verbs checks have none (their diagnosis names it, in the hint).
  if (const auto* check = find_check(f.id); check && check->step != TriageStep::other) return check->step;
  static const std::vector<std::pair<TriageStep, std::vector<const char*>>> words = {
      {TriageStep::mtu, {"MTU"}},
      {TriageStep::pfc, {"PFC", "ECN"}},
      {TriageStep::link, {"able", "transceiver", "subnet manager", "port state"}},
      {TriageStep::pcie, {"PCIe"}},
      {TriageStep::numa, {"NUMA"}},
      {TriageStep::gpudirect, {"nvidia-peermem", "nvidia_peermem", "DMA-BUF"}},
      {TriageStep::nccl, {"NCCL"}},
  };
  TriageStep best = TriageStep::other;
  size_t at = std::string::npos;
  for (const auto& [step, list] : words)
    for (const char* w : list)
      if (const auto p = f.hint.find(w); p != std::string::npos && p < at) {
        at = p;
        best = step;
      }
  return best;
}

}  // namespace

TriageStep triage_step(const Finding& f) {
  if (f.triage) return *f.triage;
  const auto* check = find_check(f.id);
  return check ? check->step : TriageStep::other;
}

void to_json(nlohmann::json& j, const Finding& f) {
  j = {{"id", f.id},           {"subject", f.subject.text()}, {"verdict", f.verdict},
       {"measured", f.measured}, {"expected", f.expected},       {"rule", f.rule},
       {"hint", f.hint},       {"triage", triage_step(f)}};
  if (auto target = target_json(f.subject); !target.is_null()) j["target"] = std::move(target);
}

void from_json(const nlohmann::json& j, Finding& f) {
  f.id = j.at("id").get<std::string>();
  const Check* check = find_check(f.id);
  const bool pair_check = check && (check->domain == Domain::verbs || check->domain == Domain::gpudirect || check->id == CheckId::spec_verbs_pair);
  f.subject = subject_from_json(j.at("subject"), j.value("target", nlohmann::json()), pair_check);
  f.verdict = j.at("verdict").get<Verdict>();
  f.measured = j.value("measured", nlohmann::json());
  f.expected = j.value("expected", nlohmann::json());
  f.rule = j.value("rule", "");
  f.hint = j.value("hint", "");
  f.triage = j.contains("triage") ? j.at("triage").get<TriageStep>() : step_of_older_finding(f);
}

Verdict worst_verdict(const std::vector<Finding>& findings, Verdict start) {
  for (const auto& f : findings) start = worst(start, f.verdict);
  return start;
}

}  // namespace fabricproof
