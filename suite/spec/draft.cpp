#include "spec/draft.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "core/units.hpp"
#include "spec/spec.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

// The one value every node has, or nullopt (and a note) when the nodes differ or none has it.
template <typename F>
std::optional<json> common(const Report& r, const std::string& what, F&& value_of, std::vector<std::string>& notes) {
  std::set<std::string> seen;
  std::optional<json> value;
  for (const auto& n : r.nodes) {
    const json v = value_of(n);
    if (v.is_null()) continue;
    seen.insert(n.host + ": " + v.dump());
    if (value && *value != v) {
      notes.push_back(fmt::format("{} differs between nodes ({}): left out", what, fmt::join(seen, ", ")));
      return std::nullopt;
    }
    value = v;
  }
  return value;
}

std::vector<const RdmaDevice*> included(const NodeFacts& n, const Profile& profile) {
  std::vector<const RdmaDevice*> out;
  for (const auto& d : n.rdma_devices)
    if (profile.includes_device(d.name)) out.push_back(&d);
  return out;
}

// A fact of the node's devices' first ports, when every one of them agrees.
template <typename F>
json port_fact(const NodeFacts& n, const Profile& profile, F&& fact) {
  std::optional<json> value;
  for (const auto* d : included(n, profile))
    for (const auto& p : d->ports) {
      const json v = fact(*d, p);
      if (v.is_null() || (value && *value != v)) return nullptr;
      value = v;
    }
  return value.value_or(nullptr);
}

json draft_rdma(const Report& r, const Profile& profile, std::vector<std::string>& notes) {
  json rdma = json::object();
  if (auto count = common(r, "the RDMA device count", [&](const NodeFacts& n) { return json(included(n, profile).size()); }, notes))
    rdma["count"] = *count;
  const std::vector<std::pair<const char*, std::function<json(const RdmaDevice&, const PortFacts&)>>> facts = {
      {"model", [](const RdmaDevice& d, const PortFacts&) { return d.hca_type.empty() ? json() : json(d.hca_type); }},
      {"part_number", [](const RdmaDevice& d, const PortFacts&) { return d.part_number.empty() ? json() : json(d.part_number); }},
      {"firmware", [](const RdmaDevice& d, const PortFacts&) { return d.fw_ver.empty() ? json() : json(d.fw_ver); }},
      {"link_layer", [](const RdmaDevice&, const PortFacts& p) { return p.link_layer.empty() ? json() : json(p.link_layer); }},
      {"rate_gbps", [](const RdmaDevice&, const PortFacts& p) { return p.rate_gbps ? json(*p.rate_gbps) : json(); }},
      {"active_mtu", [](const RdmaDevice&, const PortFacts& p) { return p.active_mtu ? json(*p.active_mtu) : json(); }}};
  for (const auto& [key, fact] : facts)
    if (auto v = common(r, std::string("the HCAs' ") + key, [&](const NodeFacts& n) { return port_fact(n, profile, fact); }, notes)) rdma[key] = *v;
  return rdma;
}

std::optional<int> ordinal(const std::string& name) {  // "cuda3" / "nvml3" -> 3
  const auto digits = name.find_first_of("0123456789");
  int value = 0;
  if (digits == std::string::npos || std::from_chars(name.data() + digits, name.data() + name.size(), value).ec != std::errc()) return std::nullopt;
  return value;
}

// Each GPU with the HCA behind its own PCIe switch (PIX/PXB), as hwloc placed them on the first node.
json draft_rails(const Report& r) {
  json rails = json::array();
  if (r.nodes.empty() || !r.nodes.front().topology) return rails;
  const auto& t = *r.nodes.front().topology;
  for (size_t g = 0; g < t.gpus.size() && g < t.classes.size(); ++g)
    for (size_t h = 0; h < t.hcas.size() && h < t.classes[g].size(); ++h)
      if ((t.classes[g][h] == "PIX" || t.classes[g][h] == "PXB") && ordinal(t.gpus[g].name))
        rails.push_back({{"hca", t.hcas[h].name}, {"gpu", *ordinal(t.gpus[g].name)}});
  return rails;
}

}  // namespace

SpecDraft draft_spec(const Report& r, const Profile& profile, const std::string& name) {
  SpecDraft out;
  std::vector<std::string> hosts;
  for (const auto& n : r.nodes) hosts.push_back(n.host);
  json spec = {{"schema", kSpecSchema},
               {"name", name},
               {"description", fmt::format("drafted from the run of {} ({}); edit before use", r.started_at, to_string(r.verdict))},
               {"nodes", {{"count", hosts.size()}, {"hosts", hosts}}}};
  json per_node = json::object();
  if (auto count = common(r, "the GPU count", [&](const NodeFacts& n) { return json(cuda_gpu_count(n)); }, out.notes)) {
    json gpus = {{"count", *count}};
    if (auto model = common(r, "the GPU model", [](const NodeFacts& n) { return n.gpus.empty() ? json() : json(n.gpus.front().name); }, out.notes))
      gpus["model"] = *model;
    per_node["gpus"] = gpus;
  }
  const json rdma = draft_rdma(r, profile, out.notes);
  if (rdma.contains("count")) per_node["rdma_devices"] = rdma;
  if (const json rails = draft_rails(r); !rails.empty()) per_node["rails"] = rails;
  spec["per_node"] = per_node;
  // The phases that ran and passed or warned are what the next run must measure again.
  json phases = json::array();
  for (const auto& p : r.phases)
    if (p.verdict == Verdict::pass || p.verdict == Verdict::warn) phases.push_back(p.name);
    else out.notes.push_back(fmt::format("phase {} was {} in that run ({}): not required", p.name, to_string(p.verdict), p.reason));
  spec["require"] = {{"phases", phases}};
  out.spec = spec;
  return out;
}

}  // namespace fabricproof
