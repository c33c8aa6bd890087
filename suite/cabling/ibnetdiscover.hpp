#pragma once
// ibnetdiscover's topology file (its default output) as records: every node (switch, CA, router)
// with its description and LID, and every port it lists with the node and port at the cable's
// other end. Tolerant of what real files hold: tabs or spaces, a stderr line mixed in, CAs without
// names, loopback cables, links seen from one end only. Lines it cannot read are named, not skipped
// silently.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabricproof::cabling {

struct IbPort {
  int port = 0;
  std::string port_guid;   // a CA's port GUID as printed (leading zeros dropped); "" for a switch port
  std::string peer;        // the node at the other end: "S-<guid>" / "H-<guid>" as printed
  int peer_port = 0;
  std::string peer_desc;   // the other end's node description
  std::optional<int> peer_lid;
  std::optional<int> lid;   // a CA port's own LID ("# lid 3 lmc 0 ..." on the CA's side)
  std::string width_speed;  // "4xEDR"
};

struct IbNode {
  std::string kind;  // "Switch", "Ca" or "Rt"
  std::string id;    // "S-e41d2d030003e470", as the file names it
  std::string guid;  // the GUID without the "S-"/"H-"/"R-" prefix
  std::string desc;
  std::optional<int> lid;  // a switch's (port 0) or a CA's own LID
  int ports = 0;           // the port count its header gives
  std::vector<IbPort> links;
};

struct IbTopology {
  std::vector<IbNode> nodes;
  std::vector<std::string> errors;  // "NAME:LINE: what is wrong"
  const IbNode* find(const std::string& id) const;
};

IbTopology parse_ibnetdiscover(const std::string& text, const std::string& name);
// Whether a text is an ibnetdiscover topology file (a "Switch N "S-..."" or "Ca N "H-..."" header).
bool looks_like_ibnetdiscover(const std::string& text);

// One cabled CA port and the switch port at its other end (a CA-to-CA cable has no switch).
struct CaPort {
  std::string node_desc;
  std::string node_guid;
  int port = 0;
  std::string port_guid;
  std::optional<int> lid;
  std::string switch_guid;
  std::string switch_desc;
  int switch_port = 0;
  std::string width_speed;
};
std::vector<CaPort> ca_ports(const IbTopology& topology);

// A leaf is a switch with a cable to a CA other than a SHARP aggregation node; a spine, one
// cabled to switches only. By GUID.
std::vector<std::string> leaf_switches(const IbTopology& topology);

}  // namespace fabricproof::cabling
