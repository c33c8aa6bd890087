#include "inventory/topology.hpp"

#include <algorithm>

namespace fabricproof {
namespace {

using Kind = TopoObject::Kind;

std::vector<int> ancestors(const TopoTree& tree, int index) {  // index first, root last
  std::vector<int> chain;
  for (int at = index; at >= 0 && at < static_cast<int>(tree.objects.size()); at = tree.objects[static_cast<size_t>(at)].parent) {
    if (chain.size() > tree.objects.size()) break;  // a malformed tree with a cycle
    chain.push_back(at);
  }
  return chain;
}

// Bridges strictly between a device and its ancestor `top`.
int bridges_between(const TopoTree& tree, const std::vector<int>& chain, int top) {
  int count = 0;
  for (size_t i = 1; i < chain.size() && chain[i] != top; ++i)
    count += tree.objects[static_cast<size_t>(chain[i])].kind == Kind::bridge;
  return count;
}

// The NUMA node an I/O subtree is attached to: its first CPU-side ancestor, when that covers
// exactly one NUMA node.
std::optional<int> attachment_numa(const TopoTree& tree, const std::vector<int>& chain) {
  for (int at : chain) {
    const auto& o = tree.objects[static_cast<size_t>(at)];
    if (o.kind == Kind::cpu_side) return o.numa.size() == 1 ? std::optional<int>(o.numa[0]) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::string path_class(const TopoTree& tree, int a, int b) {
  const auto n = static_cast<int>(tree.objects.size());
  if (a < 0 || b < 0 || a >= n || b >= n) return "unknown";
  const auto chain_a = ancestors(tree, a), chain_b = ancestors(tree, b);
  int lca = -1;
  for (int x : chain_a)
    if (std::find(chain_b.begin(), chain_b.end(), x) != chain_b.end()) {
      lca = x;
      break;
    }
  const Kind kind = lca >= 0 ? tree.objects[static_cast<size_t>(lca)].kind : Kind::cpu_side;
  if (lca >= 0 && kind == Kind::bridge)
    return std::max(bridges_between(tree, chain_a, lca), bridges_between(tree, chain_b, lca)) <= 1 ? "PIX" : "PXB";
  if (lca >= 0 && kind == Kind::host_bridge) return "PHB";
  if (lca >= 0 && kind == Kind::pci_device) return "PIX";  // functions below one device (rare)
  const auto numa_a = attachment_numa(tree, chain_a), numa_b = attachment_numa(tree, chain_b);
  if (!numa_a || !numa_b) return "unknown";
  return *numa_a == *numa_b ? "NODE" : "SYS";
}

std::string nccl_path_class(const std::string& c) { return c == "NODE" ? "PHB" : c; }

int path_rank(const std::string& c) {
  static const std::vector<std::string> order = {"PIX", "PXB", "PHB", "NODE", "SYS"};
  auto it = std::find(order.begin(), order.end(), c);
  return it == order.end() ? 5 : static_cast<int>(it - order.begin());
}

TopologyFacts classify_topology(const LoadedTopology& loaded) {
  TopologyFacts facts;
  facts.source = loaded.source;
  facts.error = loaded.error;
  facts.gpus = loaded.gpus;
  facts.hcas = loaded.hcas;
  for (size_t g = 0; g < loaded.gpus.size(); ++g) {
    facts.classes.emplace_back();
    for (size_t h = 0; h < loaded.hcas.size(); ++h)
      facts.classes.back().push_back(path_class(loaded.tree, loaded.gpu_objects[g], loaded.hca_objects[h]));
  }
  return facts;
}

}  // namespace fabricproof
