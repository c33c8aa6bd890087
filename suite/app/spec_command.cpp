#include "app/spec_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "app/report_command.hpp"
#include "report/load.hpp"
#include "core/profile.hpp"
#include "report/report.hpp"
#include "spec/draft.hpp"
#include "spec/spec.hpp"
#include "spec/spec_rules.hpp"

namespace fabricproof::app {
namespace {

int draft_command(const SpecOptionsCli& o) {
  std::optional<Report> report;
  const auto unreadable = failure_of([&] { report = load_report(o.from); });
  const auto profile = load_profile(o.profile);
  if (unreadable || !profile.profile) {
    std::cerr << "fabricproof spec draft: " << (unreadable ? *unreadable : profile.errors.front()) << "\n";
    return 2;
  }
  if (!report->finished) {
    std::cerr << "fabricproof spec draft: " << o.from << ": the run has not finished; a spec is drafted from a finished, known-good run\n";
    return 2;
  }
  std::string name = o.name;
  if (name.empty())
    for (const auto& n : report->nodes) name += (name.empty() ? "" : ",") + n.host;
  const auto draft = draft_spec(*report, *profile.profile, name);
  const std::string text = json_text(draft.spec, 2) + "\n";
  // The draft must be a spec this version reads: a draft that does not load is a bug here, not the user's.
  if (const auto loaded = load_spec_text(text, "the draft"); !loaded.spec) {
    std::cerr << "fabricproof spec draft: the draft does not validate: " << fmt::format("{}", fmt::join(loaded.errors, "; ")) << "\n";
    return 2;
  }
  for (const auto& note : draft.notes) std::cerr << "fabricproof spec draft: note: " << note << "\n";
  if (o.out.empty()) {
    std::cout << text;
    return 0;
  }
  if (const auto failed = failure_of([&] { write_file_atomic(o.out, text); })) {
    std::cerr << "fabricproof spec draft: cannot write " << o.out << ": " << *failed << "\n";
    return 2;
  }
  std::cout << o.out << "\n";
  return 0;
}

int check_command(const SpecOptionsCli& o) {
  const auto loaded = load_spec_file(o.file);
  for (const auto& e : loaded.errors) std::cerr << e << "\n";
  if (!loaded.spec) return 2;
  const auto& s = *loaded.spec;
  std::cout << fmt::format("{}: {} ({} node(s)); phases that must run: {}; NCCL {}, GPUDirect {}\n", o.file, s.name, s.expected_nodes(),
                           fmt::join(spec_required_phases(s), ","), spec_needs_nccl(s) ? "required" : "not required",
                           spec_needs_gpudirect(s) ? "required" : "not required");
  return 0;
}

}  // namespace

int spec_command(const SpecOptionsCli& options) { return options.action == "draft" ? draft_command(options) : check_command(options); }

}  // namespace fabricproof::app
