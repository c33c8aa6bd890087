#include "launch/launch.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

namespace fabricproof {
namespace {

std::optional<int> number(const char* text) {
  if (!text) return std::nullopt;
  const std::string_view s(text);
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0) return std::nullopt;
  return value;
}

std::string text(const char* value) { return value ? value : ""; }

// "332333056.0;tcp://10.99.0.1,192.0.2.2:48869;tcp6://[fd00::2]:59027" -> "10.99.0.1".
std::string first_tcp_address(std::string_view uri) {
  const auto at = uri.find("tcp://");
  if (at == std::string_view::npos) return "";
  const auto rest = uri.substr(at + 6);
  return std::string(rest.substr(0, rest.find_first_of(",:;")));
}

}  // namespace

Launch launch_from(const std::function<const char*(const char*)>& env) {
  Launch l;
  if (env("OMPI_COMM_WORLD_SIZE")) {  // mpirun (also inside a Slurm allocation: mpirun, not srun)
    l.kind = "mpirun";
    l.tasks = number(env("OMPI_COMM_WORLD_SIZE")).value_or(0);
    l.rank = number(env("OMPI_COMM_WORLD_RANK"));
    l.launch_node_address = first_tcp_address(text(env("OMPI_MCA_orte_hnp_uri")));
  } else if (env("SLURM_STEP_ID") && env("SLURM_PROCID")) {  // a task of an srun job step
    l.kind = "srun";
    l.wireup = env("PMIX_RANK") ? "pmix" : env("PMI_RANK") || env("PMI_FD") ? "pmi2" : "";
    l.rank = number(env("SLURM_PROCID"));
    l.tasks = number(env("SLURM_STEP_NUM_TASKS")).value_or(number(env("SLURM_NTASKS")).value_or(0));
    l.launch_node_address = text(env("SLURM_LAUNCH_NODE_IPADDR"));
  }
  if (env("SLURM_JOB_ID")) {  // inside an allocation, whoever launched
    l.job_id = text(env("SLURM_JOB_ID"));
    l.step_id = text(env("SLURM_STEP_ID"));
    l.nodelist = text(env("SLURM_STEP_NODELIST") ? env("SLURM_STEP_NODELIST") : env("SLURM_JOB_NODELIST"));
    l.partition = text(env("SLURM_JOB_PARTITION"));
  }
  return l;
}

Launch launch_from_environment() {
  return launch_from([](const char* name) { return std::getenv(name); });
}

std::string describe(const Launch& l) {
  std::string s = l.kind;
  if (!l.job_id.empty())
    s += fmt::format(" (Slurm job {}{}{})", l.job_id, l.step_id.empty() ? "" : ", step " + l.step_id, l.wireup.empty() ? "" : ", " + l.wireup);
  if (l.tasks > 0) s += fmt::format(": {} task(s)", l.tasks);
  if (!l.nodelist.empty()) s += (l.tasks > 0 ? " on " : ": on ") + l.nodelist;
  if (!l.partition.empty()) s += ", partition " + l.partition;
  return s;
}

void to_json(nlohmann::json& j, const Launch& l) {
  j = {{"kind", l.kind}, {"tasks", l.tasks}};
  if (!l.wireup.empty()) j["wireup"] = l.wireup;
  if (!l.launch_node_address.empty()) j["launch_node_address"] = l.launch_node_address;
  if (!l.job_id.empty())
    j["slurm"] = {{"job_id", l.job_id}, {"step_id", l.step_id}, {"nodelist", l.nodelist}, {"partition", l.partition}};
}

void from_json(const nlohmann::json& j, Launch& l) {
  l = Launch{};
  l.kind = j.at("kind").get<std::string>();
  l.tasks = j.value("tasks", 0);
  l.wireup = j.value("wireup", "");
  l.launch_node_address = j.value("launch_node_address", "");
  if (const auto s = j.find("slurm"); s != j.end()) {
    l.job_id = s->value("job_id", "");
    l.step_id = s->value("step_id", "");
    l.nodelist = s->value("nodelist", "");
    l.partition = s->value("partition", "");
  }
}

}  // namespace fabricproof
