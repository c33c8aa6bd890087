// An unfinished run's report, and how it is finished: the "incomplete" contract in every format,
// the launcher output the finaliser reads (real Open MPI 4.1 and Slurm text), and report writes
// that cannot lose data.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "paths.hpp"
#include "report/finalize.hpp"
#include "report/formats.hpp"
#include "report/report.hpp"

namespace fabricproof {
namespace {

namespace fs = std::filesystem;

Report unfinished_report() {
  Report r;
  r.started_at = "2026-11-30T10:00:00Z";
  r.command = {"fabricproof", "run", "--out", "x"};
  r.findings.push_back({CheckId::node_count, "cluster", Verdict::pass, 4, 4, "nodes == 4", ""});
  r.phases = {{"inventory", Verdict::pass, "", 1.0}};
  r.finished = false;
  r.in_flight = InFlight{"collectives", "allreduce on 4 node(s), 16 rank(s): 32M (33554432 bytes)", "2026-11-30T10:05:00Z"};
  r.verdict = r.overall();
  return r;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Incomplete, JsonSaysIncompleteWithTheStepAndNoFinishedAt) {
  const nlohmann::json j = unfinished_report();
  EXPECT_EQ(j["verdict"], "incomplete") << "the findings so far all pass, yet the run has no verdict";
  EXPECT_FALSE(j.contains("finished_at"));
  EXPECT_EQ(j["in_flight"]["phase"], "collectives");
  EXPECT_EQ(j["in_flight"]["step"], "allreduce on 4 node(s), 16 rank(s): 32M (33554432 bytes)");
  const auto back = j.get<Report>();
  EXPECT_FALSE(back.finished);
  ASSERT_TRUE(back.in_flight.has_value());
  EXPECT_EQ(back.in_flight->since, "2026-11-30T10:05:00Z");
  EXPECT_EQ(nlohmann::json(back), j) << "JSON -> model -> JSON is lossless for an unfinished run too";
}

TEST(Incomplete, NoHumanFormatReadsAsAPass) {
  const auto r = unfinished_report();
  const auto md = render_report_format(r, "md");
  EXPECT_EQ(md.rfind("# fabricproof acceptance report: INCOMPLETE", 0), 0u) << md.substr(0, 200);
  EXPECT_NE(md.find("This run has not finished"), std::string::npos);
  EXPECT_NE(md.find("32M"), std::string::npos);
  const auto html = render_report_format(r, "html");
  EXPECT_NE(html.find("<div class=\"banner error\" id=\"verdict\"><span class=\"v\">INCOMPLETE</span>"), std::string::npos);
  EXPECT_EQ(html.find("class=\"banner pass\""), std::string::npos);
  const auto junit = render_report_format(r, "junit");
  EXPECT_NE(junit.find("name=\"fabricproof incomplete\""), std::string::npos);
  EXPECT_NE(junit.find("<error"), std::string::npos) << "CI must see an error for an unfinished run: " << junit;
}

// Real text: Open MPI 4.1.4 on this machine (a rank killed by SIGKILL; a rank that exited 1),
// ORTE's lost-daemon message (orte/mca/errmgr help text), Slurm 22.05 srun, and our own ranks.
constexpr const char* kLauncherLog = R"(--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).
--------------------------------------------------------------------------
[1,2]<stderr>:fabricproof: lost-rank: {"host":"node1","phase":"verbs","rank":0,"reason":"rank 0 did not end the job","seen_by":2,"step":"round 2 of 3: node1/rxe0 <-> node3/rxe0"}
--------------------------------------------------------------------------
ORTE has lost communication with a remote daemon.

  HNP daemon   : [[21405,0],0] on node node1
  Remote daemon: [[21405,0],3] on node node3

This is usually due to either a failure of the TCP network
connection to the node, or possibly an internal failure of
the daemon itself. We cannot recover from this failure, and
therefore will terminate the job.
--------------------------------------------------------------------------
mpiexec detected that one or more processes exited with non-zero status, thus causing
the job to be terminated. The first process to do so was:

  Process name: [[32191,1],5]
  Exit code:    1
--------------------------------------------------------------------------
2026-11-30T10:00:00 srun: error: gpu-b07: task 12: Killed
mpirun noticed that process rank 1 with PID 4711 on node vm exited on signal 9 (Killed).
)";

TEST(Finalize, ParsesWhatLaunchersSayAboutLostRanksAndNodes) {
  const auto losses = parse_launcher_log(kLauncherLog);
  ASSERT_EQ(losses.size(), 5u);
  EXPECT_EQ(losses[0].rank, 1);
  EXPECT_EQ(losses[0].host, "vm");
  EXPECT_NE(losses[0].what.find("signal 9"), std::string::npos);
  EXPECT_EQ(losses[1].rank, 0);
  EXPECT_EQ(losses[1].host, "node1");
  EXPECT_NE(losses[1].what.find("round 2 of 3"), std::string::npos) << losses[1].what;
  EXPECT_EQ(losses[2].rank, -1) << "a lost daemon is a whole node";
  EXPECT_EQ(losses[2].host, "node3");
  EXPECT_EQ(losses[3].rank, 5);
  EXPECT_NE(losses[3].what.find("code 1"), std::string::npos);
  EXPECT_EQ(losses[4].rank, 12);
  EXPECT_EQ(losses[4].host, "gpu-b07");
}

TEST(Finalize, OddLauncherTextIsNoLoss) {
  EXPECT_TRUE(parse_launcher_log("").empty());
  EXPECT_TRUE(parse_launcher_log("fabricproof: lost-rank: {\"rank\": ").empty()) << "a cut line is skipped";
  EXPECT_TRUE(parse_launcher_log("Process name: [[garbage\nmpirun noticed nothing\n").empty());
}

TEST(Finalize, AnUnfinishedReportBecomesAnErrorNamingTheStepAndTheLoss) {
  auto r = unfinished_report();
  ASSERT_TRUE(finalize_report(r, "mpirun exited 137", {{2, "node3", "exited on signal 9"}}, "2026-11-30T10:06:00Z"));
  EXPECT_TRUE(r.finished);
  EXPECT_FALSE(r.in_flight.has_value());
  EXPECT_EQ(r.verdict, Verdict::error);
  EXPECT_EQ(r.finished_at, "2026-11-30T10:06:00Z");
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[1].id, "rank_lost");
  EXPECT_EQ(r.findings[1].subject, "rank 2 (node3)");
  EXPECT_EQ(r.findings[1].measured["step"], "allreduce on 4 node(s), 16 rank(s): 32M (33554432 bytes)");
  EXPECT_EQ(r.findings[2].id, "run_incomplete");
  EXPECT_EQ(r.findings[2].measured["launcher"], "mpirun exited 137");
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[1].name, "collectives");
  EXPECT_EQ(r.phases[1].verdict, Verdict::error);
  EXPECT_EQ(nlohmann::json(r)["verdict"], "error");
}

// A collective that never returned: the watchdogs of the ranks blocked in it say so, and ended
// the job. The rank that did not say so is the one they waited for, named by elimination with its
// host from the rank map; mpirun's own message about the others' exit is no loss.
TEST(Finalize, TheRankWhoseWatchdogDidNotReportIsNamed) {
  auto r = unfinished_report();
  r.world_size = 4;
  for (int rank = 0; rank < 4; ++rank) r.rank_map.push_back({rank, "node" + std::to_string(rank + 1), 0, std::nullopt, ""});
  const std::string log = R"LOG(fabricproof: rank 0 (node1): MPI allreduce of 2 elements (collectives: x) did not return in time; ending the job
fabricproof: watchdog: {"host":"node1","rank":0,"what":"MPI allreduce of 2 elements (collectives: x)"}
fabricproof: watchdog: {"host":"node2","rank":1,"what":"MPI allreduce of 2 elements (collectives: x)"}
[1,3]<stderr>:fabricproof: watchdog: {"host":"node4","rank":3,"what":"MPI allreduce of 2 elements (collectives: x)"}
fabricproof: watchdog: {"host":"node9","rank":
)LOG";
  const auto given = parse_launcher_log(log);
  ASSERT_EQ(given.size(), 3u) << "three witnesses; the cut line is skipped";
  EXPECT_TRUE(given[2].watchdog);
  ASSERT_TRUE(finalize_report(r, "mpirun exited 2", given, "now"));
  std::vector<Finding> lost;
  for (const auto& f : r.findings)
    if (f.id == "rank_lost") lost.push_back(f);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].subject, "rank 2 (node3)");
  EXPECT_NE(lost[0].measured["launcher"].get<std::string>().find("3 rank(s) of its group reported they were blocked in MPI allreduce"), std::string::npos)
      << lost[0].measured.dump();
  EXPECT_EQ(lost[0].measured["step"], "allreduce on 4 node(s), 16 rank(s): 32M (33554432 bytes)");

  auto none = unfinished_report();  // without watchdog reports, nobody is named by elimination
  none.world_size = 4;
  ASSERT_TRUE(finalize_report(none, "mpirun exited 2", {}, "now"));
  for (const auto& f : none.findings) EXPECT_NE(f.id, "rank_lost");
}

// A rank blocked in a collective cannot answer; one that waits in a polled exchange can time out
// and say it lives. Rank 0 blocked (its watchdog), ranks 1 and 3 timed out (alive; rank 1 also
// claimed rank 0 lost), rank 2 stopped: only rank 2 is named. Ranks 4..7 waited outside the
// group (for it to end) and are not named either.
TEST(Finalize, EliminationCountsTheLivingAndStaysInTheBlockedGroup) {
  auto r = unfinished_report();
  r.world_size = 8;
  for (int rank = 0; rank < 8; ++rank) r.rank_map.push_back({rank, "node" + std::to_string(rank / 2 + 1), 0, std::nullopt, ""});
  const std::string log = R"LOG(fabricproof: watchdog: {"host":"node1","rank":0,"what":"MPI allreduce of 2 elements","group":[0,1,2,3]}
fabricproof: alive: {"host":"node1","rank":1,"what":"stopped waiting during collectives: x"}
fabricproof: alive: {"host":"node2","rank":3,"what":"stopped waiting during collectives: x"}
fabricproof: lost-rank: {"rank":0,"host":"node1","phase":"collectives","step":"x","seen_by":1,"reason":"rank 0 did not end the job"}
)LOG";
  const auto given = parse_launcher_log(log);
  ASSERT_EQ(given.size(), 4u);
  EXPECT_EQ(given[0].group, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(given[1].alive);
  EXPECT_EQ(given[3].seen_by, 1);
  ASSERT_TRUE(finalize_report(r, "mpirun exited 2", given, "now"));
  std::vector<std::string> lost;
  for (const auto& f : r.findings)
    if (f.id == "rank_lost") lost.push_back(f.subject.text());
  EXPECT_EQ(lost, (std::vector<std::string>{"rank 2 (node2)"})) << "rank 0 was blocked (its watchdog said so), not lost";

  auto without_group = unfinished_report();  // an older watchdog line (no group): the whole world
  without_group.world_size = 3;
  ASSERT_TRUE(finalize_report(without_group, "mpirun exited 2", parse_launcher_log(R"(fabricproof: watchdog: {"rank":0,"what":"x"})"), "now"));
  size_t named = 0;
  for (const auto& f : without_group.findings) named += f.id == "rank_lost";
  EXPECT_EQ(named, 2u);
}

TEST(Finalize, AFinalReportIsLeftAsItIs) {
  auto r = unfinished_report();
  r.finished = true;
  r.in_flight.reset();
  const nlohmann::json before = r;
  EXPECT_FALSE(finalize_report(r, "mpirun exited 2", {{1, "x", "y"}}, "now"));
  EXPECT_EQ(nlohmann::json(r), before);
}

// A full disk never replaces a good report with a truncated one: the write fails (RLIMIT_FSIZE
// stands in for a full file system, in a child process), the old file stays, no temporary is left.
TEST(AtomicWrite, AFailedWriteKeepsTheOldFileAndSaysWhy) {
  test::TempDir tmp("atomic-full");
  const auto path = (tmp.path() / "report.json").string();
  ASSERT_NO_THROW(write_file_atomic(path, "the good report\n"));
  const pid_t child = fork();
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);  // the write returns EFBIG instead of killing the process
    rlimit limit{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    const auto error = failure_of([&] { write_file_atomic(path, std::string(100000, 'x')); }).value_or("");
    _exit(error.find("write") != std::string::npos && error.find("File too large") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the error must name the failed step and the reason";
  EXPECT_EQ(read_text(path), "the good report\n");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path())) ++files;
  EXPECT_EQ(files, 1u) << "the temporary file is removed";
}

TEST(AtomicWrite, ALinkAtTheReportPathIsReplacedNotFollowed) {
  test::TempDir tmp("atomic-link");
  const auto victim = tmp.path() / "victim";
  std::ofstream(victim) << "not yours";
  fs::create_symlink(victim, tmp.path() / "report.json");
  ASSERT_NO_THROW(write_file_atomic((tmp.path() / "report.json").string(), "report\n"));
  EXPECT_EQ(read_text(victim), "not yours");
  EXPECT_FALSE(fs::is_symlink(tmp.path() / "report.json"));
  EXPECT_EQ(read_text(tmp.path() / "report.json"), "report\n");
}

TEST(OutputDirectory, IsCreatedAndProvedWritableOrNamedInTheError) {
  test::TempDir tmp("outdir");
  EXPECT_NO_THROW(check_output_directory((tmp.path() / "a" / "b").string()));
  EXPECT_TRUE(fs::is_directory(tmp.path() / "a" / "b"));
  EXPECT_TRUE(fs::is_empty(tmp.path() / "a" / "b")) << "the probe file is removed";
  std::ofstream(tmp.path() / "file") << "x";
  const auto error = failure_of([&] { check_output_directory((tmp.path() / "file" / "sub").string()); });
  ASSERT_TRUE(error) << "a directory below a file is refused";
  EXPECT_NE(error->find((tmp.path() / "file" / "sub").string()), std::string::npos) << *error;
  if (geteuid() != 0) {  // root writes anywhere: the read-only case needs a normal user
    fs::create_directory(tmp.path() / "ro");
    fs::permissions(tmp.path() / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_THROW(check_output_directory((tmp.path() / "ro").string()), LocatedError);
  }
}

}  // namespace
}  // namespace fabricproof

namespace fabricproof {
namespace {

// A job that could not start: ssh's and Open MPI's words, each host named with the reason in plain
// words, and the report says the job never started there (not a lost rank, not a signal).
TEST(Finalize, ALaunchThatFailedNamesEachHostAndWhy) {
  const auto losses = parse_launcher_log(R"(ssh: Could not resolve hostname node5: Name or service not known
ssh: connect to host node6 port 22: Connection refused
root@node7: Permission denied (publickey,password).
--------------------------------------------------------------------------
ORTE was unable to reliably start one or more daemons.
--------------------------------------------------------------------------
mpirun was unable to launch the specified application as it could not access
or execute an executable:

Executable: /opt/fabricproof/bin/fabricproof
Node: node8

while attempting to start process rank 0.
)");
  ASSERT_EQ(losses.size(), 4u);
  const std::vector<std::pair<std::string, std::string>> expected = {{"node5", "the host name does not resolve"},
                                                                     {"node6", "refuses ssh (connection refused)"},
                                                                     {"node7", "refuses ssh (permission denied: keys or user)"},
                                                                     {"node8", "no binary there: /opt/fabricproof/bin/fabricproof"}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(losses[i].not_started);
    EXPECT_EQ(losses[i].host, expected[i].first);
    EXPECT_EQ(losses[i].what.rfind(expected[i].second, 0), 0u) << losses[i].what;
  }
  Report report;
  report.finished = false;
  report.in_flight = InFlight{"start", "before rank 0 wrote its first report", ""};
  ASSERT_TRUE(finalize_report(report, "mpirun could not start the job (exit status 255)", losses, "2026-12-04T00:00:00Z"));
  EXPECT_EQ(report.verdict, Verdict::error);
  int launch_failed = 0;
  for (const auto& f : report.findings) {
    launch_failed += f.id == "launch_failed";
    EXPECT_NE(f.id, "rank_lost");
    EXPECT_NE(f.id, "node_lost");
    if (f.id == "run_incomplete") {
      EXPECT_EQ(f.hint, "The launcher could not start the job: node5: " + losses[0].what + ".");
    }
  }
  EXPECT_EQ(launch_failed, 4);
}

}  // namespace
}  // namespace fabricproof
