#pragma once
// GPU <-> HCA PCIe path classes (PIX / PXB / PHB / NODE / SYS, the nvidia-smi topo terms) from a
// tree of the machine as hwloc sees it. Pure: the hwloc adapter (suite/topology) builds the tree;
// the rules here only walk it. The derivation follows shared/topologies/README.md:
//   LCA a switch port, each device at most one bridge below it -> PIX; deeper -> PXB;
//   LCA the host bridge -> PHB; LCA above the I/O tree: both attached in the same single NUMA node
//   -> NODE, in different ones -> SYS, and "unknown" when either attachment has no single NUMA
//   node (firmware without PCI locality): never a guess.
#include <optional>
#include <string>
#include <vector>

#include "core/json_optional.hpp"

namespace fabricproof {

struct TopoObject {
  int parent = -1;
  enum class Kind { cpu_side, host_bridge, bridge, pci_device } kind = Kind::cpu_side;
  std::vector<int> numa;  // cpu_side objects: the NUMA nodes of their nodeset
};

struct TopoTree {
  std::vector<TopoObject> objects;
};

// "PIX", "PXB", "PHB", "NODE", "SYS" or "unknown" for two PCI devices (object indices).
std::string path_class(const TopoTree& tree, int a, int b);
// NCCL has no NODE class: its CPU node is a NUMA node, so nvidia-smi NODE is NCCL's PHB.
std::string nccl_path_class(const std::string& path_class);
// Order from closest to farthest (PIX 0 .. SYS 4; unknown 5), for picking the closest HCA.
int path_rank(const std::string& path_class);

struct TopoDevice {
  std::string name;     // cuda0 / nvml0 / mlx5_0, or the PCI bus id when no OS device names it
  std::string pci;      // 0000:4e:00.0
  std::optional<int> numa_node;
  std::string port_state;  // HCAs: port 1 state as hwloc recorded it (ACTIVE, DOWN, ...), "" unknown
};

struct TopologyFacts {
  std::string source;  // "hwloc 2.9.0 (live)" or the XML path
  std::vector<TopoDevice> gpus;
  std::vector<TopoDevice> hcas;
  std::vector<std::vector<std::string>> classes;  // [gpu][hca]
  std::string error;   // why the topology could not be read ("" when it was)
};

// The machine as the hwloc adapter read it: the tree and where each GPU and HCA sits in it.
struct LoadedTopology {
  std::string source;
  std::string error;
  TopoTree tree;
  std::vector<TopoDevice> gpus;
  std::vector<int> gpu_objects;  // index into tree.objects, parallel to gpus
  std::vector<TopoDevice> hcas;
  std::vector<int> hca_objects;
};

// Every GPU-HCA class of a loaded machine.
TopologyFacts classify_topology(const LoadedTopology& loaded);

FABRICPROOF_JSON(TopoDevice, name, pci, numa_node, port_state)
FABRICPROOF_JSON(TopologyFacts, source, gpus, hcas, classes, error)

}  // namespace fabricproof
