// --collective-mode locate under a real mpirun: 16 ranks on this machine, each standing for a node
// (--locate-ranks-as-nodes, the documented testing aid). One rank is made slow from outside, as a
// sick node is: the test stops it with SIGSTOP 36 ms of every 40 (it gets a tenth of its time),
// so each allreduce of its group waits for it. Locate must name that rank and no other; a healthy
// run names nobody.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "paths.hpp"
#include "run_helpers.hpp"

namespace fabricproof {
namespace {

using namespace test;

const std::string kLocate = " run --phases collectives --collective-engine mpi --collective-mode locate --locate-ranks-as-nodes"
                            " --max-bytes 1M --iters 200 --timeout 30 --collective-timeout 30 --out ";

// The environment variable `name=value` in /proc/PID/environ (NUL-separated).
bool has_environment(pid_t pid, const std::string& entry) {
  const auto text = read_text("/proc/" + std::to_string(pid) + "/environ");
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\0', at);
    if (text.compare(at, (end == std::string::npos ? text.size() : end) - at, entry) == 0) return true;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return false;
}

// The fabricproof process of MPI rank `rank` of the job carrying `mark` in its environment.
pid_t find_rank(int rank, const std::string& mark) {
  std::error_code ec;
  const auto binary = fs::canonical(FABRICPROOF_BINARY, ec);
  DIR* proc = opendir("/proc");
  pid_t found = -1;
  while (dirent* e = proc ? readdir(proc) : nullptr) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0 || fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec) != binary || ec) continue;
    if (has_environment(pid, mark) && has_environment(pid, "OMPI_COMM_WORLD_RANK=" + std::to_string(rank))) found = pid;
  }
  if (proc) closedir(proc);
  return found;
}

// Stops rank `rank` of the marked job 36 ms of every 40 until destroyed; says whether it found it.
class Throttle {
 public:
  Throttle(int rank, std::string mark)
      : thread_([this, rank, mark] {
          pid_t pid = -1;
          while (!done_ && (pid = find_rank(rank, mark)) < 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
          found_ = pid > 0;
          while (!done_ && kill(pid, SIGSTOP) == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(36));
            kill(pid, SIGCONT);
            std::this_thread::sleep_for(std::chrono::milliseconds(4));
          }
          if (pid > 0) kill(pid, SIGCONT);
        }) {}
  ~Throttle() { stop(); }
  bool stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
    return found_;
  }

 private:
  std::atomic<bool> done_{false}, found_{false};
  std::thread thread_;
};

std::vector<std::string> named_hosts(const nlohmann::json& report) {
  std::vector<std::string> out;
  for (const auto& f : findings_with_id(report, "collective_locate_fault"))
    if (f["verdict"] == "fail") out.push_back(f["subject"]);
  return out;
}

// On this noisy fabric the throttled rank is named in most runs (docs/benchmarks.md); in the others
// the first round's and the control groups' spread is so wide that its tests are not beyond the
// noise, and it is left unsettled: not proven, exit 3. Never cleared (a pass), never another named.
TEST(CollectiveLocate, SixteenRanksOneThrottledIsNamedOrUnsettledAndNoOtherNamed) {
  TempDir tmp("locate-slow");
  const std::string mark = "FABRICPROOF_TEST_MARK=" + tmp.path().string();
  Throttle throttle(11, mark);
  const auto o = run_shell(mark + " " + mpirun(16) + kLocate + tmp.path().string(), tmp.path() / "log");
  ASSERT_TRUE(throttle.stop()) << "rank 11 of the job was never found to throttle";
  const auto report = read_report(tmp.path());
  const auto& locate = report["collectives"]["locate"];
  ASSERT_TRUE(locate.is_object()) << report["collectives"].dump(2);
  EXPECT_EQ(locate["nodes"], 16);
  const auto named = named_hosts(report);
  if (named.empty()) {  // unsettled: the run says so and does not pass
    EXPECT_EQ(o.exit_code, 3) << o.output;
    const auto unsettled = locate["unresolved"].dump();
    EXPECT_NE(unsettled.find("rank11:"), std::string::npos) << locate.dump(2);
    std::cout << "rank11 left unsettled, not named: " << unsettled << "\n";
    return;
  }
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_EQ(named, std::vector<std::string>{"rank11"}) << locate.dump(2);
  EXPECT_LE(locate["rounds"].get<int>(), 2 * 4 + 8) << "2 log2(N) + 8 rounds at N = 16";
  ASSERT_EQ(locate["faults"].size(), 1u);
  EXPECT_LT(locate["faults"][0]["ratio"].get<double>(), 0.85);
  EXPECT_GE(locate["faults"][0]["implicating"].size(), 3u) << "named after three cleared partners found it slow";
  EXPECT_NE(o.output.find("locate named rank11: slow with every cleared partner"), std::string::npos) << o.output;
}

// Sixteen busy ranks on a few cores are a noisy fabric (groups of the same round differ by 10 to
// 50 %): a healthy run names nobody, and a rank whose tests stay within that noise is left
// unsettled (not proven), never named.
TEST(CollectiveLocate, SixteenHealthyRanksNameNobody) {
  TempDir tmp("locate-healthy");
  const auto o = run_shell(mpirun(16) + kLocate + tmp.path().string(), tmp.path() / "log");
  const auto report = read_report(tmp.path());
  const auto& locate = report["collectives"]["locate"];
  ASSERT_TRUE(locate.is_object()) << report["collectives"].dump(2);
  EXPECT_TRUE(named_hosts(report).empty()) << locate.dump(2);
  EXPECT_GE(locate["rounds"].get<int>(), 1);
  EXPECT_EQ(locate["nodes_tested"], 16);
  const auto unsettled = findings_with_id(report, "collective_locate_unresolved");
  EXPECT_EQ(unsettled.size(), locate["unresolved"].size());
  EXPECT_EQ(o.exit_code, locate["unresolved"].empty() ? 0 : 3) << o.output;
}

}  // namespace
}  // namespace fabricproof
