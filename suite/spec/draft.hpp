#pragma once
// `fabricproof spec draft --from report.json`: a spec written from a known-good run (the factory's
// birth certificate), with every fact it found, for the integrator to edit. Facts that differ
// between nodes are left out and named in `notes`, since a spec declares what every node has.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/profile.hpp"
#include "report/report.hpp"

namespace fabricproof {

struct SpecDraft {
  nlohmann::json spec;             // a fabricproof.spec/1 document
  std::vector<std::string> notes;  // what was left out and why
};

SpecDraft draft_spec(const Report& report, const Profile& profile, const std::string& name);

}  // namespace fabricproof
