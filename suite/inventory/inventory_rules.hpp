#pragma once
// Health rules on the gathered inventory: pure functions from facts to findings.
#include <optional>
#include <vector>

#include "cabling/rails.hpp"
#include "core/finding.hpp"
#include "inventory/inventory.hpp"
#include "core/profile.hpp"

namespace fabricproof {

struct InventoryCheckOptions {
  std::optional<int> expect_nodes;  // --expect-nodes; overrides the profile's cluster.nodes
  bool check_cabling = false;       // --check-cabling: the rail rules of suite/cabling over each port's neighbour
};

// --check-cabling: every port with the switch its neighbour table names (or why none), its rail
// being its place among the node's ports (HCAs by name), judged by cabling::check_rails.
std::vector<Finding> check_cabling(const ClusterFacts& cluster);
// Every port of the nodes with its neighbour for suite/cabling: its rail is its place among the
// node's ports (HCAs by name), or, given the rails' HCAs (a spec's), port 1 of those HCAs only.
std::vector<cabling::CabledPort> cabled_ports(const std::vector<NodeFacts>& nodes, const std::vector<std::string>& rail_hcas);

// The nodes that answered against --expect-nodes (or the profile's cluster.nodes): judged whatever
// phases run, since a run on fewer nodes than ordered proves nothing about the missing ones.
std::vector<Finding> check_node_count(const ClusterFacts& cluster, const Profile& profile, const InventoryCheckOptions& options);
// Per node and per port: port state and rate, link layer, RoCE MTU and GIDs, InfiniBand LIDs,
// PCIe links, GPUDirect drivers, device counts, rank placement, clock offset.
std::vector<Finding> check_node_health(const ClusterFacts& cluster, const Profile& profile);
// Cluster shape: node count, ranks that did not answer, probe errors.
std::vector<Finding> check_cluster_shape(const ClusterFacts& cluster, const Profile& profile,
                                         const InventoryCheckOptions& options);
// Everything above plus cross-node consistency (consistency.hpp).
std::vector<Finding> check_inventory(const ClusterFacts& cluster, const Profile& profile,
                                     const InventoryCheckOptions& options);

}  // namespace fabricproof
