#include "cabling/rails.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace fabricproof::cabling {
namespace {

using nlohmann::json;

const char* kRule = "rail-optimised cabling: HCA i of every node on rail i's leaf (ibdiagnet --rail_validation, UFM cable validation)";

Subject subject_of(const CabledPort& p) { return Subject::port(p.host, p.device, p.port); }

// The switch most of a rail's ports reach, when more than half of them do.
std::optional<std::string> majority(const std::vector<const CabledPort*>& ports) {
  std::map<std::string, size_t> count;
  for (const auto* p : ports) ++count[*p->switch_name];
  for (const auto& [name, n] : count)
    if (2 * n > ports.size()) return name;
  return std::nullopt;
}

// Each rail's switch: declared, or its majority. A rail without either is not proven.
std::map<int, std::string> rail_switches(const std::map<int, std::vector<const CabledPort*>>& by_rail, const RailPlan& plan,
                                         std::vector<Finding>& out) {
  std::map<int, std::string> rails;
  for (const auto& [rail, ports] : by_rail) {
    if (static_cast<size_t>(rail) < plan.switches.size() && !plan.switches[static_cast<size_t>(rail)].empty()) {
      rails[rail] = plan.switches[static_cast<size_t>(rail)];
    } else if (const auto m = majority(ports)) {
      rails[rail] = *m;
    } else {
      std::set<std::string> reached;
      for (const auto* p : ports) reached.insert(*p->switch_name);
      out.push_back(Finding(CheckId::cabling_rail, fmt::format("rail {}", rail), Verdict::not_proven,
                            {{"switches", std::vector<std::string>(reached.begin(), reached.end())}, {"ports", ports.size()}},
                            "one switch reached by most of the rail's HCAs", kRule,
                            "No switch has most of this rail's HCAs: declare the rails' switches in the spec (rails.switches)."));
    }
  }
  return rails;
}

void check_each_port(const std::map<int, std::vector<const CabledPort*>>& by_rail, const std::map<int, std::string>& rails, bool declared,
                     std::vector<Finding>& out) {
  for (const auto& [rail, ports] : by_rail) {
    const auto expected = rails.find(rail);
    if (expected == rails.end()) continue;
    size_t right = 0;
    for (const auto* p : ports) {
      if (*p->switch_name == expected->second) {
        ++right;
        continue;
      }
      out.push_back(Finding(CheckId::cabling_rail, subject_of(*p), Verdict::fail,
                            {{"switch", *p->switch_name}, {"switch_port", p->switch_port}, {"rail", rail}, {"source", p->source}},
                            json{{"switch", expected->second}}, kRule,
                            fmt::format("{} {} (rail {}) is cabled to {} port {}; rail {}'s switch is {} ({}). Move the cable.", p->host,
                                        p->device, rail, *p->switch_name, p->switch_port, rail, expected->second,
                                        declared ? "the spec" : "where the rail's other HCAs are")));
    }
    out.push_back(Finding(CheckId::cabling_rail, fmt::format("rail {}", rail), right == ports.size() ? Verdict::pass : Verdict::fail,
                          {{"on_its_switch", right}, {"ports", ports.size()}}, json{{"switch", expected->second}}, kRule));
  }
}

}  // namespace
}  // namespace fabricproof::cabling

namespace fabricproof::cabling {
namespace {

// Rails sharing a switch: where the fabric is meant to be rail-optimised, a failure.
void check_shared(const std::map<int, std::string>& rails, const RailPlan& plan, std::vector<Finding>& out) {
  std::map<std::string, std::vector<int>> by_switch;
  for (const auto& [rail, name] : rails) by_switch[name].push_back(rail);
  for (const auto& [name, on] : by_switch)
    if (on.size() > 1)
      out.push_back(Finding(CheckId::cabling_rail_shared, name, plan.rail_optimised ? Verdict::fail : Verdict::warn, {{"rails", on}},
                            "one rail per leaf", kRule,
                            fmt::format("Rails {} share {}: their traffic between nodes does not stay on one rail's leaf.", fmt::join(on, ", "), name)));
}

// ibdiagnet's --rail_validation: the HCAs reaching one switch sit at one PCIe address across the
// nodes; where most agree, the others are named.
void check_pci(const std::vector<const CabledPort*>& read, std::vector<Finding>& out) {
  std::map<std::string, std::vector<const CabledPort*>> by_switch;
  for (const auto* p : read)
    if (!p->pci.empty()) by_switch[*p->switch_name].push_back(p);
  for (const auto& [name, ports] : by_switch) {
    std::map<std::string, size_t> count;
    for (const auto* p : ports) ++count[p->pci];
    const auto top = std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (count.size() < 2 || 2 * top->second <= ports.size()) continue;  // one address, or no majority to judge by
    for (const auto* p : ports)
      if (p->pci != top->first)
        out.push_back(Finding(CheckId::cabling_pci_slot, subject_of(*p), Verdict::fail, {{"pci", p->pci}, {"switch", name}},
                              json{{"pci", top->first}}, kRule,
                              fmt::format("{} {} at {} reaches {}, where the other nodes' HCAs at {} do.", p->host, p->device, p->pci, name, top->first)));
  }
}

}  // namespace

std::vector<Finding> check_rails(const std::vector<CabledPort>& ports, const RailPlan& plan) {
  std::vector<Finding> out;
  std::map<int, std::vector<const CabledPort*>> by_rail;
  std::vector<const CabledPort*> read;
  for (const auto& p : ports) {
    if (!p.switch_name) {
      out.push_back(Finding(CheckId::cabling_unread, subject_of(p), Verdict::not_proven, p.unread.empty() ? "not read" : p.unread,
                            "its neighbour switch", kRule));
      continue;
    }
    by_rail[p.rail].push_back(&p);
    read.push_back(&p);
  }
  const bool declared = !plan.switches.empty();
  const auto rails = rail_switches(by_rail, plan, out);
  check_each_port(by_rail, rails, declared, out);
  check_shared(rails, plan, out);
  if (!declared) check_pci(read, out);
  return out;
}

}  // namespace fabricproof::cabling
