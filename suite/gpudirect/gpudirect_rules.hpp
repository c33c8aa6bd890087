#pragma once
// GPUDirect RDMA: the same RDMA writes on GPU memory and on host memory, compared pair by pair.
// Pure: the two verbs sections and each rank's registration record in, findings out.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/profile.hpp"
#include "verbs/verbs_model.hpp"

namespace fabricproof {

// How one rank registered GPU memory with its HCA: "dmabuf" or "peermem" (path), or "" when
// neither worked; the other fields say why a path was not taken (errno text, attribute, module).
struct GpuRegistration {
  int rank = 0;
  std::string host;
  std::optional<int> gpu;
  std::string path;       // of the last allocation: "dmabuf" or "peermem" ("" when none worked)
  std::string dmabuf;     // why DMA-BUF did not work ("" when it did or was not tried)
  std::string peermem;
  std::map<std::string, int> allocations;  // every allocation's path ("dmabuf", "peermem", "failed") and how often
  std::string flush;  // how received data is made visible to the check kernel (GPUDirect RDMA write ordering)
};
FABRICPROOF_JSON(GpuRegistration, rank, host, gpu, path, dmabuf, peermem, allocations, flush)

// Findings: a rank that could not register GPU memory fails ("GPUDirect not available", with the
// reasons); per pair and direction, GPU / host write bandwidth >= gpudirect.ratio_pass passes,
// <= gpudirect.ratio_bounce fails as a host bounce, between warns; GPU payload mismatches fail.
std::vector<Finding> check_gpudirect(const VerbsSection& host, const VerbsSection& gpu, const std::vector<GpuRegistration>& registrations,
                                     const Profile& profile);

// One measured direction: the same RDMA write on host and on GPU memory.
struct GpudirectComparison {
  std::string pair;  // "a -> b"
  std::optional<double> host_gbps;
  std::optional<double> gpu_gbps;
  std::optional<double> ratio;  // GPU / host
  Status gpu_status = Status::not_measured;
  std::string gpu_reason;
};
FABRICPROOF_JSON(GpudirectComparison, pair, host_gbps, gpu_gbps, ratio, gpu_status, gpu_reason)

std::vector<GpudirectComparison> gpudirect_comparison(const VerbsSection& host, const VerbsSection& gpu);

// The report's `gpudirect` section.
struct GpudirectSection {
  VerbsSection host;
  VerbsSection gpu;
  std::vector<GpuRegistration> registrations;
  std::vector<GpudirectComparison> comparison;
};
FABRICPROOF_JSON(GpudirectSection, host, gpu, registrations, comparison)

}  // namespace fabricproof
