#include "report/views.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/collective_rules.hpp"
#include "core/hints.hpp"
#include "core/profile.hpp"

namespace fabricproof::view {
namespace {

using nlohmann::json;

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Steps in the seed's order; a finding goes to the first step its check id names, else to the
// step its hint names first (verbs diagnoses list causes in that order: "(1) MTU ... (2) PFC").
struct StepRule {
  const char* title;
  const char* advice;
  std::vector<const char*> ids;    // substrings of the finding id
  std::vector<const char*> words;  // words of the hint
};
const std::vector<StepRule>& step_rules() {
  static const std::vector<StepRule> rules = {
      {"1. MTU", hint::kMtu, {"mtu"}, {"MTU"}},
      {"2. PFC and ECN (RoCE)", hint::kPfc, {"qos", "pfc", "ecn", "roce_trust", "dscp", "roce_ets", "nccl_ib_tc"}, {"PFC", "ECN"}},
      {"3. Link: port state, rate, cable, subnet manager", hint::kCable,
       {"port_state", "port_rate", "link", "gid", "sm_", "subnet_manager", "pair_error"},
       {"able", "transceiver", "subnet manager", "port state"}},
      {"4. PCIe", hint::kPcie, {"pcie"}, {"PCIe"}},
      {"5. NUMA and GPU-HCA placement", hint::kNuma, {"numa", "topology", "affinity"}, {"NUMA"}},
      {"6. GPUDirect RDMA", hint::kPeermem, {"gpudirect", "peermem", "dmabuf"}, {"nvidia-peermem", "nvidia_peermem", "DMA-BUF"}},
      {"7. NCCL transport and collectives",
       "Read the NCCL audit below (NET/Socket between nodes means RDMA was not used), then compare busbw with the verbs matrix.",
       {"nccl", "collective"}, {"NCCL"}},
      {"8. Software and firmware consistency", hint::kSoftwareSkew, {"consistency", "software", "driver", "firmware"}, {}},
      {"9. Everything else", "Read the finding's rule and hint.", {}, {}},
  };
  return rules;
}

size_t step_of(const Finding& f) {
  const auto& rules = step_rules();
  for (size_t i = 0; i < rules.size(); ++i)
    for (const char* id : rules[i].ids)
      if (contains(f.id, id)) return i;
  size_t best = rules.size() - 1, at = std::string::npos;
  for (size_t i = 0; i < rules.size(); ++i)
    for (const char* w : rules[i].words)
      if (auto p = f.hint.find(w); p != std::string::npos && p < at) {
        at = p;
        best = i;
      }
  return best;
}

Profile profile_of(const Report& r) {
  if (r.profile.is_object() && r.profile.contains("document")) {
    auto loaded = load_profile_text(json_text(r.profile["document"]), "report.profile.document");
    if (loaded.profile) return *loaded.profile;
  }
  return default_profile();
}

// "a -> b (test)" or "a <-> b (test)": the two labels and the test, for marking matrix cells.
struct PairSubject {
  std::string a, b, test;
  bool both_ways = false;
};
std::optional<PairSubject> pair_subject(const std::string& subject) {
  PairSubject p;
  std::string rest = subject;
  if (auto open = rest.rfind(" ("); open != std::string::npos && rest.back() == ')') {
    p.test = rest.substr(open + 2, rest.size() - open - 3);
    rest.resize(open);
  }
  auto arrow = rest.find(" <-> ");
  size_t width = 5;
  p.both_ways = arrow != std::string::npos;
  if (!p.both_ways) {
    arrow = rest.find(" -> ");
    width = 4;
  }
  if (arrow == std::string::npos) return std::nullopt;
  p.a = rest.substr(0, arrow);
  p.b = rest.substr(arrow + width);
  return p;
}

Matrix matrix_from(const json& section, const std::string& test, const std::string& title_prefix, const char* finding_prefix,
                   const std::vector<Finding>& findings) {
  Matrix m;
  const auto& mj = section["matrix"];
  m.test = test;
  m.lower_is_better = contains(test, "lat");
  m.title = fmt::format("{}{} ({})", title_prefix, test, mj[test].value("unit", std::string()));
  m.labels = mj.value("labels", std::vector<std::string>());
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < m.labels.size(); ++i) index[m.labels[i]] = i;
  const auto& rows = mj[test]["cells"];
  for (size_t i = 0; i < m.labels.size(); ++i) {
    std::vector<MatrixCell> row(m.labels.size());
    for (size_t k = 0; k < m.labels.size(); ++k) {
      const json cell = i < rows.size() && k < rows[i].size() ? rows[i][k] : json();
      row[k].diagonal = i == k;
      if (cell.is_number()) row[k].value = cell.get<double>();
      else if (cell.is_object()) row[k].reason = cell.value("reason", std::string("no figure"));
      else if (i != k) row[k].reason = "not measured";
    }
    m.cells.push_back(row);
  }
  for (const auto& f : findings) {
    if (f.verdict < Verdict::warn || f.id.rfind(finding_prefix, 0) != 0) continue;
    const auto p = pair_subject(f.subject);
    if (!p || (!p->test.empty() && p->test != test)) continue;
    auto a = index.find(p->a), b = index.find(p->b);
    if (a == index.end() || b == index.end()) continue;
    m.cells[a->second][b->second].flagged = true;
    if (p->both_ways) m.cells[b->second][a->second].flagged = true;
  }
  return m;
}

}  // namespace

std::vector<TriageStep> triage(const Report& report) {
  const auto& rules = step_rules();
  std::vector<TriageStep> steps(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) steps[i] = {rules[i].title, rules[i].advice, {}};
  std::vector<const Finding*> ordered;
  for (const auto& f : report.findings)
    if (f.verdict >= Verdict::warn) ordered.push_back(&f);
  std::stable_sort(ordered.begin(), ordered.end(), [](const Finding* a, const Finding* b) { return a->verdict > b->verdict; });
  for (const auto* f : ordered) steps[step_of(*f)].findings.push_back(f);
  std::erase_if(steps, [](const TriageStep& s) { return s.findings.empty(); });
  return steps;
}

std::vector<Component> components(const Report& report) {
  std::vector<Component> out;
  auto text = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string(); };
  for (const auto& n : report.nodes) {
    for (const auto& d : n.rdma_devices) {
      std::string model = d.part_number.empty() ? d.board_id : d.part_number + (d.board_id.empty() ? "" : " (" + d.board_id + ")");
      out.push_back({n.host, "HCA", d.name, d.pci.empty() ? d.name + " (virtual, on " + d.parent + ")" : d.pci, model, d.serial_number,
                     d.fw_ver, d.node_guid, text(d.numa_node)});
    }
    for (const auto& g : n.gpus)
      out.push_back({n.host, "GPU", g.index ? fmt::format("GPU {}", *g.index) : "GPU (no CUDA)", g.pci, g.name, g.serial,
                     n.software.nvidia_driver, g.uuid, text(g.numa_node)});
  }
  return out;
}

std::vector<Matrix> matrices(const Report& report) {
  std::vector<Matrix> out;
  const auto& s = report.sections;
  if (s.contains("verbs") && s["verbs"].contains("matrix"))
    for (const char* test : {"write_bw", "write_bw_bidir", "send_bw", "write_lat"})
      if (s["verbs"]["matrix"].contains(test)) out.push_back(matrix_from(s["verbs"], test, "", "verbs_", report.findings));
  if (s.contains("gpudirect"))
    for (const char* memory : {"host", "gpu"}) {
      const auto& m = s["gpudirect"].value(memory, json::object());
      if (m.contains("matrix") && m["matrix"].contains("write_bw"))
        out.push_back(matrix_from(m, "write_bw", fmt::format("GPUDirect, {} memory: ", memory), "gpudirect_", report.findings));
    }
  return out;
}

std::vector<SweepChart> sweeps(const Report& report) {
  std::vector<SweepChart> out;
  if (!report.sections.contains("collectives")) return out;
  for (const auto& res : report.sections["collectives"].value("results", json::array())) {
    const std::string engine = res.value("engine", ""), op = res.value("op", "");
    auto chart = std::find_if(out.begin(), out.end(), [&](const SweepChart& c) { return c.engine == engine && c.op == op; });
    if (chart == out.end()) chart = out.insert(out.end(), SweepChart{engine, op, {}});
    Series series{res.value("nodes", 0), res.value("ranks", 0), {}};
    for (const auto& row : res.value("rows", json::array()))
      if (row.contains("out_of_place") && row["out_of_place"].contains("busbw_GBps"))
        series.points.emplace_back(row.value("bytes", 0.0), row["out_of_place"].value("busbw_GBps", 0.0));
    chart->series.push_back(series);
  }
  return out;
}

std::vector<ScalingChart> scaling(const Report& report) {
  std::vector<ScalingChart> out;
  if (!report.sections.contains("collectives")) return out;
  const auto& c = report.sections["collectives"];
  const Profile profile = profile_of(report);
  ClusterFacts cluster;
  cluster.nodes = report.nodes;
  for (const auto& s : c.value("scaling", json::array())) {
    ScalingChart chart{s.value("engine", ""), s.value("op", ""), s.value("bytes", 0.0), {}};
    for (const auto& g : s.value("groups", json::array())) {
      ScalingPoint p;
      p.nodes = g.value("nodes", 0);
      if (g.contains("busbw_GBps") && g["busbw_GBps"].is_number()) p.busbw_GBps = g["busbw_GBps"].get<double>();
      for (const auto& res : c.value("results", json::array()))
        if (res.value("engine", "") == chart.engine && res.value("op", "") == chart.op && res.value("nodes", 0) == p.nodes && p.nodes > 1)
          p.ceiling_GBps = nic_ceiling_GBps(res.value("hosts", std::vector<std::string>()), cluster, profile);
      chart.points.push_back(p);
    }
    out.push_back(chart);
  }
  return out;
}

NcclAudit nccl_audit(const Report& report) {
  NcclAudit a;
  if (!report.sections.contains("nccl_audit")) return a;
  const auto& j = report.sections["nccl_audit"];
  a.present = true;
  a.socket_fallback = j.value("socket_fallback", false);
  if (j.contains("nccl_version") && j["nccl_version"].is_string()) a.version = j["nccl_version"].get<std::string>();
  std::map<int, RankRow> rows;
  for (const auto& c : j.value("connections", json::array())) {
    if (!c.contains("rank") || !c["rank"].is_number_integer() || !c.contains("channel") || !c["channel"].is_number_integer()) continue;
    const int rank = c["rank"].get<int>(), channel = c["channel"].get<int>();
    if (channel < 0 || channel > 1024) continue;
    auto& row = rows[rank];
    row.rank = rank;
    if (row.host.empty() && c.contains("host") && c["host"].is_string()) row.host = c["host"].get<std::string>();
    if (row.channels.size() <= static_cast<size_t>(channel)) row.channels.resize(static_cast<size_t>(channel) + 1);
    auto& cell = row.channels[static_cast<size_t>(channel)];
    const std::string transport = c.value("transport", std::string("?"));
    if (std::find(cell.transports.begin(), cell.transports.end(), transport) == cell.transports.end()) cell.transports.push_back(transport);
    const bool inter = !c.contains("inter_node") || !c["inter_node"].is_boolean() || c["inter_node"].get<bool>();
    if (contains(transport, "Socket") && inter) cell.socket_inter_node = true;
    a.channels = std::max(a.channels, channel + 1);
  }
  for (auto& [rank, row] : rows) {
    row.channels.resize(static_cast<size_t>(a.channels));
    a.ranks.push_back(row);
  }
  return a;
}

std::optional<UplinkSection> uplink(const Report& report) {
  const auto it = report.sections.find("uplink");
  if (it == report.sections.end() || !it->is_object()) return std::nullopt;
  try {
    return it->get<UplinkSection>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace fabricproof::view
