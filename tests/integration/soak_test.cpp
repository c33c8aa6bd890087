// The soak on this machine under mpirun: no RDMA port here, so the load is the MPI collective and
// the verbs part and the counters are not proven (the lab soaks the RDMA ports: tests/lab, step
// soak). What runs here: passes until the duration, the report rewritten while it runs, a soak
// killed from outside that keeps its time line and says how far it got.
#include <gtest/gtest.h>

#include <thread>

#include "paths.hpp"
#include "run_helpers.hpp"

namespace fabricproof::test {
namespace {

std::string soak_run(const std::string& duration, const std::string& interval) {
  return " run --phases inventory --collective-engine mpi --max-bytes 64K --profile " + fixture("profiles/soak-localhost.json").string() +
         " --soak " + duration + " --soak-interval " + interval + " --out ";
}

TEST(Soak, RunsPassesForItsDurationAndSaysWhatItCouldNotProve) {
  TempDir tmp("soak-localhost");
  const auto out = tmp.path() / "report";
  const auto o = run_shell(mpirun(2) + soak_run("6s", "2s") + out.string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 3) << o.output;  // no RDMA port: the verbs load and the counters are not proven
  const auto report = read_report(out);
  ASSERT_TRUE(report.contains("soak")) << o.output;
  const auto& soak = report["soak"];
  EXPECT_TRUE(soak["finished"].get<bool>());
  EXPECT_GE(soak["ran_s"].get<double>(), 6.0);
  ASSERT_GE(soak["passes"].size(), 3u);
  for (const auto& pass : soak["passes"]) {
    ASSERT_EQ(pass["figures"].size(), 1u);
    EXPECT_EQ(pass["figures"][0]["kind"], "collective");
    EXPECT_EQ(pass["figures"][0]["status"], "ok") << pass.dump();
    EXPECT_GT(pass["figures"][0]["value"].get<double>(), 0);
  }
  EXPECT_GE(soak["samples"].size(), 3u) << "a sample at the start, every 2 s, and at the end";
  const auto load = findings_with_id(report, "soak_load");
  ASSERT_FALSE(load.empty());
  EXPECT_EQ(load[0]["verdict"], "not_proven");
  EXPECT_NE(load[0]["measured"].get<std::string>().find("verbs:"), std::string::npos) << load[0].dump();
  const auto counters = findings_with_id(report, "soak_counters");
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters[0]["verdict"], "not_proven");
  EXPECT_NE(read_text(out / "report.md").find("## Soak (burn-in)"), std::string::npos);
  EXPECT_NE(o.output.find("soak: pass "), std::string::npos) << o.output;
  // The GPUs' memory read again at the end went round every rank (the run ended, exit 3 above): no
  // GPU here, so none to compare.
  EXPECT_EQ(soak.value("gpu_memory", nlohmann::json::array()), nlohmann::json::array());
  EXPECT_TRUE(findings_with_id(report, "soak_gpu_memory").empty());
}

TEST(Soak, KilledMidSoakTheReportKeepsTheTimeLineAndSaysHowFar) {
  TempDir tmp("soak-killed");
  const auto out = tmp.path() / "report";
  Background job(mpirun(2) + soak_run("10m", "1s") + out.string(),
                 tmp.path() / "log");
  bool two_passes = false;  // written at least twice: the report is rewritten while the soak runs
  for (int i = 0; i < 1200 && !two_passes; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      const auto r = nlohmann::json::parse(read_text(out / "report.json"));
      two_passes = r.value("verdict", "") == "incomplete" && r.contains("soak") && r["soak"]["ran_s"].get<double>() >= 2;
    } catch (const std::exception&) {
    }
  }
  ASSERT_TRUE(two_passes) << "the soak never reached 2 s: " << read_text(tmp.path() / "log");
  kill(-job.pid(), SIGKILL);
  job.wait();
  // The ranks are in process groups of their own and end when they lose mpirun (under a second
  // here): until then rank 0 may still write the report, so the finaliser runs after them.
  const auto gone = run_shell("for i in $(seq 300); do pgrep -f '[f]abricproof run.*" + out.string() + "' >/dev/null || exit 0; sleep 0.1; done; exit 1",
                              tmp.path() / "ranks-gone");
  ASSERT_EQ(gone.exit_code, 0) << "the ranks outlived mpirun by 30 s";
  const auto left = read_report(out);
  EXPECT_EQ(left["in_flight"]["phase"], "soak");
  EXPECT_FALSE(left["soak"]["finished"].get<bool>());
  EXPECT_FALSE(left["soak"]["passes"].empty());
  EXPECT_FALSE(left["soak"]["samples"].empty());

  const auto fin = run_shell(std::string(FABRICPROOF_BINARY) + " report --finalize " + out.string() + " --launcher-status 'killed by the test'",
                             tmp.path() / "finalize");
  EXPECT_EQ(fin.exit_code, 2) << fin.output;
  const auto report = read_report(out);
  const auto incomplete = findings_with_id(report, "run_incomplete");
  ASSERT_EQ(incomplete.size(), 1u) << fin.output << "\n" << read_text(tmp.path() / "log");
  EXPECT_NE(incomplete[0]["measured"]["soak"].get<std::string>().find("cut short at"), std::string::npos) << incomplete[0].dump();
  EXPECT_NE(incomplete[0]["measured"]["soak"].get<std::string>().find("of 10:00"), std::string::npos) << incomplete[0].dump();
  EXPECT_NE(read_text(out / "report.md").find("cut short or still running"), std::string::npos);
}

// The launcher's finaliser makes the report final once mpirun is gone; a rank 0 that still runs
// (ranks outlive a killed mpirun by a moment) must not put its unfinished report back. Here the
// finaliser runs while the whole job still runs, which makes the moment as long as it takes.
TEST(Soak, AReportFinalisedByAnotherProcessIsLeftAsItIs) {
  TempDir tmp("soak-taken-over");
  const auto out = tmp.path() / "report";
  Background job(mpirun(2) + soak_run("10m", "1s") + out.string(), tmp.path() / "log");
  bool running = false;
  for (int i = 0; i < 1200 && !running; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      running = nlohmann::json::parse(read_text(out / "report.json")).contains("soak");
    } catch (const std::exception&) {
    }
  }
  ASSERT_TRUE(running) << "the soak never started: " << read_text(tmp.path() / "log");
  const auto fin = run_shell(std::string(FABRICPROOF_BINARY) + " report --finalize " + out.string() + " --launcher-status 'finalised by the test'",
                             tmp.path() / "finalize");
  EXPECT_EQ(fin.exit_code, 2) << fin.output;
  std::this_thread::sleep_for(std::chrono::seconds(3));  // three of the soak's 1 s intervals: it would have written by now
  const auto report = read_report(out);
  EXPECT_EQ(report["verdict"], "error") << "the run put its unfinished report back";
  EXPECT_EQ(findings_with_id(report, "run_incomplete").size(), 1u);
  EXPECT_NE(read_text(tmp.path() / "log").find("was rewritten by another process"), std::string::npos) << read_text(tmp.path() / "log");
  kill(-job.pid(), SIGKILL);
  job.wait();
  run_shell("for i in $(seq 300); do pgrep -f '[f]abricproof run.*" + out.string() + "' >/dev/null || exit 0; sleep 0.1; done; exit 1",
            tmp.path() / "ranks-gone");
}

}  // namespace
}  // namespace fabricproof::test
