#pragma once
// The cabling judged rail by rail. In a rail-optimised fabric HCA i of every node is cabled to rail
// i's leaf switch; a swapped cable still comes up at full rate, and the job silently crosses the
// spine. Each cabled port here carries the switch its neighbour table names (LLDP, ibnetdiscover)
// or why none was read; the rules:
// - a rail's switch is the one the spec declares, else the one most of the rail's HCAs reach (a
//   strict majority: with none, the rail cannot be judged); a port on another switch fails,
//   naming the node, its HCA, the switch it reached and the one it should;
// - two rails on one switch: a warning, a failure when the spec says rail-optimised;
// - with no switch names declared, ibdiagnet's --rail_validation rule too: the HCAs that reach a
//   switch sit at one PCIe address on every node; the odd node is named;
// - a port whose neighbour was not read is not proven, never a pass.
#include <optional>
#include <string>
#include <vector>

#include "core/finding.hpp"

namespace fabricproof::cabling {

struct CabledPort {
  std::string host;
  std::string device;   // "mlx5_0"
  int port = 1;
  std::string pci;      // "0000:17:00.0", empty for a virtual device
  int rail = 0;         // the HCA's rail: its place among the node's HCAs, or the spec's
  std::optional<std::string> switch_name;  // the neighbour: its system name (or chassis id)
  std::string switch_port;                 // the neighbour's port id
  std::string unread;                      // why no neighbour was read ("" when one was)
  std::string source;                      // "lldpd", "ibnetdiscover"
};

struct RailPlan {
  std::vector<std::string> switches;  // rail -> its switch, where the spec declares them
  bool rail_optimised = false;        // the spec says so: two rails on one switch fail
};

std::vector<Finding> check_rails(const std::vector<CabledPort>& ports, const RailPlan& plan);

}  // namespace fabricproof::cabling
