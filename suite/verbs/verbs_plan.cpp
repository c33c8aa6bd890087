#include "verbs/verbs_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/units.hpp"
#include "inventory/topology.hpp"

#include "verbs/schedule.hpp"

namespace fabricproof {

namespace {

// How close a rank sits to an HCA, for host memory first: 0 when the rank's CPUs all lie on the
// HCA's NUMA node, 1 when unknown or partly, 2 when none does. Then the PCIe path from the rank's
// GPU to the HCA (hwloc's classes, PIX best: the closeness the GPUDirect phase pairs by; 5 when
// unknown). Smaller is closer.
struct Closeness {
  int numa = 1;
  int gpu_path = 5;
  std::string why;
};

Closeness closeness(const NodeFacts& node, const RankFacts& rank, const RdmaDevice& device) {
  Closeness c;
  const auto numa = std::find_if(node.numa_nodes.begin(), node.numa_nodes.end(), [&](const NumaNode& n) { return n.id == device.numa_node; });
  const auto cpus = parse_cpulist(rank.cpus_allowed);
  if (!device.numa_node || numa == node.numa_nodes.end() || cpus.empty()) {
    c.why = device.numa_node ? "its CPUs or the NUMA node's unknown" : device.name + "'s NUMA node unknown";
  } else {
    const auto local = parse_cpulist(numa->cpus);
    const auto inside = std::count_if(cpus.begin(), cpus.end(), [&](int cpu) { return std::find(local.begin(), local.end(), cpu) != local.end(); });
    c.numa = inside == static_cast<long>(cpus.size()) ? 0 : inside > 0 ? 1 : 2;
    c.why = fmt::format("CPUs {} {} NUMA node {} of {}", rank.cpus_allowed, c.numa == 0 ? "on" : c.numa == 1 ? "partly on" : "off", numa->id,
                        device.name);
  }
  if (node.topology && rank.gpu) {
    const auto& t = *node.topology;
    const auto gpu = std::find_if(node.gpus.begin(), node.gpus.end(), [&](const GpuFacts& g) { return g.index == rank.gpu; });
    const auto hca = std::find_if(t.hcas.begin(), t.hcas.end(), [&](const TopoDevice& h) { return h.name == device.name; });
    for (size_t g = 0; gpu != node.gpus.end() && hca != t.hcas.end() && g < t.gpus.size() && g < t.classes.size(); ++g) {
      const size_t h = static_cast<size_t>(hca - t.hcas.begin());
      if (t.gpus[g].pci != gpu->pci || h >= t.classes[g].size()) continue;
      c.gpu_path = path_rank(t.classes[g][h]);
      c.why += fmt::format("; its GPU {} {}", *rank.gpu, t.classes[g][h]);
    }
  }
  return c;
}

// The rank of `node` to drive `device`: the closest (Closeness), among the ranks that drive fewer
// than `cap` endpoints yet (a rank runs its pairs of a round one after another, so the rails of a
// node are spread over its ranks first), then the least loaded, then the lowest rank.
std::pair<int, std::string> place(const NodeFacts& node, const RdmaDevice& device, std::map<int, int>& load, int cap) {
  const RankFacts* best = nullptr;
  Closeness best_c;
  for (const auto& r : node.ranks) {
    if (load[r.rank] >= cap) continue;
    const auto c = closeness(node, r, device);
    const auto key = std::make_tuple(c.numa, c.gpu_path, load[r.rank], r.rank);
    if (!best || key < std::make_tuple(best_c.numa, best_c.gpu_path, load[best->rank], best->rank)) {
      best = &r;
      best_c = c;
    }
  }
  ++load[best->rank];
  return {best->rank, fmt::format("rank {}: {}", best->rank, best_c.why)};
}

// Every port of every device the profile includes, on every node, as endpoints of the plan, each
// driven by one of its node's ranks (place()): endpoints_of[node][rail] -> endpoint index; a rail
// is (device position on the node, port).
std::vector<std::vector<int>> place_endpoints(const ClusterFacts& cluster, const Profile& profile, const VerbsOptions& options, VerbsPlan& plan) {
  std::vector<std::vector<int>> endpoints_of(cluster.nodes.size());
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    const auto& node = cluster.nodes[n];
    if (node.ranks.empty()) continue;
    std::vector<const RdmaDevice*> devices;
    size_t ports = 0;
    for (const auto& d : node.rdma_devices)
      if (profile.includes_device(d.name)) {
        devices.push_back(&d);
        ports += d.ports.size();
      }
    std::sort(devices.begin(), devices.end(), [](const RdmaDevice* x, const RdmaDevice* y) { return x->name < y->name; });
    const int cap = static_cast<int>((ports + node.ranks.size() - 1) / node.ranks.size());
    std::map<int, int> load;
    for (const auto* d : devices) {
      for (const auto& p : d->ports) {
        VerbsEndpoint e;
        e.host = node.host;
        e.device = d->name;
        e.port = p.port;
        std::tie(e.rank, e.placement) = place(node, *d, load, cap);
        e.gid_index = options.gid_index ? options.gid_index : (p.link_layer == "Ethernet" ? p.roce_v2_gid_index : std::nullopt);
        e.link_layer = p.link_layer;
        e.rate_gbps = p.rate_gbps;
        e.active_mtu = p.active_mtu;
        e.state = p.state;
        e.pci = d->pci;
        e.serial = d->serial_number;
        endpoints_of[n].push_back(static_cast<int>(plan.endpoints.size()));
        plan.endpoints.push_back(e);
      }
    }
  }
  return endpoints_of;
}

// A round split in parts in which no rank is in two pairs (one_pair_per_rank), numbered in order.
void split_rounds_by_rank(VerbsPlan& plan) {
  std::map<int, std::vector<std::set<int>>> busy;  // round -> its parts -> the ranks in them
  std::map<std::pair<int, int>, int> part_of;      // (round, part) -> new round, numbered in order
  std::vector<std::pair<int, int>> key(plan.tasks.size());
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const auto& t = plan.tasks[i];
    auto& parts = busy[t.round];
    const int ra = plan.endpoints[t.a].rank, rb = plan.endpoints[t.b].rank;
    size_t k = 0;
    if (t.skip_reason.empty()) {
      while (k < parts.size() && (parts[k].count(ra) || parts[k].count(rb))) ++k;
      if (k == parts.size()) parts.emplace_back();
      parts[k].insert({ra, rb});
    }
    key[i] = {t.round, static_cast<int>(k)};
    part_of.emplace(key[i], 0);
  }
  int next = 0;
  for (auto& [part, round] : part_of) round = next++;
  for (size_t i = 0; i < plan.tasks.size(); ++i) plan.tasks[i].round = part_of[key[i]];
}

// Drops rounds that ended up empty (nodes with fewer rails) and numbers the rest from 0.
void renumber_rounds(VerbsPlan& plan) {
  std::map<int, int> renumber;
  for (const auto& t : plan.tasks) renumber.emplace(t.round, 0);
  int next = 0;
  for (auto& [old, fresh] : renumber) fresh = next++;
  for (auto& t : plan.tasks) t.round = renumber[t.round];
  plan.rounds = next;
}

}  // namespace

VerbsPlan plan_verbs(const ClusterFacts& cluster, const Profile& profile, const VerbsOptions& options) {
  VerbsPlan plan;
  plan.options = options;
  const auto endpoints_of = place_endpoints(cluster, profile, options, plan);
  const int nodes = static_cast<int>(cluster.nodes.size());
  if (plan.options.mode == "auto") plan.options.mode = nodes > kLocateAbove ? "locate" : "rounds";
  if (plan.options.mode == "locate") return plan;  // the rounds are chosen as the results come (suite/locate)
  size_t max_rails = 0;
  for (const auto& e : endpoints_of) max_rails = std::max(max_rails, e.size());
  // Each node-pair round of the schedule becomes one round (matched rails run side by side) or,
  // for all-to-all rails, one round per rail shift so that no endpoint is in two pairs at once.
  int round = 0;
  for (const auto& node_round : round_robin(nodes)) {
    const size_t shifts = options.rails == "all" ? max_rails : 1;
    for (size_t shift = 0; shift < shifts; ++shift, ++round) {
      for (const auto& [x, y] : node_round) {
        const auto& ex = endpoints_of[static_cast<size_t>(x)];
        const auto& ey = endpoints_of[static_cast<size_t>(y)];
        for (size_t i = 0; i < ex.size(); ++i) {
          const size_t j = options.rails == "all" ? (i + shift) % std::max<size_t>(ey.size(), 1) : i;
          if (j >= ey.size()) continue;
          VerbsTask t;
          t.id = static_cast<int>(plan.tasks.size());
          t.round = round;
          t.a = ex[i];
          t.b = ey[j];
          for (int e : {t.a, t.b})
            if (plan.endpoints[e].state != "ACTIVE")
              t.skip_reason = "port " + (plan.endpoints[e].state.empty() ? std::string("state unknown") : plan.endpoints[e].state) + " on " + plan.endpoints[e].label();
          plan.tasks.push_back(t);
        }
      }
    }
  }
  if (options.mode == "isolated") {
    round = 0;
    for (auto& t : plan.tasks) t.round = round++;
  }
  one_pair_per_rank(plan);
  return plan;
}

void one_pair_per_rank(VerbsPlan& plan) {
  split_rounds_by_rank(plan);
  renumber_rounds(plan);
}

}  // namespace fabricproof
