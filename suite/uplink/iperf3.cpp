#include "uplink/iperf3.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

extern char** environ;

namespace fabricproof::uplink {
namespace {

using Clock = std::chrono::steady_clock;

struct Output {
  std::string text;
  int status = -1;         // waitpid status
  bool timed_out = false;
  std::string error;       // the program could not be started
};

// Starts `argv` with stdout (and stderr, when `merge`) on a pipe, reads it until EOF or the
// deadline, kills the process group on the deadline, and reaps it.
Output capture(const std::vector<std::string>& argv, Clock::time_point deadline, bool merge) {
  Output out;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return out.error = std::string("pipe: ") + std::strerror(errno), out;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  if (merge) posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  else posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);  // its own group: killed as one
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    return out.error = "cannot start " + argv[0] + ": " + std::strerror(rc), out;
  }
  char buffer[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      out.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.text.size() < (16u << 20)) out.text.append(buffer, static_cast<size_t>(n));  // a few KiB normally
  }
  ::close(pipe_fds[0]);
  while (::waitpid(pid, &out.status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

// One client run, bounded at omit + seconds + 20 s.
UplinkFlows run_client_once(const Iperf3Run& run) {
  std::vector<std::string> argv = {run.program, "--client", run.target.host, "--port", std::to_string(run.target.port),
                                   "--reverse", "--json", "--time", std::to_string(std::max(1, static_cast<int>(run.seconds + 0.5))),
                                   "--parallel", std::to_string(run.flows), "--omit", std::to_string(run.omit_seconds),
                                   "--connect-timeout", "5000"};
  if (!run.bind_address.empty()) argv.insert(argv.end(), {"--bind", run.bind_address});
  const double limit_s = run.omit_seconds + run.seconds + 20;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s));
  const Output out = capture(argv, deadline, false);
  UplinkFlows f;
  if (!out.error.empty()) {
    f.status = Status::error;
    f.reason = out.error + " (Debian: apt-get install iperf3)";
  } else if (out.timed_out) {
    f.status = Status::error;
    f.reason = "iperf3 to " + to_string(run.target) + " did not end within " + std::to_string(static_cast<int>(limit_s)) + " s; killed";
  } else {
    f = parse_iperf3_json(out.text);
    if (f.status == Status::ok && f.flows != run.flows)
      f = uplink_error(run.flows, "iperf3 reported " + std::to_string(f.flows) + " flow(s) of the " + std::to_string(run.flows) + " asked");
  }
  f.flows = run.flows;
  return f;
}

bool server_was_busy(const UplinkFlows& f) {
  return f.status == Status::error && f.reason.find("the server is busy") != std::string::npos;
}

}  // namespace

// A stock server refuses a client as busy while it still holds the last client's control
// connection, and its loop takes a new connection before the last client's goodbye when both are
// waiting (iperf_server_api.c: the listener is served before ctrl_sck). So the run right after
// another one can be refused when the server's host is loaded (once in CI: 1 flow, then 2 flows
// refused). iperf3 leaves it to the client to try again; the tries are counted and reported.
UplinkFlows run_iperf3(const Iperf3Run& run) {
  UplinkFlows f = run_client_once(run);
  double waited_s = 0;
  int retries = 0;
  for (double wait_s = kIperf3FirstBusyWaitS; server_was_busy(f) && retries < kIperf3BusyRetries; ++retries, waited_s += wait_s, wait_s *= 2) {
    std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
    f = run_client_once(run);
  }
  f.server_busy_retries = retries;
  if (server_was_busy(f))
    f.reason += fmt::format(" (refused as busy {} times over {:.2g} s: is another client testing against this server?)", retries + 1, waited_s);
  return f;
}

std::string iperf3_version(const std::string& program) {
  const auto out = capture({program, "--version"}, Clock::now() + std::chrono::seconds(5), true);
  if (!out.error.empty() || out.timed_out || !WIFEXITED(out.status)) return "";
  return out.text.substr(0, out.text.find('\n'));
}

}  // namespace fabricproof::uplink
