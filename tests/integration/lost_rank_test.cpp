// A run on a sick cluster still ends with a true verdict: a rank that stops (SIGSTOP), dies
// (SIGKILL) or whose mpirun is killed mid-run is named with its host and the step in flight, the
// run ends within the step's deadline plus 60 s, the results before it are kept, and no report
// of an unfinished run ever says pass. Faults land at a step (FABRICPROOF_INJECT), not after a
// delay, so they hit the same step on a slow machine as on a fast one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "paths.hpp"
#include "run_helpers.hpp"

namespace fabricproof {
namespace {

using namespace test;

// Small deadlines keep the tests short; the bound asserted is deadline + 60 s plus what the run
// needs to reach the faulted step (generous, for a machine 3x slower than this one).
constexpr int kDeadline = 10;
constexpr double kReachStep = 40;
const std::string kSweep = " --phases inventory,collectives --collective-engine mpi --max-bytes 256M --iters 5 --warmup 1"
                           " --timeout 10 --collective-timeout 10 --out ";

std::string this_host() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// The checks every lost-rank report must pass: final, error, the rank named with its host and step.
void expect_lost_rank_named(const nlohmann::json& report, const std::string& id, int rank, const std::string& phase,
                            const std::string& step_text) {
  EXPECT_EQ(report["verdict"], "error");
  EXPECT_FALSE(report.contains("in_flight")) << "a final report carries no step in flight";
  EXPECT_TRUE(report["finished_at"].is_string());
  const auto lost = findings_with_id(report, id);
  ASSERT_EQ(lost.size(), 1u) << report["findings"].dump(2);
  EXPECT_EQ(lost[0]["verdict"], "error");
  EXPECT_EQ(lost[0]["measured"]["rank"], rank);
  EXPECT_EQ(lost[0]["measured"]["host"], this_host());
  EXPECT_EQ(lost[0]["measured"]["phase"], phase);
  EXPECT_NE(lost[0]["measured"]["step"].get<std::string>().find(step_text), std::string::npos) << lost[0].dump(2);
  bool phase_error = false;
  for (const auto& p : report["phases"]) phase_error |= p["name"] == phase && p["verdict"] == "error";
  EXPECT_TRUE(phase_error) << report["phases"].dump(2);
}

// Rows of the allreduce sweep that completed before the fault: kept in the report.
size_t rows_kept(const nlohmann::json& report) {
  size_t rows = 0;
  if (report.contains("collectives"))
    for (const auto& r : report["collectives"]["results"]) rows += r["rows"].size();
  return rows;
}

TEST(LostRank, SigstopMidSweepIsNamedAndTheRunEnds) {
  TempDir tmp("lost-stop-sweep");
  const auto o = run_shell(mpirun(4, "2:allreduce on 1 node(s), 4 rank(s): 32M:stop") + " run" + kSweep + tmp.path().string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_LT(o.seconds, kDeadline + 60 + kReachStep) << o.output;
  const auto report = read_report(tmp.path());
  expect_lost_rank_named(report, "rank_lost", 2, "collectives", "32M");
  EXPECT_GE(rows_kept(report), 20u) << "8 B .. 16 MiB completed before the fault";
  EXPECT_NE(o.output.find("rank 2 (" + this_host() + ") stopped answering during collectives"), std::string::npos) << o.output;
}

TEST(LostRank, SigstopMidInventoryIsNamedAndTheRunEnds) {
  TempDir tmp("lost-stop-inventory");
  const auto o = run_shell(mpirun(4, "3:inventory: probing:stop") + " run" + kSweep + tmp.path().string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_LT(o.seconds, kDeadline + 60 + kReachStep) << o.output;
  const auto report = read_report(tmp.path());
  expect_lost_rank_named(report, "rank_lost", 3, "inventory", "inventory");
  for (const auto& p : report["phases"]) {
    if (p["name"] == "inventory") continue;
    EXPECT_EQ(p["verdict"], "skip") << p.dump();
  }
}

// mpirun notices a killed rank and ends the job, rank 0 with it: the wrapper finalises the report
// from what mpirun printed.
TEST(LostRank, SigkillMidSweepThroughTheWrapperIsFinalised) {
  TempDir tmp("lost-kill-sweep");
  const std::string wrapper = (source_dir() / "scripts" / "fabricproof-mpirun").string();
  const std::string hostfile = (source_dir() / "hostfiles" / "localhost").string();
  const auto o = run_shell(test::shm_env() + "FABRICPROOF_INJECT='1:allreduce on 1 node(s), 4 rank(s): 16M:kill' FABRICPROOF_BIN=" + std::string(FABRICPROOF_BINARY) +
                               " " + wrapper + " --hostfile " + hostfile + " -- run" + kSweep + tmp.path().string(),
                           tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_LT(o.seconds, kDeadline + 60 + kReachStep) << o.output;
  const auto report = read_report(tmp.path());
  expect_lost_rank_named(report, "rank_lost", 1, "collectives", "allreduce");
  EXPECT_NE(findings_with_id(report, "rank_lost").at(0)["measured"]["launcher"].get<std::string>().find("signal 9"), std::string::npos);
  EXPECT_EQ(findings_with_id(report, "run_incomplete").size(), 1u);
  EXPECT_GT(rows_kept(report), 0u) << "rows written while the sweep ran are kept";
  EXPECT_TRUE(fs::exists(tmp.path() / "launcher.log"));
  EXPECT_NE(o.output.find("finalising"), std::string::npos) << o.output;
}

// A rank that stops right before the timed calls: the others wait in the busy-polled barrier,
// which still answers rank 0's roll call, so the stopped rank is named and no other.
TEST(LostRank, SigstopBeforeTheTimedCallsIsNamed) {
  TempDir tmp("lost-stop-timed");
  const auto o = run_shell(mpirun(4, "2:32M (33554432 bytes): out-of-place timed calls:stop") + " run" + kSweep + tmp.path().string(),
                           tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_LT(o.seconds, kDeadline + 60 + kReachStep) << o.output;
  const auto report = read_report(tmp.path());
  expect_lost_rank_named(report, "rank_lost", 2, "collectives", "32M (33554432 bytes): out-of-place timed calls");
  EXPECT_GE(rows_kept(report), 20u) << "8 B .. 16 MiB completed before the fault";
}

// A rank that stops right before the checked call, which blocks (MPI_Allreduce, as applications
// call it): the others are blocked inside MPI and cannot answer a roll call. Their watchdogs say
// so with their group, end the job, and the wrapper's finaliser names the one rank of the group
// that did not say so, and no other.
TEST(LostRank, SigstopBeforeABlockingCallIsNamedByTheOthersWatchdogs) {
  TempDir tmp("lost-stop-blocking");
  const std::string wrapper = (source_dir() / "scripts" / "fabricproof-mpirun").string();
  const std::string hostfile = (source_dir() / "hostfiles" / "localhost").string();
  const auto o = run_shell(test::shm_env() + "FABRICPROOF_INJECT='2:32M (33554432 bytes): out-of-place checked call:stop' FABRICPROOF_BIN=" +
                               std::string(FABRICPROOF_BINARY) + " " + wrapper + " --hostfile " + hostfile + " -- run" + kSweep + tmp.path().string(),
                           tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_LT(o.seconds, 2 * kDeadline + 60 + kReachStep) << o.output;  // the stall, the watchdog's grace, then as any loss
  EXPECT_NE(o.output.find("fabricproof: watchdog: "), std::string::npos) << o.output;
  const auto report = read_report(tmp.path());
  expect_lost_rank_named(report, "rank_lost", 2, "collectives", "32M (33554432 bytes)");
  EXPECT_NE(findings_with_id(report, "rank_lost").at(0)["measured"]["launcher"].get<std::string>().find("no watchdog report from it"), std::string::npos)
      << findings_with_id(report, "rank_lost").at(0).dump(2);
  EXPECT_GE(rows_kept(report), 20u) << "8 B .. 16 MiB completed before the fault";
}

// mpirun killed from outside (no wrapper): the report says "incomplete" with the step in flight;
// `report --finalize` then makes it the error it is.
TEST(LostRank, KilledMpirunLeavesAnIncompleteReportAndTheFinaliserEndsIt) {
  TempDir tmp("lost-kill-mpirun");
  const auto out = tmp.path() / "report";
  Background job(mpirun(4) + " run" + kSweep + out.string(), tmp.path() / "log");
  // Wait until the sweep is under way, then kill mpirun (the whole process group: sh and mpirun).
  bool in_sweep = false;
  for (int i = 0; i < 1200 && !in_sweep; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      const auto r = nlohmann::json::parse(read_text(out / "report.json"));
      in_sweep = r.value("verdict", "") == "incomplete" && r["in_flight"]["phase"] == "collectives" &&
                 r["in_flight"]["step"].get<std::string>().find("allreduce on") != std::string::npos;
    } catch (const std::exception&) {
    }
  }
  ASSERT_TRUE(in_sweep) << "the sweep never started: " << read_text(tmp.path() / "log");
  kill(-job.pid(), SIGKILL);
  job.wait();
  const auto left = read_report(out);
  EXPECT_EQ(left["verdict"], "incomplete") << "a killed run must not leave a final verdict";
  EXPECT_FALSE(left.contains("finished_at"));
  EXPECT_EQ(left["in_flight"]["phase"], "collectives");

  const auto fin = run_shell(std::string(FABRICPROOF_BINARY) + " report --finalize " + out.string() + " --launcher-status 'mpirun killed by the test'",
                             tmp.path() / "finalize");
  EXPECT_EQ(fin.exit_code, 2) << fin.output;
  const auto report = read_report(out);
  EXPECT_EQ(report["verdict"], "error");
  const auto incomplete = findings_with_id(report, "run_incomplete");
  ASSERT_EQ(incomplete.size(), 1u);
  EXPECT_NE(incomplete[0]["measured"]["in_flight"].get<std::string>().find("collectives: allreduce on"), std::string::npos);
  EXPECT_EQ(incomplete[0]["measured"]["launcher"], "mpirun killed by the test");
  EXPECT_NE(read_text(out / "report.md").find("ERROR"), std::string::npos);
  // A second finalise leaves the now final report alone.
  const auto again = run_shell(std::string(FABRICPROOF_BINARY) + " report --finalize " + out.string(), tmp.path() / "again");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.output.find("already final"), std::string::npos) << again.output;
}

// An outer timeout stops the wrapper (SIGTERM): it passes the signal to mpirun and finalises.
TEST(LostRank, SignalToTheWrapperEndsTheJobAndFinalisesTheReport) {
  TempDir tmp("lost-wrapper-term");
  const auto out = tmp.path() / "report";
  const std::string wrapper = (source_dir() / "scripts" / "fabricproof-mpirun").string();
  const std::string hostfile = (source_dir() / "hostfiles" / "localhost").string();
  Background job("export FABRICPROOF_BIN=" + std::string(FABRICPROOF_BINARY) + "; " + shm_env() + "exec " + wrapper + " --hostfile " + hostfile + " -- run" + kSweep +
                     out.string(),
                 tmp.path() / "log");
  bool in_sweep = false;
  for (int i = 0; i < 1200 && !in_sweep; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    in_sweep = read_text(out / "report.json").find("allreduce on") != std::string::npos;
  }
  ASSERT_TRUE(in_sweep) << read_text(tmp.path() / "log");
  kill(job.pid(), SIGTERM);  // the wrapper only, as `timeout` would
  const auto o = job.wait();
  EXPECT_EQ(o.exit_code, 2) << o.output;
  const auto report = read_report(out);
  EXPECT_EQ(report["verdict"], "error");
  const auto incomplete = findings_with_id(report, "run_incomplete");
  ASSERT_EQ(incomplete.size(), 1u) << o.output;
  EXPECT_NE(incomplete[0]["measured"]["launcher"].get<std::string>().find("SIGTERM"), std::string::npos) << incomplete[0].dump();
}

}  // namespace
}  // namespace fabricproof
