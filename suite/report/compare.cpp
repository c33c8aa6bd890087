#include "report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "collectives/collective_model.hpp"
#include "core/units.hpp"
#include "verbs/verbs_model.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

// slot ("0000:41:00.0" or the device name of a virtual HCA) -> {kind/name, identity fields}
std::map<std::string, json> components(const NodeFacts& n) {
  std::map<std::string, json> out;
  for (const auto& d : n.rdma_devices)
    out[d.pci.empty() ? d.name : d.pci] = {{"kind", "HCA"},       {"name", d.name},       {"board_id", d.board_id},
                                           {"fw_ver", d.fw_ver},  {"node_guid", d.node_guid}, {"part_number", d.part_number},
                                           {"serial", d.serial_number}};
  for (const auto& g : n.gpus) out[g.pci] = {{"kind", "GPU"}, {"name", g.name}, {"uuid", g.uuid}, {"serial", g.serial}};
  return out;
}

// What a GPU's memory has used up or lost for good: rows remapped (both kinds) and uncorrectable
// errors over the board's life. Both only grow on one board; nullopt where not read.
std::optional<std::pair<uint64_t, uint64_t>> memory_wear(const GpuFacts& g) {
  const auto& h = g.memory_health;
  if (!h.rows_remapped_correctable || !h.rows_remapped_uncorrectable || !h.uncorrected_lifetime) return std::nullopt;
  return std::pair<uint64_t, uint64_t>{uint64_t{*h.rows_remapped_correctable} + *h.rows_remapped_uncorrectable, *h.uncorrected_lifetime};
}

// The same board (its UUID) in the same slot, read in both runs: growth since the baseline warns.
// A swapped board's counters are another board's; one not read is gpu_memory_health's to judge.
void compare_gpu_memory(const NodeFacts& base, const NodeFacts& next, std::vector<Finding>& out) {
  for (const auto& old_gpu : base.gpus)
    for (const auto& new_gpu : next.gpus) {
      if (new_gpu.pci != old_gpu.pci || new_gpu.uuid != old_gpu.uuid || old_gpu.uuid.empty()) continue;
      const auto before = memory_wear(old_gpu), now = memory_wear(new_gpu);
      if (!before || !now) continue;
      const bool grew = now->first > before->first || now->second > before->second;
      out.push_back({CheckId::compare_gpu_memory, fmt::format("{} GPU {}", next.host, new_gpu.pci), grew ? Verdict::warn : Verdict::pass,
                     json{{"rows_remapped", {{"baseline", before->first}, {"new", now->first}}},
                          {"uncorrected_lifetime", {{"baseline", before->second}, {"new", now->second}}}},
                     json{{"grown_since_baseline", false}},
                     "compare_gpu_memory: no row remapped and no uncorrectable ECC error on the board since the baseline",
                     grew ? fmt::format("{} row(s) remapped and {} uncorrectable error(s) since the baseline: watch this board "
                                        "(nvidia-smi -q -d ROW_REMAPPER,ECC); a failed remap, or rows that keep growing, mean an RMA.",
                                        now->first - std::min(now->first, before->first), now->second - std::min(now->second, before->second))
                          : ""});
    }
}

void compare_nodes(const Report& base, const Report& next, std::vector<Finding>& out) {
  std::map<std::string, const NodeFacts*> now;
  for (const auto& n : next.nodes) now[n.host] = &n;
  for (const auto& b : base.nodes) {
    auto it = now.find(b.host);
    out.push_back({CheckId::compare_node, b.host, it == now.end() ? Verdict::fail : Verdict::pass, json{{"present", it != now.end()}},
                   json{{"present", true}}, "compare_node: every baseline node is in the new report",
                   it == now.end() ? "The node did not take part: check the hostfile and that it is up." : ""});
    if (it == now.end()) continue;
    compare_gpu_memory(b, *it->second, out);
    const auto old_parts = components(b), new_parts = components(*it->second);
    for (const auto& [slot, old_id] : old_parts) {
      const std::string subject = fmt::format("{} {} {}", b.host, old_id["kind"].get<std::string>(), slot);
      auto found = new_parts.find(slot);
      if (found == new_parts.end()) {
        out.push_back({CheckId::compare_component, subject, Verdict::fail, json{{"old", old_id}, {"new", nullptr}}, json{{"present", true}},
                       "compare_component: every baseline component is still in its slot", "The component is gone: reseat it or check its driver."});
      } else if (found->second != old_id) {
        out.push_back({CheckId::compare_component, subject, Verdict::warn, json{{"old", old_id}, {"new", found->second}}, json{{"same_as_baseline", true}},
                       "compare_component: the component in this slot is the baseline's (a change is expected after a swap)",
                       "Changed component: confirm it is the intended replacement; its figures are compared below."});
      }
    }
    for (const auto& [slot, new_id] : new_parts)
      if (!old_parts.count(slot))
        out.push_back({CheckId::compare_component, fmt::format("{} {} {}", b.host, new_id["kind"].get<std::string>(), slot), Verdict::warn,
                       json{{"old", nullptr}, {"new", new_id}}, json{{"present_in_baseline", true}}, "compare_component: no component was added", ""});
  }
  for (const auto& n : next.nodes) {
    bool known = false;
    for (const auto& b : base.nodes) known |= b.host == n.host;
    if (!known)
      out.push_back({CheckId::compare_node, Subject::node(n.host), Verdict::warn, json{{"in_baseline", false}}, json{{"in_baseline", true}}, "compare_node: no node was added", ""});
  }
}

// "a -> b test" -> figure, for the bandwidth and latency results of a verbs section.
std::map<std::string, std::pair<double, bool>> verbs_figures(const Report& r) {
  std::map<std::string, std::pair<double, bool>> out;  // value, higher is better
  if (!r.verbs) return out;
  const auto& s = *r.verbs;
  for (const auto& p : s.pairs)
    for (const auto& t : p.tests) {
      if (t.status != Status::ok || t.from < 0 || t.to < 0 || static_cast<size_t>(t.from) >= s.endpoints.size() ||
          static_cast<size_t>(t.to) >= s.endpoints.size())
        continue;
      const std::string test = t.test == kVerbsSizesTest ? fmt::format("{} {} B", t.test, t.bytes) : t.test;
      const std::string key = fmt::format("{} -> {} ({})", s.endpoints.at(static_cast<size_t>(t.from)).label(),
                                          s.endpoints.at(static_cast<size_t>(t.to)).label(), test);
      if (t.gbps) out[key] = {*t.gbps, true};
      if (t.latency) out[key] = {t.latency->p50_usec, false};
    }
  return out;
}

std::map<std::string, double> busbw_figures(const Report& r) {
  std::map<std::string, double> out;
  if (!r.collectives) return out;
  for (const auto& res : r.collectives->results) {
    for (const auto& row : res.rows)
      if (row.bytes >= (1u << 20))
        out[fmt::format("{} {} {} node(s) {}", res.engine, res.op, res.nodes, format_size(row.bytes))] = row.out_of_place.busbw_GBps;
  }
  return out;
}

Finding figure_finding(CheckId id, const std::string& subject, double old_value, double new_value, bool higher_better, double regression,
                       const char* unit) {
  const double change = old_value != 0 ? new_value / old_value - 1 : 0;
  const bool worse = higher_better ? change < -regression : change > regression;
  return {id, subject, worse ? Verdict::fail : Verdict::pass,
          json{{"baseline", old_value}, {"new", new_value}, {"change", change}, {"unit", unit}},
          json{{"regression_at_most", regression}},
          fmt::format("{}: the new figure is not {} than the baseline by more than {:.0f}% (compare.regression)", check_of(id).name,
                      higher_better ? "lower" : "higher", regression * 100),
          worse ? "Regression after the change: compare the components listed by compare_component, then rerun the pair "
                  "isolated (--verbs-mode isolated) to tell a bad link from contention."
                : ""};
}

}  // namespace

std::vector<Finding> compare_reports(const Report& baseline, const Report& next, double regression) {
  std::vector<Finding> out;
  compare_nodes(baseline, next, out);
  const auto old_verbs = verbs_figures(baseline), new_verbs = verbs_figures(next);
  for (const auto& [key, old_figure] : old_verbs) {
    auto it = new_verbs.find(key);
    if (it == new_verbs.end()) {
      out.push_back({CheckId::compare_verbs, key, Verdict::warn, json{{"baseline", old_figure.first}, {"new", nullptr}}, json{{"measured", true}},
                     "compare_verbs: every baseline measurement is measured again", "Not measured in the new run: see its verbs section for the reason."});
      continue;
    }
    out.push_back(figure_finding(CheckId::compare_verbs, key, old_figure.first, it->second.first, old_figure.second, regression,
                                 old_figure.second ? "Gb/s" : "us"));
  }
  const auto old_busbw = busbw_figures(baseline), new_busbw = busbw_figures(next);
  for (const auto& [key, value] : old_busbw)
    if (auto it = new_busbw.find(key); it != new_busbw.end()) out.push_back(figure_finding(CheckId::compare_busbw, key, value, it->second, true, regression, "GB/s"));
  return out;
}

}  // namespace fabricproof
