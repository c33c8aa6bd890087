#include "inventory/consistency.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "core/hints.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;
using Extract = std::function<std::string(const NodeFacts&, const Profile&)>;

struct Attribute {
  CheckId check;  // consistency_<name>
  const char* name;
  bool os_level;  // judged by consistency.os_kernel rather than consistency.software
  Extract extract;
};

std::string joined(std::multiset<std::string> values) { return fmt::format("{}", fmt::join(values, ",")); }

// One value per checked device (or port), sorted, so that device order does not matter.
std::string per_device(const NodeFacts& n, const Profile& p,
                       const std::function<std::string(const RdmaDevice&)>& value_of) {
  std::multiset<std::string> values;
  for (const auto& d : n.rdma_devices)
    if (p.includes_device(d.name)) values.insert(value_of(d));
  return joined(values);
}

std::string per_port(const NodeFacts& n, const Profile& p,
                     const std::function<std::string(const PortFacts&)>& value_of) {
  std::multiset<std::string> values;
  for (const auto& d : n.rdma_devices)
    if (p.includes_device(d.name))
      for (const auto& port : d.ports) values.insert(value_of(port));
  return joined(values);
}

template <typename T>
std::string or_none(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : "none";
}

const std::vector<Attribute>& attributes() {
  static const std::vector<Attribute> list = {
      {CheckId::consistency_hca_count, "hca_count", false, [](const NodeFacts& n, const Profile& p) { return std::to_string(std::count_if(n.rdma_devices.begin(), n.rdma_devices.end(), [&](const RdmaDevice& d) { return p.includes_device(d.name); })); }},
      {CheckId::consistency_hca_models, "hca_models", false, [](const NodeFacts& n, const Profile& p) { return per_device(n, p, [](const RdmaDevice& d) { return d.hca_type + (d.board_id.empty() ? "" : "/" + d.board_id); }); }},
      {CheckId::consistency_hca_firmware, "hca_firmware", false, [](const NodeFacts& n, const Profile& p) { return per_device(n, p, [](const RdmaDevice& d) { return d.hca_type + ":" + d.fw_ver; }); }},
      {CheckId::consistency_link_layers, "link_layers", false, [](const NodeFacts& n, const Profile& p) { return per_port(n, p, [](const PortFacts& x) { return x.link_layer; }); }},
      {CheckId::consistency_port_rates, "port_rates", false, [](const NodeFacts& n, const Profile& p) { return per_port(n, p, [](const PortFacts& x) { return or_none(x.rate_gbps); }); }},
      {CheckId::consistency_active_mtus, "active_mtus", false, [](const NodeFacts& n, const Profile& p) { return per_port(n, p, [](const PortFacts& x) { return or_none(x.active_mtu); }); }},
      {CheckId::consistency_netdev_mtus, "netdev_mtus", false, [](const NodeFacts& n, const Profile& p) { return per_port(n, p, [](const PortFacts& x) { return or_none(x.netdev_mtu); }); }},
      {CheckId::consistency_mlx5_driver, "mlx5_driver", false, [](const NodeFacts& n, const Profile&) { const auto& m = n.software.mlx5_core; return m.loaded ? m.flavor + " " + m.version : std::string("not loaded"); }},
      {CheckId::consistency_ofed_version, "ofed_version", false, [](const NodeFacts& n, const Profile&) { return n.software.ofed_version; }},
      {CheckId::consistency_rdma_core_version, "rdma_core_version", false, [](const NodeFacts& n, const Profile&) { return n.software.rdma_core_version; }},
      {CheckId::consistency_nvidia_driver, "nvidia_driver", false, [](const NodeFacts& n, const Profile&) { return n.software.nvidia_driver; }},
      {CheckId::consistency_cuda_driver, "cuda_driver", false, [](const NodeFacts& n, const Profile&) { return n.software.cuda_driver; }},
      {CheckId::consistency_cuda_runtime, "cuda_runtime", false, [](const NodeFacts& n, const Profile&) { return n.software.cuda_runtime; }},
      {CheckId::consistency_nccl_version, "nccl_version", false, [](const NodeFacts& n, const Profile&) { return n.software.nccl; }},
      {CheckId::consistency_open_mpi_version, "open_mpi_version", false, [](const NodeFacts& n, const Profile&) { return n.software.open_mpi; }},
      {CheckId::consistency_nvidia_peermem, "nvidia_peermem", false, [](const NodeFacts& n, const Profile&) { return n.software.nvidia_peermem.loaded ? std::string("loaded") : std::string("not loaded"); }},
      {CheckId::consistency_gpu_models, "gpu_models", false, [](const NodeFacts& n, const Profile&) { std::multiset<std::string> v; for (const auto& g : n.gpus) v.insert(g.name.empty() ? "unnamed" : g.name); return joined(v); }},
      {CheckId::consistency_kernel, "kernel", true, [](const NodeFacts& n, const Profile&) { return n.software.kernel; }},
      {CheckId::consistency_os, "os", true, [](const NodeFacts& n, const Profile&) { return n.software.os; }},
  };
  return list;
}

}  // namespace

std::vector<Finding> check_consistency(const ClusterFacts& cluster, const Profile& profile) {
  std::vector<Finding> out;
  if (cluster.nodes.size() < 2) {
    out.push_back(Finding{CheckId::consistency, Subject::cluster(), Verdict::skip, static_cast<int>(cluster.nodes.size()), ">= 2 nodes",
                          "nodes agree on hardware models, firmware, drivers, libraries and MTUs",
                          "One node: nothing to compare."});
    return out;
  }
  for (const auto& attribute : attributes()) {
    std::map<std::string, std::vector<std::string>> groups;  // value -> hosts
    for (const auto& node : cluster.nodes) groups[attribute.extract(node, profile)].push_back(node.host);
    const std::string rule = std::string(attribute.name) + " is the same on every node";
    json measured = json::object();
    for (const auto& [value, hosts] : groups) measured[value.empty() ? "(none)" : value] = hosts;
    if (groups.size() == 1) {
      out.push_back(Finding{attribute.check, Subject::cluster(), Verdict::pass, measured, "one value on every node", rule, ""});
      continue;
    }
    // The majority is the reference; with a tie there is none and every node is named.
    auto largest = std::max_element(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    const bool tie = std::count_if(groups.begin(), groups.end(), [&](const auto& g) { return g.second.size() == largest->second.size(); }) > 1;
    std::vector<std::string> odd;
    for (const auto& [value, hosts] : groups)
      if (tie || value != largest->first)
        for (const auto& h : hosts) odd.push_back(fmt::format("{} ({})", h, value.empty() ? "none" : value));
    const json expected = tie ? json("one value on every node (no majority)") : json(largest->first);
    out.push_back(Finding{attribute.check, Subject::cluster(), attribute.os_level ? profile.consistency.os_kernel : profile.consistency.software,
                          measured, expected, rule,
                          fmt::format("Differs on {}. {}", fmt::join(odd, ", "), hint::kSoftwareSkew)});
  }
  return out;
}

}  // namespace fabricproof
