#pragma once
// How a run was launched, read from the launcher's environment: mpirun (Open MPI: OMPI_COMM_WORLD_*),
// srun (Slurm: SLURM_*, with PMIx or PMI-2 as the MPI's wire-up) or by hand (a singleton). The report
// keeps it as its `launcher` section, so that a Slurm run names its job, step and node list.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace fabricproof {

struct Launch {
  std::string kind = "singleton";  // mpirun | srun | singleton
  std::string wireup;              // srun's MPI interface: pmix | pmi2 | "" (unknown)
  std::string job_id;              // Slurm's job and step, node list and partition
  std::string step_id;
  std::string nodelist;
  std::string partition;
  int tasks = 0;                   // the launcher's task count (0: unknown)
  std::optional<int> rank;         // this process's rank as the launcher numbers it
  // Where mpirun or srun runs, as its daemons reach it: SLURM_LAUNCH_NODE_IPADDR, or the first
  // IPv4 address of Open MPI's head node URI (OMPI_MCA_orte_hnp_uri). The job's control path.
  std::string launch_node_address;
};

// `env` returns a variable's value or nullptr (std::getenv in the binary, a table in tests).
Launch launch_from(const std::function<const char*(const char*)>& env);
Launch launch_from_environment();

// One line for people: "srun (Slurm job 12, step 0, pmix): 4 task(s) on node[1-4], partition lab".
std::string describe(const Launch& l);

void to_json(nlohmann::json& j, const Launch& l);
void from_json(const nlohmann::json& j, Launch& l);

}  // namespace fabricproof
