#pragma once
// lldpd's neighbour table as records, one per local interface that hears a neighbour: the switch
// (chassis name and id) and its port (id and description) at the other end of the cable. Reads
// what `lldpcli` prints in each machine-readable form: `-f json0` (every value wrapped in a
// list), `-f json` (objects keyed by interface and by chassis name, a list only where there are
// several) and `-f keyvalue` (lldp.<interface>.<path>=<value>).
#include <optional>
#include <string>
#include <vector>

namespace fabricproof::cabling {

struct LldpNeighbour {
  std::string local_interface;
  std::string via;  // LLDP, CDPv2, ...
  std::string rid;
  std::optional<std::string> chassis_name;  // the switch's system name: absent when it sends none
  std::string chassis_id_type;              // mac, local, ip, ifname ...
  std::string chassis_id;
  std::optional<std::string> chassis_descr;
  std::vector<std::string> mgmt_ip;
  std::string port_id_type;                 // local, ifname, mac ...
  std::string port_id;
  std::optional<std::string> port_descr;
  std::optional<std::string> ttl;
};

struct LldpNeighbours {
  std::string flavour;  // json0, json or keyvalue
  std::vector<LldpNeighbour> neighbours;
  std::vector<std::string> errors;  // "NAME: what is wrong"
};

LldpNeighbours parse_lldp(const std::string& text, const std::string& name);

}  // namespace fabricproof::cabling
