#include "core/finding.hpp"

#include <algorithm>
#include <utility>

namespace fabricproof {
namespace {

// Substrings of the check ids that belong to a step, in the seed's order: the first match wins.
const std::vector<std::pair<TriageStep, std::vector<const char*>>>& step_ids() {
  static const std::vector<std::pair<TriageStep, std::vector<const char*>>> table = {
      {TriageStep::mtu, {"mtu"}},
      {TriageStep::pfc, {"qos", "pfc", "ecn", "roce_trust", "dscp", "roce_ets", "nccl_ib_tc"}},
      {TriageStep::link, {"port_state", "port_rate", "link", "gid", "sm_", "subnet_manager", "pair_error"}},
      {TriageStep::pcie, {"pcie"}},
      {TriageStep::numa, {"numa", "topology", "affinity"}},
      {TriageStep::gpudirect, {"gpudirect", "peermem", "dmabuf"}},
      {TriageStep::nccl, {"nccl", "collective"}},
      {TriageStep::software, {"consistency", "software", "driver", "firmware"}},
  };
  return table;
}

std::optional<TriageStep> step_of_id(const std::string& id) {
  for (const auto& [step, ids] : step_ids())
    for (const char* part : ids)
      if (id.find(part) != std::string::npos) return step;
  return std::nullopt;
}

// Reports written before findings carried their step: the id, else the first step the hint
// names (their verbs diagnoses listed causes in order, "(1) MTU ... (2) PFC").
TriageStep step_of_older_finding(const Finding& f) {
  if (const auto step = step_of_id(f.id)) return *step;
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
  return step_of_id(f.id).value_or(TriageStep::other);
}

void to_json(nlohmann::json& j, const Finding& f) {
  j = {{"id", f.id},           {"subject", f.subject}, {"verdict", f.verdict},
       {"measured", f.measured}, {"expected", f.expected}, {"rule", f.rule},
       {"hint", f.hint},       {"triage", triage_step(f)}};
}

void from_json(const nlohmann::json& j, Finding& f) {
  f.id = j.at("id").get<std::string>();
  f.subject = j.at("subject").get<std::string>();
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
