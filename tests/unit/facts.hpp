#pragma once
// Hand-built facts for rule tests: healthy defaults that a test then breaks one field at a time.
#include <string>

#include "inventory/inventory.hpp"
#include "core/finding.hpp"

namespace fabricproof::test {

// An ACTIVE, LINK_UP 4X HDR port: what both link layers share.
inline PortFacts active_port(double rate, const std::string& link_layer) {
  PortFacts p;
  p.port = 1;
  p.state = "ACTIVE";
  p.phys_state = "LINK_UP";
  p.width = "4X";
  p.speed_name = "HDR";
  p.rate_gbps = rate;
  p.link_layer = link_layer;
  p.active_mtu = 4096;
  return p;
}

inline PortFacts ib_port(double rate = 200) {
  PortFacts p = active_port(rate, "InfiniBand");
  p.lid = 569;
  p.sm_lid = 393;
  p.gids = {{0, "fe80:0000:0000:0000:1070:fd03:008e:b580", "IB/RoCE v1", ""}};
  return p;
}

inline PortFacts roce_port(double rate = 200) {
  PortFacts p = active_port(rate, "Ethernet");
  p.active_mtu_source = "verbs";
  p.lid = 0;
  p.sm_lid = 0;
  p.netdev = "ens1f0";
  p.netdev_mtu = 9000;
  p.netdev_operstate = "up";
  p.gids = {{0, "fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8", "IB/RoCE v1", "ens1f0"},
            {1, "fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8", "RoCE v2", "ens1f0"},
            {2, "0000:0000:0000:0000:0000:ffff:ac13:003c", "IB/RoCE v1", "ens1f0"},
            {3, "0000:0000:0000:0000:0000:ffff:ac13:003c", "RoCE v2", "ens1f0"}};
  p.roce_v2_gid_index = 3;
  return p;
}

inline RdmaDevice hca(const std::string& name, PortFacts port) {
  RdmaDevice d;
  d.name = name;
  d.hca_type = "MT4123";
  d.board_id = "MT_0000000223";
  d.fw_ver = "20.33.1048";
  d.pci = "0000:41:00.0";
  d.numa_node = 0;
  d.pcie = {16.0, 16.0, 4, 4, 16, 16};
  d.ports = {std::move(port)};
  return d;
}

inline NodeFacts node(const std::string& host, std::vector<RdmaDevice> devices, int ranks = 1) {
  NodeFacts n;
  n.host = host;
  n.boot_id = host + "-boot";
  n.rdma_devices = std::move(devices);
  n.software.os = "Ubuntu 22.04.4 LTS";
  n.software.kernel = "5.15.0-105-generic";
  n.software.mlx5_core = {true, "5.8-1.0.1", "updates/dkms/mlx5_core.ko", "ofed", "OE"};
  n.software.ofed_version = "MLNX_OFED_LINUX-5.8-1.0.1.1";
  n.software.rdma_core_version = "58mlnx43";
  n.software.cuda_runtime = "12.4";
  n.software.nccl = "2.21.5";
  for (int r = 0; r < ranks; ++r) n.ranks.push_back(RankFacts{r, r, ranks, host, 1000 + r, std::nullopt, "", "0-23", {}});
  return n;
}

inline ClusterFacts cluster(std::vector<NodeFacts> nodes) {
  ClusterFacts c;
  c.nodes = std::move(nodes);
  int rank = 0;
  for (auto& n : c.nodes)
    for (auto& r : n.ranks) r.rank = rank++;
  c.world_size = rank;
  return c;
}

inline std::vector<Finding> with_id(const std::vector<Finding>& findings, const std::string& id) {
  std::vector<Finding> out;
  for (const auto& f : findings)
    if (f.id == id) out.push_back(f);
  return out;
}

inline std::vector<Finding> with_id_and_subject(const std::vector<Finding>& findings, const std::string& id, const std::string& subject) {
  std::vector<Finding> out;
  for (const auto& f : with_id(findings, id))
    if (f.subject == subject) out.push_back(f);
  return out;
}

}  // namespace fabricproof::test
