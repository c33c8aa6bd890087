#include "report/report.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <thread>
#include <type_traits>

namespace fabricproof {

Verdict Report::overall() const {
  Verdict v = worst_verdict(findings);
  for (const auto& p : phases) v = worst(v, p.verdict);
  return v == Verdict::skip ? Verdict::pass : v;
}

std::string Report::verdict_label() const { return finished ? fabricproof::verdict_label(verdict) : "INCOMPLETE"; }

std::string Report::not_proven_line() const {
  std::string phases_not_run;
  for (const auto& p : phases)
    if (p.verdict == Verdict::not_proven) phases_not_run += (phases_not_run.empty() ? "" : "; ") + p.name + " (" + p.reason + ")";
  const auto missing = std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.verdict == Verdict::not_proven; });
  std::string line = phases_not_run.empty() ? "" : "not run: " + phases_not_run;
  if (missing > 0) line += (line.empty() ? "" : "; ") + std::to_string(missing) + " finding(s) not proven (not measured)";
  return line;
}

void to_json(nlohmann::json& j, const InFlight& f) { j = {{"phase", f.phase}, {"step", f.step}, {"since", f.since}}; }
void from_json(const nlohmann::json& j, InFlight& f) {
  f.phase = j.value("phase", "");
  f.step = j.value("step", "");
  f.since = j.value("since", "");
}

void to_json(nlohmann::json& j, const PhaseRecord& p) {
  j = {{"name", p.name}, {"verdict", p.verdict}, {"reason", p.reason}, {"duration_s", p.duration_s}};
}
void from_json(const nlohmann::json& j, PhaseRecord& p) {
  p.name = j.at("name").get<std::string>();
  p.verdict = j.at("verdict").get<Verdict>();
  p.reason = j.value("reason", "");
  p.duration_s = j.value("duration_s", 0.0);
}

void to_json(nlohmann::json& j, const RankPlacement& r) {
  j = {{"rank", r.rank}, {"host", r.host}, {"local_rank", r.local_rank}, {"gpu", r.gpu}, {"gpu_uuid", r.gpu_uuid}};
}
void from_json(const nlohmann::json& j, RankPlacement& r) {
  r.rank = j.at("rank").get<int>();
  r.host = j.at("host").get<std::string>();
  r.local_rank = j.value("local_rank", 0);
  r.gpu = j.value("gpu", std::optional<int>());
  r.gpu_uuid = j.value("gpu_uuid", "");
}

namespace {
// Every typed section with its top-level key, for the two directions of the JSON edge.
template <typename R, typename F>
void each_section(R& r, F&& f) {
  f("launcher", r.launcher);
  f("verbs", r.verbs);
  f("gpudirect", r.gpudirect);
  f("collectives", r.collectives);
  f("nccl_audit", r.nccl_audit);
  f("uplink", r.uplink);
  f("soak", r.soak);
}
}  // namespace

void to_json(nlohmann::json& j, const ProfileRecord& p) { j = {{"name", p.name}, {"origin", p.origin}, {"document", p.document}}; }

void from_json(const nlohmann::json& j, ProfileRecord& p) {
  p.name = j.value("name", "");
  p.origin = j.value("origin", "");
  p.document = j.value("document", nlohmann::json());
}

void to_json(nlohmann::json& j, const BuildRecord& b) {
  j = {{"version", b.version}, {"compiler", b.compiler}, {"optional_parts", b.optional_parts}};
  if (b.cuda_toolkit) j["cuda_toolkit"] = *b.cuda_toolkit;
  if (b.cuda_architectures) j["cuda_architectures"] = *b.cuda_architectures;
}

void from_json(const nlohmann::json& j, BuildRecord& b) {
  b.version = j.value("version", "");
  b.compiler = j.value("compiler", "");
  b.optional_parts = j.value("optional_parts", std::map<std::string, bool>{});
  if (j.contains("cuda_toolkit")) b.cuda_toolkit = j.at("cuda_toolkit").get<std::string>();
  if (j.contains("cuda_architectures")) b.cuda_architectures = j.at("cuda_architectures").get<std::string>();
}

void to_json(nlohmann::json& j, const Report& r) {
  j = {{"schema", r.schema},
       {"verdict", r.finished ? nlohmann::json(r.verdict) : nlohmann::json("incomplete")},
       {"started_at", r.started_at},
       {"command", r.command},
       {"profile", r.profile},
       {"build", r.build},
       {"world_size", r.world_size},
       {"missing_ranks", r.missing_ranks},
       {"rank_map", r.rank_map},
       {"nodes", r.nodes},
       {"findings", r.findings},
       {"phases", r.phases}};
  if (r.finished)
    j["finished_at"] = r.finished_at;
  else
    j["in_flight"] = r.in_flight.value_or(InFlight{});
  each_section(r, [&](const char* name, const auto& section) {
    if (section) j[name] = *section;
  });
  for (const auto& [name, section] : r.other_sections.items()) j[name] = section;
}

void from_json(const nlohmann::json& j, Report& r) {
  static const std::vector<std::string> kCore = {"schema", "verdict", "started_at", "finished_at", "in_flight", "command", "profile",
                                                 "build", "world_size", "missing_ranks", "rank_map", "nodes", "findings", "phases"};
  r.schema = j.at("schema").get<std::string>();
  r.finished = j.at("verdict") != "incomplete";
  if (r.finished) r.verdict = j.at("verdict").get<Verdict>();
  if (!r.finished) r.in_flight = j.value("in_flight", InFlight{});
  r.started_at = j.value("started_at", "");
  r.finished_at = j.value("finished_at", "");
  r.command = j.value("command", std::vector<std::string>{});
  if (const auto p = j.find("profile"); p != j.end() && p->is_object()) r.profile = p->get<ProfileRecord>();
  if (const auto b = j.find("build"); b != j.end() && b->is_object()) r.build = b->get<BuildRecord>();
  r.world_size = j.value("world_size", 0);
  r.missing_ranks = j.value("missing_ranks", std::vector<int>{});
  r.rank_map = j.value("rank_map", std::vector<RankPlacement>{});
  r.nodes = j.value("nodes", std::vector<NodeFacts>{});
  r.findings = j.value("findings", std::vector<Finding>{});
  r.phases = j.value("phases", std::vector<PhaseRecord>{});
  if (!r.finished) r.verdict = r.overall();
  std::vector<std::string> known = kCore;
  each_section(r, [&](const char* name, auto& section) {
    known.emplace_back(name);
    if (const auto it = j.find(name); it != j.end() && !it->is_null()) section = it->get<typename std::decay_t<decltype(section)>::value_type>();
  });
  r.other_sections = nlohmann::json::object();
  for (const auto& [name, value] : j.items())
    if (std::find(known.begin(), known.end(), name) == known.end()) r.other_sections[name] = value;
}

void set_cluster(Report& report, const ClusterFacts& cluster) {
  report.nodes = cluster.nodes;
  report.world_size = cluster.world_size;
  report.missing_ranks = cluster.missing_ranks;
  report.rank_map.clear();
  for (const auto& node : cluster.nodes)
    for (const auto& r : node.ranks) report.rank_map.push_back({r.rank, r.host, r.local_rank, r.gpu, r.gpu_uuid});
  std::sort(report.rank_map.begin(), report.rank_map.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
}

namespace {

// A temporary file beside `path` that did not exist before (O_EXCL) and is not a link planted
// there (O_NOFOLLOW): the report directory may be shared.
int create_temporary(const std::string& path, std::string& temporary) {
  static unsigned counter = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    temporary = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

}  // namespace

ReportLock::ReportLock(const std::string& dir, double wait_s) {
  fd_ = ::open((std::filesystem::path(dir) / ".report.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) return;  // unsupported: a read-only directory is the write's own error to report
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return;  // ENOLCK, EINVAL: a file system without locks
    if (std::chrono::steady_clock::now() >= give_up) {
      state_ = State::busy;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  state_ = State::held;
}

ReportLock::~ReportLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the lock
}

std::optional<FileIdentity> file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{static_cast<uint64_t>(st.st_ino), static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

void write_file_atomic(const std::string& path, const std::string& content) {
  std::string temporary;
  const int fd = create_temporary(path, temporary);
  if (fd < 0) throw LocatedError("", temporary + ": " + std::strerror(errno));
  auto fail = [&](const char* step, int fd_to_close) {
    const std::string error = temporary + ": " + step + ": " + std::strerror(errno);
    if (fd_to_close >= 0) ::close(fd_to_close);
    ::unlink(temporary.c_str());
    throw LocatedError("", error);
  };
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write", fd);  // a full disk: ENOSPC (or a short write then ENOSPC)
    written += static_cast<size_t>(n);
  }
  // A delayed write error (NFS, a full thin volume) shows only here: never rename over a good file then.
  if (::fsync(fd) != 0) fail("fsync", fd);
  if (::close(fd) != 0) fail("close", -1);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string error = path + ": rename: " + std::strerror(errno);
    ::unlink(temporary.c_str());
    throw LocatedError("", error);
  }
}

void check_output_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw LocatedError("", dir + ": cannot create the report directory: " + ec.message());
  if (!std::filesystem::is_directory(dir, ec)) throw LocatedError("", dir + ": not a directory");
  const std::string probe = (std::filesystem::path(dir) / ".fabricproof-write-probe").string();
  if (auto failed = failure_of([&] { write_file_atomic(probe, "fabricproof checks that the report directory is writable\n"); }))
    throw LocatedError("", dir + ": the report cannot be written there (" + *failed + ")");
  std::filesystem::remove(probe, ec);
}

}  // namespace fabricproof
