#pragma once
// The seed's RoCE lossless and control-path advice as rules, and NCCL's view of the fabric:
// - every RoCE port: PFC on exactly the RoCE priority, trust DSCP, the DSCP the traffic carries
//   (NCCL_IB_TC >> 2, else the device default class, else the profile's) mapped to that priority,
//   the RoCE class given bandwidth by ETS, ECN on it where readable; the same on every node;
// - NCCL_IB_HCA names devices and ports that exist and are ACTIVE on every node; NCCL_SOCKET_IFNAME
//   resolves to an up interface that is not a data-fabric netdev; NCCL_IB_TC agrees with the HCA's
//   default class;
// - firmware identical across HCAs of one model within a node; one subnet manager seen from every
//   InfiniBand port; the default route not through the data fabric.
// A fact the node could not give (DCB unreadable on a driver without dcbnl) is a skip with the
// reason, never a pass or a fail.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/finding.hpp"
#include "core/inventory.hpp"
#include "core/profile.hpp"

namespace fabricproof {

// NCCL's list syntax (NCCL_IB_HCA, NCCL_SOCKET_IFNAME): "^" excludes, "=" matches names exactly,
// otherwise each entry is a prefix; "name:port" restricts an HCA entry to one port.
struct NcclList {
  bool exclude = false;
  bool exact = false;
  struct Entry {
    std::string name;
    std::optional<int> port;
  };
  std::vector<Entry> entries;
};
NcclList parse_nccl_list(std::string_view spec);
// Whether NCCL would use `name` (and `port`) under the list.
bool nccl_list_selects(const NcclList& list, std::string_view name, std::optional<int> port = std::nullopt);

std::vector<Finding> check_roce_qos(const ClusterFacts& cluster, const Profile& profile);
std::vector<Finding> check_nccl_environment(const ClusterFacts& cluster);
std::vector<Finding> check_control_path(const ClusterFacts& cluster);

}  // namespace fabricproof
