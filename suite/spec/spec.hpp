#pragma once
// The cluster spec: what was ordered ("fabricproof.spec/1", schemas/spec.schema.json). The profile
// holds thresholds; the spec says what must be there and what must be measured. `run --spec` judges
// it fail-closed: whatever it declares and the run did not measure fails (spec/spec_rules.hpp).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricproof {

inline constexpr const char* kSpecSchema = "fabricproof.spec/1";

struct GpuSpec {
  int count = 0;
  std::string model;  // a substring of the CUDA name ("H100"); "" accepts any
};

struct RdmaSpec {
  int count = 0;                 // RDMA devices per node (those the profile includes)
  std::string model;             // hca_type ("MT4129") or a substring of the VPD board name; "" any
  std::string part_number;       // from the PCI VPD ("MCX75310AAS-NEAT"); "" any
  std::string link_layer;        // "InfiniBand" or "Ethernet"; "" any
  std::optional<double> rate_gbps;
  std::optional<int> active_mtu;  // bytes
  std::string firmware;          // fw_ver; "" any
};

// Which GPU an HCA serves: rail i is HCA `hca` with GPU `gpu` on every node, cabled to `switch`
// (its leaf: the LLDP system name) when the spec says.
struct RailSpec {
  std::string hca;
  int gpu = 0;
  std::string leaf;  // "switch" in the spec; "" not declared
};

// One cable of the plan, as UFM's point-to-point sheet: node and HCA port (A) to switch and port (Z).
struct CableSpec {
  std::string host;
  std::string hca;
  int port = 1;
  std::string leaf;         // the switch
  std::string switch_port;  // its port id ("Ethernet184")
};

struct CablingSpec {
  bool rail_optimised = false;   // one leaf per rail: two rails on one leaf fail
  std::vector<CableSpec> cables;
  bool declared() const { return rail_optimised || !cables.empty(); }
};

struct BusbwFloor {
  int nodes = 0;
  uint64_t bytes = 0;
  double busbw_GBps = 0;
};

struct SpecFloors {
  std::optional<double> verbs_write_bw_gbps;  // every rail pair's write_bw, each direction
  std::vector<BusbwFloor> busbw;              // allreduce busbw (out of place) at a size on a group of nodes
  std::optional<double> uplink_gbps;          // all nodes together through the uplink
};

struct ClusterSpec {
  std::string name;
  std::string description;
  std::optional<int> node_count;
  std::vector<std::string> hosts;  // optional: the node names (as the inventory reports them)
  std::optional<GpuSpec> gpus;     // per node
  std::optional<RdmaSpec> rdma;    // per node
  std::vector<RailSpec> rails;
  // Unset: required where the declared hardware asks for it (spec_rules.hpp); false waives it.
  std::optional<bool> nccl;        // NCCL must load and run the sweeps (never MPI in its place)
  std::optional<bool> gpudirect;   // the GPUDirect phase must run
  std::vector<std::string> phases; // must run (selected and measured)
  bool intermittent_fails = false; // a dip that its re-measurement did not repeat fails outright
  bool latency_outliers_fail = false;  // a pair whose latency is an outlier (a warning by the profile) fails
  SpecFloors floors;
  CablingSpec cabling;

  int expected_nodes() const { return node_count.value_or(static_cast<int>(hosts.size())); }
  bool declares_cabling() const {
    return cabling.declared() || std::any_of(rails.begin(), rails.end(), [](const RailSpec& r) { return !r.leaf.empty(); });
  }
};

struct SpecLoad {
  std::optional<ClusterSpec> spec;
  std::vector<std::string> errors;  // "FILE: /rdma/rate_gbps: must be a finite number > 0, got nan"
};

// Reads a spec from its text; `origin` names it in every error. Unknown keys, wrong types and
// numbers that are not finite or out of range are errors, each naming its JSON pointer.
SpecLoad load_spec_text(const std::string& text, const std::string& origin);
SpecLoad load_spec_file(const std::string& path);

}  // namespace fabricproof
