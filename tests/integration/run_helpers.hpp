#pragma once
// Running the real binary under mpirun in the integration tests: shell commands with their exit
// code and output, background jobs to fault while they run, and reading the report they leave.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "report/schema_check.hpp"

namespace fabricproof::test {

namespace fs = std::filesystem;

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Outcome {
  int exit_code = -1;
  std::string output;
  double seconds = 0;
};

inline Outcome run_shell(const std::string& command, const fs::path& log) {
  const auto start = std::chrono::steady_clock::now();
  const std::string full = command + " > '" + log.string() + "' 2>&1";
  const int status = std::system(full.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.output = read_text(log);
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

// A shell command in the background (its own process group), to fault while it runs.
class Background {
 public:
  Background(const std::string& command, const fs::path& log) : log_(log), start_(std::chrono::steady_clock::now()) {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      execl("/bin/sh", "sh", "-c", (command + " > '" + log.string() + "' 2>&1").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Background() {
    if (pid_ > 0 && !done_) {  // a test that failed early: leave nothing running
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  pid_t pid() const { return pid_; }
  // Waits for the command to end; its exit code (-1: killed by a signal) and output.
  Outcome wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    done_ = true;
    Outcome o;
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    o.output = read_text(log_);
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return o;
  }

 private:
  fs::path log_;
  std::chrono::steady_clock::time_point start_;
  pid_t pid_ = -1;
  bool done_ = false;
};

// Open MPI's shared-memory segments of this test process's jobs: a job whose ranks a test kills
// or stops never unlinks its own (4 MB a rank, left in /dev/shm by every CI run), so they go to a
// directory of this process, removed when it ends.
inline const fs::path& shm_directory() {
  struct Directory {
    fs::path path;
    Directory() {
      const fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
      path = base / ("fabricproof-test-" + std::to_string(getpid()));
      fs::create_directories(path);
    }
    ~Directory() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  };
  static const Directory directory;
  return directory.path;
}
inline std::string shm_env() { return "OMPI_MCA_btl_vader_backing_directory='" + shm_directory().string() + "' "; }

// mpirun refuses root without these; 4 ranks on fewer cores need --oversubscribe. `inject` is a
// FABRICPROOF_INJECT fault ("RANK:STEP TEXT:stop|kill|exit") passed to every rank.
inline std::string mpirun(int ranks, const std::string& inject = "") {
  const std::string env = inject.empty() ? "" : "FABRICPROOF_INJECT='" + inject + "' ";
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 " + shm_env() + env +
         std::string(FABRICPROOF_MPIEXEC) + " -np " + std::to_string(ranks) + (inject.empty() ? "" : " -x FABRICPROOF_INJECT") + " " +
         FABRICPROOF_BINARY;
}

// Every report an integration test reads is also checked against the published schema.
inline nlohmann::json read_report(const fs::path& dir) {
  std::ifstream in(dir / "report.json");
  EXPECT_TRUE(in.good()) << "no report.json in " << dir;
  auto report = nlohmann::json::parse(in);
  for (const auto& wrong : report_shape_errors(report)) ADD_FAILURE() << dir / "report.json" << " against schemas/report.schema.json: " << wrong;
  return report;
}

inline std::vector<nlohmann::json> findings_with_id(const nlohmann::json& report, const std::string& id) {
  std::vector<nlohmann::json> out;
  for (const auto& f : report["findings"])
    if (f["id"] == id) out.push_back(f);
  return out;
}

}  // namespace fabricproof::test
