#pragma once
// Facts about a node as the probes read them. Plain data: no judgement here (design.md, principle 1).
// A field that could not be read is null and, where the reason matters, an `absent` entry says why.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inventory/dcb.hpp"
#include "core/json_optional.hpp"
#include "core/subject.hpp"
#include "inventory/subnet_manager.hpp"
#include "inventory/topology.hpp"

namespace fabricproof {

// Something the probe looked for and did not find, with the reason ("no CUDA device: ...").
struct Absence {
  std::string what;
  std::string reason;
};

// A read that should have worked and did not (permission, I/O error): the inventory is incomplete.
struct ProbeError {
  std::string source;  // the path or API
  std::string message;
};

struct PcieLink {
  std::optional<double> current_gts;
  std::optional<double> max_gts;
  std::optional<int> current_gen;
  std::optional<int> max_gen;
  std::optional<int> current_width;
  std::optional<int> max_width;
};

struct GidEntry {
  int index = 0;
  std::string gid;     // sysfs form, 8 groups of 4 hex digits
  std::string type;    // "RoCE v2", "IB/RoCE v1", "" when unreadable
  std::string netdev;  // gid_attrs/ndevs
};

// RoCE QoS settings readable without privileges (host-config.md). Empty/null: not exposed here.
struct PortQos {
  std::string traffic_class;               // /sys/class/infiniband/<dev>/tc/<port>/traffic_class
  std::optional<bool> ecn_np_enabled_prio3;  // /sys/class/net/<if>/ecn/roce_np/enable/3 (OFED)
  std::optional<bool> ecn_rp_enabled_prio3;  // /sys/class/net/<if>/ecn/roce_rp/enable/3 (OFED)
  std::optional<DcbConfig> dcb;              // dcbnl of the netdev (live only); its error says why not read
  // RDMA-CM's defaults (configfs rdma_cm/<dev>/ports/<n>), where the entry exists: creating it
  // takes a root mkdir, which an acceptance run does not do. rdma_cm_unread says why not read.
  std::string default_roce_mode;             // "RoCE v2" or "IB/RoCE v1"
  std::optional<int> default_roce_tos;       // the ToS RDMA-CM connections carry
  std::string rdma_cm_unread;
};

// Who a port is cabled to: the switch and switch port its neighbour table names, or why it was
// not read (suite/cabling; judged with --check-cabling).
struct PortNeighbour {
  std::string source;       // "lldpd" (RoCE)
  std::string switch_name;  // the LLDP system name, else the chassis id
  std::string switch_id;    // the chassis id ("mac 70:06:92:6e:32:64")
  std::string switch_port;  // the port id ("Ethernet184")
  std::string switch_port_descr;
  std::string unread;       // why none was read; "" when one was
};

struct PortFacts {
  int port = 1;
  std::string state;       // ibv names: DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER
  std::string phys_state;  // SLEEP, POLLING, DISABLED, PORT_CONFIGURATION_TRAINING, LINK_UP, ...
  std::optional<int> width_code;
  std::optional<int> speed_code;
  std::string width;       // "4X"
  std::string speed_name;  // "HDR"
  std::optional<double> rate_gbps;
  std::string link_layer;  // "InfiniBand" or "Ethernet"
  std::optional<int> active_mtu;  // bytes
  std::optional<int> max_mtu;     // bytes
  std::string active_mtu_source;  // "verbs" or "netdev" (kernel rule iboe_get_mtu)
  std::optional<int> lid;
  std::optional<int> sm_lid;
  std::vector<GidEntry> gids;
  std::optional<int> roce_v2_gid_index;  // first RoCE v2 GID holding an IPv4 address
  std::string netdev;
  std::optional<int> netdev_mtu;
  std::string netdev_operstate;
  PortQos qos;
  std::map<std::string, uint64_t> counters;  // counters/ and hw_counters/, for reference
  std::optional<PortNeighbour> neighbour;    // absent: not asked (a saved tree, a build without the probe)
};

struct RdmaDevice {
  std::string name;
  std::string hca_type;  // "MT4123"
  std::string board_id;
  std::string fw_ver;
  std::string node_guid;
  std::string sys_image_guid;
  // Component identity from the PCI VPD (read by one rank per node; root only on most kernels).
  std::string board_name;     // "NVIDIA ConnectX-7 Adapter Card, 200GbE / NDR200, ..."
  std::string part_number;    // "MCX755106AS-HEAT"
  std::string serial_number;  // "MT24216006W0"
  std::string pci;        // "0000:17:00.0"; empty for virtual devices (rxe)
  std::string parent;     // netdev for software devices (rxe)
  std::string driver;     // kernel driver of the PCI function, or "rdma_rxe"
  std::optional<int> numa_node;
  PcieLink pcie;
  std::optional<bool> dmabuf_supported;  // ibv_reg_dmabuf_mr probe, verbs adapter
  std::string dmabuf_detail;
  std::vector<PortFacts> ports;
};

// A GPU's memory health from NVML, as `nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT` shows it;
// null where NVML is absent or the board does not report it (no ECC on GeForce, row remapping from
// Ampere on, page retirement before it).
struct GpuMemoryHealth {
  std::optional<bool> ecc_enabled;                      // nvmlDeviceGetEccMode, the current mode
  std::optional<bool> ecc_enabled_after_reboot;         // its pending mode
  std::optional<uint64_t> uncorrected_since_driver_load;  // nvmlDeviceGetTotalEccErrors, volatile
  std::optional<uint64_t> uncorrected_lifetime;           // aggregate, kept in the board's infoROM
  std::optional<unsigned> rows_remapped_correctable;    // nvmlDeviceGetRemappedRows
  std::optional<unsigned> rows_remapped_uncorrectable;
  std::optional<bool> row_remap_pending;                // applied at the next GPU reset
  std::optional<bool> row_remap_failed;                 // a bank ran out of spare rows
  std::optional<bool> page_retirement_pending;          // nvmlDeviceGetRetiredPagesPendingStatus
  std::string unread;                                   // why no error, remap or retirement figure was read
};
// Whether anything was read on errors, remaps or retirements: the ECC mode alone says nothing of
// them, and a report from before the memory was read has none.
inline bool memory_health_read(const GpuMemoryHealth& h) {
  return h.uncorrected_since_driver_load || h.row_remap_pending || h.page_retirement_pending;
}

struct GpuFacts {
  std::optional<int> index;  // CUDA device ordinal, null when only seen on the PCI bus
  std::string name;
  std::string uuid;
  std::string serial;  // board serial (NVML), empty where NVML is absent
  std::string pci;
  std::optional<int> numa_node;
  std::optional<uint64_t> memory_bytes;
  std::string compute_capability;
  std::string driver;  // PCI driver bound ("nvidia", empty when none)
  PcieLink pcie;
  std::optional<bool> dmabuf_supported;  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
  GpuMemoryHealth memory_health;
};

struct KernelModule {
  bool loaded = false;
  std::string version;  // /sys/module/<m>/version (OFED sets it, inbox >= 5.11 does not)
  std::string path;     // from modules.dep
  std::string flavor;   // "ofed" (updates/, extra/, out-of-tree taint) or "inbox"
  std::string taint;
};

struct SoftwareFacts {
  std::string os;
  std::string kernel;
  KernelModule mlx5_core;
  std::string ofed_version;       // `ofed_info -s`
  std::string libibverbs_version; // file name of the loaded library
  std::string rdma_core_version;
  std::string nvidia_driver;
  std::string cuda_driver;
  std::string cuda_runtime;
  std::string nccl;
  std::string open_mpi;
  KernelModule nvidia_peermem;
  bool nvidia_peermem_persisted = false;
  std::string nvidia_peermem_persisted_in;
};

// A network interface of the node: what carries management traffic must not be a data-fabric one.
struct NetInterface {
  std::string name;
  std::string operstate;   // "up", "down", "unknown" (loopback, some virtual devices)
  std::optional<int> mtu;
  std::vector<std::string> ipv4;  // "10.0.0.5/24" (live only)
  bool rdma = false;       // the netdev of an RDMA port (RoCE) or IPoIB of one
};

struct NumaNode {
  int id = 0;
  std::string cpus;
  std::optional<uint64_t> memory_bytes;
};

// What one MPI rank is and drives. Filled by each rank for itself.
struct RankFacts {
  int rank = 0;
  int local_rank = 0;
  int local_size = 1;
  std::string host;
  int pid = 0;
  std::optional<int> gpu;  // CUDA ordinal this rank drives
  std::string gpu_uuid;
  std::string cpus_allowed;  // affinity as a cpulist
  std::map<std::string, std::string> env;  // NCCL_*, UCX_*, FABRICPROOF_*, CUDA_VISIBLE_DEVICES
};

struct NodeFacts {
  std::string host;
  std::string boot_id;
  std::string cpu_model;
  std::vector<NumaNode> numa_nodes;
  std::vector<RdmaDevice> rdma_devices;
  std::vector<GpuFacts> gpus;
  std::optional<TopologyFacts> topology;  // GPU <-> HCA path classes (hwloc), read by the node's local rank 0
  SoftwareFacts software;
  std::vector<RankFacts> ranks;  // merged on rank 0
  std::vector<Absence> absent;
  std::vector<ProbeError> probe_errors;
  double clock_offset_s = 0;  // this node's clock minus rank 0's, measured at the gather
  std::vector<NetInterface> interfaces;
  std::string default_route_interface;  // /proc/net/route
  std::string launch_node_address;     // where mpirun/srun runs (launch/launch.hpp)
  std::string launch_route_interface;  // the interface this node reaches it through
  // SMInfo as the node's ACTIVE InfiniBand ports got it: from their SM LID and their own LID
  // (root only: /dev/infiniband/umad* are root's), or why it was not read.
  std::vector<SmAnswer> subnet_managers;
  std::string subnet_managers_unread;
};

// The node's GPUs that CUDA sees (those only on the PCI bus have no index).
inline int cuda_gpu_count(const NodeFacts& node) {
  int count = 0;
  for (const auto& g : node.gpus) count += g.index.has_value();
  return count;
}

// Everything rank 0 knows about the cluster before judging it.
struct ClusterFacts {
  std::vector<NodeFacts> nodes;
  std::vector<int> missing_ranks;  // ranks that did not answer the gather
  int world_size = 0;
};

FABRICPROOF_JSON(Absence, what, reason)
FABRICPROOF_JSON(ProbeError, source, message)
FABRICPROOF_JSON(PcieLink, current_gts, max_gts, current_gen, max_gen, current_width, max_width)
FABRICPROOF_JSON(GidEntry, index, gid, type, netdev)
FABRICPROOF_JSON(PortQos, traffic_class, ecn_np_enabled_prio3, ecn_rp_enabled_prio3, dcb, default_roce_mode, default_roce_tos, rdma_cm_unread)
FABRICPROOF_JSON(NetInterface, name, operstate, mtu, ipv4, rdma)
FABRICPROOF_JSON(PortNeighbour, source, switch_name, switch_id, switch_port, switch_port_descr, unread)
FABRICPROOF_JSON(PortFacts, port, state, phys_state, width_code, speed_code, width, speed_name,
                 rate_gbps, link_layer, active_mtu, max_mtu, active_mtu_source, lid, sm_lid, gids,
                 roce_v2_gid_index, netdev, netdev_mtu, netdev_operstate, qos, counters, neighbour)
FABRICPROOF_JSON(RdmaDevice, name, hca_type, board_id, fw_ver, node_guid, sys_image_guid, board_name, part_number, serial_number, pci,
                 parent, driver, numa_node, pcie, dmabuf_supported, dmabuf_detail, ports)
FABRICPROOF_JSON(GpuMemoryHealth, ecc_enabled, ecc_enabled_after_reboot, uncorrected_since_driver_load, uncorrected_lifetime,
                 rows_remapped_correctable, rows_remapped_uncorrectable, row_remap_pending, row_remap_failed,
                 page_retirement_pending, unread)
FABRICPROOF_JSON(GpuFacts, index, name, uuid, serial, pci, numa_node, memory_bytes, compute_capability,
                 driver, pcie, dmabuf_supported, memory_health)
FABRICPROOF_JSON(KernelModule, loaded, version, path, flavor, taint)
FABRICPROOF_JSON(SoftwareFacts, os, kernel, mlx5_core, ofed_version, libibverbs_version,
                 rdma_core_version, nvidia_driver, cuda_driver, cuda_runtime, nccl, open_mpi,
                 nvidia_peermem, nvidia_peermem_persisted, nvidia_peermem_persisted_in)
FABRICPROOF_JSON(NumaNode, id, cpus, memory_bytes)
FABRICPROOF_JSON(RankFacts, rank, local_rank, local_size, host, pid, gpu, gpu_uuid, cpus_allowed,
                 env)
FABRICPROOF_JSON(NodeFacts, host, boot_id, cpu_model, numa_nodes, rdma_devices, gpus, topology, software,
                 ranks, absent, probe_errors, clock_offset_s, interfaces, default_route_interface,
                 launch_node_address, launch_route_interface, subnet_managers, subnet_managers_unread)
FABRICPROOF_JSON(ClusterFacts, nodes, missing_ranks, world_size)

// "node1/mlx5_0:1": how findings and the report name a port.
Subject port_subject(const NodeFacts& node, const RdmaDevice& device, const PortFacts& port);

// Merges per-rank probe results (one NodeFacts per rank, each carrying its own RankFacts) into one
// entry per node, keeping the lowest rank's view of the node and every rank's RankFacts.
ClusterFacts merge_rank_facts(const std::vector<std::optional<NodeFacts>>& per_rank);

// The value of an environment variable on a node (any of its ranks; the wrapper exports NCCL_* to all).
std::optional<std::string> node_env(const NodeFacts& node, const std::string& key);

}  // namespace fabricproof
