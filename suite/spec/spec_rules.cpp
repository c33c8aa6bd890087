#include "spec/spec_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "cabling/rails.hpp"
#include "inventory/inventory_rules.hpp"
#include "uplink/uplink_rules.hpp"
#include "core/units.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

const char* const kRule = "what the cluster spec declares is found and measured (run --spec)";

Finding spec_finding(CheckId id, Subject subject, bool ok, json measured, json expected, const std::string& hint) {
  return Finding(id, std::move(subject), ok ? Verdict::pass : Verdict::fail, std::move(measured), std::move(expected), kRule, ok ? "" : hint);
}

const PhaseRecord* phase_of(const Report& r, const std::string& name) {
  for (const auto& p : r.phases)
    if (p.name == name) return &p;
  return nullptr;
}

// Whether a phase ran to the end; otherwise why not, in the run's own words.
std::optional<std::string> why_not_run(const Report& r, const std::string& name) {
  const auto* p = phase_of(r, name);
  if (!p) return "the run ended before the " + name + " phase";
  if (p->verdict == Verdict::skip || p->verdict == Verdict::not_proven) return p->reason.empty() ? "not run" : p->reason;
  if (p->verdict == Verdict::error) return "the phase ended in error: " + p->reason;
  return std::nullopt;
}

void check_nodes(const ClusterSpec& spec, const Report& r, std::vector<Finding>& out) {
  std::vector<std::string> found;
  for (const auto& n : r.nodes) found.push_back(n.host);
  std::vector<std::string> missing, extra;
  for (const auto& h : spec.hosts)
    if (std::find(found.begin(), found.end(), h) == found.end()) missing.push_back(h);
  if (!spec.hosts.empty())
    for (const auto& h : found)
      if (std::find(spec.hosts.begin(), spec.hosts.end(), h) == spec.hosts.end()) extra.push_back(h);
  const int expected = spec.expected_nodes();
  const bool ok = static_cast<int>(found.size()) == expected && missing.empty() && extra.empty() && r.missing_ranks.empty();
  json measured = {{"nodes", found.size()}, {"hosts", found}};
  if (!missing.empty()) measured["missing"] = missing;
  if (!extra.empty()) measured["not_in_spec"] = extra;
  if (!r.missing_ranks.empty()) measured["ranks_not_answering"] = r.missing_ranks;
  out.push_back(spec_finding(CheckId::spec_nodes, Subject::cluster(), ok, measured, spec.hosts.empty() ? json(expected) : json(spec.hosts),
                             fmt::format("The spec declares {} node(s){}; every phase of this run is missing them. Check the hostfile "
                                         "(or the Slurm allocation), that each node answers ssh, and rerun with all of them.",
                                         expected, missing.empty() ? "" : fmt::format(" and {} did not take part", fmt::join(missing, ", ")))));
}

void check_phases(const ClusterSpec& spec, const Report& r, std::vector<Finding>& out) {
  for (const auto& name : spec_required_phases(spec)) {
    const auto why = why_not_run(r, name);
    out.push_back(spec_finding(CheckId::spec_phase, name, !why, why ? json(*why) : json("ran"), "ran",
                               "The spec needs this phase measured: " + why.value_or("") + ". Select it (--phases) and give it what it needs."));
  }
}

void check_gpus(const GpuSpec& want, const NodeFacts& n, std::vector<Finding>& out) {
  std::vector<std::string> names;
  for (const auto& g : n.gpus)
    if (g.index) names.push_back(g.name);
  const bool count_ok = static_cast<int>(names.size()) == want.count;
  const bool model_ok = want.model.empty() ||
                        std::all_of(names.begin(), names.end(), [&](const std::string& name) { return name.find(want.model) != std::string::npos; });
  out.push_back(spec_finding(CheckId::spec_gpus, Subject::node(n.host), count_ok && model_ok, {{"count", names.size()}, {"models", names}},
                             {{"count", want.count}, {"model", want.model}},
                             "GPUs visible to CUDA differ from the spec: check nvidia-smi, the driver, dmesg for Xid or fallen-off-the-bus errors."));
}

// Every device the profile includes, against the declared model, part, firmware and port facts.
void check_rdma(const RdmaSpec& want, const NodeFacts& n, const Profile& profile, std::vector<Finding>& out) {
  std::vector<const RdmaDevice*> devices;
  for (const auto& d : n.rdma_devices)
    if (profile.includes_device(d.name)) devices.push_back(&d);
  out.push_back(spec_finding(CheckId::spec_rdma_count, Subject::node(n.host), static_cast<int>(devices.size()) == want.count, devices.size(), want.count,
                             "RDMA devices missing against the spec: check lspci for the cards, dmesg for mlx5_core errors, and the driver."));
  for (const auto* d : devices) {
    std::vector<std::string> wrong;
    if (!want.model.empty() && d->hca_type.find(want.model) == std::string::npos && d->board_name.find(want.model) == std::string::npos)
      wrong.push_back(fmt::format("model {} (board '{}')", d->hca_type, d->board_name));
    if (!want.part_number.empty() && d->part_number != want.part_number)
      wrong.push_back("part number " + (d->part_number.empty() ? std::string("unread (VPD needs root)") : d->part_number));
    if (!want.firmware.empty() && d->fw_ver != want.firmware) wrong.push_back("firmware " + d->fw_ver);
    for (const auto& p : d->ports) {
      const std::string port = fmt::format("port {}: ", p.port);
      if (p.state != "ACTIVE") wrong.push_back(port + "state " + (p.state.empty() ? "unknown" : p.state));
      if (!want.link_layer.empty() && p.link_layer != want.link_layer) wrong.push_back(port + "link layer " + p.link_layer);
      if (want.rate_gbps && (!p.rate_gbps || *p.rate_gbps < *want.rate_gbps))
        wrong.push_back(port + (p.rate_gbps ? fmt::format("rate {} Gb/s", *p.rate_gbps) : "rate unread"));
      if (want.active_mtu && (!p.active_mtu || *p.active_mtu != *want.active_mtu))
        wrong.push_back(port + (p.active_mtu ? fmt::format("active MTU {}", *p.active_mtu) : "active MTU unread"));
    }
    json expected = json::object();
    for (const auto& [key, value] : {std::pair{"model", want.model}, {"part_number", want.part_number}, {"firmware", want.firmware},
                                     {"link_layer", want.link_layer}})
      if (!value.empty()) expected[key] = value;
    if (want.rate_gbps) expected["rate_gbps"] = *want.rate_gbps;
    if (want.active_mtu) expected["active_mtu"] = *want.active_mtu;
    out.push_back(spec_finding(CheckId::spec_rdma_device, n.host + "/" + d->name, wrong.empty(), wrong.empty() ? json("as declared") : json(wrong),
                               expected, "This HCA is not what was ordered: " + fmt::format("{}", fmt::join(wrong, "; ")) + "."));
  }
}

void check_rails(const ClusterSpec& spec, const NodeFacts& n, std::vector<Finding>& out) {
  for (const auto& rail : spec.rails) {
    const bool hca = std::any_of(n.rdma_devices.begin(), n.rdma_devices.end(), [&](const RdmaDevice& d) { return d.name == rail.hca; });
    const bool gpu = std::any_of(n.gpus.begin(), n.gpus.end(), [&](const GpuFacts& g) { return g.index == rail.gpu; });
    out.push_back(spec_finding(CheckId::spec_rail, fmt::format("{}/{} (GPU {})", n.host, rail.hca, rail.gpu), hca && gpu,
                               {{"hca_found", hca}, {"gpu_found", gpu}}, {{"hca", rail.hca}, {"gpu", rail.gpu}},
                               "A rail of the spec has no HCA or no GPU on this node: check the device names (ibv_devices) and CUDA ordinals."));
  }
}

// The rails a node pair must be measured on: the declared rails' HCAs, else every device the
// profile includes on either node (rail-matched, as the verbs phase pairs them).
std::vector<std::string> rail_devices(const ClusterSpec& spec, const Report& r, const Profile& profile) {
  std::set<std::string> names;
  for (const auto& rail : spec.rails) names.insert(rail.hca);
  if (names.empty())
    for (const auto& n : r.nodes)
      for (const auto& d : n.rdma_devices)
        if (profile.includes_device(d.name)) names.insert(d.name);
  return {names.begin(), names.end()};
}

// The pair's write_bw figures both ways, or why they are missing.
struct PairCoverage {
  std::vector<double> gbps;
  std::string missing;
};

PairCoverage pair_coverage(const VerbsSection& v, const std::string& x, const std::string& y, const std::string& device) {
  for (const auto& pair : v.pairs) {
    const auto& a = v.endpoints[static_cast<size_t>(pair.a)];
    const auto& b = v.endpoints[static_cast<size_t>(pair.b)];
    if (a.device != device || b.device != device || !((a.host == x && b.host == y) || (a.host == y && b.host == x))) continue;
    PairCoverage c;
    for (const auto& t : pair.tests) {
      if (t.test != "write_bw") continue;
      if (t.status == Status::ok && t.gbps) c.gbps.push_back(*t.gbps);
      else if (c.missing.empty()) c.missing = t.reason.empty() ? to_string(t.status) : t.reason;
    }
    if (c.gbps.size() < 2 && c.missing.empty()) c.missing = "write_bw was not among the tests run (--verbs-tests)";
    return c;
  }
  return {{}, "no pair planned (the port or device was not found on one side, or the verbs phase did not run)"};
}

// --verbs-mode locate measured a few pairs of the fabric, not every one: the spec's every-pair
// proof is not made (not proven, once, with what was tested), and the floor judges the pairs it did.
void check_located_coverage(const ClusterSpec& spec, const VerbsSection& v, std::vector<Finding>& out) {
  const auto& l = *v.locate;
  out.push_back(Finding(CheckId::spec_verbs_pair, "verbs", Verdict::not_proven, {{"pairs_tested", l.pairs_tested}, {"pairs_total", l.pairs_total}},
                        "every rail between every two nodes measured", kRule,
                        "--verbs-mode locate tested a few pairs to name bad nodes, ports, links and leaves; the spec's proof of every pair "
                        "needs --verbs-mode rounds."));
  const auto floor = spec.floors.verbs_write_bw_gbps;
  if (!floor) return;
  for (const auto& pair : v.pairs)
    for (const auto& t : pair.tests)
      if (t.test == "write_bw" && t.status == Status::ok && t.gbps && *t.gbps < *floor)
        out.push_back(spec_finding(CheckId::spec_verbs_floor, Subject::pair(v.endpoints[static_cast<size_t>(t.from)].label(), v.endpoints[static_cast<size_t>(t.to)].label(), t.test, false), false, {{"write_bw_gbps", *t.gbps}}, fmt::format(">= {} Gb/s", *floor),
                                   "Below the floor the spec sets for this rail: see the locate answer and the verbs findings of this pair."));
}

void check_verbs_coverage(const ClusterSpec& spec, const Report& r, const Profile& profile, std::vector<Finding>& out) {
  if (r.verbs && r.verbs->locate) return check_located_coverage(spec, *r.verbs, out);
  const auto devices = rail_devices(spec, r, profile);
  const VerbsSection empty{};
  const VerbsSection& v = r.verbs ? *r.verbs : empty;
  std::vector<std::string> hosts = spec.hosts;
  if (hosts.empty())
    for (const auto& n : r.nodes) hosts.push_back(n.host);
  for (size_t i = 0; i < hosts.size(); ++i)
    for (size_t j = i + 1; j < hosts.size(); ++j)
      for (const auto& device : devices) {
        const auto c = pair_coverage(v, hosts[i], hosts[j], device);
        const auto subject = Subject::pair(hosts[i] + "/" + device, hosts[j] + "/" + device, "", true);
        const auto floor = spec.floors.verbs_write_bw_gbps;
        const double least = c.gbps.empty() ? 0 : *std::min_element(c.gbps.begin(), c.gbps.end());
        if (!c.missing.empty() || c.gbps.size() < 2)
          out.push_back(spec_finding(CheckId::spec_verbs_pair, subject, false, "not measured: " + c.missing, "write_bw measured both ways",
                                     "The spec needs every rail between every two nodes measured: " + c.missing + "."));
        else if (floor)
          out.push_back(spec_finding(CheckId::spec_verbs_floor, subject, least >= *floor, {{"write_bw_gbps", c.gbps}}, fmt::format(">= {} Gb/s", *floor),
                                     "Below the floor the spec sets for this rail: see the verbs findings of this pair for the diagnosis."));
      }
}

void check_collectives(const ClusterSpec& spec, const Report& r, std::vector<Finding>& out) {
  if (spec_needs_nccl(spec)) {
    const std::string engine = r.collectives ? r.collectives->engine : "";
    std::vector<std::string> failed;
    if (r.collectives)
      for (const auto& res : r.collectives->results)
        if (res.status != Status::ok) failed.push_back(fmt::format("{} on {} node(s): {}", res.op, res.nodes, res.reason));
    const auto not_run = why_not_run(r, "collectives");
    const bool ok = engine == "nccl" && failed.empty() && !not_run;
    json measured = {{"engine", engine.empty() ? "none (the sweeps did not run)" : engine}};
    if (!failed.empty()) measured["failed"] = failed;
    if (not_run) measured["not_run"] = *not_run;
    out.push_back(spec_finding(CheckId::spec_nccl, "collectives", ok, measured, "the NCCL engine, every group complete",
                               "The spec needs NCCL on every node: the sweeps must run with NCCL (never MPI in its place). Check that "
                               "libnccl.so.2 loads on every node (ldconfig -p), the ranks' GPUs, and the collectives phase's reason."));
  }
  for (const auto& floor : spec.floors.busbw) {
    std::optional<double> busbw;
    if (r.collectives)
      for (const auto& res : r.collectives->results)
        if (res.op == "allreduce" && res.nodes == floor.nodes && res.status == Status::ok)
          for (const auto& row : res.rows)
            if (row.bytes == floor.bytes) busbw = row.out_of_place.busbw_GBps;
    const std::string subject = fmt::format("allreduce {} on {} node(s)", format_size(floor.bytes), floor.nodes);
    out.push_back(spec_finding(CheckId::spec_busbw_floor, subject, busbw && *busbw >= floor.busbw_GBps, busbw ? json(*busbw) : json("not measured"),
                               fmt::format(">= {} GB/s busbw", floor.busbw_GBps),
                               busbw ? "Below the spec's busbw floor: see the collectives and NCCL audit findings (transport, NIC ceiling)."
                               : r.collectives && r.collectives->locate
                                   ? "--collective-mode locate measures groups to name slow nodes, not the scaling sweep: the floor needs --collective-mode scaling."
                                   : "This size was not measured on this many nodes: check --max-bytes (and the memory clip) and the node count."));
  }
}

void check_gpudirect(const Report& r, std::vector<Finding>& out) {
  std::vector<std::string> missing;
  size_t measured = 0;
  if (r.gpudirect)
    for (const auto& c : r.gpudirect->comparison) {
      if (c.gpu_status == Status::ok && c.gpu_gbps && c.host_gbps) ++measured;
      else missing.push_back(c.pair + ": " + (c.gpu_reason.empty() ? to_string(c.gpu_status) : c.gpu_reason));
    }
  if (const auto why = why_not_run(r, "gpudirect")) missing.insert(missing.begin(), *why);
  const bool ok = missing.empty() && measured > 0;
  out.push_back(spec_finding(CheckId::spec_gpudirect, "gpudirect", ok, ok ? json(measured) : json(missing), "GPU memory measured on every pair",
                             "The spec declares GPUs and HCAs: GPUDirect RDMA must be measured on every pair (nvidia-peermem or DMA-BUF, "
                             "see the gpudirect findings)."));
}

void check_uplink_floor(double floor, const Report& r, std::vector<Finding>& out) {
  std::optional<double> gbps;
  if (r.uplink)
    if (auto together = together_in_common_window(r.uplink->nodes)) gbps = together->gbps;
  out.push_back(spec_finding(CheckId::spec_uplink_floor, Subject::cluster(), gbps && *gbps >= floor, gbps ? json(*gbps) : json("not measured"),
                             fmt::format(">= {} Gb/s, all nodes together", floor),
                             "The uplink does not carry what the spec asks (or was not measured together): see the uplink findings."));
}

// A dip its re-measurement did not repeat: a warning by default, a failure where the spec says so.
void check_intermittent(const Report& r, std::vector<Finding>& out) {
  std::vector<std::string> dips;
  for (const auto& f : r.findings)
    if (f.verdict == Verdict::warn && f.measured.is_object() && f.measured.value("intermittent", false)) dips.push_back(f.subject);
  out.push_back(spec_finding(CheckId::spec_intermittent, "verbs", dips.empty(), dips, "no dip, repeated or not",
                             "The spec makes intermittent dips fail: rerun these pairs (or soak them) and check both ports' error counters."));
}

// Latency outliers the re-measurement confirmed (warnings by the profile), and the endpoint in
// most of them: failures where the spec says so, naming the node.
void check_latency_outliers(const Report& r, std::vector<Finding>& out) {
  std::vector<std::string> pairs, suspects;
  for (const auto& f : r.findings) {
    const bool intermittent = f.measured.is_object() && f.measured.value("intermittent", false);
    if (f.id == "verbs_latency_outlier" && f.verdict == Verdict::warn && !intermittent) pairs.push_back(f.subject);
    if (f.id == "verbs_suspect_endpoint" && f.verdict != Verdict::pass) suspects.push_back(f.subject);
  }
  const std::string subject = suspects.empty() ? "verbs" : fmt::format("{}", fmt::join(suspects, ", "));
  out.push_back(spec_finding(CheckId::spec_latency_outlier, subject, pairs.empty(), pairs, "no latency outlier",
                             fmt::format("The spec makes latency outliers fail: {}{}. Check the cable, the switch port and PFC pauses "
                                         "on the link of the node named.",
                                         fmt::join(pairs, "; "), suspects.empty() ? "" : " (suspect: " + subject + ")")));
}

// The cables the spec declares: its table, and each rail's HCA on every node where the rail names
// its switch (the table wins where both say).
std::vector<CableSpec> declared_cables(const ClusterSpec& spec, const Report& r) {
  auto cables = spec.cabling.cables;
  auto listed = [&](const std::string& host, const std::string& hca) {
    return std::any_of(cables.begin(), cables.end(), [&](const CableSpec& c) { return c.host == host && c.hca == hca && c.port == 1; });
  };
  for (const auto& n : r.nodes)
    for (const auto& rail : spec.rails)
      if (!rail.leaf.empty() && !listed(n.host, rail.hca)) cables.push_back({n.host, rail.hca, 1, rail.leaf, ""});
  return cables;
}

const PortFacts* find_port(const Report& r, const std::string& host, const std::string& hca, int port) {
  for (const auto& n : r.nodes)
    for (const auto& d : n.rdma_devices)
      for (const auto& p : d.ports)
        if (n.host == host && d.name == hca && p.port == port) return &p;
  return nullptr;
}

// Each declared cable against its port's neighbour; one not read fails (the spec is fail-closed).
void check_cables(const ClusterSpec& spec, const Report& r, std::vector<Finding>& out) {
  for (const auto& c : declared_cables(spec, r)) {
    const auto* p = find_port(r, c.host, c.hca, c.port);
    json expected = {{"switch", c.leaf}};
    if (!c.switch_port.empty()) expected["switch_port"] = c.switch_port;
    const Subject subject = Subject::port(c.host, c.hca, c.port);
    if (!p || !p->neighbour || !p->neighbour->unread.empty()) {
      const std::string why = !p ? "no such port in the inventory" : !p->neighbour ? "its neighbour was not asked (the inventory phase, live)" : p->neighbour->unread;
      out.push_back(spec_finding(CheckId::spec_cabling, subject, false, json{{"not_read", why}}, expected,
                                 "The spec declares this cable and the run did not read the port's neighbour: run lldpd on the nodes (RoCE)."));
      continue;
    }
    const auto& n = *p->neighbour;
    const bool ok = n.switch_name == c.leaf && (c.switch_port.empty() || n.switch_port == c.switch_port);
    out.push_back(spec_finding(CheckId::spec_cabling, subject, ok, json{{"switch", n.switch_name}, {"switch_port", n.switch_port}}, expected,
                               fmt::format("Cabled to {} port {}; the spec says {}{}: move the cable.", n.switch_name, n.switch_port, c.leaf,
                                           c.switch_port.empty() ? "" : " port " + c.switch_port)));
  }
}

// What the rail rules say against one leaf per rail: rails sharing a switch, ports off their rail's
// switch, and whatever could not be judged (a port not read, a rail without one switch).
std::vector<std::string> rail_optimised_problems(std::vector<Finding> rails, std::vector<Finding>& out) {
  std::vector<std::string> problems;
  for (auto& f : rails) {
    if (f.verdict == Verdict::pass || f.id == "cabling_pci_slot") continue;
    const std::string why = !f.hint.empty() ? f.hint : f.measured.is_string() ? f.measured.get<std::string>() : f.measured.dump();
    problems.push_back(fmt::format("{}: {}", f.subject.text(), why));
    if (f.id == "cabling_rail_shared") out.push_back(std::move(f));
  }
  return problems;
}

// rail_optimised: one leaf per rail, on the spec's rails (else every node's HCAs in name order).
// One finding always: a port not read or a rail without one switch fails, as the spec is fail-closed.
void check_rail_optimised(const ClusterSpec& spec, const Report& r, std::vector<Finding>& out) {
  cabling::RailPlan plan{{}, true};
  std::vector<std::string> hcas;
  for (const auto& rail : spec.rails) {
    plan.switches.push_back(rail.leaf);
    hcas.push_back(rail.hca);
  }
  if (std::all_of(plan.switches.begin(), plan.switches.end(), [](const std::string& s) { return s.empty(); })) plan.switches.clear();
  const auto ports = cabled_ports(r.nodes, hcas);
  auto problems = rail_optimised_problems(cabling::check_rails(ports, plan), out);
  if (ports.empty()) problems.push_back("no rail port in the inventory");
  out.push_back(spec_finding(CheckId::spec_cabling, "rail_optimised", problems.empty(),
                             problems.empty() ? json(fmt::format("{} port(s), one leaf per rail", ports.size())) : json(problems),
                             "one leaf per rail, every rail port's neighbour read",
                             "The spec says rail-optimised and the run did not show it: see the cabling findings (run lldpd on the nodes for RoCE, "
                             "or pass --ibnetdiscover for InfiniBand)."));
}

}  // namespace

std::vector<Finding> check_spec(const ClusterSpec& spec, const Report& r, const Profile& profile) {
  std::vector<Finding> out;
  check_nodes(spec, r, out);
  check_phases(spec, r, out);
  for (const auto& n : r.nodes) {
    if (spec.gpus) check_gpus(*spec.gpus, n, out);
    if (spec.rdma) check_rdma(*spec.rdma, n, profile, out);
    check_rails(spec, n, out);
  }
  if (spec_needs_verbs(spec) || spec.floors.verbs_write_bw_gbps) check_verbs_coverage(spec, r, profile, out);
  check_collectives(spec, r, out);
  if (spec_needs_gpudirect(spec)) check_gpudirect(r, out);
  if (spec.floors.uplink_gbps) check_uplink_floor(*spec.floors.uplink_gbps, r, out);
  if (spec.intermittent_fails) check_intermittent(r, out);
  if (spec.latency_outliers_fail && r.verbs) check_latency_outliers(r, out);
  if (spec.declares_cabling()) check_cables(spec, r, out);
  if (spec.cabling.rail_optimised) check_rail_optimised(spec, r, out);
  return out;
}

bool spec_needs_nccl(const ClusterSpec& s) { return s.nccl.value_or(s.gpus && s.gpus->count > 0); }
bool spec_needs_gpudirect(const ClusterSpec& s) {
  return s.gpudirect.value_or(s.gpus && s.gpus->count > 0 && s.rdma && s.rdma->count > 0 && s.expected_nodes() >= 2);
}
bool spec_needs_verbs(const ClusterSpec& s) { return s.rdma && s.rdma->count > 0 && s.expected_nodes() >= 2; }

std::vector<std::string> spec_required_phases(const ClusterSpec& s) {
  std::vector<std::string> out = {"inventory"};
  auto add = [&](const std::string& p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (spec_needs_verbs(s) || s.floors.verbs_write_bw_gbps) add("verbs");
  if (spec_needs_gpudirect(s)) add("gpudirect");
  if (spec_needs_nccl(s) || !s.floors.busbw.empty()) add("collectives");
  if (spec_needs_nccl(s)) add("nccl_audit");
  if (s.floors.uplink_gbps) add("uplink");
  for (const auto& p : s.phases) add(p);
  return out;
}

}  // namespace fabricproof
