#include "cabling/ibnetdiscover.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

namespace fabricproof::cabling {
namespace {

// The patterns, compiled when first used: at namespace scope every command paid for them when the
// program started (~7 million instructions, 40 % of `fabricproof nccl-audit` on a 100-line log).
struct Patterns {
  // "Switch 36 "S-e41d..." # "SwitchIB Mellanox Technologies" base port 0 lid 268 lmc 0"
  std::regex header{R"re(^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*#\s*"(.*)"(.*)$)re"};
  // "[34] "H-e41d..."[1](e41d...) # ..." or, on a CA, "[2](2c9...) "S-e41d..."[35] # ..."
  std::regex port{R"re(^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s*#\s*(.*)$)re"};
  // After '#': "[lid 3 lmc 0 ]"desc" lid 268 4xFDR", the peer's description possibly holding quotes.
  std::regex port_comment{R"re(^(?:lid (\d+) lmc \d+\s+)?"(.*)"\s+lid (\d+)\s+(\S+).*$)re"};
  std::regex own_lid{R"re(\blid (\d+))re"};
};
const Patterns& patterns() {
  static const Patterns compiled;
  return compiled;
}

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

std::string guid_of(const std::string& id) { return id.size() > 2 && id[1] == '-' ? id.substr(2) : id; }

// Lines that carry nothing to read: blank, comments, key=value attributes, and the stderr lines
// of ibnetdiscover's own diagnostics ("src/query_smp.c:195; umad ... bad status 110").
bool ignorable(const std::string& line) {
  return line.empty() || line[0] == '#' || (line.find('=') != std::string::npos && line.find('"') == std::string::npos) ||
         line.find("; umad (") != std::string::npos || line.rfind("ibwarn:", 0) == 0;
}

// A port number, a LID or a port count as printed: digits that fit an int (std::stoi would throw
// on the 20 digits a damaged file can hold; the line is then not read).
std::optional<int> int_of(const std::string& digits) {
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

bool read_port(const std::smatch& m, IbPort& port) {
  const auto own = int_of(m[1]), peer = int_of(m[4]);
  port.port_guid = m[2];
  port.peer = m[3];
  const std::string comment = m[6];
  std::smatch c;
  if (!own || !peer || !std::regex_match(comment, c, patterns().port_comment)) return false;
  port.port = *own;
  port.peer_port = *peer;
  const auto lid = c[1].matched ? int_of(c[1]) : std::optional<int>(0), peer_lid = int_of(c[3]);
  if (!lid || !peer_lid) return false;
  if (c[1].matched) port.lid = *lid;
  port.peer_desc = c[2];
  port.peer_lid = *peer_lid;
  port.width_speed = c[4];
  return true;
}

}  // namespace

const IbNode* IbTopology::find(const std::string& id) const {
  const auto it = std::find_if(nodes.begin(), nodes.end(), [&](const IbNode& n) { return n.id == id; });
  return it == nodes.end() ? nullptr : &*it;
}

IbTopology parse_ibnetdiscover(const std::string& text, const std::string& name) {
  IbTopology out;
  std::istringstream in(text);
  std::string raw;
  for (int number = 1; std::getline(in, raw); ++number) {
    const std::string line = trim(raw);
    if (ignorable(line)) continue;
    std::smatch m;
    if (std::regex_match(line, m, patterns().header) && int_of(m[2])) {
      IbNode node{m[1], m[3], guid_of(m[3]), m[4], std::nullopt, *int_of(m[2]), {}};
      const std::string rest = m[5];
      std::smatch lid;
      if (std::regex_search(rest, lid, patterns().own_lid)) node.lid = int_of(lid[1]);
      out.nodes.push_back(std::move(node));
      continue;
    }
    IbPort port;
    if (std::regex_match(line, m, patterns().port) && !out.nodes.empty() && read_port(m, port)) {
      out.nodes.back().links.push_back(std::move(port));
      continue;
    }
    out.errors.push_back(fmt::format("{}:{}: not an ibnetdiscover node header or port line: {}", name, number, line.substr(0, 120)));
  }
  if (out.nodes.empty() && out.errors.empty()) out.errors.push_back(name + ": no node in it (is it ibnetdiscover's topology file?)");
  return out;
}

bool looks_like_ibnetdiscover(const std::string& text) {
  static const std::regex header(R"re((^|\n)\s*(Switch|Ca)\s+\d+\s+"[SH]-[0-9a-fA-F]+")re");
  return std::regex_search(text, header);
}

std::vector<CaPort> ca_ports(const IbTopology& topology) {
  std::vector<CaPort> out;
  for (const auto& node : topology.nodes) {
    if (node.kind != "Ca") continue;
    for (const auto& link : node.links) {
      const auto* peer = topology.find(link.peer);
      const bool to_switch = peer ? peer->kind == "Switch" : link.peer.rfind("S-", 0) == 0;
      if (!to_switch) continue;
      out.push_back({node.desc, node.guid, link.port, link.port_guid, link.lid, guid_of(link.peer), link.peer_desc, link.peer_port,
                     link.width_speed});
    }
  }
  return out;
}

std::vector<std::string> leaf_switches(const IbTopology& topology) {
  std::vector<std::string> out;
  for (const auto& node : topology.nodes) {
    if (node.kind != "Switch") continue;
    const bool to_host = std::any_of(node.links.begin(), node.links.end(), [&](const IbPort& l) {
      const auto* peer = topology.find(l.peer);
      const bool ca = peer ? peer->kind == "Ca" : l.peer.rfind("H-", 0) == 0;
      return ca && l.peer_desc.find("Aggregation Node") == std::string::npos;
    });
    if (to_host) out.push_back(node.guid);
  }
  return out;
}

}  // namespace fabricproof::cabling
