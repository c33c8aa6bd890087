#pragma once
// Host facts from procfs, sysfs and /etc: hostname, OS, kernel, CPU, NUMA, kernel modules
// (mlx5_core: OFED or inbox; nvidia_peermem: loaded and persisted), the NVIDIA driver, and
// NVIDIA GPUs as the PCI bus sees them (whether or not CUDA can use them).
#include <map>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"
#include "inventory/file_reader.hpp"

namespace fabricproof::probe {

void read_host(FileReader& files, NodeFacts& node);
void read_software(FileReader& files, SoftwareFacts& software);
std::vector<GpuFacts> read_pci_gpus(FileReader& files);

// The whole file-based inventory of the node under `root`; `read_vpd`: the HCAs' serials too
// (one rank per node does it, see read_hca_vpd).
NodeFacts probe_node_files(const std::filesystem::path& root, bool read_vpd = true);

// Environment a check needs to see per rank: NCCL_*, UCX_*, FABRICPROOF_*, CUDA_VISIBLE_DEVICES.
std::map<std::string, std::string> relevant_environment(char** envp);
// This process's CPU affinity as a cpulist ("0-3,8").
std::string cpus_allowed();
// A tool's standard output, read as it runs, to a deadline (then killed). `ran`: it exited 0.
struct ToolOutput {
  bool ran = false;
  std::string output;
  std::string error;  // why not: not found, the exit status, the deadline
};
ToolOutput run_tool(const std::string& path, const std::vector<std::string>& args, double timeout_s);
// `ofed_info -s` when the tool exists (MLNX_OFED / DOCA-OFED), with a deadline.
std::string ofed_info_version();

}  // namespace fabricproof::probe
