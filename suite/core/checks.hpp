#pragma once
// The check registry (core/checks.def): every check the suite can emit, with its domain, the
// seed's triage step, its default severity, what it compares, the profile and spec keys it reads,
// and a hint. A finding names its check by CheckId, so a check missing from the registry does not
// compile; `fabricproof checks` lists the registry, and the README's tables are made from it.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
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

// The subject a check belongs to: one folder of suite/ each, plus the spec, the comparison of two
// reports and the run itself.
enum class Domain { inventory, verbs, gpudirect, collectives, nccl_log, uplink, soak, spec, compare, run };

enum class CheckId {
#define CHECK(id, ...) id,
#include "core/checks.def"
#undef CHECK
};

struct Check {
  CheckId id;
  std::string_view name;      // the finding's "id" in report.json: snake_case, stable across releases
  Domain domain;
  TriageStep step;
  Verdict severity;           // when it does not pass, under the default profile
  std::string_view compares;  // what is judged against what
  std::string_view keys;      // the profile keys ("verbs.bw_pass_ratio") or spec keys ("spec: rails") it reads
  std::string_view hint;      // what to check first when it does not pass
};

const std::vector<Check>& all_checks();
const Check& check_of(CheckId id);
// The check of a finding id read from a report; nullptr for an id this version does not know.
const Check* find_check(std::string_view name);

std::string_view to_string(Domain domain);
std::string_view to_string(TriageStep step);

// `fabricproof checks`: the registry as JSON, a text list, and the Markdown tables of the README
// (one row per domain) and of docs/checks.md (one row per check).
nlohmann::json checks_json();
std::string checks_text();
std::string checks_markdown_summary();
std::string checks_markdown_table();

}  // namespace fabricproof
