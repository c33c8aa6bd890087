#include "core/checks.hpp"

#include <fmt/format.h>

#include <map>

namespace fabricproof {

const std::vector<Check>& all_checks() {
  static const std::vector<Check> table = {
#define CHECK(id, domain, step, severity, compares, keys, hint) \
  {CheckId::id, #id, Domain::domain, TriageStep::step, Verdict::severity, compares, keys, hint},
#include "core/checks.def"
#undef CHECK
  };
  return table;
}

const Check& check_of(CheckId id) { return all_checks().at(static_cast<size_t>(id)); }

const Check* find_check(std::string_view name) {
  static const std::map<std::string_view, const Check*> by_name = [] {
    std::map<std::string_view, const Check*> m;
    for (const auto& c : all_checks()) m[c.name] = &c;
    return m;
  }();
  const auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

std::string_view to_string(Domain domain) {
  switch (domain) {
    case Domain::inventory: return "inventory";
    case Domain::verbs: return "verbs";
    case Domain::gpudirect: return "gpudirect";
    case Domain::collectives: return "collectives";
    case Domain::nccl_log: return "nccl_log";
    case Domain::uplink: return "uplink";
    case Domain::soak: return "soak";
    case Domain::spec: return "spec";
    case Domain::compare: return "compare";
    case Domain::run: return "run";
  }
  return "?";
}

std::string_view to_string(TriageStep step) {
  static const std::map<TriageStep, std::string> names = [] {
    std::map<TriageStep, std::string> m;
    for (auto s : {TriageStep::mtu, TriageStep::pfc, TriageStep::link, TriageStep::pcie, TriageStep::numa, TriageStep::gpudirect,
                   TriageStep::nccl, TriageStep::software, TriageStep::other})
      m[s] = nlohmann::json(s).get<std::string>();
    return m;
  }();
  return names.at(step);
}

nlohmann::json checks_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : all_checks())
    list.push_back({{"id", c.name}, {"domain", to_string(c.domain)}, {"triage", c.step}, {"severity", c.severity},
                    {"compares", c.compares}, {"keys", c.keys}, {"hint", c.hint}});
  return {{"schema", "fabricproof.checks/1"}, {"checks", list}};
}

std::string checks_text() {
  std::string out;
  for (const auto& c : all_checks())
    out += fmt::format("{:<30} {:<12} {:<10} {:<11} {}\n", c.name, to_string(c.domain), to_string(c.step), to_string(c.severity), c.compares);
  return out;
}

namespace {

// What each domain serves in the mission, for the README's summary table.
std::string_view domain_purpose(Domain d) {
  switch (d) {
    case Domain::inventory: return "every node's ports, links, MTU, GIDs, PCIe, NUMA, GPUs, drivers, RoCE lossless settings, control path; one value on every node";
    case Domain::verbs: return "the pairwise RDMA bandwidth and latency matrix, rail by rail";
    case Domain::gpudirect: return "the same transfers on GPU memory, against host memory";
    case Domain::collectives: return "allreduce sweeps at 1, 2 and N nodes (busbw, scaling, data)";
    case Domain::nccl_log: return "NCCL's transports per rank and channel (NET/Socket fallback)";
    case Domain::uplink: return "the storage uplink against the dataset read rate, one flow and many";
    case Domain::soak: return "hours of load with every port counter watched (`--soak`): link downs, error counters, BER, stability";
    case Domain::spec: return "what was ordered (`--spec`)";
    case Domain::compare: return "a report against a baseline (`compare`)";
    case Domain::run: return "the run itself: input, ranks, launch";
  }
  return "";
}

}  // namespace

std::string checks_markdown_summary() {
  std::map<Domain, std::vector<std::string_view>> by_domain;
  for (const auto& c : all_checks()) by_domain[c.domain].push_back(c.name);
  std::string out = "| Domain | What it proves | Checks |\n|---|---|---|\n";
  for (const auto& [domain, names] : by_domain)
    out += fmt::format("| {} | {} | {} |\n", to_string(domain), domain_purpose(domain), fmt::join(names, ", "));
  return out;
}

std::string checks_markdown_table() {
  std::string out = "| Check | Domain | Triage step | Severity | Compares | Reads | Hint |\n|---|---|---|---|---|---|---|\n";
  for (const auto& c : all_checks())
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", c.name, to_string(c.domain), to_string(c.step), to_string(c.severity),
                       c.compares, c.keys.empty() ? std::string_view("-") : c.keys, c.hint);
  return out;
}

}  // namespace fabricproof
