#include "core/profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/builtin_profiles.hpp"
#include "core/json_optional.hpp"
#include "core/text_file.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

enum class ValueKind { integer, number, boolean, string, string_list, verdict };

struct LeafSpec {
  const char* pointer;
  ValueKind kind;
  bool nullable;
  double min = 0;
  double max = 1e12;
  std::vector<std::string> allowed = {};
};

// Types and ranges of every leaf. The values themselves live in default.json (data, not code).
const std::vector<LeafSpec>& leaf_specs() {
  static const std::vector<LeafSpec> specs = {
      {"/schema", ValueKind::string, false},
      {"/name", ValueKind::string, false},
      {"/description", ValueKind::string, false},
      {"/cluster/nodes", ValueKind::integer, true, 1, 100000},
      {"/cluster/gpus_per_node", ValueKind::integer, true, 0, 1024},
      {"/cluster/hcas_per_node", ValueKind::integer, true, 0, 1024},
      {"/cluster/max_clock_offset_s", ValueKind::number, false, 0, 3600},
      {"/ports/devices", ValueKind::string_list, false},
      {"/ports/link_layer", ValueKind::string, true, 0, 0, {"InfiniBand", "Ethernet"}},
      {"/ports/rate_gbps", ValueKind::number, true, 1, 100000},
      {"/roce/active_mtu", ValueKind::integer, false, 256, 4096, {"256", "512", "1024", "2048", "4096"}},
      {"/roce/min_netdev_mtu", ValueKind::integer, false, 576, 65535},
      {"/roce/pfc_priority", ValueKind::integer, false, 0, 7},
      {"/roce/dscp", ValueKind::integer, false, 0, 63},
      {"/pcie/hca_downtrained", ValueKind::verdict, false},
      {"/pcie/gpu_width_downtrained", ValueKind::verdict, false},
      {"/pcie/gpu_speed_downtrained", ValueKind::verdict, false},
      {"/gpudirect/missing_peermem", ValueKind::verdict, false},
      {"/gpudirect/ratio_pass", ValueKind::number, false, 0, 2},
      {"/gpudirect/ratio_bounce", ValueKind::number, false, 0, 2},
      {"/consistency/software", ValueKind::verdict, false},
      {"/consistency/os_kernel", ValueKind::verdict, false},
      {"/verbs/absolute_bw", ValueKind::boolean, false},
      {"/verbs/bw_pass_ratio", ValueKind::number, false, 0, 2},
      {"/verbs/bw_fail_ratio", ValueKind::number, false, 0, 2},
      {"/verbs/outlier_ratio", ValueKind::number, false, 0, 1},
      {"/verbs/latency_usec/InfiniBand", ValueKind::number, true, 0, 1e6},
      {"/verbs/latency_usec/Ethernet", ValueKind::number, true, 0, 1e6},
      {"/verbs/latency_outlier_factor", ValueKind::number, false, 1, 1000},
      {"/verbs/locate_slow_below", ValueKind::number, false, 0, 1},
      {"/compare/regression", ValueKind::number, false, 0, 1},
      {"/collectives/absolute_bw", ValueKind::boolean, false},
      {"/collectives/busbw_efficiency", ValueKind::number, false, 0, 2},
      {"/collectives/busbw_efficiency_fail", ValueKind::number, false, 0, 2},
      {"/collectives/scaling_drop_factor", ValueKind::number, false, 1, 1000},
      {"/collectives/max_bytes", ValueKind::integer, true, 8, 8796093022208.0},
      {"/uplink/ingest_gbps", ValueKind::number, true, 0.001, 1e6},
      {"/soak/port_rcv_errors_max", ValueKind::number, false, 0, 1e18},
      {"/soak/port_xmit_discards_max", ValueKind::number, false, 0, 1e18},
      {"/soak/symbol_ber_max", ValueKind::number, false, 0, 1},
      {"/soak/ber_min_uptime_s", ValueKind::number, false, 0, 31536000},
      {"/soak/worst_pass_ratio", ValueKind::number, false, 0, 1},
      {"/soak/cv_max", ValueKind::number, false, 0, 100},
  };
  return specs;
}

std::string join_keys(const json& object) {
  std::string out;
  for (const auto& [key, _] : object.items()) out += (out.empty() ? "" : ", ") + key;
  return out;
}

// Reports keys of `user` that the default does not know, and objects given as scalars.
void check_structure(const json& user, const json& reference, const std::string& pointer,
                     std::vector<std::string>& problems) {
  for (const auto& [key, value] : user.items()) {
    const std::string here = pointer + "/" + key;
    if (!reference.contains(key)) {
      problems.push_back(fmt::format("{}: unknown key (known here: {})", here, join_keys(reference)));
    } else if (reference[key].is_object()) {
      if (!value.is_object())
        problems.push_back(fmt::format("{}: must be an object, got {}", here, value.type_name()));
      else
        check_structure(value, reference[key], here, problems);
    }
  }
}

void overlay(json& base, const json& patch) {
  for (const auto& [key, value] : patch.items()) {
    if (value.is_object() && base.contains(key) && base[key].is_object())
      overlay(base[key], value);
    else
      base[key] = value;
  }
}

std::optional<std::string> check_leaf(const LeafSpec& spec, const json& value) {
  if (value.is_null()) {
    if (spec.nullable) return std::nullopt;
    return "must not be null";
  }
  switch (spec.kind) {
    case ValueKind::integer:
    case ValueKind::number: {
      const bool ok = spec.kind == ValueKind::integer ? value.is_number_integer() : value.is_number();
      if (!ok) return fmt::format("must be {}, got {}", spec.kind == ValueKind::integer ? "an integer" : "a number", value.dump());
      const double v = value.get<double>();
      if (!std::isfinite(v) || v < spec.min || v > spec.max)
        return fmt::format("{} is out of range [{}, {}]", value.dump(), spec.min, spec.max);
      if (!spec.allowed.empty() &&
          std::find(spec.allowed.begin(), spec.allowed.end(), value.dump()) == spec.allowed.end())
        return fmt::format("{} is not one of {}", value.dump(), fmt::join(spec.allowed, ", "));
      return std::nullopt;
    }
    case ValueKind::boolean:
      if (!value.is_boolean()) return fmt::format("must be true or false, got {}", value.dump());
      return std::nullopt;
    case ValueKind::string:
      if (!value.is_string()) return fmt::format("must be a string, got {}", value.dump());
      if (!spec.allowed.empty() && std::find(spec.allowed.begin(), spec.allowed.end(),
                                             value.get<std::string>()) == spec.allowed.end())
        return fmt::format("{} is not one of {}", value.dump(), fmt::join(spec.allowed, ", "));
      return std::nullopt;
    case ValueKind::string_list:
      if (!value.is_array()) return fmt::format("must be a list of strings, got {}", value.dump());
      for (const auto& item : value)
        if (!item.is_string()) return fmt::format("must be a list of strings, got element {}", item.dump());
      return std::nullopt;
    case ValueKind::verdict:
      if (!value.is_string() || !parse_verdict(value.get<std::string>()))
        return fmt::format("must be one of pass, skip, warn, fail, error; got {}", value.dump());
      return std::nullopt;
  }
  return std::nullopt;
}

std::string line_and_column(std::string_view text, size_t byte) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {}", line, column);
}

Profile build(const json& doc, const std::string& origin) {
  auto verdict_at = [&](const char* pointer) {
    return *parse_verdict(doc.at(json::json_pointer(pointer)).get<std::string>());
  };
  Profile p;
  p.origin = origin;
  p.effective = doc;
  p.name = doc.at("name").get<std::string>();
  p.description = doc.at("description").get<std::string>();
  const auto& cluster = doc.at("cluster");
  p.cluster.nodes = cluster.at("nodes").get<std::optional<int>>();
  p.cluster.gpus_per_node = cluster.at("gpus_per_node").get<std::optional<int>>();
  p.cluster.hcas_per_node = cluster.at("hcas_per_node").get<std::optional<int>>();
  p.cluster.max_clock_offset_s = cluster.at("max_clock_offset_s").get<double>();
  const auto& ports = doc.at("ports");
  p.ports.devices = ports.at("devices").get<std::vector<std::string>>();
  p.ports.link_layer = ports.at("link_layer").get<std::optional<std::string>>();
  p.ports.rate_gbps = ports.at("rate_gbps").get<std::optional<double>>();
  p.roce.active_mtu = doc.at("roce").at("active_mtu").get<int>();
  p.roce.min_netdev_mtu = doc.at("roce").at("min_netdev_mtu").get<int>();
  p.roce.pfc_priority = doc.at("roce").at("pfc_priority").get<int>();
  p.roce.dscp = doc.at("roce").at("dscp").get<int>();
  p.pcie.hca_downtrained = verdict_at("/pcie/hca_downtrained");
  p.pcie.gpu_width_downtrained = verdict_at("/pcie/gpu_width_downtrained");
  p.pcie.gpu_speed_downtrained = verdict_at("/pcie/gpu_speed_downtrained");
  p.gpudirect.missing_peermem = verdict_at("/gpudirect/missing_peermem");
  p.gpudirect.ratio_pass = doc.at("gpudirect").at("ratio_pass").get<double>();
  p.gpudirect.ratio_bounce = doc.at("gpudirect").at("ratio_bounce").get<double>();
  p.consistency.software = verdict_at("/consistency/software");
  p.consistency.os_kernel = verdict_at("/consistency/os_kernel");
  const auto& verbs = doc.at("verbs");
  p.verbs.absolute_bw = verbs.at("absolute_bw").get<bool>();
  p.verbs.bw_pass_ratio = verbs.at("bw_pass_ratio").get<double>();
  p.verbs.bw_fail_ratio = verbs.at("bw_fail_ratio").get<double>();
  p.verbs.outlier_ratio = verbs.at("outlier_ratio").get<double>();
  p.verbs.latency_usec_infiniband = verbs.at("latency_usec").at("InfiniBand").get<std::optional<double>>();
  p.verbs.latency_usec_ethernet = verbs.at("latency_usec").at("Ethernet").get<std::optional<double>>();
  p.verbs.latency_outlier_factor = verbs.at("latency_outlier_factor").get<double>();
  p.verbs.locate_slow_below = verbs.at("locate_slow_below").get<double>();
  p.compare.regression = doc.at("compare").at("regression").get<double>();
  const auto& coll = doc.at("collectives");
  p.collectives.absolute_bw = coll.at("absolute_bw").get<bool>();
  p.collectives.busbw_efficiency = coll.at("busbw_efficiency").get<double>();
  p.collectives.busbw_efficiency_fail = coll.at("busbw_efficiency_fail").get<double>();
  p.collectives.scaling_drop_factor = coll.at("scaling_drop_factor").get<double>();
  if (!coll.at("max_bytes").is_null()) p.collectives.max_bytes = coll.at("max_bytes").get<uint64_t>();
  p.uplink.ingest_gbps = doc.at("uplink").at("ingest_gbps").get<std::optional<double>>();
  const auto& soak = doc.at("soak");
  p.soak.port_rcv_errors_max = soak.at("port_rcv_errors_max").get<double>();
  p.soak.port_xmit_discards_max = soak.at("port_xmit_discards_max").get<double>();
  p.soak.symbol_ber_max = soak.at("symbol_ber_max").get<double>();
  p.soak.ber_min_uptime_s = soak.at("ber_min_uptime_s").get<double>();
  p.soak.worst_pass_ratio = soak.at("worst_pass_ratio").get<double>();
  p.soak.cv_max = soak.at("cv_max").get<double>();
  return p;
}

const json& default_document() {
  static const json doc = json::parse(builtin_profile_text("default").value());
  return doc;
}

}  // namespace

bool Profile::includes_device(std::string_view device) const {
  return ports.devices.empty() ||
         std::find(ports.devices.begin(), ports.devices.end(), device) != ports.devices.end();
}

ProfileLoad load_profile_text(std::string_view text, const std::string& origin) {
  ProfileLoad result;
  auto fail = [&](const std::string& problem) { result.errors.push_back(origin + ": " + problem); };
  json user;
  try {
    user = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    fail(fmt::format("not valid JSON at {} ({})", line_and_column(text, e.byte ? e.byte - 1 : 0), e.what()));
    return result;
  } catch (const json::exception& e) {  // e.g. out_of_range.406: a number like 1e400 overflows a double
    fail(fmt::format("not valid JSON: {}", e.what()));
    return result;
  }
  if (!user.is_object()) {
    fail(fmt::format("must be a JSON object, got {}", user.type_name()));
    return result;
  }
  if (!user.contains("schema")) {
    fail(fmt::format("/schema: missing; a profile starts with \"schema\": \"{}\"", kProfileSchema));
  } else if (user["schema"] != kProfileSchema) {
    fail(fmt::format("/schema: {} is not supported (this build reads \"{}\")", user["schema"].dump(), kProfileSchema));
  }
  if (!user.contains("name")) fail("/name: missing");
  std::vector<std::string> problems;
  check_structure(user, default_document(), "", problems);
  json effective = default_document();
  overlay(effective, user);
  for (const auto& spec : leaf_specs()) {
    const json::json_pointer pointer(spec.pointer);
    if (!effective.contains(pointer)) {
      problems.push_back(fmt::format("{}: missing", spec.pointer));
    } else if (auto problem = check_leaf(spec, effective.at(pointer))) {
      problems.push_back(fmt::format("{}: {}", spec.pointer, *problem));
    }
  }
  if (problems.empty() && effective["verbs"]["bw_fail_ratio"].get<double>() > effective["verbs"]["bw_pass_ratio"].get<double>())
    problems.push_back("/verbs/bw_fail_ratio: must not exceed /verbs/bw_pass_ratio");
  if (problems.empty() &&
      effective["collectives"]["busbw_efficiency_fail"].get<double>() > effective["collectives"]["busbw_efficiency"].get<double>())
    problems.push_back("/collectives/busbw_efficiency_fail: must not exceed /collectives/busbw_efficiency");
  for (const auto& p : problems) fail(p);
  if (result.errors.empty()) result.profile = build(effective, origin);
  return result;
}

ProfileLoad load_profile(const std::string& name_or_path) {
  if (auto text = builtin_profile_text(name_or_path)) {
    return load_profile_text(*text, "built-in:" + name_or_path);
  }
  std::optional<std::string> text;  // a profile is a few KiB
  const auto failed = failure_of([&] { text = read_regular_file(name_or_path, 1u << 20); });
  if (!text) {
    ProfileLoad result;
    result.errors.push_back(fmt::format("{}: cannot read the profile ({}); built-in profiles are: {}", name_or_path,
                                        failed.value_or(std::strerror(ENOENT)), fmt::join(builtin_profile_names(), ", ")));
    return result;
  }
  return load_profile_text(*text, name_or_path);
}

Profile default_profile() {
  auto loaded = load_profile_text(builtin_profile_text("default").value(), "built-in:default");
  return *loaded.profile;  // the default is validated by the unit tests
}

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> names;
  for (const auto& [name, _] : builtin_profiles()) names.emplace_back(name);
  return names;
}

}  // namespace fabricproof
