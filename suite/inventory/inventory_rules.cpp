#include "inventory/inventory_rules.hpp"

#include "cabling/rails.hpp"


#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "inventory/consistency.hpp"
#include "inventory/control_path_rules.hpp"
#include "inventory/gpu_memory_rules.hpp"
#include "inventory/lossless_rules.hpp"
#include "inventory/nccl_env_rules.hpp"
#include "inventory/topology_rules.hpp"
#include "core/hints.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

std::string rate_model_key(const RdmaDevice& d, const PortFacts& p) {
  return d.hca_type + "|" + d.board_id + "|" + p.link_layer;
}

// Expected rate per HCA model and link layer when the profile does not set one: the best rate any
// ACTIVE port of that model reaches in this cluster. A port below its peers trained down.
std::map<std::string, double> best_rate_by_model(const ClusterFacts& cluster, const Profile& profile) {
  std::map<std::string, double> best;
  for (const auto& node : cluster.nodes)
    for (const auto& d : node.rdma_devices) {
      if (!profile.includes_device(d.name)) continue;
      for (const auto& p : d.ports)
        if (p.state == "ACTIVE" && p.rate_gbps)
          best[rate_model_key(d, p)] = std::max(best[rate_model_key(d, p)], *p.rate_gbps);
    }
  return best;
}

std::string port_state_hint(const PortFacts& p) {
  // On RoCE a downed netdev takes the port down with it: name the netdev first.
  if (p.link_layer == "Ethernet" && !p.netdev.empty() && p.netdev_operstate != "up")
    return fmt::format("The netdev {} is {}: ip link set {} up; then check the cable. ", p.netdev,
                       p.netdev_operstate.empty() ? "not up" : p.netdev_operstate, p.netdev) +
           hint::kCable;
  if (p.phys_state == "DISABLED")
    return "The port is administratively disabled (switch port shut, or mlxconfig/ip link). If it "
           "is unused, leave it out with ports.devices in the profile. " + std::string(hint::kCable);
  if (p.phys_state == "POLLING")
    return "No link partner: the port is looking for a peer. " + std::string(hint::kCable);
  if (p.phys_state == "LINK_UP" && p.link_layer == "InfiniBand") return hint::kSubnetManager;
  return hint::kCable;
}

void check_port_state(const Subject& subject, const PortFacts& p, std::vector<Finding>& out) {
  const bool ok = p.state == "ACTIVE" && p.phys_state == "LINK_UP";
  out.push_back(Finding(CheckId::port_state, subject, ok ? Verdict::pass : Verdict::fail,
                        p.state + "/" + p.phys_state, "ACTIVE/LINK_UP",
                        "port state == ACTIVE and physical state == LINK_UP",
                        ok ? "" : port_state_hint(p)));
}

void check_port_rate(const Subject& subject, const RdmaDevice& d, const PortFacts& p,
                     const Profile& profile, const std::map<std::string, double>& best,
                     std::vector<Finding>& out) {
  if (p.state != "ACTIVE") return;  // a down port's rate is a placeholder (ibstat prints 10)
  const std::string rule_derived =
      "rate_gbps == the best rate of the same HCA model in this cluster (profile ports.rate_gbps "
      "unset)";
  if (!p.rate_gbps) {
    out.push_back(Finding(CheckId::port_rate, subject, Verdict::error, nullptr, profile.ports.rate_gbps,
                          "rate_gbps readable", "The port's rate could not be read (sysfs rate, ibv_query_port)."));
    return;
  }
  const double measured = *p.rate_gbps;
  const bool from_profile = profile.ports.rate_gbps.has_value();
  const double expected = from_profile ? *profile.ports.rate_gbps : best.at(rate_model_key(d, p));
  json measured_json = {{"rate_gbps", measured}, {"width", p.width}, {"speed", p.speed_name}};
  if (measured + 1e-9 < expected) {
    out.push_back(Finding(CheckId::port_rate, subject, Verdict::fail, measured_json, expected,
                          from_profile ? "rate_gbps == profile ports.rate_gbps" : rule_derived,
                          fmt::format("The port trained at {} Gb/s ({} {}) instead of {} Gb/s. {}",
                                   measured, p.width, p.speed_name, expected, hint::kCable)));
  } else if (measured > expected + 1e-9) {
    out.push_back(Finding(CheckId::port_rate, subject, Verdict::warn, measured_json, expected,
                          "rate_gbps == profile ports.rate_gbps",
                          "Faster than the profile expects: is this the right profile for the cluster?"));
  } else {
    out.push_back(Finding(CheckId::port_rate, subject, Verdict::pass, measured_json, expected,
                          from_profile ? "rate_gbps == profile ports.rate_gbps" : rule_derived));
  }
}

void check_link_layer(const Subject& subject, const PortFacts& p, const Profile& profile,
                      std::vector<Finding>& out) {
  if (!profile.ports.link_layer) return;  // no expectation: the consistency rules still compare nodes
  const bool ok = p.link_layer == *profile.ports.link_layer;
  out.push_back(Finding(CheckId::port_link_layer, subject, ok ? Verdict::pass : Verdict::fail, p.link_layer,
                        *profile.ports.link_layer, "link_layer == profile ports.link_layer",
                        ok ? "" : "Wrong port personality: set LINK_TYPE_P1 with mlxconfig (IB=1, ETH=2) and reboot, or fix the profile."));
}

const GidEntry* find_gid(const PortFacts& p, int index) {
  for (const auto& g : p.gids)
    if (g.index == index) return &g;
  return nullptr;
}

void check_roce(const Subject& subject, const NodeFacts& node, const PortFacts& p,
                const Profile& profile, std::vector<Finding>& out) {
  if (p.link_layer != "Ethernet") return;
  const std::string mtu_rule = fmt::format("active_mtu >= profile roce.active_mtu ({})", profile.roce.active_mtu);
  if (!p.active_mtu) {
    out.push_back(Finding(CheckId::roce_mtu, subject, Verdict::error, nullptr, profile.roce.active_mtu, mtu_rule,
                          "The active MTU could not be read (ibv_query_port, netdev MTU)."));
  } else {
    const bool ok = *p.active_mtu >= profile.roce.active_mtu;
    out.push_back(Finding(CheckId::roce_mtu, subject, ok ? Verdict::pass : Verdict::fail,
                          {{"active_mtu", *p.active_mtu}, {"source", p.active_mtu_source}},
                          profile.roce.active_mtu, mtu_rule, ok ? "" : hint::kMtu));
  }
  const std::string netdev_rule = fmt::format("netdev MTU >= profile roce.min_netdev_mtu ({})", profile.roce.min_netdev_mtu);
  if (!p.netdev_mtu) {
    out.push_back(Finding(CheckId::roce_netdev_mtu, subject, Verdict::error, nullptr, profile.roce.min_netdev_mtu,
                          netdev_rule, "No netdev found behind the RoCE port (gid_attrs/ndevs, parent)."));
  } else {
    const bool ok = *p.netdev_mtu >= profile.roce.min_netdev_mtu;
    out.push_back(Finding(CheckId::roce_netdev_mtu, subject, ok ? Verdict::pass : Verdict::fail,
                          {{"netdev", p.netdev}, {"mtu", *p.netdev_mtu}}, profile.roce.min_netdev_mtu,
                          netdev_rule, ok ? "" : hint::kMtu));
  }
  const bool has_v2 = std::any_of(p.gids.begin(), p.gids.end(), [](const GidEntry& g) { return g.type == "RoCE v2"; });
  out.push_back(Finding(CheckId::roce_v2_gid, subject, has_v2 ? Verdict::pass : Verdict::fail,
                        {{"roce_v2_gid_index", p.roce_v2_gid_index}, {"gids", p.gids.size()}},
                        "a GID of type RoCE v2", "the GID table holds a RoCE v2 entry (UDP 4791, routable)",
                        has_v2 ? "" : "No RoCE v2 GID: GIDs follow the netdev's IP addresses (give it an address), and configfs rdma_cm default_roce_mode must not force RoCE v1."));
  // NCCL_IB_GID_INDEX must point at a RoCE v2 GID on every RoCE port the ranks of this node use.
  std::set<std::string> gid_index_values;
  for (const auto& r : node.ranks)
    if (auto it = r.env.find("NCCL_IB_GID_INDEX"); it != r.env.end()) gid_index_values.insert(it->second);
  for (const auto& value : gid_index_values) {
    int index = -1;
    try {
      index = std::stoi(value);
    } catch (...) {
    }
    const GidEntry* gid = index >= 0 ? find_gid(p, index) : nullptr;
    // RoCE v2 and routable: an IPv4-mapped address, or IPv6 that is not link-local (fe80::/10).
    const bool link_local = gid && (gid->gid.rfind("fe8", 0) == 0 || gid->gid.rfind("fe9", 0) == 0 || gid->gid.rfind("fea", 0) == 0 ||
                                    gid->gid.rfind("feb", 0) == 0);
    const bool empty = gid && gid->gid.find_first_not_of("0:") == std::string::npos;
    const bool ok = gid && gid->type == "RoCE v2" && !link_local && !empty;
    const json measured = {{"NCCL_IB_GID_INDEX", value}, {"type_at_index", gid ? json(gid->type) : json(nullptr)},
                           {"gid_at_index", gid ? json(gid->gid) : json(nullptr)}, {"link_local", link_local}};
    std::string hint_text;
    if (!ok) {
      hint_text = p.roce_v2_gid_index
                      ? fmt::format("Set NCCL_IB_GID_INDEX={} (the RoCE v2 IPv4 GID, see show_gids) and export it with mpirun -x.", *p.roce_v2_gid_index)
                      : std::string("This port has no RoCE v2 IPv4 GID to point at; fix the GID table first.");
    }
    out.push_back(Finding(CheckId::nccl_gid_index, subject, ok ? Verdict::pass : Verdict::fail, measured,
                          "RoCE v2 with an IPv4-mapped or routable IPv6 address",
                          "NCCL_IB_GID_INDEX (when set) indexes a RoCE v2 GID with a routable address", hint_text));
  }
}

bool valid_lid(const std::optional<int>& lid) { return lid && *lid != 0 && *lid != 0xffff; }

void check_infiniband(const Subject& subject, const PortFacts& p, std::vector<Finding>& out) {
  if (p.link_layer != "InfiniBand" || p.state == "DOWN") return;
  const bool ok = valid_lid(p.lid) && valid_lid(p.sm_lid);
  out.push_back(Finding(CheckId::ib_subnet_manager, subject, ok ? Verdict::pass : Verdict::fail,
                        {{"lid", p.lid}, {"sm_lid", p.sm_lid}}, "lid and sm_lid not 0 or 0xffff",
                        "an InfiniBand port has a LID and knows its subnet manager (SM LID)",
                        ok ? "" : hint::kSubnetManager));
}

std::string describe_link(std::optional<int> gen, std::optional<double> gts, std::optional<int> width) {
  std::string speed = gen ? fmt::format("Gen{}", *gen) : gts ? fmt::format("{} GT/s", *gts) : "?";
  return fmt::format("{} x{}", speed, width ? std::to_string(*width) : "?");
}

// A link is downtrained when it runs below what both ends support.
void check_pcie(CheckId id, const Subject& subject, const PcieLink& link,
                Verdict width_verdict, Verdict speed_verdict, const std::string& speed_note,
                std::vector<Finding>& out) {
  const std::string rule = "current PCIe link speed and width == max_link_speed and max_link_width";
  if (!link.current_gts || !link.max_gts || !link.current_width || !link.max_width) {
    out.push_back(Finding(id, subject, Verdict::skip, nullptr, nullptr, rule,
                          "No PCIe link to read (virtual device or sysfs without link attributes)."));
    return;
  }
  const json measured = describe_link(link.current_gen, link.current_gts, link.current_width);
  const json expected = describe_link(link.max_gen, link.max_gts, link.max_width);
  Verdict v = Verdict::pass;
  std::string hint_text;
  if (*link.current_width < *link.max_width) {
    v = width_verdict;
    hint_text = hint::kPcie;
  } else if (*link.current_gts + 1e-9 < *link.max_gts) {
    v = speed_verdict;
    hint_text = speed_note + hint::kPcie;
  }
  out.push_back(Finding(id, subject, v, measured, expected, rule, hint_text));
}

void check_gpudirect_driver(const NodeFacts& node, const Profile& profile, std::vector<Finding>& out) {
  if (node.gpus.empty() || node.rdma_devices.empty()) return;
  const auto& sw = node.software;
  const std::string rule = "nvidia_peermem loaded (or DMA-BUF supported by GPU and verbs) when a node has GPUs and HCAs";
  if (sw.nvidia_peermem.loaded) {
    out.push_back(Finding(CheckId::gpudirect_driver, Subject::node(node.host), Verdict::pass, "nvidia_peermem loaded", "loaded", rule));
    const bool persisted = sw.nvidia_peermem_persisted;
    out.push_back(Finding(CheckId::peermem_persisted, Subject::node(node.host), persisted ? Verdict::pass : Verdict::warn,
                          persisted ? sw.nvidia_peermem_persisted_in : "not in /etc/modules-load.d",
                          "listed in /etc/modules-load.d/*.conf", "nvidia_peermem is loaded at every boot",
                          persisted ? "" : "echo nvidia_peermem > /etc/modules-load.d/nvidia-peermem.conf: without it the next reboot silently loses GPUDirect."));
    return;
  }
  const bool gpu_dmabuf = std::all_of(node.gpus.begin(), node.gpus.end(), [](const GpuFacts& g) { return g.dmabuf_supported.value_or(false); });
  const bool verbs_dmabuf = std::all_of(node.rdma_devices.begin(), node.rdma_devices.end(), [](const RdmaDevice& d) { return d.dmabuf_supported.value_or(false); });
  if (gpu_dmabuf && verbs_dmabuf) {
    out.push_back(Finding(CheckId::gpudirect_driver, Subject::node(node.host), Verdict::pass, "nvidia_peermem not loaded; DMA-BUF supported by GPUs and verbs",
                          "nvidia_peermem loaded or DMA-BUF", rule));
    return;
  }
  out.push_back(Finding(CheckId::gpudirect_driver, Subject::node(node.host), profile.gpudirect.missing_peermem,
                        {{"nvidia_peermem", "not loaded"}, {"dmabuf_gpu", gpu_dmabuf}, {"dmabuf_verbs", verbs_dmabuf}},
                        "nvidia_peermem loaded or DMA-BUF", rule, hint::kPeermem));
}

void check_counts(const NodeFacts& node, const Profile& profile, std::vector<Finding>& out) {
  const int hcas = static_cast<int>(node.rdma_devices.size());
  if (profile.cluster.hcas_per_node) {
    const bool ok = hcas == *profile.cluster.hcas_per_node;
    out.push_back(Finding(CheckId::hca_count, Subject::node(node.host), ok ? Verdict::pass : Verdict::fail, hcas, *profile.cluster.hcas_per_node,
                          "RDMA devices per node == profile cluster.hcas_per_node",
                          ok ? "" : "An HCA is missing: check lspci for the card, dmesg for mlx5_core errors, and that the driver is loaded."));
  } else if (hcas == 0) {
    std::string why = "no RDMA device";
    for (const auto& a : node.absent)
      if (a.what == "rdma_devices") why = a.reason;
    out.push_back(Finding(CheckId::hca_count, Subject::node(node.host), Verdict::warn, 0, ">= 1",
                          "a node of a GPU cluster has at least one RDMA device", why + ": the RDMA phases cannot run on this node."));
  }
  const int cuda_gpus = cuda_gpu_count(node);
  for (const auto& g : node.gpus) {
    if (g.index) continue;
    out.push_back(Finding(CheckId::gpu_visible, node.host + "/" + g.pci, Verdict::fail, "on the PCI bus, not visible to CUDA",
                          "visible to CUDA", "every NVIDIA GPU on the PCI bus is usable by CUDA",
                          g.driver.empty() ? "No driver is bound to the GPU: is the NVIDIA driver installed and loaded (nvidia-smi)?"
                                        : "Check nvidia-smi, CUDA_VISIBLE_DEVICES, and dmesg for Xid errors."));
  }
  if (profile.cluster.gpus_per_node) {
    const bool ok = cuda_gpus == *profile.cluster.gpus_per_node;
    out.push_back(Finding(CheckId::gpu_count, Subject::node(node.host), ok ? Verdict::pass : Verdict::fail, cuda_gpus, *profile.cluster.gpus_per_node,
                          "CUDA GPUs per node == profile cluster.gpus_per_node",
                          ok ? "" : "A GPU is missing or not usable: nvidia-smi, dmesg (Xid), CUDA_VISIBLE_DEVICES."));
  }
  const int ranks = static_cast<int>(node.ranks.size());
  if (cuda_gpus > 0 && ranks != cuda_gpus) {
    out.push_back(Finding(CheckId::rank_per_gpu, Subject::node(node.host), Verdict::warn, {{"ranks", ranks}, {"gpus", cuda_gpus}}, "one rank per GPU",
                          "the launch starts one rank per GPU",
                          ranks < cuda_gpus ? "Some GPUs are not driven by any rank: launch with as many slots per node as GPUs."
                                         : "Several ranks share a GPU, and NCCL refuses a communicator that holds one GPU twice "
                                           "('Duplicate GPU detected': the NCCL sweeps fail; seen on an H200): launch with as many "
                                           "slots per node as GPUs."));
  }
}

void check_clock(const NodeFacts& node, const Profile& profile, std::vector<Finding>& out) {
  const bool ok = std::fabs(node.clock_offset_s) <= profile.cluster.max_clock_offset_s;
  out.push_back(Finding(CheckId::clock_offset, Subject::node(node.host), ok ? Verdict::pass : Verdict::fail,
                        node.clock_offset_s, fmt::format("|offset| <= {} s", profile.cluster.max_clock_offset_s),
                        "node clock within cluster.max_clock_offset_s of rank 0's (MPI ping-pong)",
                        ok ? "" : "Clock skew is invisible until a distributed job produces wrong results: check chrony/NTP on the management network (chronyc tracking)."));
}

}  // namespace

std::vector<Finding> check_node_health(const ClusterFacts& cluster, const Profile& profile) {
  std::vector<Finding> out;
  const auto best = best_rate_by_model(cluster, profile);
  for (const auto& node : cluster.nodes) {
    check_counts(node, profile, out);
    for (const auto& d : node.rdma_devices) {
      if (!profile.includes_device(d.name)) continue;
      for (const auto& p : d.ports) {
        const Subject subject = port_subject(node, d, p);
        check_port_state(subject, p, out);
        check_port_rate(subject, d, p, profile, best, out);
        check_link_layer(subject, p, profile, out);
        check_roce(subject, node, p, profile, out);
        check_infiniband(subject, p, out);
      }
      check_pcie(CheckId::hca_pcie_link, node.host + "/" + d.name, d.pcie, profile.pcie.hca_downtrained,
                 profile.pcie.hca_downtrained, "", out);
    }
    for (const auto& g : node.gpus) {
      check_pcie(CheckId::gpu_pcie_link, node.host + "/gpu" + (g.index ? std::to_string(*g.index) : g.pci), g.pcie,
                 profile.pcie.gpu_width_downtrained, profile.pcie.gpu_speed_downtrained,
                 "GPUs lower their link speed when idle: re-check under load (nvidia-smi -q -d PCIE). ", out);
    }
    check_gpu_memory(node, out);
    check_gpudirect_driver(node, profile, out);
    check_clock(node, profile, out);
  }
  return out;
}

std::vector<Finding> check_node_count(const ClusterFacts& cluster, const Profile& profile, const InventoryCheckOptions& options) {
  std::vector<Finding> out;
  const auto expected_nodes = options.expect_nodes ? options.expect_nodes : profile.cluster.nodes;
  std::vector<std::string> hosts;
  for (const auto& n : cluster.nodes) hosts.push_back(n.host);
  if (expected_nodes) {
    const bool ok = static_cast<int>(cluster.nodes.size()) == *expected_nodes;
    out.push_back(Finding(CheckId::node_count, Subject::cluster(), ok ? Verdict::pass : Verdict::fail,
                          {{"nodes", cluster.nodes.size()}, {"hosts", hosts}}, *expected_nodes,
                          options.expect_nodes ? "nodes answering == --expect-nodes" : "nodes answering == profile cluster.nodes",
                          ok ? "" : fmt::format("Expected {} nodes, found {} ({}): check the hostfile, the slots per host, and that every node answers ssh.",
                                             *expected_nodes, cluster.nodes.size(), fmt::join(hosts, ", "))));
  }
  return out;
}

std::vector<Finding> check_cluster_shape(const ClusterFacts& cluster, const Profile& profile,
                                         const InventoryCheckOptions& options) {
  std::vector<Finding> out = check_node_count(cluster, profile, options);
  if (!cluster.missing_ranks.empty()) {
    out.push_back(Finding(CheckId::rank_answered, Subject::cluster(), Verdict::error, json{{"missing_ranks", cluster.missing_ranks}},
                          "every rank answers the inventory gather", "every rank answers before the deadline",
                          "These ranks did not answer in time: a hung or dead node. Check the node (ssh, dmesg) and rerun."));
  }
  for (const auto& node : cluster.nodes) {
    for (const auto& e : node.probe_errors) {
      out.push_back(Finding(CheckId::probe_read, Subject::node(node.host), Verdict::error, e.message, "readable", "the inventory reads every source it needs: " + e.source,
                            "The inventory of this node is incomplete: check permissions and that /sys and /proc are mounted."));
    }
  }
  return out;
}

std::vector<Finding> check_inventory(const ClusterFacts& cluster, const Profile& profile,
                                     const InventoryCheckOptions& options) {
  auto out = check_cluster_shape(cluster, profile, options);
  auto health = check_node_health(cluster, profile);
  auto topology = check_topology(cluster, profile);
  out.insert(out.end(), topology.begin(), topology.end());
  auto consistency = check_consistency(cluster, profile);
  out.insert(out.end(), health.begin(), health.end());
  out.insert(out.end(), consistency.begin(), consistency.end());
  for (auto more : {check_roce_qos(cluster, profile), check_nccl_environment(cluster), check_control_path(cluster)})
    out.insert(out.end(), more.begin(), more.end());
  if (options.check_cabling) {
    const auto cabling = check_cabling(cluster);
    out.insert(out.end(), cabling.begin(), cabling.end());
  }
  return out;
}

std::vector<cabling::CabledPort> cabled_ports(const std::vector<NodeFacts>& nodes, const std::vector<std::string>& rail_hcas) {
  std::vector<cabling::CabledPort> ports;
  for (const auto& node : nodes) {
    auto devices = node.rdma_devices;
    std::sort(devices.begin(), devices.end(), [](const RdmaDevice& a, const RdmaDevice& b) { return a.name < b.name; });
    int next_rail = 0;
    for (const auto& d : devices)
      for (const auto& p : d.ports) {
        const auto declared = std::find(rail_hcas.begin(), rail_hcas.end(), d.name);
        if (!rail_hcas.empty() && (declared == rail_hcas.end() || p.port != 1)) continue;
        const int rail = rail_hcas.empty() ? next_rail++ : static_cast<int>(declared - rail_hcas.begin());
        cabling::CabledPort c{node.host, d.name, p.port, d.pci, rail, std::nullopt, "", "", ""};
        if (!p.neighbour) c.unread = "its neighbour was not asked (a saved tree, or a probe that failed: see the probe errors)";
        else if (!p.neighbour->unread.empty()) c.unread = p.neighbour->unread;
        else c.switch_name = p.neighbour->switch_name;
        if (p.neighbour) {
          c.switch_port = p.neighbour->switch_port;
          c.source = p.neighbour->source;
        }
        ports.push_back(std::move(c));
      }
  }
  return ports;
}

std::vector<Finding> check_cabling(const ClusterFacts& cluster) {
  const auto ports = cabled_ports(cluster.nodes, {});
  if (ports.empty())
    return {Finding(CheckId::cabling_unread, Subject::cluster(), Verdict::not_proven, "no RDMA port on any node", "every port's neighbour switch",
                    "--check-cabling judges RDMA ports", "No RDMA port was found: there is no cabling to prove.")};
  return cabling::check_rails(ports, {});
}

}  // namespace fabricproof
