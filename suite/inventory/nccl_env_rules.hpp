#pragma once
// NCCL's view of the fabric, read from the ranks' environment: NCCL_IB_HCA names devices and
// ports that exist and are ACTIVE on every node; NCCL_SOCKET_IFNAME resolves to an up interface
// that is not a data-fabric netdev; NCCL_IB_TC agrees with the HCA's and RDMA-CM's default class.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/finding.hpp"
#include "core/profile.hpp"
#include "inventory/inventory.hpp"

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

std::vector<Finding> check_nccl_environment(const ClusterFacts& cluster);

}  // namespace fabricproof
