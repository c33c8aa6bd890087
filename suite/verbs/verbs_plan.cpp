#include "verbs/verbs_plan.hpp"

#include <algorithm>
#include <map>

#include "verbs/schedule.hpp"

namespace fabricproof {

namespace {

// Every port of every device the profile includes, on every node, as endpoints of the plan, each
// driven by one of its node's ranks: endpoints_of[node][rail] -> endpoint index; a rail is (device
// position on the node, port).
std::vector<std::vector<int>> place_endpoints(const ClusterFacts& cluster, const Profile& profile, const VerbsOptions& options, VerbsPlan& plan) {
  std::vector<std::vector<int>> endpoints_of(cluster.nodes.size());
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    const auto& node = cluster.nodes[n];
    std::vector<int> ranks;
    for (const auto& r : node.ranks) ranks.push_back(r.rank);
    std::sort(ranks.begin(), ranks.end());
    if (ranks.empty()) continue;
    std::vector<const RdmaDevice*> devices;
    for (const auto& d : node.rdma_devices)
      if (profile.includes_device(d.name)) devices.push_back(&d);
    std::sort(devices.begin(), devices.end(), [](const RdmaDevice* x, const RdmaDevice* y) { return x->name < y->name; });
    int rail = 0;
    for (const auto* d : devices) {
      for (const auto& p : d->ports) {
        VerbsEndpoint e;
        e.host = node.host;
        e.device = d->name;
        e.port = p.port;
        e.rank = ranks[static_cast<size_t>(rail) % ranks.size()];
        e.gid_index = options.gid_index ? options.gid_index : (p.link_layer == "Ethernet" ? p.roce_v2_gid_index : std::nullopt);
        e.link_layer = p.link_layer;
        e.rate_gbps = p.rate_gbps;
        e.active_mtu = p.active_mtu;
        e.state = p.state;
        e.pci = d->pci;
        e.serial = d->serial_number;
        endpoints_of[n].push_back(static_cast<int>(plan.endpoints.size()));
        plan.endpoints.push_back(e);
        ++rail;
      }
    }
  }
  return endpoints_of;
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
  renumber_rounds(plan);
  return plan;
}

}  // namespace fabricproof
