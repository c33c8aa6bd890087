#include "gpudirect/gpudirect_rules.hpp"

#include <fmt/format.h>

#include "core/hints.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

struct Direction {
  std::string label;  // "node1/mlx5_0 -> node2/mlx5_0"
  Subject subject;    // the same, typed: the GPUDirect matrix marks its cell
  const TestResult* host = nullptr;
  const TestResult* gpu = nullptr;
};

// The direction of a write_bw test as a subject (the pair's whole write_bw: no test named).
Subject direction(const VerbsSection& s, const TestResult& t) {
  return Subject::pair(s.endpoints.at(static_cast<size_t>(t.from)).label(), s.endpoints.at(static_cast<size_t>(t.to)).label(), "", false);
}

// The write_bw results of both runs, matched by endpoint labels and direction.
std::vector<Direction> directions(const VerbsSection& host, const VerbsSection& gpu) {
  std::vector<Direction> out;
  for (const auto& p : gpu.pairs)
    for (const auto& t : p.tests)
      if (t.test == "write_bw") out.push_back({direction(gpu, t).text(), direction(gpu, t), nullptr, &t});
  for (const auto& p : host.pairs)
    for (const auto& t : p.tests)
      if (t.test == "write_bw")
        for (auto& d : out)
          if (d.label == direction(host, t).text()) d.host = &t;
  return out;
}

}  // namespace

std::vector<GpudirectComparison> gpudirect_comparison(const VerbsSection& host, const VerbsSection& gpu) {
  std::vector<GpudirectComparison> rows;
  for (const auto& d : directions(host, gpu)) {
    GpudirectComparison row{d.label, std::nullopt, std::nullopt, std::nullopt, d.gpu->status, d.gpu->reason};
    if (d.host && d.host->status == Status::ok) row.host_gbps = d.host->gbps;
    if (d.gpu->status == Status::ok) row.gpu_gbps = d.gpu->gbps;
    if (row.host_gbps && row.gpu_gbps && *row.host_gbps > 0) row.ratio = *row.gpu_gbps / *row.host_gbps;
    rows.push_back(row);
  }
  return rows;
}

std::vector<Finding> check_gpudirect(const VerbsSection& host, const VerbsSection& gpu, const std::vector<GpuRegistration>& registrations,
                                     const Profile& profile) {
  std::vector<Finding> out;
  for (const auto& r : registrations) {
    if (!r.path.empty() || !r.gpu) continue;
    out.push_back({CheckId::gpudirect_available, fmt::format("{} rank {} GPU {}", r.host, r.rank, *r.gpu), Verdict::fail,
                   json{{"dmabuf", r.dmabuf}, {"peermem", r.peermem}}, json{{"path", "dmabuf or peermem"}},
                   "gpudirect_available: the HCA registers this rank's GPU memory, by DMA-BUF or by nvidia-peermem",
                   std::string("GPUDirect not available. ") + hint::kPeermem});
  }
  const auto& g = profile.gpudirect;
  for (const auto& d : directions(host, gpu)) {
    const std::string rule = fmt::format(
        "gpudirect_ratio: RDMA write bandwidth on GPU memory >= {} x the same write on host memory passes, <= {} is a host bounce "
        "(gpudirect.ratio_pass, ratio_bounce)",
        g.ratio_pass, g.ratio_bounce);
    if (d.gpu->status == Status::not_measured) continue;
    if (d.gpu->status != Status::ok) {
      out.push_back({CheckId::gpudirect_ratio, d.subject, Verdict::fail, json{{"gpu", d.gpu->reason}}, json{{"gpu", "measured"}}, rule,
                     "The write on GPU memory failed: see gpudirect_available and the verbs status in `measured`."});
      continue;
    }
    if (!d.host || d.host->status != Status::ok || !d.host->gbps || !d.gpu->gbps || *d.host->gbps <= 0) {
      out.push_back({CheckId::gpudirect_ratio, d.subject, Verdict::skip, json{{"host", d.host ? to_string(d.host->status) : "absent"}}, json{}, rule, ""});
      continue;
    }
    const double ratio = *d.gpu->gbps / *d.host->gbps;
    const Verdict v = ratio >= g.ratio_pass ? Verdict::pass : ratio <= g.ratio_bounce ? Verdict::fail : Verdict::warn;
    std::string hint;
    if (v == Verdict::fail)
      hint = std::string("Host bounce: the data goes through host memory. Check nvidia_peermem / DMA-BUF (gpudirect_available), "
                         "then the GPU-HCA path (gpu_hca_path: SYS means the other NUMA node). ") + hint::kNuma;
    else if (v == Verdict::warn)
      hint = "GPU memory writes are slower than host memory: check the GPU-HCA path class (gpu_hca_path) and the GPU's PCIe link.";
    out.push_back({CheckId::gpudirect_ratio, d.subject, v, json{{"gpu_gbps", *d.gpu->gbps}, {"host_gbps", *d.host->gbps}, {"ratio", ratio}},
                   json{{"ratio_pass", g.ratio_pass}, {"ratio_bounce", g.ratio_bounce}}, rule, hint});
  }
  for (const auto& p : gpu.pairs)
    for (const auto& t : p.tests)
      if (t.test == "send_bw" && t.mismatches && *t.mismatches > 0)
        out.push_back({CheckId::gpudirect_payload, direction(gpu, t), Verdict::fail, json{{"mismatches", *t.mismatches}, {"verified", t.verified.value_or(0)}},
                       json{{"mismatches", 0}}, "gpudirect_payload: SENDs into GPU memory arrive intact (checked by a kernel on the receiving GPU)",
                       "Corrupted GPU payloads: check the port error counters and the GPU's PCIe link; rerun with --verbs-mode isolated."});
  return out;
}

}  // namespace fabricproof
