#include "app/run.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <thread>

#include "app/build.hpp"
#include "app/collectives_phase.hpp"
#include "app/inventory_phase.hpp"
#include "app/soak_phase.hpp"
#include "app/uplink_phase.hpp"
#include "inventory/inventory_rules.hpp"
#include "launch/launch.hpp"
#include "core/located_error.hpp"
#include "core/text_file.hpp"
#include "inventory/ib_neighbours.hpp"
#include "core/profile.hpp"
#include "mpi/exchange.hpp"
#include "mpi/messages.hpp"
#include "nccl_log/audit.hpp"
#include "nccl_log/parser.hpp"
#include "report/formats.hpp"
#include "report/junit.hpp"
#include "report/markdown.hpp"
#include "report/report.hpp"
#include "spec/spec.hpp"
#include "spec/spec_rules.hpp"
#if FABRICPROOF_HAVE_VERBS
#include "app/verbs_phase.hpp"
#endif
#if FABRICPROOF_HAVE_VERBS && FABRICPROOF_HAVE_CUDA
#include "app/gpudirect_phase.hpp"
#endif

namespace fabricproof::app {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

struct RunState {
  const RunOptions& options;
  mpi::Session& session;
  Profile profile;
  bool profile_ok = true;
  std::optional<ClusterSpec> spec{};  // rank 0: --spec, loaded
  ClusterFacts cluster{};  // rank 0
  Report report{};         // rank 0
  std::vector<std::string> nccl_logs{};  // rank 0: --nccl-logs, then the logs the NCCL sweeps captured
  SteadyClock::time_point last_in_flight_write{};
  SteadyClock::time_point phase_started = SteadyClock::now();
  std::string write_error{};  // rank 0: the last report write that failed
  // Rank 0: report.json as this run's last write left it, and whether another process has
  // rewritten it since (report_taken_over).
  std::optional<FileIdentity> report_written{};
  bool report_taken = false;
};

// How long rank 0's roll call waits for answers after a wait timed out, and how long the other
// ranks wait for rank 0 to end the job before they end it themselves (rank 0 is then the lost one).
constexpr double kRollCallSeconds = 10;
constexpr double kAwaitRootSeconds = 60;
// How long a report write waits for the report lock: a finaliser holds it for one read and rewrite.
constexpr double kReportLockWaitS = 5;

// A phase every rank runs together. `cannot_run` (rank 0, after the inventory) says why the phase
// cannot run on this cluster, if it cannot; the decision is broadcast to every rank.
using Reason = std::optional<std::string>;
struct Phase {
  const char* name;
  std::function<Reason(const RunState&)> cannot_run;
  std::function<void(RunState&, PhaseRecord&)> run;
};

void say(const RunState& s, const std::string& line) {
  if (!s.session.is_root() || s.options.quiet) return;
  if (s.options.json_lines)
    std::cout << json_text(nlohmann::json{{"event", "progress"}, {"time", utc_timestamp()}, {"text", line}}) << std::endl;
  else
    std::cout << "[fabricproof] " << line << std::endl;
}

// The formats but report.json; the first failure stops the rest.
void write_other_formats(const std::string& out_dir, const std::vector<std::string>& formats, const Report& report) {
  for (const auto& format : formats)
    if (format != "json") write_file_atomic((fs::path(out_dir) / report_file_name(format)).string(), render_report_format(report, format));
}

// report.json first, then the other formats.
void write_report_files(const std::string& out_dir, const std::vector<std::string>& formats, const Report& report) {
  write_file_atomic((fs::path(out_dir) / "report.json").string(), render_report_format(report, "json"));
  write_other_formats(out_dir, formats, report);
}

fs::path report_json(const RunState& s) { return fs::path(s.options.out_dir) / "report.json"; }

// Whether another process rewrote report.json since this run's last write: the launcher's
// finaliser (scripts/fabricproof-mpirun, the Slurm script) makes it final once mpirun is gone, and
// a rank 0 that outlives a killed mpirun by a moment must not put its unfinished report back. Said
// once; from then on this run leaves the report alone.
bool report_taken_over(RunState& s) {
  if (s.report_taken) return true;
  const auto now = file_identity(report_json(s).string());
  if (!now || !s.report_written || *now == *s.report_written) return false;
  s.report_taken = true;
  std::cerr << "fabricproof: " << report_json(s).string()
            << " was rewritten by another process (the launcher's finaliser?) since this run wrote it; it is left as it is\n";
  return true;
}

// report.json replaced by `json` unless another process took it over; false if it did. Under the
// report lock (ReportLock): a finaliser's write cannot land between the check and the rename. A
// lock another process keeps is a finaliser at work: this write is left out, and the next one
// finds the report taken over. Throws if the write fails.
bool write_json_unless_taken(RunState& s, const std::string& json) {
  const ReportLock lock(s.options.out_dir, kReportLockWaitS);
  if (lock.state() == ReportLock::State::busy || report_taken_over(s)) return false;
  write_file_atomic(report_json(s).string(), json);
  s.report_written = file_identity(report_json(s).string());
  return true;
}

// Every write but the last says "incomplete" (Report::finished); only the final one carries the
// run's verdict and finished_at. A failed write is remembered: the run then exits 2.
void write_report(RunState& s, bool final) {
  auto& report = s.report;
  report.finished = final;
  report.verdict = report.overall();
  if (final) {
    report.finished_at = utc_timestamp();
    report.in_flight.reset();
  }
  if (const auto failed = failure_of([&] {
        if (write_json_unless_taken(s, render_report_format(report, "json"))) write_other_formats(s.options.out_dir, s.options.formats, report);
      })) {
    std::cerr << "fabricproof: cannot write the report: " << *failed << "\n";
    s.write_error = *failed;
  }
}

// Rank 0: the step in flight goes into report.json as it starts, so that a job killed from outside
// still says where it was. A new phase, round or sweep is written at once, the sizes within a
// sweep at most four times a second.
void note_step(RunState& s, const std::string& phase, const std::string& step, bool major) {
  s.report.in_flight = InFlight{phase, step, utc_timestamp()};
  const auto now = SteadyClock::now();
  if (!major && now - s.last_in_flight_write < std::chrono::milliseconds(250)) return;
  s.last_in_flight_write = now;
  s.report.finished = false;
  s.report.verdict = s.report.overall();
  if (report_taken_over(s)) return;
  if (const auto failed = failure_of([&] { write_json_unless_taken(s, render_report_format(s.report, "json")); })) s.write_error = *failed;
}

mpi::Clock::time_point deadline_of(const RunOptions& o) { return mpi::deadline_in(o.timeout_s); }

int nodes_with_active_port(const ClusterFacts& cluster, const Profile& profile) {
  int count = 0;
  for (const auto& n : cluster.nodes) {
    bool active = false;
    for (const auto& d : n.rdma_devices)
      if (profile.includes_device(d.name))
        for (const auto& p : d.ports) active |= p.state == "ACTIVE";
    count += active;
  }
  return count;
}

int nodes_with_gpu(const ClusterFacts& cluster) {
  int count = 0;
  for (const auto& n : cluster.nodes)
    count += cuda_gpu_count(n) > 0;
  return count;
}

Reason fabric_skip_reason(const RunState& s) {
  if (!FABRICPROOF_HAVE_VERBS) return "built without libibverbs (FABRICPROOF_WITH_VERBS)";
  const int active = nodes_with_active_port(s.cluster, s.profile);
  int devices = 0;
  for (const auto& n : s.cluster.nodes) devices += static_cast<int>(n.rdma_devices.size());
  if (devices == 0) return "no RDMA device on any node";
  if (active < 2) return fmt::format("needs two nodes with an ACTIVE RDMA port; {} node(s) have one", active);
  return std::nullopt;
}

Reason gpudirect_skip_reason(const RunState& s) {
  if (!FABRICPROOF_HAVE_CUDA) return "built without the CUDA Toolkit (FABRICPROOF_WITH_CUDA)";
  if (nodes_with_gpu(s.cluster) == 0) return "no CUDA GPU on any node";
  if (auto reason = fabric_skip_reason(s)) return reason;
  const int with_gpu = nodes_with_gpu(s.cluster);
  if (with_gpu < 2) return fmt::format("needs two nodes with a CUDA GPU; {} node(s) have one", with_gpu);
  return std::nullopt;
}

// A phase's findings into the report, and its record: the worst verdict (only skips: pass).
void conclude(RunState& s, PhaseRecord& record, const std::vector<Finding>& findings, std::string reason) {
  s.report.findings.insert(s.report.findings.end(), findings.begin(), findings.end());
  record.verdict = worst_verdict(findings);
  if (record.verdict == Verdict::skip) record.verdict = Verdict::pass;
  record.reason = std::move(reason);
}

void run_verbs(RunState& s, PhaseRecord& record) {
#if FABRICPROOF_HAVE_VERBS
  auto progress = [&](const std::string& line) { say(s, line); };
  auto after_round = [&](const VerbsSection& section) {
    s.report.verbs = section;
    write_report(s, false);
  };
  auto outcome = run_verbs_phase(s.options, s.session, s.cluster, s.profile, progress, after_round);
  if (!s.session.is_root()) return;
  s.report.verbs = outcome.section;
  conclude(s, record, outcome.findings, fmt::format("{} pairs in {} rounds", outcome.section.pairs.size(), outcome.section.rounds));
#else
  (void)s;
  (void)record;
#endif
}

void run_gpudirect(RunState& s, PhaseRecord& record) {
#if FABRICPROOF_HAVE_VERBS && FABRICPROOF_HAVE_CUDA
  auto progress = [&](const std::string& line) { say(s, line); };
  auto outcome = run_gpudirect_phase(s.options, s.session, s.cluster, s.profile, progress);
  if (!s.session.is_root()) return;
  s.report.gpudirect = outcome.section;
  conclude(s, record, outcome.findings, outcome.summary);
#else
  (void)s;
  (void)record;
#endif
}

void run_collectives(RunState& s, PhaseRecord& record) {
  auto progress = [&](const std::string& line) { say(s, line); };
  // After each group the report is written; after each row the section is only updated, and
  // reaches report.json with the next step in flight (note_step).
  auto after_group = [&](const CollectivesSection& section, bool group_done) {
    s.report.collectives = section;
    if (group_done) write_report(s, false);
  };
  auto outcome = run_collectives_phase(s.options, s.session, s.cluster, s.profile, progress, after_group);
  if (!s.session.is_root()) return;
  s.report.collectives = outcome.section;
  s.nccl_logs.insert(s.nccl_logs.end(), outcome.nccl_logs.begin(), outcome.nccl_logs.end());
  conclude(s, record, outcome.findings, outcome.summary);
}

// Rank 0 reads the logs; the job spans nodes when the inventory found several.
void run_nccl_audit(RunState& s, PhaseRecord& record) {
  if (!s.session.is_root()) return;
  nccl::ParseOptions parse;
  parse.multi_node = s.cluster.nodes.size() > 1;
  const auto facts = nccl::parse_files(s.nccl_logs, parse);
  const bool gpudirect = std::any_of(s.cluster.nodes.begin(), s.cluster.nodes.end(), [](const NodeFacts& n) { return !n.gpus.empty(); });
  const auto findings = nccl::audit(facts, nccl::AuditOptions{gpudirect});
  s.report.nccl_audit = nccl::AuditSection{facts, findings};
  conclude(s, record, findings,
           fmt::format("{} log file(s), {} connection(s), socket fallback: {}", s.nccl_logs.size(), facts.connections.size(),
                       facts.socket_fallback ? (*facts.socket_fallback ? "yes" : "no") : "undecidable"));
}

void run_uplink(RunState& s, PhaseRecord& record) {
  auto progress = [&](const std::string& line) { say(s, line); };
  auto outcome = run_uplink_phase(s.options, s.session, s.cluster, s.profile, progress);
  if (!s.session.is_root()) return;
  s.report.uplink = outcome.section;
  conclude(s, record, outcome.findings, outcome.summary);
}

// The soak: the load again and again with every port counter watched. Rank 0 decides which parts
// of the load can run, as the verbs and collectives phases decide; the report is rewritten after
// every pass, so that a soak cut short keeps its time line.
void run_soak(RunState& s, PhaseRecord& record) {
  SoakLoadPlan load;
  if (s.session.is_root()) {
    if (auto why = fabric_skip_reason(s)) load.verbs_not_run = "verbs: " + *why;
    // GPU memory where there are GPUs; a cluster without any has no GPUDirect to soak.
    if (auto why = gpudirect_skip_reason(s)) load.gpudirect_not_run = nodes_with_gpu(s.cluster) > 0 ? "GPUDirect: " + *why : "";
    if (auto why = choose_collective_engine(s.options.collectives, s.cluster).cannot_run) load.collective_not_run = "collective: " + *why;
  }
  auto progress = [&](const std::string& line) { say(s, line); };
  auto after_pass = [&](const SoakSection& section) {
    s.report.soak = section;
    write_report(s, false);
  };
  auto outcome = run_soak_phase(s.options, s.session, s.cluster, s.profile, load, progress, after_pass);
  if (!s.session.is_root()) return;
  s.report.soak = outcome.section;
  conclude(s, record, outcome.findings, outcome.summary);
}

std::vector<Phase> phases() {
  return {
      {"verbs", fabric_skip_reason, run_verbs},
      {"gpudirect", gpudirect_skip_reason, run_gpudirect},
      {"collectives",
       [](const RunState& s) { return choose_collective_engine(s.options.collectives, s.cluster).cannot_run; },
       run_collectives},
      {"nccl_audit",
       [](const RunState& s) -> Reason {
         if (!s.nccl_logs.empty()) return std::nullopt;
         const auto& coll = s.report.collectives;
         const auto missing = coll ? coll->nccl_logs_missing : std::vector<std::string>{};
         std::string why = !missing.empty() ? missing.front() + (missing.size() > 1 ? fmt::format(" (and {} more)", missing.size() - 1) : "")
                           : coll ? "the collective sweeps ran with the " + coll->engine + " engine, which prints none"
                                  : std::string("the NCCL sweeps did not run");
         return fmt::format("no NCCL logs to audit: {}; pass --nccl-logs FILE... to audit the logs of your own NCCL runs", why);
       },
       run_nccl_audit},
      {"uplink", [](const RunState&) -> Reason { return std::nullopt; }, run_uplink},
      {"soak", [](const RunState&) -> Reason { return std::nullopt; }, run_soak},
  };
}

bool wanted(const RunOptions& o, const std::string& phase) {
  return std::find(o.phases.begin(), o.phases.end(), phase) != o.phases.end();
}

// --ibnetdiscover FILE into the InfiniBand ports' neighbours; a file that cannot be read leaves each
// such port unread with the reason (a cabling check then says not proven, naming the file).
void read_ibnetdiscover(const std::string& path, ClusterFacts& cluster) {
  std::optional<std::string> text;
  const auto failed = failure_of([&] { text = read_regular_file(path, 256u << 20); });
  cabling::IbTopology topology;
  if (!text) topology.errors.push_back(fmt::format("--ibnetdiscover {}: cannot be read{}", path, failed ? " (" + *failed + ")" : ""));
  else topology = cabling::parse_ibnetdiscover(*text, path);
  apply_ibnetdiscover(cluster, topology, path);
}

void run_inventory(RunState& s) {
  const auto started = SteadyClock::now();
  s.phase_started = started;
  say(s, fmt::format("inventory: probing {} rank(s)", s.session.size()));
  s.session.set_step("inventory", "probing the nodes");
  s.cluster = gather_inventory(s.options, s.session);
  if (!s.session.is_root()) return;
  PhaseRecord record{"inventory", Verdict::pass, "", 0};
  if (!s.options.ibnetdiscover.empty()) read_ibnetdiscover(s.options.ibnetdiscover, s.cluster);
  set_cluster(s.report, s.cluster);
  if (!s.profile_ok) {
    record.verdict = Verdict::error;
    record.reason = "inventory gathered, health rules not evaluated: the profile is invalid";
  } else if (wanted(s.options, "inventory")) {
    const auto findings = check_inventory(s.cluster, s.profile, InventoryCheckOptions{s.options.expect_nodes, s.options.check_cabling});
    s.report.findings.insert(s.report.findings.end(), findings.begin(), findings.end());  // after the spec's load errors
    record.verdict = worst_verdict(findings);
    if (record.verdict == Verdict::skip) record.verdict = Verdict::pass;
  } else {
    record.verdict = Verdict::skip;
    record.reason = "not selected with --phases (facts gathered, rules not evaluated)";
  }
  record.duration_s = std::chrono::duration<double>(SteadyClock::now() - started).count();
  s.report.phases.push_back(record);
  say(s, fmt::format("inventory: {} node(s), {} finding(s), {}", s.cluster.nodes.size(), s.report.findings.size(), to_string(record.verdict)));
}

// Ranks silent to the roll call in a phase whose calls block (the collectives) may be blocked in
// one rather than lost: their watchdogs end the job within their grace, and the launcher wrapper
// names by elimination the ranks that said neither "watchdog" nor "alive" (rank 0 said alive on
// entering end_lost). If the job is still here after that wait, none of them was blocked.
void wait_for_blocked_watchdogs(mpi::Session& session, const std::string& names, size_t silent) {
  const auto wait = session.blocked_peers_wait();
  if (silent == 0 || wait == mpi::Clock::duration::zero()) return;
  std::cerr << fmt::format("fabricproof: {} did not answer the roll call; waiting {:.0f} s in case they are blocked in a collective "
                           "(their watchdogs would end the job)\n",
                           names, std::chrono::duration<double>(wait).count())
            << std::flush;
  std::this_thread::sleep_for(wait);
}

// A wait on other ranks timed out (mpi::Lost). Rank 0 asks every rank what it is doing, names
// the ranks that do not answer (rank, host, phase, step) in an error finding, writes the final
// report and ends the job: the silent ranks would never reach MPI_Finalize. The other ranks keep
// answering the roll call until rank 0 ends the job; if it does not, rank 0 is the one that is
// lost, and they end the job themselves, saying so (the launcher wrapper then finalises the report).
[[noreturn]] void end_lost(RunState& s, const mpi::Lost& lost) {
  auto& session = s.session;
  const std::string phase = session.phase(), step = session.step();
  session.say_alive(fmt::format("stopped waiting during {}: {}", session.doing(), lost.what()));
  if (!session.is_root()) {
    std::cerr << fmt::format("fabricproof: {}: {}; waiting for rank 0 to end the job\n", session.rank_label(session.rank()), lost.what());
    // Rank 0 may itself wait out blocked peers' watchdogs first (wait_for_blocked_watchdogs).
    mpi::await_root(session, mpi::Clock::now() + std::chrono::seconds(static_cast<int>(kAwaitRootSeconds)) + session.blocked_peers_wait());
    std::cerr << "fabricproof: lost-rank: "
              << json_text(nlohmann::json{{"rank", 0}, {"host", session.host_of(0)}, {"phase", phase}, {"step", step},
                                          {"seen_by", session.rank()}, {"reason", "rank 0 did not end the job after: " + std::string(lost.what())}})
              << std::endl;
    session.abort(2);
  }
  const auto answers = mpi::roll_call(session, mpi::deadline_in(kRollCallSeconds));
  std::vector<int> silent = lost.silent();
  nlohmann::json doing = nlohmann::json::object();
  for (const auto& a : answers) {
    if (!a.doing && std::find(silent.begin(), silent.end(), a.rank) == silent.end()) silent.push_back(a.rank);
    if (a.doing) doing[std::to_string(a.rank)] = *a.doing;
  }
  std::sort(silent.begin(), silent.end());
  std::string names;
  for (int r : silent) names += (names.empty() ? "" : ", ") + session.rank_label(r);
  wait_for_blocked_watchdogs(session, names, silent.size());
  for (int r : silent) {
    s.report.findings.push_back(
        {CheckId::rank_lost, Subject::rank(r, session.rank_label(r)), Verdict::error,
         {{"rank", r}, {"host", session.host_of(r)}, {"phase", phase}, {"step", step}, {"what", lost.what()}},
         "an answer within the deadline",
         "every rank answers every exchange within its deadline (--timeout, --verbs-timeout, --collective-timeout)",
         "This rank stopped answering: check its host first (is the process stopped or gone, the node up, dmesg, the management "
         "network). Results from this step on are missing; rerun after fixing it."});
  }
  if (silent.empty())
    s.report.findings.push_back({CheckId::exchange_timeout, phase, Verdict::error, {{"step", step}, {"what", lost.what()}, {"ranks_doing", doing}},
                                 "the exchange completes within its deadline",
                                 "every exchange completes within its deadline (--timeout, --verbs-timeout, --collective-timeout)",
                                 "Every rank still answers, but the exchange did not complete in time: compare what each rank was doing "
                                 "(measured.ranks_doing); a step slower than its deadline needs a larger timeout."});
  const std::string reason = silent.empty() ? fmt::format("{} (every rank still answers)", lost.what())
                                            : fmt::format("{} stopped answering during {}{}", names, phase, step.empty() ? "" : ": " + step);
  auto record = std::find_if(s.report.phases.begin(), s.report.phases.end(), [&](const PhaseRecord& p) { return p.name == phase; });
  if (record == s.report.phases.end()) record = s.report.phases.insert(s.report.phases.end(), PhaseRecord{phase, Verdict::error, reason, 0});
  record->verdict = Verdict::error;
  record->reason = reason;
  record->duration_s = std::chrono::duration<double>(SteadyClock::now() - s.phase_started).count();
  for (const auto& later : phases())  // the phases after it are listed, so that none seems forgotten
    if (std::none_of(s.report.phases.begin(), s.report.phases.end(), [&](const PhaseRecord& p) { return p.name == later.name; }))
      s.report.phases.push_back({later.name, Verdict::skip, wanted(s.options, later.name) ? "not run: the run ended at " + phase : "not selected with --phases", 0});
  write_report(s, true);
  if (!s.options.quiet) std::cout << render_console_summary(s.report);
  std::cout << "report: " << (fs::path(s.options.out_dir) / "report.json").string() << "\n";
  std::cerr << "fabricproof: " << reason << "; ending the job" << std::endl;
  session.abort(2);
}

// Every rank's own error of a phase reaches rank 0, in its words with its host and rank: an error
// only one rank saw (its adapter failed) would otherwise stay in that rank's stderr. A rank that
// does not deliver stopped answering (mpi::Lost, end_lost), which is not the same as an error.
// An error every rank agreed on (the same words as rank 0's) is already rank 0's own.
void collect_rank_errors(RunState& s, const std::string& phase, const std::optional<std::string>& mine, PhaseRecord& record) {
  auto& session = s.session;
  const auto gathered = mpi::gather_message(session, mine, deadline_of(s.options), "the errors of the " + phase + " phase");
  if (!session.is_root()) return;
  gathered.require_all(session, "the errors of the " + phase + " phase");
  for (size_t rank = 1; rank < gathered.parts.size(); ++rank) {
    const auto& theirs = gathered.parts[rank];
    if (!theirs || !*theirs || *theirs == mine) continue;  // silent (named by require_all), no error, or rank 0's own
    const std::string& text = **theirs;
    const int r = static_cast<int>(rank);
    s.report.findings.push_back({CheckId::rank_error, Subject::rank(r, session.rank_label(r)), Verdict::error,
                                 {{"rank", r}, {"host", session.host_of(r)}, {"phase", phase}, {"error", text}},
                                 "the phase completes on every rank", "every rank completes every phase it runs without an error",
                                 "This rank raised an error (it still answers): read its words in measured.error, then that host's adapter "
                                 "(device, driver, library) named there."});
    if (record.verdict != Verdict::error) {
      record.verdict = Verdict::error;
      record.reason = session.rank_label(r) + ": " + text;
    }
  }
}

// A phase that was selected and cannot run is not a pass: "not proven". With a spec, the spec
// decides what must be measured: a phase it does not require is a skip (its own findings still
// fail one it requires). Rank 0's view; the others never report a phase record.
Verdict not_run_verdict(const RunState& s, const std::string& phase) {
  if (!wanted(s.options, phase)) return Verdict::skip;
  if (!s.spec) return Verdict::not_proven;
  const auto required = spec_required_phases(*s.spec);
  return std::find(required.begin(), required.end(), phase) != required.end() ? Verdict::not_proven : Verdict::skip;
}

void run_phases(RunState& s) {
  auto& session = s.session;
  const auto& options = s.options;
  run_inventory(s);
  if (session.is_root()) write_report(s, false);

  for (const auto& phase : phases()) {
    Reason reason;
    if (session.is_root()) reason = wanted(options, phase.name) ? phase.cannot_run(s) : "not selected with --phases";
    const auto decision = mpi::broadcast_message(session, reason, deadline_of(options), "the decision to run " + std::string(phase.name));
    PhaseRecord record{phase.name, not_run_verdict(s, phase.name), decision.value_or(""), 0};
    s.phase_started = SteadyClock::now();
    if (!decision && phase.run) {
      say(s, fmt::format("{}: starting", phase.name));
      std::optional<std::string> error;  // this rank's own words, for collect_rank_errors
      try {
        session.set_step(phase.name, "starting");
        phase.run(s, record);
      } catch (const mpi::Lost&) {
        throw;  // not a phase error: the run ends (end_lost)
      } catch (const LocatedError& e) {  // the phase boundary: an adapter's typed error ends the phase, not the run
        record.verdict = Verdict::error;
        record.reason = fmt::format("{}: {}", describe(e.where()), e.what());
        error = e.what();
        std::cerr << "fabricproof: phase " << phase.name << ": " << record.reason << "\n";
      } catch (const std::exception& e) {
        record.verdict = Verdict::error;
        record.reason = fmt::format("{}: {}", describe(process_location()), e.what());
        error = e.what();
        std::cerr << "fabricproof: phase " << phase.name << ": " << record.reason << "\n";
      }
      collect_rank_errors(s, phase.name, error, record);
    }
    if (!session.is_root()) continue;
    record.duration_s = std::chrono::duration<double>(SteadyClock::now() - s.phase_started).count();
    s.report.phases.push_back(record);
    say(s, record.verdict == Verdict::skip         ? fmt::format("{}: skipped: {}", phase.name, record.reason)
           : record.verdict == Verdict::not_proven ? fmt::format("{}: NOT PROVEN: {}", phase.name, record.reason)
                                                   : fmt::format("{}: {} ({})", phase.name, to_string(record.verdict), record.reason));
    write_report(s, false);
  }
  session.set_step("end", "sharing the exit code");
}

// Rank 0, after the phases: what is judged whatever --phases selected. The node count (the
// inventory phase judges it when selected), and the cluster spec, fail-closed.
void judge_the_run(RunState& s) {
  if (!wanted(s.options, "inventory")) {
    const auto count = check_node_count(s.cluster, s.profile, InventoryCheckOptions{s.options.expect_nodes, s.options.check_cabling});
    s.report.findings.insert(s.report.findings.end(), count.begin(), count.end());
  }
  if (!s.spec) return;
  const auto findings = check_spec(*s.spec, s.report, s.profile);
  s.report.findings.insert(s.report.findings.end(), findings.begin(), findings.end());
  const int failed = static_cast<int>(std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.verdict == Verdict::fail; }));
  say(s, fmt::format("spec {}: {} check(s), {} failed", s.spec->name, findings.size(), failed));
}

void print_summary(const RunState& s, int code) {
  const auto report_path = (fs::path(s.options.out_dir) / "report.json").string();
  if (s.options.json_lines) {
    nlohmann::json counts = nlohmann::json::object();
    for (const auto& f : s.report.findings) counts[std::string(to_string(f.verdict))] = counts.value(std::string(to_string(f.verdict)), 0) + 1;
    std::cout << json_text(nlohmann::json{{"event", "summary"}, {"time", utc_timestamp()}, {"verdict", to_string(s.report.verdict)},
                                          {"findings", counts}, {"exit_code", code}, {"report", report_path}})
              << std::endl;
  } else {
    std::cout << render_console_summary(s.report);
    std::cout << "report: " << report_path << "\n";
  }
}

// Rank 0: the spec named by --spec, or an error finding naming what is wrong with it (the run
// then ends in error: a spec that does not load proves nothing).
std::optional<ClusterSpec> load_run_spec(const RunOptions& options, Report& report) {
  if (options.spec.empty()) return std::nullopt;
  const auto loaded = load_spec_file(options.spec);
  for (const auto& error : loaded.errors) {
    std::cerr << "fabricproof: spec: " << error << "\n";
    report.findings.push_back({CheckId::spec, options.spec, Verdict::error, error, std::string("a valid ") + kSpecSchema + " document",
                               "the cluster spec loads and validates", "Fix the spec at the key named (fabricproof spec check FILE)."});
  }
  return loaded.spec;
}

// Rank 0, before any rank waits on another: the report's head, the profile and the spec (their
// errors as findings), and the output directory, cleared of an earlier run's files. Why --out
// cannot be written, if it cannot.
std::optional<std::string> prepare_on_root(RunState& s, RunOptions& options, const std::vector<std::string>& command) {
  s.report.started_at = utc_timestamp();
  s.report.command = command;
  s.report.build = build_section();
  s.report.launcher = launch_from_environment();
  auto loaded = load_profile(options.profile);
  if (loaded.profile) {
    s.profile = *loaded.profile;
  } else {
    s.profile_ok = false;
    for (const auto& error : loaded.errors) {
      std::cerr << "fabricproof: profile: " << error << "\n";
      s.report.findings.push_back({CheckId::profile, options.profile, Verdict::error, error, "a valid fabricproof.profile/1 document",
                                   "the profile loads and validates", "Fix the profile at the key named, or pick a built-in one."});
    }
  }
  s.report.profile = ProfileRecord{s.profile_ok ? s.profile.name : options.profile, s.profile.origin, s.profile.effective};
  s.spec = load_run_spec(options, s.report);
  if (s.spec) options.collectives.nccl_required = spec_needs_nccl(*s.spec);
  // Before any measurement: a report that cannot be written would make the whole run worthless.
  const auto out_error = failure_of([&] { check_output_directory(options.out_dir); });
  if (out_error) std::cerr << "fabricproof: --out " << *out_error << "\n";
  // An earlier run's files never outlive the start of this one: report.json is written anew at
  // once (incomplete), and a format this run does not write (report.prom) must not stay behind.
  std::error_code ec;
  if (!out_error)
    for (const auto& format : kReportFormats) fs::remove(fs::path(options.out_dir) / report_file_name(format), ec);
  s.session.set_step_listener([&s](const std::string& phase, const std::string& step, bool major) { note_step(s, phase, step, major); });
  return out_error;
}

}  // namespace

int run(const RunOptions& given, const std::vector<std::string>& command, mpi::Session& session) {
  RunOptions options = given;  // rank 0 adds what the spec requires (the collective engine's choice)
  RunState s{options, session, default_profile(), true};
  s.nccl_logs = options.nccl_logs;
  const auto out_error = session.is_root() ? prepare_on_root(s, options, command) : std::nullopt;
  try {
    session.set_step("start", "waiting for every rank to start");
    mpi::share_hosts(session, deadline_of(options));
    // Rank 0 shares the profile, so that every rank runs the phases with the same thresholds, and
    // whether the run can go on at all.
    const auto shared = mpi::broadcast_message(session, mpi::RunPlanMessage{s.profile_ok, s.profile.effective, out_error}, deadline_of(options),
                                               "the run plan");
    if (shared.out_error) return 2;
    if (!session.is_root() && shared.ok) {  // every rank judges and plans with rank 0's profile
      auto loaded = load_profile_text(json_text(shared.profile), "rank 0's profile");
      if (loaded.profile) s.profile = *loaded.profile;
    }
    run_phases(s);
    int code = 0;
    if (session.is_root()) {
      judge_the_run(s);
      write_report(s, true);
      code = s.write_error.empty() ? exit_code_for(s.report.verdict) : 2;
      print_summary(s, code);
    }
    const auto shared_code = mpi::broadcast_from_root(session, std::to_string(code), deadline_of(options), "the exit code");
    return std::stoi(shared_code);
  } catch (const mpi::Lost& lost) {
    end_lost(s, lost);
  }
}

int write_error_report(const std::string& out_dir, const std::vector<std::string>& command, CheckId id,
                       const std::string& message) {
  Report report;
  report.started_at = utc_timestamp();
  report.command = command;
  report.build = build_section();
  report.launcher = launch_from_environment();
  report.findings.push_back({id, "fabricproof", Verdict::error, message, "valid input", "the suite can start", "Fix the input named in `measured`."});
  report.phases.push_back({"inventory", Verdict::error, "not started: " + message, 0});
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  report.finished_at = utc_timestamp();
  report.verdict = report.overall();
  if (const auto failed = failure_of([&] { write_report_files(out_dir, {"json", "md", "html"}, report); }))
    std::cerr << "fabricproof: cannot write the report: " << *failed << "\n";
  return 2;
}

}  // namespace fabricproof::app
