#include "app/gpudirect_phase.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>

#include "app/verbs_phase.hpp"
#include "gpudirect/gpudirect_rules.hpp"
#include "gpudirect/cuda_memory.hpp"
#include "mpi/exchange.hpp"
#include "mpi/messages.hpp"

namespace fabricproof::app {
namespace {

using nlohmann::json;

// The rank of `node` whose GPU is closest to HCA `device` (hwloc classes), or nullopt when the
// topology or the rank -> GPU map cannot tell.
std::optional<int> closest_rank(const NodeFacts& node, const std::string& device) {
  if (!node.topology) return std::nullopt;
  const auto& t = *node.topology;
  const auto hca = std::find_if(t.hcas.begin(), t.hcas.end(), [&](const TopoDevice& h) { return h.name == device; });
  if (hca == t.hcas.end()) return std::nullopt;
  const size_t h = static_cast<size_t>(hca - t.hcas.begin());
  std::optional<int> best_rank;
  int best = 99;
  for (const auto& r : node.ranks) {
    if (!r.gpu) continue;
    const auto gpu = std::find_if(node.gpus.begin(), node.gpus.end(), [&](const GpuFacts& g) { return g.index == r.gpu; });
    if (gpu == node.gpus.end()) continue;
    for (size_t g = 0; g < t.gpus.size() && g < t.classes.size(); ++g)
      if (t.gpus[g].pci == gpu->pci && h < t.classes[g].size() && path_rank(t.classes[g][h]) < best) {
        best = path_rank(t.classes[g][h]);
        best_rank = r.rank;
      }
  }
  return best_rank;
}

int this_rank_gpu(mpi::Session& session) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return -1;
  return session.local_rank() % count;  // the GPU the inventory assigned to this rank
}

}  // namespace

namespace {
// Each HCA driven by the rank whose GPU is closest to it (what NCCL would pair).
std::function<void(VerbsPlan&)> pair_ranks_by_gpu(const ClusterFacts& cluster) {
  return [&cluster](VerbsPlan& plan) {
    for (auto& e : plan.endpoints)
      for (const auto& n : cluster.nodes)
        if (n.host == e.host)
          if (auto rank = closest_rank(n, e.device)) e.rank = *rank;
  };
}
}  // namespace

VerbsPhaseOutcome run_gpu_memory_matrix(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster, const Profile& profile,
                                        const VerbsOptions& tests, const std::string& name,
                                        const std::function<void(const std::string&)>& progress) {
  const int device = this_rank_gpu(session);
  gpu::CudaMemoryProvider gpu_memory(device < 0 ? 0 : device);
  return run_verbs_matrix(options, session, cluster, profile,
                          MatrixRun{tests, gpu_memory, pair_ranks_by_gpu(cluster), name, progress, [](const VerbsSection&) {}});
}

GpudirectOutcome run_gpudirect_phase(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster,
                                     const Profile& profile, const std::function<void(const std::string&)>& progress) {
  const auto by_gpu = pair_ranks_by_gpu(cluster);
  auto none = [](const VerbsSection&) {};
  VerbsOptions host_tests = options.verbs, gpu_tests = options.verbs;
  host_tests.tests = {"write_bw"};
  gpu_tests.tests = {"write_bw", "send_bw"};  // SEND: the receiving GPU checks the payload
  host_tests.sizes.clear();  // the size curve is the verbs phase's (--verbs-sizes)
  gpu_tests.sizes.clear();
  // Host against GPU memory pair by pair: both matrices measure the same pairs (locate would choose
  // its pairs from what each measured).
  if (options.verbs.mode != "isolated") host_tests.mode = gpu_tests.mode = "rounds";

  verbs::HostMemoryProvider host_memory;
  auto host = run_verbs_matrix(options, session, cluster, profile, MatrixRun{host_tests, host_memory, by_gpu, "gpudirect host", progress, none});
  const int device = this_rank_gpu(session);
  gpu::CudaMemoryProvider gpu_memory(device < 0 ? 0 : device);
  auto gpu = run_verbs_matrix(options, session, cluster, profile, MatrixRun{gpu_tests, gpu_memory, by_gpu, "gpudirect gpu", progress, none});

  // Which registration path each rank's GPU memory took, for the report and the findings.
  GpuRegistration mine = gpu_memory.registration();
  mine.rank = session.rank();
  char host_name[256] = {};
  gethostname(host_name, sizeof(host_name) - 1);
  mine.host = host_name;
  if (device < 0) mine.gpu.reset();
  session.set_step("gpudirect", "gathering the registration paths");
  const auto gathered = mpi::gather_message(session, mine, mpi::deadline_in(options.timeout_s), "gathering the GPU registrations");
  gathered.require_all(session, "gathering the GPU registrations");
  GpudirectOutcome outcome;
  if (!session.is_root()) return outcome;
  std::vector<GpuRegistration> registrations;
  for (const auto& g : gathered.parts)
    if (g && (!g->path.empty() || !g->dmabuf.empty() || !g->peermem.empty())) registrations.push_back(*g);  // ranks that drove an HCA
  outcome.findings = check_gpudirect(host.section, gpu.section, registrations, profile);
  outcome.section = {host.section, gpu.section, registrations, gpudirect_comparison(host.section, gpu.section)};
  outcome.summary = fmt::format("{} pair(s), host and GPU memory; {} rank(s) registered GPU memory", gpu.section.pairs.size(),
                                registrations.size());
  return outcome;
}

}  // namespace fabricproof::app
