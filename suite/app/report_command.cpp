#include "app/report_command.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "launch/hostfile.hpp"
#include "core/profile.hpp"
#include "core/text_file.hpp"
#include "report/compare.hpp"
#include "report/finalize.hpp"
#include "report/formats.hpp"
#include "report/html.hpp"
#include "report/junit.hpp"
#include "report/load.hpp"
#include "report/markdown.hpp"
#include "report/report.hpp"
#include "report/schema_check.hpp"

namespace fabricproof::app {

namespace {

constexpr double kFinalizeLockWaitS = 10;

// `report --finalize DIR|report.json`: the run ended without its last write. The report is
// rewritten in place (report.json and the other formats already in its directory), or written
// anew when rank 0 never wrote one. Exit 2; a report that is already final is left as it is and
// its own exit code returned.
int finalize_command(const ReportOptionsCli& options) {
  namespace fs = std::filesystem;
  const fs::path input = options.input;
  const bool file = fs::is_regular_file(input) || input.extension() == ".json";  // else the run's --out directory
  const fs::path dir = file ? (input.has_parent_path() ? input.parent_path() : fs::path(".")) : input;
  const fs::path json_path = file ? input : input / "report.json";
  const std::string status = options.launcher_status.empty() ? "the launcher ended abnormally" : options.launcher_status;
  std::vector<LauncherLoss> losses;
  if (!options.launcher_log.empty()) {
    std::optional<std::string> text;  // what the launcher printed: a log of a few MB at most; a missing one is said
    const auto failed = failure_of([&] { text = read_regular_file(options.launcher_log, 64u << 20); });
    if (text) losses = parse_launcher_log(*text);
    else std::cerr << "fabricproof: --launcher-log " << options.launcher_log << ": " << failed.value_or("not found") << "\n";
  }
  for (const auto& host : options.lost_nodes)
    losses.push_back({-1, host, "stopped answering (" + status + ")"});
  // The run, should its rank 0 still be writing, neither writes between this read and this write
  // nor puts its report back after it (ReportLock). A rank 0 stopped while holding it (SIGSTOP, a
  // hung file system) is waited for a while, then finalised over.
  const ReportLock lock(dir.string(), kFinalizeLockWaitS);
  if (lock.state() == ReportLock::State::busy)
    std::cerr << "fabricproof report --finalize: " << (dir / ".report.lock").string() << " still held after " << kFinalizeLockWaitS
              << " s; finalising without it\n";
  Report report;
  if (fs::exists(json_path)) {
    if (const auto failed = failure_of([&] { report = load_report(json_path.string()); })) {
      std::cerr << "fabricproof report --finalize: " << *failed << "\n";
      return 2;
    }
    if (report.finished) {
      std::cout << json_path.string() << ": already final (" << to_string(report.verdict) << "); left as it is\n";
      return exit_code_for(report.verdict);
    }
  } else {  // rank 0 never wrote one: the run died before its first write
    report.started_at = "";
    report.command = {"(unknown: the run wrote no report)"};
    report.finished = false;
    report.in_flight = InFlight{"start", "before rank 0 wrote its first report", ""};
  }
  finalize_report(report, status, losses, utc_timestamp());
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::vector<std::string> formats = {"json"};
  // Every format the run wrote is rewritten (report.prom too: a scrape must not keep the figures of
  // a run that did not finish), and Markdown always, for the person who reads the directory.
  // --format names what the run was asked to write, for a run that died before writing it.
  for (const auto& format : kReportFormats) {
    const bool asked = std::find(options.formats.begin(), options.formats.end(), format) != options.formats.end();
    if (format != "json" && (fs::exists(dir / report_file_name(format)) || format == "md" || asked)) formats.push_back(format);
  }
  for (const auto& format : formats)
    if (auto failed = failure_of([&] { write_file_atomic((dir / report_file_name(format)).string(), render_report_format(report, format)); })) {
      std::cerr << "fabricproof report --finalize: cannot write: " << *failed << "\n";
      return 2;
    }
  std::cout << render_console_summary(report);
  std::cout << "report finalised: " << json_path.string() << "\n";
  return 2;
}

}  // namespace

int render_report(const ReportOptionsCli& options) {
  namespace fs = std::filesystem;
  if (options.finalize) return finalize_command(options);
  const auto fail = [&](const std::string& why) {
    std::cerr << "fabricproof report: " << why << "\n";
    return 2;
  };
  Report report;
  if (const auto failed = failure_of([&] { report = load_report(options.input); })) return fail(*failed);
  const fs::path out = options.out_dir.empty() ? fs::path(options.input).parent_path() : fs::path(options.out_dir);
  std::error_code ec;
  if (!out.empty()) fs::create_directories(out, ec);
  const auto formats = options.formats.empty() ? std::vector<std::string>{"md", "html", "junit"} : options.formats;
  for (const auto& format : formats) {
    const auto path = (out / report_file_name(format)).string();
    std::string content;
    try {  // a section of the wrong shape shows only when a writer reads it
      content = render_report_format(report, format);
    } catch (const std::exception& e) {
      return fail(options.input + ": not a readable report: " + e.what());
    }
    if (auto failed = failure_of([&] { write_file_atomic(path, content); })) return fail("cannot write " + path + ": " + *failed);
    std::cout << path << "\n";
  }
  return 0;
}

int hostfile_command(const std::string& path) {
  std::optional<std::string> text;
  const auto failed = failure_of([&] { text = read_regular_file(path, 1u << 20); });
  if (!text) {
    std::cerr << path << ": cannot read the hostfile" << (failed ? " (" + *failed + ")" : "") << "\n";
    return 2;
  }
  const auto parsed = parse_hostfile(*text, path);
  for (const auto& e : parsed.errors) std::cerr << e << "\n";
  if (!parsed.errors.empty()) return 2;
  for (const auto& h : parsed.hosts) std::cout << h.host << " " << h.slots << "\n";
  return 0;
}

namespace {

// Why two saved reports cannot be compared ("" when they can): a section of the wrong shape shows
// only when it is read, so every one is read now, naming the file; and an unfinished run has no
// verdict to compare: nothing may pass against it or because of it.
std::optional<std::string> not_comparable(const CompareOptionsCli& options, const Report& baseline, const Report& next) {
  for (const auto& [path, report] : {std::pair{options.baseline, &baseline}, std::pair{options.next, &next}}) {
    try {
      (void)render_report_format(*report, "md");
    } catch (const std::exception& e) {
      return path + ": not a readable report: " + e.what();
    }
    if (!report->finished)
      return path + ": the run has not finished (in flight: " +
             (report->in_flight ? report->in_flight->phase + ": " + report->in_flight->step : std::string("unknown")) +
             "); finalise it (fabricproof report --finalize) or rerun";
  }
  return std::nullopt;
}

}  // namespace

int compare_reports_command(const CompareOptionsCli& options) {
  namespace fs = std::filesystem;
  std::optional<Report> baseline, next;
  auto failed = failure_of([&] {
    baseline = load_report(options.baseline);
    next = load_report(options.next);
  });
  const auto profile = load_profile(options.profile);
  if (!failed && !profile.profile) failed = profile.errors.empty() ? "the profile" : profile.errors.front();
  if (!failed) failed = not_comparable(options, *baseline, *next);
  if (failed) {
    std::cerr << "fabricproof compare: " << *failed << "\n";
    return 2;
  }
  // The comparison as a report of its own: the same writers render it (console, Markdown, JUnit).
  Report result;
  result.started_at = next->started_at;
  result.nodes = next->nodes;  // the summary line counts the new run's nodes and ranks
  result.world_size = next->world_size;
  result.command = {"compare", options.baseline, options.next};
  try {  // a section of the wrong shape shows only when it is compared
    result.findings = compare_reports(*baseline, *next, profile.profile->compare.regression);
  } catch (const std::exception& e) {
    std::cerr << "fabricproof compare: " << options.baseline << " against " << options.next << ": not comparable: " << e.what() << "\n";
    return 2;
  }
  result.verdict = worst_verdict(result.findings);
  const nlohmann::json j{{"verdict", to_string(result.verdict)},
                         {"baseline", {{"path", options.baseline}, {"started_at", baseline->started_at}}},
                         {"new", {{"path", options.next}, {"started_at", next->started_at}}},
                         {"regression", profile.profile->compare.regression},
                         {"findings", result.findings}};
  const std::string md = fmt::format("# fabricproof compare: {}\n\nBaseline `{}` ({}) against `{}` ({}); a figure worse by more than {:.0f}% fails.\n\n{}",
                                     to_string(result.verdict), options.baseline, baseline->started_at, options.next, next->started_at,
                                     profile.profile->compare.regression * 100, render_findings_markdown(worst_first(result.findings)));
  if (options.json) std::cout << json_text(j, 2) << "\n";
  else std::cout << render_console_summary(result, 40);
  if (!options.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options.out_dir, ec);
    const std::string html = render_findings_html(
        fmt::format("fabricproof compare: {}", to_string(result.verdict)), result.verdict,
        fmt::format("baseline {} ({}) against {} ({}); worse by more than {:.0f}% fails", options.baseline, baseline->started_at, options.next,
                    next->started_at, profile.profile->compare.regression * 100),
        result.findings);
    for (const auto& [name, content] : std::vector<std::pair<std::string, std::string>>{
             {"compare.json", json_text(j, 2) + "\n"}, {"compare.md", md}, {"compare.html", html}, {"compare-junit.xml", render_junit(result)}})
      if (auto failed = failure_of([&] { write_file_atomic((fs::path(options.out_dir) / name).string(), content); })) {
        std::cerr << "fabricproof compare: cannot write " << name << ": " << *failed << "\n";
        return 2;
      }
  }
  return exit_code_for(result.verdict);
}

}  // namespace fabricproof::app
