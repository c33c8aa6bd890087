#include "locate/leaf_map.hpp"

#include <fmt/format.h>

#include <set>
#include <sstream>

#include "cabling/ibnetdiscover.hpp"

namespace fabricproof::locate {

std::string LeafMap::leaf_of(const std::string& host, const std::string& device) const {
  if (auto d = by_device.find({host, device}); d != by_device.end()) return d->second;
  if (auto h = by_host.find(host); h != by_host.end()) return h->second;
  // A fabric names its hosts as their node descriptions do, often the short name of a full one.
  if (const auto dot = host.find('.'); dot != std::string::npos) return leaf_of(host.substr(0, dot), device);
  return {};
}

LeafMap leaf_map_of_ports(const std::vector<cabling::CabledPort>& ports) {
  LeafMap map;
  for (const auto& p : ports)
    if (p.switch_name && !p.switch_name->empty()) map.by_device.emplace(std::make_pair(p.host, p.device), *p.switch_name);
  return map;
}

LeafMap read_leaf_map(const std::string& text, const std::string& name) {
  if (!cabling::looks_like_ibnetdiscover(text)) return parse_leaf_map(text, name);
  LeafMap map;
  const auto topology = cabling::parse_ibnetdiscover(text, name);
  map.errors = topology.errors;
  std::set<std::string> ambiguous;
  for (const auto& port : cabling::ca_ports(topology)) {
    std::istringstream words(port.node_desc);
    std::string host, device;
    if (!(words >> host >> device)) continue;  // a CA without "<hostname> <device>": no node of the run can be it
    const auto [at, fresh] = map.by_device.emplace(std::pair{host, device}, "S-" + port.switch_guid);
    if (!fresh && at->second != "S-" + port.switch_guid && ambiguous.insert(port.node_desc).second)
      map.errors.push_back(fmt::format("{}: '{}' is cabled to {} and to S-{}: the node descriptions do not name one HCA each (set them "
                                       "to '<hostname> <device>': rdma-ndd)",
                                       name, port.node_desc, at->second, port.switch_guid));
  }
  if (map.by_device.empty() && map.errors.empty())
    map.errors.push_back(name + ": no CA port in it is named '<hostname> <device>' (set the node descriptions: rdma-ndd)");
  return map;
}

LeafMap parse_leaf_map(std::string_view text, const std::string& name) {
  LeafMap map;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string w; fields >> w;) words.push_back(w);
    if (words.empty()) continue;
    auto error = [&](const std::string& what) { map.errors.push_back(fmt::format("{}:{}: {}", name, number, what)); };
    if (words.size() > 3) {
      error(fmt::format("{} fields; expected '<host> <leaf>' or '<host> <device> <leaf>'", words.size()));
      continue;
    }
    if (words.size() == 1) {
      error(fmt::format("'{}' names no leaf; expected '<host> <leaf>' or '<host> <device> <leaf>'", words[0]));
      continue;
    }
    const bool per_device = words.size() == 3;
    const std::string& before = per_device ? map.by_device.emplace(std::pair{words[0], words[1]}, words[2]).first->second
                                           : map.by_host.emplace(words[0], words[1]).first->second;
    if (before != words.back())
      error(fmt::format("{} is on leaf '{}' here and on '{}' above", per_device ? words[0] + " " + words[1] : words[0], words.back(), before));
  }
  return map;
}

std::vector<std::string> assign_leaves(Fabric& fabric, const LeafMap& map, const std::vector<std::vector<std::string>>& devices) {
  std::vector<std::string> missing;
  fabric.leaf.assign(static_cast<size_t>(fabric.rails), std::vector<int>(static_cast<size_t>(fabric.nodes()), 0));
  for (int rail = 0; rail < fabric.rails; ++rail) {
    std::map<std::string, int> numbers;  // leaf name -> its number on this rail
    for (int node = 0; node < fabric.nodes(); ++node) {
      const auto& mine = devices[static_cast<size_t>(node)];
      const std::string device = static_cast<size_t>(rail) < mine.size() ? mine[static_cast<size_t>(rail)] : "";
      std::string leaf = map.leaf_of(fabric.names[static_cast<size_t>(node)], device);
      if (leaf.empty()) {
        missing.push_back(fabric.names[static_cast<size_t>(node)] + (device.empty() ? "" : " " + device));
        continue;
      }
      auto [at, fresh] = numbers.emplace(leaf, static_cast<int>(numbers.size()));
      fabric.leaf[static_cast<size_t>(rail)][static_cast<size_t>(node)] = at->second;
    }
  }
  if (!missing.empty()) fabric.leaf.clear();
  return missing;
}

}  // namespace fabricproof::locate
