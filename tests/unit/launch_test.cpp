#include <gtest/gtest.h>

#include <map>

#include "launch/launch.hpp"

namespace fabricproof {
namespace {

Launch launch_with(const std::map<std::string, std::string>& vars) {
  return launch_from([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST(Launch, AnSrunTaskNamesItsJobStepNodesAndPmix) {
  const Launch l = launch_with({{"SLURM_JOB_ID", "42"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "3"}, {"SLURM_STEP_NUM_TASKS", "4"},
                                {"SLURM_NTASKS", "8"}, {"SLURM_STEP_NODELIST", "node[1-4]"}, {"SLURM_JOB_NODELIST", "node[1-8]"},
                                {"SLURM_JOB_PARTITION", "lab"}, {"PMIX_RANK", "3"}, {"SLURM_LAUNCH_NODE_IPADDR", "10.99.0.1"}});
  EXPECT_EQ(l.kind, "srun");
  EXPECT_EQ(l.wireup, "pmix");
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.tasks, 4);  // the step's, not the allocation's
  EXPECT_EQ(l.nodelist, "node[1-4]");
  EXPECT_EQ(l.launch_node_address, "10.99.0.1");
  EXPECT_EQ(describe(l), "srun (Slurm job 42, step 0, pmix): 4 task(s) on node[1-4], partition lab");
  nlohmann::json j = l;
  EXPECT_EQ(j.at("slurm").at("job_id"), "42");
  EXPECT_EQ(describe(j.get<Launch>()), describe(l));
}

TEST(Launch, MpirunInsideAnAllocationIsMpirunWithTheJob) {
  const Launch l = launch_with({{"OMPI_COMM_WORLD_SIZE", "16"}, {"OMPI_COMM_WORLD_RANK", "0"}, {"SLURM_JOB_ID", "7"},
                                {"SLURM_JOB_NODELIST", "gpu[01-04]"}, {"SLURM_PROCID", "0"},
                                {"OMPI_MCA_orte_hnp_uri", "332333056.0;tcp://10.99.0.1,192.0.2.2:48869;tcp6://[fd00::2]:59027"}});
  EXPECT_EQ(l.kind, "mpirun");
  EXPECT_EQ(l.rank, 0);
  EXPECT_EQ(l.tasks, 16);
  EXPECT_EQ(l.job_id, "7");
  EXPECT_EQ(l.launch_node_address, "10.99.0.1");  // mpirun's head node, its first IPv4 address
  EXPECT_EQ(describe(l), "mpirun (Slurm job 7): 16 task(s) on gpu[01-04]");
}

TEST(Launch, ByHandIsASingletonWithNoRank) {
  const Launch l = launch_with({});
  EXPECT_EQ(l.kind, "singleton");
  EXPECT_FALSE(l.rank.has_value());
  EXPECT_EQ(describe(l), "singleton");
}

TEST(Launch, AGarbledRankIsNoRankRatherThanZero) {
  // A rank that cannot be read is unknown, not 0 (a bad-input report is then written by every such rank).
  EXPECT_FALSE(launch_with({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "2x"}}).rank.has_value());
  EXPECT_FALSE(launch_with({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "-1"}}).rank.has_value());
  EXPECT_EQ(launch_with({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "1"}, {"PMI_FD", "5"}}).wireup, "pmi2");
}

}  // namespace fabricproof
