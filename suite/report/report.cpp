#include "report/report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace fabricproof {

Verdict Report::overall() const {
  Verdict v = worst_verdict(findings);
  for (const auto& p : phases) v = worst(v, p.verdict);
  return v == Verdict::skip ? Verdict::pass : v;
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

void to_json(nlohmann::json& j, const Report& r) {
  j = {{"schema", r.schema},
       {"verdict", r.verdict},
       {"started_at", r.started_at},
       {"finished_at", r.finished_at},
       {"command", r.command},
       {"profile", r.profile},
       {"build", r.build},
       {"world_size", r.world_size},
       {"missing_ranks", r.missing_ranks},
       {"rank_map", r.rank_map},
       {"nodes", r.nodes},
       {"findings", r.findings},
       {"phases", r.phases}};
  for (const auto& [name, section] : r.sections.items()) j[name] = section;
}

void from_json(const nlohmann::json& j, Report& r) {
  static const std::vector<std::string> kCore = {"schema", "verdict", "started_at", "finished_at", "command", "profile", "build",
                                                 "world_size", "missing_ranks", "rank_map", "nodes", "findings", "phases"};
  r.schema = j.at("schema").get<std::string>();
  r.verdict = j.at("verdict").get<Verdict>();
  r.started_at = j.value("started_at", "");
  r.finished_at = j.value("finished_at", "");
  r.command = j.value("command", std::vector<std::string>{});
  r.profile = j.value("profile", nlohmann::json());
  r.build = j.value("build", nlohmann::json());
  r.world_size = j.value("world_size", 0);
  r.missing_ranks = j.value("missing_ranks", std::vector<int>{});
  r.rank_map = j.value("rank_map", std::vector<RankPlacement>{});
  r.nodes = j.value("nodes", std::vector<NodeFacts>{});
  r.findings = j.value("findings", std::vector<Finding>{});
  r.phases = j.value("phases", std::vector<PhaseRecord>{});
  r.sections = nlohmann::json::object();
  for (const auto& [name, value] : j.items())
    if (std::find(kCore.begin(), kCore.end(), name) == kCore.end()) r.sections[name] = value;
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

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string write_file_atomic(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return temporary + ": " + std::strerror(errno);
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string error = temporary + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(temporary.c_str());
      return error;
    }
    written += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string error = path + ": " + std::strerror(errno);
    ::unlink(temporary.c_str());
    return error;
  }
  return "";
}

}  // namespace fabricproof
