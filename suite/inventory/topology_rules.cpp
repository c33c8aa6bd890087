#include "inventory/topology_rules.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/hints.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

// NCCL's own order: LOC 0, PIX 1, PXB 2, PHB 3, SYS 4 (NODE is PHB to NCCL).
int nccl_level_of(const std::string& path_class) {
  const auto c = nccl_path_class(path_class);
  if (c == "PIX") return 1;
  if (c == "PXB") return 2;
  if (c == "PHB") return 3;
  return 4;
}

struct Closest {
  int hca = -1;
  std::string path_class = "unknown";
};

Closest closest_hca(const TopologyFacts& t, size_t gpu, const Profile& profile) {
  Closest best;
  for (size_t h = 0; h < t.hcas.size() && gpu < t.classes.size() && h < t.classes[gpu].size(); ++h) {
    if (!profile.includes_device(t.hcas[h].name)) continue;
    const auto& c = t.classes[gpu][h];
    if (best.hca < 0 || path_rank(c) < path_rank(best.path_class)) best = {static_cast<int>(h), c};
  }
  return best;
}

std::string gpu_subject(const NodeFacts& n, const TopoDevice& g) { return fmt::format("{}/{} ({})", n.host, g.name, g.pci); }

}  // namespace

std::optional<int> parse_gdr_level(const std::string& text) {
  static const std::vector<std::string> names = {"LOC", "PIX", "PXB", "PHB", "SYS"};
  std::string upper;
  for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto it = std::find(names.begin(), names.end(), upper);
  if (it != names.end()) return static_cast<int>(it - names.begin());
  if (upper.size() == 1 && upper[0] >= '0' && upper[0] <= '5') return std::min(upper[0] - '0', 4);  // legacy: 5 was SYS too
  return std::nullopt;
}

std::vector<Finding> check_topology(const ClusterFacts& cluster, const Profile& profile) {
  std::vector<Finding> out;
  for (const auto& n : cluster.nodes) {
    if (!n.topology) continue;
    const auto& t = *n.topology;
    if (!t.error.empty()) {
      out.push_back({CheckId::gpu_hca_path, Subject::node(n.host), Verdict::skip, json{{"error", t.error}}, json{}, "gpu_hca_path: the PCI tree could not be read",
                     ""});
      continue;
    }
    if (t.gpus.empty() || t.hcas.empty()) continue;  // nothing to pair; hca_count / GPU rules speak for it
    std::string level_text;
    for (const auto& r : n.ranks)
      if (auto it = r.env.find("NCCL_NET_GDR_LEVEL"); it != r.env.end() && level_text.empty()) level_text = it->second;
    const auto level = level_text.empty() ? std::nullopt : parse_gdr_level(level_text);
    std::vector<std::string> beyond_level;
    for (size_t g = 0; g < t.gpus.size(); ++g) {
      const auto best = closest_hca(t, g, profile);
      if (best.hca < 0) continue;
      const auto& gpu = t.gpus[g];
      const auto& hca = t.hcas[static_cast<size_t>(best.hca)];
      json measured{{"closest_hca", hca.name},   {"class", best.path_class},  {"nccl_class", nccl_path_class(best.path_class)},
                    {"gpu_numa", gpu.numa_node}, {"hca_numa", hca.numa_node}, {"hca_port", hca.port_state}};
      const std::string rule = "gpu_hca_path: every GPU has an HCA behind the same PCIe switch (PIX/PXB)";
      if (best.path_class == "unknown") {
        out.push_back({CheckId::gpu_hca_path, gpu_subject(n, gpu), Verdict::skip, measured, json{{"class", "PIX or PXB"}},
                       rule + "; the firmware gives this device no NUMA locality, so the path cannot be classified", ""});
        continue;
      }
      const int r = path_rank(best.path_class);
      const Verdict v = r <= path_rank("PXB") ? Verdict::pass : Verdict::warn;
      std::string hint;
      if (best.path_class == "SYS")
        hint = std::string("The GPU's closest HCA is on another NUMA node: GPUDirect traffic crosses the inter-socket link "
                           "and NCCL normally turns GDR off at this distance (about 5x slower writes to GPU memory). ") +
               hint::kNuma;
      else if (v == Verdict::warn)
        hint = "The GPU and its closest HCA meet at the CPU root complex (PHB/NODE): GPUDirect works but crosses the CPU; "
               "an HCA in the GPU's PCIe switch slot is the design NCCL expects.";
      out.push_back({CheckId::gpu_hca_path, gpu_subject(n, gpu), v, measured, json{{"class", "PIX or PXB"}}, rule, hint});
      if (level && nccl_level_of(best.path_class) > *level) beyond_level.push_back(fmt::format("{} ({})", gpu.name, nccl_path_class(best.path_class)));
    }
    if (level_text.empty()) continue;
    const std::string rule = "nccl_net_gdr_level: NCCL_NET_GDR_LEVEL allows GPUDirect RDMA for every GPU's path to its closest HCA";
    if (!level) {
      out.push_back({CheckId::nccl_net_gdr_level, Subject::node(n.host), Verdict::warn, json{{"NCCL_NET_GDR_LEVEL", level_text}},
                     json{{"one_of", "LOC, PIX, PXB, PHB, SYS, 0-5"}}, rule, "NCCL does not read this value: set PIX, PXB, PHB or SYS."});
      continue;
    }
    out.push_back({CheckId::nccl_net_gdr_level, Subject::node(n.host), beyond_level.empty() ? Verdict::pass : Verdict::warn,
                   json{{"NCCL_NET_GDR_LEVEL", level_text}, {"gpus_without_gdr", beyond_level}}, json{{"gpus_without_gdr", json::array()}}, rule,
                   beyond_level.empty() ? ""
                                        : "These GPUs' paths are farther than NCCL_NET_GDR_LEVEL allows: NCCL stages their traffic "
                                          "through host memory. Raise the level (e.g. PHB) only if the path really performs; "
                                          "better, move the GPU or HCA."});
  }
  return out;
}

}  // namespace fabricproof
