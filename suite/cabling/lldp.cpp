#include "cabling/lldp.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace fabricproof::cabling {
namespace {

using nlohmann::json;

// json0 wraps every value in a one-element list, json only where there are several: the first.
const json& first(const json& j) { return j.is_array() && !j.empty() ? j.front() : j; }

std::optional<std::string> text_of(const json& parent, const char* key) {
  if (!parent.is_object() || !parent.contains(key)) return std::nullopt;
  const json& v = first(parent.at(key));
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("value") && v.at("value").is_string()) return v.at("value").get<std::string>();
  return std::nullopt;
}

std::vector<std::string> texts_of(const json& parent, const char* key) {
  std::vector<std::string> out;
  if (!parent.is_object() || !parent.contains(key)) return out;
  const json& v = parent.at(key);
  for (const json& item : v.is_array() ? v : json::array({v})) {
    if (item.is_string()) out.push_back(item.get<std::string>());
    else if (item.is_object() && item.contains("value") && item.at("value").is_string()) out.push_back(item.at("value").get<std::string>());
  }
  return out;
}

// An id as {"type": ..., "value": ...} (possibly in a list).
void read_id(const json& parent, std::string& type, std::string& value) {
  if (!parent.is_object() || !parent.contains("id")) return;
  const json& id = first(parent.at("id"));
  if (!id.is_object()) return;
  type = id.value("type", "");
  value = id.value("value", "");
}

// The chassis: json0 has {"id", "name", ...} in a list; json has {"<name>": {...}}, or the body
// itself when the switch sends no name.
void read_chassis(const json& chassis_in, LldpNeighbour& n) {
  const json& chassis = first(chassis_in);
  if (!chassis.is_object()) return;
  const json* body = &chassis;
  if (!chassis.contains("id") && chassis.size() == 1) {
    n.chassis_name = chassis.begin().key();
    body = &chassis.begin().value();
  } else {
    n.chassis_name = text_of(chassis, "name");
  }
  read_id(*body, n.chassis_id_type, n.chassis_id);
  n.chassis_descr = text_of(*body, "descr");
  n.mgmt_ip = texts_of(*body, "mgmt-ip");
}

LldpNeighbour read_interface(const std::string& name, const json& body) {
  LldpNeighbour n;
  n.local_interface = name;
  n.via = text_of(body, "via").value_or("");
  n.rid = text_of(body, "rid").value_or("");
  if (body.contains("chassis")) read_chassis(body.at("chassis"), n);
  if (body.contains("port")) {
    const json& port = first(body.at("port"));
    read_id(port, n.port_id_type, n.port_id);
    n.port_descr = text_of(port, "descr");
    n.ttl = text_of(port, "ttl");
  }
  return n;
}

void read_json(const json& doc, const std::string& file, LldpNeighbours& out) {
  const json& lldp = first(doc.at("lldp"));
  if (!lldp.is_object() || !lldp.contains("interface")) return;  // no neighbour heard: an empty table
  const json& interfaces = lldp.at("interface");
  out.flavour = doc.at("lldp").is_array() ? "json0" : "json";
  // json0: a list of {"name": ...}; json: {"<if>": {...}}, or a list of such one-key objects.
  auto add = [&](const std::string& name, const json& body) {
    if (name.empty()) out.errors.push_back(file + ": an interface without a name");  // no port to give it to
    else out.neighbours.push_back(read_interface(name, body));
  };
  for (const json& item : interfaces.is_array() ? interfaces : json::array({interfaces})) {
    if (item.contains("name") && item.at("name").is_string()) {
      add(item.at("name").get<std::string>(), item);
      continue;
    }
    for (auto it = item.begin(); it != item.end(); ++it) add(it.key(), it.value());
  }
}

}  // namespace
}  // namespace fabricproof::cabling

namespace fabricproof::cabling {
namespace {

const std::set<std::string> kIdTypes = {"mac", "ip", "local", "ifname", "ifalias", "unhandled"};

// One "lldp.<if>.<path>=<value>" line into its interface's record.
void read_keyvalue_line(const std::string& interface, const std::string& path, const std::string& value, LldpNeighbour& n) {
  const auto dot = path.find('.');
  const std::string head = path.substr(0, dot), tail = dot == std::string::npos ? "" : path.substr(dot + 1);
  if (path == "via") n.via = value;
  else if (path == "rid") n.rid = value;
  else if (head == "chassis" && tail == "name") n.chassis_name = value;
  else if (head == "chassis" && tail == "descr") n.chassis_descr = value;
  else if (head == "chassis" && tail == "mgmt-ip") n.mgmt_ip.push_back(value);
  else if (head == "chassis" && kIdTypes.count(tail)) {
    n.chassis_id_type = tail;
    n.chassis_id = value;
  }
  else if (head == "port" && tail == "descr") n.port_descr = value;
  else if (head == "port" && tail == "ttl") n.ttl = value;
  else if (head == "port" && kIdTypes.count(tail)) {
    n.port_id_type = tail;
    n.port_id = value;
  }
  n.local_interface = interface;
}

void read_keyvalue(const std::string& text, const std::string& name, LldpNeighbours& out) {
  out.flavour = "keyvalue";
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const auto eq = line.find('=');
    const auto dot = line.find('.', 5);
    if (line.rfind("lldp.", 0) != 0 || eq == std::string::npos || dot == std::string::npos || dot == 5 || dot > eq) {
      out.errors.push_back(fmt::format("{}:{}: not an 'lldp.<interface>.<key>=<value>' line: {}", name, number, line.substr(0, 120)));
      continue;
    }
    const std::string interface = line.substr(5, dot - 5);
    if (out.neighbours.empty() || out.neighbours.back().local_interface != interface) out.neighbours.emplace_back().local_interface = interface;
    read_keyvalue_line(interface, line.substr(dot + 1, eq - dot - 1), line.substr(eq + 1), out.neighbours.back());
  }
}

}  // namespace

LldpNeighbours parse_lldp(const std::string& text, const std::string& name) {
  LldpNeighbours out;
  const auto start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) {
    out.errors.push_back(name + ": empty (is lldpd running?)");
    return out;
  }
  if (text[start] != '{') {
    read_keyvalue(text, name, out);
    return out;
  }
  try {
    const auto doc = json::parse(text);
    if (!doc.is_object() || !doc.contains("lldp")) throw std::runtime_error("no \"lldp\" key");
    read_json(doc, name, out);
  } catch (const std::exception& e) {
    out.errors.push_back(fmt::format("{}: not lldpcli's JSON: {}", name, e.what()));
  }
  return out;
}

}  // namespace fabricproof::cabling
