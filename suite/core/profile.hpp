#pragma once
// Versioned JSON threshold profiles (design.md, principle 5). A profile overlays the built-in
// default: it names only what it changes. Every key is validated; errors name the file, the key
// (a JSON pointer) and the problem.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/verdict.hpp"

namespace fabricproof {

inline constexpr std::string_view kProfileSchema = "fabricproof.profile/1";

struct Profile {
  std::string name;
  std::string description;
  std::string origin;         // "built-in:default" or the file path given
  nlohmann::json effective;   // the merged document, echoed in the report

  struct Cluster {
    std::optional<int> nodes;
    std::optional<int> gpus_per_node;
    std::optional<int> hcas_per_node;
    double max_clock_offset_s = 0.5;
  } cluster;
  struct Ports {
    std::vector<std::string> devices;  // RDMA devices to check; empty = all
    std::optional<std::string> link_layer;
    std::optional<double> rate_gbps;
  } ports;
  struct Roce {
    int active_mtu = 4096;
    int min_netdev_mtu = 9000;
    int pfc_priority = 3;  // the one lossless priority RoCE traffic uses (the seed)
    int dscp = 26;         // the DSCP of RoCE traffic when neither NCCL_IB_TC nor the device says (traffic class 106)
  } roce;
  struct Pcie {
    Verdict hca_downtrained = Verdict::fail;
    Verdict gpu_width_downtrained = Verdict::fail;
    Verdict gpu_speed_downtrained = Verdict::warn;
  } pcie;
  struct Gpudirect {
    Verdict missing_peermem = Verdict::fail;
    double ratio_pass = 0.9;     // GPU / host RDMA write bandwidth that passes
    double ratio_bounce = 0.2;   // at or below: the data bounces through host memory (the seed's ~5x)
  } gpudirect;
  struct Consistency {
    Verdict software = Verdict::fail;
    Verdict os_kernel = Verdict::warn;
  } consistency;
  struct Verbs {
    bool absolute_bw = true;      // judge bandwidth against the port rate (off in the lab)
    double bw_pass_ratio = 0.9;   // of the slower port's rate
    double bw_fail_ratio = 0.8;
    double outlier_ratio = 0.8;   // of the typical (median) pair of the same test in the matrix
    std::optional<double> latency_usec_infiniband;
    std::optional<double> latency_usec_ethernet;
    double latency_outlier_factor = 2.0;  // x the median pair's p50 latency
    double locate_slow_below = 0.85;      // --verbs-mode locate by bandwidth: of the rail's healthy rate (upper quartile)
  } verbs;
  struct Collectives {
    bool absolute_bw = true;             // judge inter-node busbw against the NIC ceiling (off in the lab)
    double busbw_efficiency = 0.88;      // of NICs x rate / 8 (the seed: 22 of 25 GB/s)
    double busbw_efficiency_fail = 0.7;
    double scaling_drop_factor = 5.0;    // 1-node busbw / 2-node busbw at the top size: "RDMA not used"
    std::optional<uint64_t> max_bytes;   // the sweep's top size when --max-bytes is not given (null: 8G)
  } collectives;
  struct Uplink {
    std::optional<double> ingest_gbps;  // the cluster's dataset read rate (fabricproof plan-uplink); null: not judged
  } uplink;
  // The soak (--soak): public burn-in criteria (README "Burn-in" gives the sources).
  struct Soak {
    double port_rcv_errors_max = 100;     // Azure: PortRcvErrors above 100 over the soak fails
    double port_xmit_discards_max = 1000; // Azure: PortXmitDiscards above 1000
    double symbol_ber_max = 1e-15;        // NVIDIA: symbol BER of a healthy NDR link (short cables)
    double ber_min_uptime_s = 7500;       // NVIDIA: BER judged once the port has been up 125 minutes
    double worst_pass_ratio = 0.8;        // a pass's figure against the series' median
    double cv_max = 0.1;                  // coefficient of variation of a series
  } soak;
  struct Compare {
    double regression = 0.05;  // `compare`: a figure worse than the baseline by more than this fails
  } compare;

  bool includes_device(std::string_view device) const;
};

struct ProfileLoad {
  std::optional<Profile> profile;
  std::vector<std::string> errors;  // each "<origin>: <key>: <problem>"
};

// Parses and validates profile text; `origin` names it in errors.
ProfileLoad load_profile_text(std::string_view text, const std::string& origin);
// A built-in profile name ("default", "ib-hdr200-4x4", "roce-200") or a path to a JSON file.
ProfileLoad load_profile(const std::string& name_or_path);
Profile default_profile();
std::vector<std::string> builtin_profile_names();

}  // namespace fabricproof
