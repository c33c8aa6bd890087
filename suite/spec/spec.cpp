#include "spec/spec.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>

#include "cabling/cable_sheet.hpp"
#include "core/located_error.hpp"
#include "core/text_file.hpp"
#include "core/units.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

const std::vector<std::string> kSpecPhases = {"inventory", "verbs", "gpudirect", "collectives", "nccl_audit", "uplink"};

// Walks the document and collects every error with its JSON pointer; nothing throws.
struct SpecReader {
  std::string origin;
  std::vector<std::string> errors;

  void error(const std::string& at, const std::string& what) { errors.push_back(fmt::format("{}: {}: {}", origin, at, what)); }

  // The object at `at`, with no key outside `keys`; nullptr (an error said) when it is not one.
  const json* object(const json& j, const std::string& at, const std::set<std::string>& keys) {
    if (!j.is_object()) {
      error(at, "must be an object, got " + std::string(j.type_name()));
      return nullptr;
    }
    for (const auto& [key, value] : j.items())
      if (!keys.count(key)) error(at + "/" + key, "unknown key (known: " + fmt::format("{}", fmt::join(keys, ", ")) + ")");
    return &j;
  }

  std::string text(const json& j, const char* key, const std::string& at) {
    if (!j.contains(key)) return "";
    if (!j[key].is_string()) error(at + "/" + key, "must be a string");
    return j[key].is_string() ? j[key].get<std::string>() : "";
  }

  // A finite number in [low, high]: NaN and infinities never pass a spec (JSON has neither, but a
  // number too large for a double reads as infinity).
  std::optional<double> number(const json& j, const char* key, const std::string& at, double low, double high) {
    if (!j.contains(key)) return std::nullopt;
    const auto& v = j[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < low || v.get<double>() > high) {
      error(at + "/" + key, fmt::format("must be a finite number from {} to {}, got {}", low, high, v.dump()));
      return std::nullopt;
    }
    return v.get<double>();
  }

  std::optional<int> integer(const json& j, const char* key, const std::string& at, int low, int high) {
    if (!j.contains(key)) return std::nullopt;
    const auto& v = j[key];
    if (!v.is_number_integer() || v.get<int64_t>() < low || v.get<int64_t>() > high) {
      error(at + "/" + key, fmt::format("must be an integer from {} to {}, got {}", low, high, v.dump()));
      return std::nullopt;
    }
    return static_cast<int>(v.get<int64_t>());
  }

  std::optional<bool> flag(const json& j, const char* key, const std::string& at) {
    if (!j.contains(key)) return std::nullopt;
    if (!j[key].is_boolean()) error(at + "/" + key, "must be true or false, got " + j[key].dump());
    return j[key].is_boolean() ? std::optional<bool>(j[key].get<bool>()) : std::nullopt;
  }

  std::vector<std::string> strings(const json& j, const char* key, const std::string& at) {
    std::vector<std::string> out;
    if (!j.contains(key)) return out;
    if (!j[key].is_array()) error(at + "/" + key, "must be an array of strings");
    else
      for (size_t i = 0; i < j[key].size(); ++i) {
        if (j[key][i].is_string() && !j[key][i].get<std::string>().empty()) out.push_back(j[key][i].get<std::string>());
        else error(fmt::format("{}/{}/{}", at, key, i), "must be a non-empty string");
      }
    return out;
  }

  // "1G", "64M" or a byte count.
  uint64_t size(const json& j, const std::string& at) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > 0) return j.get<uint64_t>();
    if (j.is_string())
      if (auto bytes = parse_size(j.get<std::string>()); bytes && *bytes > 0) return *bytes;
    error(at, "must be a size such as \"1G\" or a byte count > 0, got " + j.dump());
    return 0;
  }

  void nodes(const json& j, ClusterSpec& s);
  void per_node(const json& j, ClusterSpec& s);
  void require(const json& j, ClusterSpec& s);
  void floors(const json& j, ClusterSpec& s);
  void cabling(const json& j, ClusterSpec& s);
  void add_cable(const CableSpec& cable, const std::string& at, ClusterSpec& s);
  void cable_sheet(const std::string& file, ClusterSpec& s);
};

void SpecReader::nodes(const json& j, ClusterSpec& s) {
  if (!object(j, "/nodes", {"count", "hosts"})) return;
  s.node_count = integer(j, "count", "/nodes", 1, 1000000);
  s.hosts = strings(j, "hosts", "/nodes");
  if (std::set<std::string>(s.hosts.begin(), s.hosts.end()).size() != s.hosts.size()) error("/nodes/hosts", "a host is listed twice");
  if (!s.node_count && s.hosts.empty()) error("/nodes", "needs a count or the hosts");
  if (s.node_count && !s.hosts.empty() && *s.node_count != static_cast<int>(s.hosts.size()))
    error("/nodes", fmt::format("count {} and the {} hosts listed disagree", *s.node_count, s.hosts.size()));
}

void SpecReader::per_node(const json& j, ClusterSpec& s) {
  if (!object(j, "/per_node", {"gpus", "rdma_devices", "rails"})) return;
  if (j.contains("gpus") && object(j["gpus"], "/per_node/gpus", {"count", "model"})) {
    const auto& g = j["gpus"];
    s.gpus = GpuSpec{integer(g, "count", "/per_node/gpus", 0, 1024).value_or(0), text(g, "model", "/per_node/gpus")};
    if (!g.contains("count")) error("/per_node/gpus/count", "is required");
  }
  if (j.contains("rdma_devices") && object(j["rdma_devices"], "/per_node/rdma_devices",
                                           {"count", "model", "part_number", "link_layer", "rate_gbps", "active_mtu", "firmware"})) {
    const auto& r = j["rdma_devices"];
    const std::string at = "/per_node/rdma_devices";
    RdmaSpec d;
    d.count = integer(r, "count", at, 0, 1024).value_or(0);
    if (!r.contains("count")) error(at + "/count", "is required");
    d.model = text(r, "model", at);
    d.part_number = text(r, "part_number", at);
    d.link_layer = text(r, "link_layer", at);
    if (!d.link_layer.empty() && d.link_layer != "InfiniBand" && d.link_layer != "Ethernet")
      error(at + "/link_layer", "must be InfiniBand or Ethernet, got " + d.link_layer);
    d.rate_gbps = number(r, "rate_gbps", at, 0.001, 1e5);
    d.active_mtu = integer(r, "active_mtu", at, 256, 4096);
    d.firmware = text(r, "firmware", at);
    s.rdma = d;
  }
  if (!j.contains("rails")) return;
  if (!j["rails"].is_array()) return error("/per_node/rails", "must be an array of {hca, gpu}");
  for (size_t i = 0; i < j["rails"].size(); ++i) {
    const std::string at = fmt::format("/per_node/rails/{}", i);
    if (!object(j["rails"][i], at, {"hca", "gpu", "switch"})) continue;
    RailSpec rail{text(j["rails"][i], "hca", at), integer(j["rails"][i], "gpu", at, 0, 1023).value_or(-1), text(j["rails"][i], "switch", at)};
    if (rail.hca.empty() || rail.gpu < 0) error(at, "needs hca (a device name) and gpu (a CUDA ordinal)");
    else s.rails.push_back(rail);
  }
}

void SpecReader::require(const json& j, ClusterSpec& s) {
  if (!object(j, "/require", {"phases", "nccl", "gpudirect", "intermittent", "latency_outliers"})) return;
  s.phases = strings(j, "phases", "/require");
  for (const auto& p : s.phases)
    if (std::find(kSpecPhases.begin(), kSpecPhases.end(), p) == kSpecPhases.end())
      error("/require/phases", "unknown phase '" + p + "' (known: " + fmt::format("{}", fmt::join(kSpecPhases, ", ")) + ")");
  s.nccl = flag(j, "nccl", "/require");
  s.gpudirect = flag(j, "gpudirect", "/require");
  const auto intermittent = text(j, "intermittent", "/require");
  if (!intermittent.empty() && intermittent != "warn" && intermittent != "fail")
    error("/require/intermittent", "must be warn or fail, got " + intermittent);
  s.intermittent_fails = intermittent == "fail";
  const auto latency = text(j, "latency_outliers", "/require");
  if (!latency.empty() && latency != "warn" && latency != "fail")
    error("/require/latency_outliers", "must be warn or fail, got " + latency);
  s.latency_outliers_fail = latency == "fail";
}

void SpecReader::floors(const json& j, ClusterSpec& s) {
  if (!object(j, "/floors", {"verbs_write_bw_gbps", "allreduce_busbw", "uplink_gbps"})) return;
  s.floors.verbs_write_bw_gbps = number(j, "verbs_write_bw_gbps", "/floors", 1e-6, 1e5);
  s.floors.uplink_gbps = number(j, "uplink_gbps", "/floors", 1e-6, 1e6);
  if (!j.contains("allreduce_busbw")) return;
  if (!j["allreduce_busbw"].is_array()) return error("/floors/allreduce_busbw", "must be an array of {nodes, bytes, busbw_GBps}");
  for (size_t i = 0; i < j["allreduce_busbw"].size(); ++i) {
    const std::string at = fmt::format("/floors/allreduce_busbw/{}", i);
    const auto& f = j["allreduce_busbw"][i];
    if (!object(f, at, {"nodes", "bytes", "busbw_GBps"})) continue;
    BusbwFloor floor{integer(f, "nodes", at, 1, 1000000).value_or(0), f.contains("bytes") ? size(f["bytes"], at + "/bytes") : 0,
                     number(f, "busbw_GBps", at, 1e-9, 1e5).value_or(0)};
    if (floor.nodes == 0 || floor.bytes == 0 || floor.busbw_GBps == 0) error(at, "needs nodes, bytes and busbw_GBps");
    else s.floors.busbw.push_back(floor);
  }
}

// "cabling": {"rail_optimised": true, "cables": [{"host", "hca", "port", "switch", "switch_port"}]},
// or "cables": "FILE.csv", the point-to-point sheet (cabling/cable_sheet.hpp), relative to the spec.
void SpecReader::cabling(const json& j, ClusterSpec& s) {
  if (!object(j, "/cabling", {"rail_optimised", "cables"})) return;
  s.cabling.rail_optimised = flag(j, "rail_optimised", "/cabling").value_or(false);
  if (!j.contains("cables")) return;
  if (j["cables"].is_string()) return cable_sheet(j["cables"].get<std::string>(), s);
  if (!j["cables"].is_array()) return error("/cabling/cables", "must be an array of {host, hca, port, switch, switch_port} or a CSV file's name");
  for (size_t i = 0; i < j["cables"].size(); ++i) {
    const std::string at = fmt::format("/cabling/cables/{}", i);
    const auto& c = j["cables"][i];
    if (!object(c, at, {"host", "hca", "port", "switch", "switch_port"})) continue;
    CableSpec cable{text(c, "host", at), text(c, "hca", at), integer(c, "port", at, 1, 255).value_or(1), text(c, "switch", at), text(c, "switch_port", at)};
    if (cable.host.empty() || cable.hca.empty() || cable.leaf.empty()) error(at, "needs host, hca and switch (port and switch_port are optional)");
    else add_cable(cable, at, s);
  }
}

void SpecReader::add_cable(const CableSpec& cable, const std::string& at, ClusterSpec& s) {
  const auto same = [&](const CableSpec& c) { return c.host == cable.host && c.hca == cable.hca && c.port == cable.port; };
  if (std::any_of(s.cabling.cables.begin(), s.cabling.cables.end(), same))
    error(at, fmt::format("{} {} port {} is listed twice", cable.host, cable.hca, cable.port));
  else
    s.cabling.cables.push_back(cable);
}

// The sheet's file, found beside the spec when its name is relative; its problems name file:line.
void SpecReader::cable_sheet(const std::string& file, ClusterSpec& s) {
  namespace fs = std::filesystem;
  const fs::path path = fs::path(file).is_absolute() ? fs::path(file) : fs::path(origin).parent_path() / file;
  std::optional<std::string> text;
  const auto failed = failure_of([&] { text = read_regular_file(path.string(), 16u << 20); });
  if (!text) return error("/cabling/cables", fmt::format("{}: cannot be read{}", path.string(), failed ? " (" + *failed + ")" : ""));
  const auto sheet = cabling::parse_cable_sheet(*text, path.string());
  for (const auto& e : sheet.errors) errors.push_back(fmt::format("{}: /cabling/cables: {}", origin, e));
  for (const auto& c : sheet.cables) add_cable({c.host, c.hca, c.port, c.leaf, c.switch_port}, fmt::format("/cabling/cables ({}:{})", path.string(), c.line), s);
}

}  // namespace

SpecLoad load_spec_text(const std::string& text, const std::string& origin) {
  SpecLoad out;
  SpecReader reader{origin, {}};
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number beyond a double
    out.errors.push_back(origin + ": not JSON: " + e.what());
    return out;
  }
  if (!reader.object(j, "", {"schema", "name", "description", "nodes", "per_node", "require", "floors", "cabling"})) {
    out.errors = reader.errors;
    return out;
  }
  ClusterSpec s;
  if (j.value("schema", json()) != kSpecSchema) reader.error("/schema", std::string("must be \"") + kSpecSchema + "\"");
  s.name = reader.text(j, "name", "");
  s.description = reader.text(j, "description", "");
  if (j.contains("nodes")) reader.nodes(j["nodes"], s);
  else reader.error("/nodes", "is required (a count or the hosts)");
  if (j.contains("per_node")) reader.per_node(j["per_node"], s);
  if (j.contains("require")) reader.require(j["require"], s);
  if (j.contains("floors")) reader.floors(j["floors"], s);
  if (j.contains("cabling")) reader.cabling(j["cabling"], s);
  out.errors = reader.errors;
  if (out.errors.empty()) out.spec = s;
  return out;
}

SpecLoad load_spec_file(const std::string& path) {
  std::optional<std::string> text;
  const auto failed = failure_of([&] { text = read_regular_file(path, 16u << 20); });
  if (!text) return SpecLoad{std::nullopt, {path + ": cannot be read" + (failed ? " (" + *failed + ")" : "")}};
  return load_spec_text(*text, path);
}

}  // namespace fabricproof
