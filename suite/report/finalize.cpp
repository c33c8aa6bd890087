#include "report/finalize.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>

namespace fabricproof {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '.')) s.remove_suffix(1);
  return s;
}

// The number at the start of `s`, or nullopt.
std::optional<int> leading_int(std::string_view s) {
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return value;
}

// The word after `key` in `line` (up to a space), or "".
std::string_view word_after(std::string_view line, std::string_view key) {
  const auto at = line.find(key);
  if (at == std::string_view::npos) return {};
  auto rest = line.substr(at + key.size());
  return rest.substr(0, rest.find_first_of(" \t,"));
}

// "[[21405,1],2]" -> 2 (the rank of an ORTE process name).
std::optional<int> orte_rank(std::string_view name) {
  const auto close = name.find("],");
  if (close == std::string_view::npos) return std::nullopt;
  return leading_int(name.substr(close + 2));
}

// A loss, merged with an earlier loss of the same rank (witness lines are not losses).
void add(std::vector<LauncherLoss>& out, LauncherLoss loss) {
  for (auto& o : out)
    if (!o.watchdog && !o.alive && o.rank == loss.rank && (o.host == loss.host || o.host.empty() || loss.host.empty())) {
      if (o.host.empty()) o.host = loss.host;
      return;
    }
  out.push_back(std::move(loss));
}

// ssh's and Open MPI's words for a job that could not start on a host: the host and why, in plain words.
std::optional<LauncherLoss> launch_failure(std::string_view line) {
  auto loss = [&](std::string_view host, const std::string& why) {
    return LauncherLoss{-1, std::string(host), why + " (" + std::string(line) + ")", true};
  };
  if (const auto at = line.find("Could not resolve hostname "); at != std::string_view::npos) {
    auto host = line.substr(at + 27);
    return loss(host.substr(0, host.find(':')), "the host name does not resolve");
  }
  if (const auto at = line.find("connect to host "); at != std::string_view::npos) {
    const auto host = word_after(line, "connect to host ");
    if (line.find("Connection refused") != std::string_view::npos) return loss(host, "refuses ssh (connection refused)");
    if (line.find("No route to host") != std::string_view::npos) return loss(host, "cannot be reached (no route to host)");
    if (line.find("timed out") != std::string_view::npos) return loss(host, "does not answer ssh (timed out)");
    return loss(host, "ssh cannot connect");
  }
  if (const auto at = line.find(": Permission denied ("); at != std::string_view::npos) {
    auto who = line.substr(0, at);
    who = who.substr(who.find_last_of(" ") == std::string_view::npos ? 0 : who.find_last_of(" ") + 1);
    return loss(who.substr(who.find('@') == std::string_view::npos ? 0 : who.find('@') + 1), "refuses ssh (permission denied: keys or user)");
  }
  if (line.find("Host key verification failed") != std::string_view::npos) return loss("", "ssh refused the host's key (Host key verification failed)");
  return std::nullopt;
}

// The ranks' own lines: a watchdog that fired, a rank that stopped waiting and lives, a rank's
// claim that another was lost. A line cut by the launcher is skipped: the others still count.
void fabricproof_line(std::string_view line, std::vector<LauncherLoss>& out) {
  for (const std::string_view kind : {"watchdog", "alive", "lost-rank"}) {
    const std::string key = fmt::format("fabricproof: {}: ", kind);
    const auto at = line.find(key);
    if (at == std::string_view::npos) continue;
    const auto j = nlohmann::json::parse(line.substr(at + key.size()), nullptr, false);
    if (!j.is_object()) return;
    LauncherLoss l{j.value("rank", -1), j.value("host", std::string()), j.value("what", std::string())};
    if (kind == "watchdog") {
      l.watchdog = true;
      if (j.contains("group") && j["group"].is_array())
        for (const auto& r : j["group"])
          if (r.is_number_integer()) l.group.push_back(r.get<int>());
    } else if (kind == "alive") {
      l.alive = true;
    } else {
      l.seen_by = j.value("seen_by", -1);
      l.what = fmt::format("rank {} saw it stop answering during {}: {}", l.seen_by, j.value("phase", std::string("?")), j.value("step", std::string()));
      return add(out, std::move(l));
    }
    out.push_back(std::move(l));
    return;
  }
}

}  // namespace

std::vector<LauncherLoss> parse_launcher_log(std::string_view text) {
  std::vector<LauncherLoss> out;
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::string executable;  // Open MPI: "Executable: X" then "Node: H" of an application it could not start
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto line = trim(lines[i]);
    if (auto failed = launch_failure(line)) {
      add(out, *failed);
    } else if (line.rfind("Executable:", 0) == 0) {
      executable = std::string(trim(line.substr(11)));
    } else if (line.rfind("Node:", 0) == 0 && !executable.empty()) {
      add(out, {-1, std::string(trim(line.substr(5))), "no binary there: " + executable + " cannot be accessed or executed (mpirun)", true});
      executable.clear();
    } else if (const auto at = line.find("noticed that process rank "); at != std::string_view::npos) {
      // mpirun noticed that process rank 2 with PID 4711 on node node3 exited on signal 9 (Killed).
      const auto rank = leading_int(line.substr(at + 26));
      add(out, {rank.value_or(-1), std::string(word_after(line, " on node ")), std::string(line.substr(at))});
    } else if (line.find("Remote daemon:") != std::string_view::npos) {
      // ORTE has lost communication with a remote daemon. ... Remote daemon: [[21405,0],2] on node node3
      add(out, {-1, std::string(word_after(line, " on node ")), "mpirun lost communication with the daemon " + std::string(line.substr(line.find(':') + 1))});
    } else if (line.find("Process name:") != std::string_view::npos && i > 0) {
      // mpirun detected that one or more processes exited with non-zero status ... Process name: [[J,1],N]
      const auto rank = orte_rank(trim(line.substr(line.find(':') + 1)));
      std::string code;
      if (i + 1 < lines.size() && lines[i + 1].find("Exit code:") != std::string_view::npos)
        code = std::string(trim(lines[i + 1].substr(lines[i + 1].find(':') + 1)));
      if (rank) add(out, {*rank, "", "exited early" + (code.empty() ? std::string() : " with code " + code) + " (mpirun)"});
    } else if (const auto at = line.find("srun: error: "); at != std::string_view::npos && line.find(": task ") != std::string_view::npos) {
      // srun: error: node3: task 2: Killed
      auto rest = line.substr(at + 13);
      const auto host = rest.substr(0, rest.find(':'));
      const auto rank = leading_int(word_after(line, ": task "));
      add(out, {rank.value_or(-1), std::string(host), std::string(line.substr(at))});
    } else if (line.find("fabricproof: ") != std::string_view::npos) {
      fabricproof_line(line, out);
    }
  }
  return out;
}

namespace {

// The ranks the watchdogs' reports leave out: when some ranks' watchdogs ended a blocking call
// (a collective), every rank of that call's group was in it or on its way, and those of them
// that said neither "watchdog" nor "alive" (they stopped waiting and live) stopped first. Ranks
// outside the groups (waiting for the group to end) are not named. Nothing when no watchdog
// reported (or the world size is unknown).
std::vector<LauncherLoss> silent_under_watchdogs(const Report& report, const std::vector<LauncherLoss>& given) {
  std::vector<int> reported, in_call;
  std::string what;
  size_t watchdogs = 0;
  for (const auto& l : given) {
    if (!l.watchdog && !l.alive) continue;
    reported.push_back(l.rank);
    if (!l.watchdog) continue;
    ++watchdogs;
    if (what.empty()) what = l.what;
    if (l.group.empty())
      for (int rank = 0; rank < report.world_size; ++rank) in_call.push_back(rank);
    in_call.insert(in_call.end(), l.group.begin(), l.group.end());
  }
  std::vector<LauncherLoss> out;
  if (watchdogs == 0 || report.world_size <= 0) return out;
  for (int rank = 0; rank < report.world_size; ++rank) {
    if (std::find(in_call.begin(), in_call.end(), rank) == in_call.end()) continue;
    if (std::find(reported.begin(), reported.end(), rank) != reported.end()) continue;
    if (std::any_of(given.begin(), given.end(), [&](const LauncherLoss& l) { return !l.watchdog && !l.alive && l.rank == rank; })) continue;
    std::string host;
    for (const auto& placed : report.rank_map)
      if (placed.rank == rank) host = placed.host;
    out.push_back({rank, host,
                   fmt::format("no watchdog report from it, while {} rank(s) of its group reported they were blocked in {}: it stopped first",
                               watchdogs, what)});
  }
  return out;
}

// A rank's claim that another was lost, where that other's watchdog reported: it was blocked in a
// call (waiting for the one that stopped), not lost.
bool claim_about_a_blocked_rank(const LauncherLoss& l, const std::vector<LauncherLoss>& given) {
  return l.seen_by >= 0 && std::any_of(given.begin(), given.end(), [&](const LauncherLoss& w) { return w.watchdog && w.rank == l.rank; });
}

}  // namespace

bool finalize_report(Report& report, const std::string& launcher_status, const std::vector<LauncherLoss>& given, const std::string& now) {
  if (report.finished) return false;
  std::vector<LauncherLoss> losses;
  for (const auto& l : given)
    if (!l.watchdog && !l.alive && !claim_about_a_blocked_rank(l, given)) losses.push_back(l);
  for (auto& l : silent_under_watchdogs(report, given)) losses.push_back(std::move(l));
  const InFlight where = report.in_flight.value_or(InFlight{"unknown", "", ""});
  const std::string step = where.phase + (where.step.empty() ? "" : ": " + where.step);
  std::string not_started;  // "node5: the host name does not resolve (ssh: ...)", the first of them
  for (const auto& loss : losses) {
    if (loss.not_started) {
      const std::string host = loss.host.empty() ? "a host" : loss.host;
      if (not_started.empty()) not_started = host + ": " + loss.what;
      report.findings.push_back({CheckId::launch_failed, host, Verdict::error, {{"host", loss.host}, {"launcher", loss.what}},
                                 "the job starts on every host", "the launcher starts a rank on every host of the hostfile",
                                 "The job could not start on " + host + ": " + loss.what +
                                     ". Check the hostfile's name for it, DNS (getent hosts), ssh from the launch node, and the binary's path there."});
      continue;
    }
    const bool node = loss.rank < 0;
    const Subject subject = node ? Subject("node " + (loss.host.empty() ? std::string("unknown") : loss.host))
                                 : Subject::rank(loss.rank, fmt::format("rank {} ({})", loss.rank, loss.host.empty() ? "host unknown" : loss.host));
    report.findings.push_back({node ? CheckId::node_lost : CheckId::rank_lost, subject, Verdict::error,
                               {{"rank", loss.rank}, {"host", loss.host}, {"launcher", loss.what}, {"phase", where.phase}, {"step", where.step}},
                               "every rank answers until the run ends",
                               "the launcher reports no lost rank or node",
                               "The launcher lost this " + std::string(node ? "node" : "rank") +
                                   ": check that host first (is it up, dmesg, the management network, the process killed). "
                                   "Results from the step in flight on are missing."});
  }
  nlohmann::json measured = {{"launcher", launcher_status}, {"in_flight", step}, {"since", where.since}};
  if (!not_started.empty()) measured["could_not_start"] = not_started;
  // A soak cut short keeps its time line: say how far it got (the report says "cut short").
  if (report.soak && !report.soak->finished)
    measured["soak"] = fmt::format("cut short at {} of {} after {} pass(es); the time line so far is kept", format_soak_time(report.soak->ran_s),
                                   format_soak_time(report.soak->duration_s), report.soak->passes.size());
  report.findings.push_back({CheckId::run_incomplete, "run", Verdict::error, measured, "a finished run",
                             "a report is final only when the run wrote its last verdict",
                             not_started.empty() ? "The run ended before it finished (" + launcher_status + "), during " + step +
                                                       ". The results before that step are kept; rerun to get a verdict."
                                                 : "The launcher could not start the job: " + not_started + "."});
  const std::string reason = !not_started.empty() ? "could not start: " + not_started
                                                  : "did not finish: " + launcher_status + (losses.empty() ? "" : fmt::format("; {} lost", losses.size()));
  auto phase = std::find_if(report.phases.begin(), report.phases.end(), [&](const PhaseRecord& p) { return p.name == where.phase; });
  if (phase == report.phases.end()) phase = report.phases.insert(report.phases.end(), PhaseRecord{where.phase, Verdict::error, reason, 0});
  phase->verdict = Verdict::error;
  phase->reason = reason + " (in flight: " + step + ")";
  report.finished = true;
  report.in_flight.reset();
  report.finished_at = now;
  report.verdict = report.overall();
  return true;
}

}  // namespace fabricproof
