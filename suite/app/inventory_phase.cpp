#include "app/inventory_phase.hpp"

#include <unistd.h>

#include <exception>

#include "app/build_info.hpp"
#include "launch/launch.hpp"
#include "mpi/exchange.hpp"
#include "mpi/messages.hpp"
#include "inventory/host.hpp"
#include "inventory/neighbours.hpp"
#include "inventory/network.hpp"
#include "inventory/hwloc_topology.hpp"
#include "inventory/ib_neighbours.hpp"
#if FABRICPROOF_HAVE_VERBS
#include "inventory/subnet_manager_probe.hpp"
#include "inventory/verbs_probe.hpp"
#endif
#if FABRICPROOF_HAVE_CUDA
#include "inventory/cuda_probe.hpp"
#endif
#if FABRICPROOF_HAVE_NCCL
#include "collectives/nccl_info.hpp"
#endif

extern char** environ;

namespace fabricproof::app {
namespace {

// Adapters throw typed errors; the phase boundary turns them into facts (design.md, errors).
template <typename F>
void guarded(NodeFacts& node, const char* source, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    node.probe_errors.push_back({source, e.what()});
  }
}

}  // namespace

NodeFacts probe_this_rank(const RunOptions& options, mpi::Session& session) {
  NodeFacts node = probe::probe_node_files(options.root, /*read_vpd=*/session.local_rank() == 0);
  RankFacts rank;
  rank.rank = session.rank();
  rank.local_rank = session.local_rank();
  rank.local_size = session.local_size();
  rank.host = node.host;
  rank.pid = static_cast<int>(getpid());
  rank.cpus_allowed = probe::cpus_allowed();
  rank.env = probe::relevant_environment(environ);
  node.software.open_mpi = session.library_version();
  // A saved tree (--root) describes another machine: the live adapters would mix in this one.
  const bool live = options.root == "/";
  if (live) {
    guarded(node, "ofed_info", [&] { node.software.ofed_version = probe::ofed_info_version(); });
#if FABRICPROOF_HAVE_VERBS
    guarded(node, "libibverbs", [&] { verbs::augment_with_verbs(node); });
    // One rank per node asks the subnet managers (one umad agent is enough).
    if (session.local_rank() == 0) guarded(node, "libibumad", [&] { verbs::augment_with_subnet_managers(node); });
#else
    node.absent.push_back({"verbs", "built without libibverbs (FABRICPROOF_WITH_VERBS)"});
#endif
#if FABRICPROOF_HAVE_CUDA
    guarded(node, "cuda", [&] { gpu::augment_with_cuda(node, rank); });
#else
    node.absent.push_back({"cuda", "built without the CUDA Toolkit (FABRICPROOF_WITH_CUDA)"});
#endif
    // One rank per node asks lldpd too (after the ports are known).
    if (session.local_rank() == 0) guarded(node, "lldpcli", [&] { probe::read_port_neighbours(node, options.lldp_listen()); });
#if FABRICPROOF_HAVE_VERBS
    // InfiniBand ports: the far end of each cable by a directed-route SMP (the same umad as above).
    if (session.local_rank() == 0) guarded(node, "libibumad", [&] { verbs::augment_with_hop_one_neighbours(node); });
#endif
    // The path back to the launch node (mpirun's or srun's), the job's control path: it must not
    // depend on the data fabric. The launcher's own address comes with the environment.
    if (const auto launch = launch_from_environment(); session.local_rank() == 0 && !launch.launch_node_address.empty()) {
      probe::FileReader files(options.root);
      node.launch_node_address = launch.launch_node_address;
      const auto path = probe::route_to(files, launch.launch_node_address, 22);
      if (path.error.empty()) node.launch_route_interface = path.interface;
      else node.probe_errors.push_back({"route to the launch node " + launch.launch_node_address, path.error});
    }
    // One rank per node reads the PCI tree: hwloc's I/O discovery is the slowest probe.
    if (session.local_rank() == 0) guarded(node, "hwloc", [&] { node.topology = topology::read_topology(); });
#if FABRICPROOF_HAVE_NCCL
    guarded(node, "nccl", [&] { node.software.nccl = collectives::nccl_version().value_or(""); });
#else
    node.absent.push_back({"nccl", "built without NCCL (FABRICPROOF_WITH_NCCL)"});
#endif
  }
  if (!live) node.absent.push_back({"topology", "--root reads a saved tree; the GPU-HCA topology (hwloc) is read from the live machine only"});
  node.ranks = {rank};
  return node;
}

ClusterFacts gather_inventory(const RunOptions& options, mpi::Session& session) {
  const auto deadline = mpi::deadline_in(options.timeout_s);
  const NodeFacts mine = probe_this_rank(options, session);
  session.set_step("inventory", "gathering every rank's inventory");
  const auto gathered = mpi::gather_message(session, mine, deadline, "gathering the inventories");
  gathered.require_all(session, "gathering the inventories");
  const std::vector<std::optional<NodeFacts>>& per_rank = gathered.parts;
  std::vector<ProbeError> garbled;
  for (const auto& why : gathered.unreadable) garbled.push_back({why.substr(0, why.find(':')), "unreadable inventory" + why.substr(why.find(':'))});
  session.set_step("inventory", "measuring clock offsets against rank 0");
  const auto offsets = mpi::clock_offsets(session, mpi::deadline_in(options.timeout_s));
  if (!session.is_root()) return {};
  ClusterFacts cluster = merge_rank_facts(per_rank);
  name_shared_switch_descriptions(cluster);
  for (auto& node : cluster.nodes) {
    int first = node.ranks.empty() ? 0 : node.ranks.front().rank;
    for (const auto& r : node.ranks) first = std::min(first, r.rank);
    node.clock_offset_s = offsets.at(static_cast<size_t>(first));
  }
  if (!garbled.empty() && !cluster.nodes.empty())
    cluster.nodes.front().probe_errors.insert(cluster.nodes.front().probe_errors.end(), garbled.begin(), garbled.end());
  return cluster;
}

}  // namespace fabricproof::app
