#include "report/views.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "collectives/collective_rules.hpp"
#include "core/hints.hpp"
#include "core/statistics.hpp"

namespace fabricproof::view {
namespace {



// Title and advice of each step of the seed's order (TriageStep), for people.
struct StepText {
  fabricproof::TriageStep step;
  const char* title;
  const char* advice;
};
const std::vector<StepText>& step_texts() {
  static const std::vector<StepText> texts = {
      {TriageStep::mtu, "1. MTU", hint::kMtu},
      {TriageStep::pfc, "2. PFC and ECN (RoCE)", hint::kPfc},
      {TriageStep::link, "3. Link: port state, rate, cable, subnet manager", hint::kCable},
      {TriageStep::pcie, "4. PCIe", hint::kPcie},
      {TriageStep::numa, "5. NUMA and GPU-HCA placement", hint::kNuma},
      {TriageStep::gpudirect, "6. GPUDirect RDMA", hint::kPeermem},
      {TriageStep::nccl, "7. NCCL transport and collectives",
       "Read the NCCL audit below (NET/Socket between nodes means RDMA was not used), then compare busbw with the verbs matrix."},
      {TriageStep::software, "8. Software and firmware consistency", hint::kSoftwareSkew},
      {TriageStep::other, "9. Everything else", "Read the finding's rule and hint."},
  };
  return texts;
}

Matrix matrix_from(const VerbsSection& section, const std::string& test, const std::string& title_prefix, Domain domain,
                   const std::vector<Finding>& findings) {
  const VerbsMatrix vm = verbs_matrix(section, test);
  Matrix m;
  m.test = test;
  m.lower_is_better = verbs_test_type(test).latency;
  m.title = fmt::format("{}{} ({})", title_prefix, test, vm.unit);
  m.labels = vm.labels;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < m.labels.size(); ++i) index[m.labels[i]] = i;
  for (const auto& row : vm.cells) {
    std::vector<MatrixCell> cells;
    for (const auto& c : row) cells.push_back({c.value, c.reason, c.diagonal, false});
    m.cells.push_back(cells);
  }
  for (const auto& f : findings) {
    const Check* check = find_check(f.id);
    if (f.verdict < Verdict::warn || !check || check->domain != domain) continue;
    const Subject& p = f.subject;
    if (p.kind != Subject::Kind::pair || (!p.test.empty() && p.test != test)) continue;
    auto a = index.find(p.name), b = index.find(p.peer);
    if (a == index.end() || b == index.end()) continue;
    m.cells[a->second][b->second].flagged = true;
    if (p.both_ways) m.cells[b->second][a->second].flagged = true;
  }
  return m;
}

bool has_test(const VerbsSection& s, const std::string& test) {
  return std::find(s.options.tests.begin(), s.options.tests.end(), test) != s.options.tests.end();
}

}  // namespace

std::vector<StepFindings> triage(const Report& report) {
  const auto& texts = step_texts();
  std::vector<StepFindings> steps;
  for (const auto& t : texts) steps.push_back({t.title, t.advice, {}});
  std::vector<const Finding*> ordered;
  for (const auto& f : report.findings)
    if (f.verdict >= Verdict::warn) ordered.push_back(&f);
  std::stable_sort(ordered.begin(), ordered.end(), [](const Finding* a, const Finding* b) { return a->verdict > b->verdict; });
  for (const auto* f : ordered) {
    const auto step = triage_step(*f);
    const auto at = std::find_if(texts.begin(), texts.end(), [&](const StepText& t) { return t.step == step; });
    steps[static_cast<size_t>(at - texts.begin())].findings.push_back(f);
  }
  std::erase_if(steps, [](const StepFindings& s) { return s.findings.empty(); });
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

namespace {

// A locate's answer lines: each fault's one line, then what it could not settle.
LocateView answered(const std::vector<LocatedFault>& faults, const std::vector<std::string>& unresolved) {
  LocateView v;
  v.present = true;
  for (const auto& f : faults) v.answers.push_back(f.summary);
  for (const auto& u : unresolved) v.answers.push_back("not settled: " + u);
  return v;
}

std::string slow_below(const VerbsLocate& l) {
  return l.slow_below > 0 ? fmt::format(", slow under {:g} of the rail's healthy rate", l.slow_below) : "";
}

}  // namespace

LocateView verbs_locate(const VerbsSection& section) {
  if (!section.locate) return {};
  const auto& l = *section.locate;
  auto v = answered(l.faults, l.unresolved);
  for (const auto& p : l.leaf_map_problems) v.answers.push_back("leaf map not used: " + p);
  if (v.answers.empty()) v.answers.push_back("every node cleared: no node, port, link or leaf named");
  auto share = [](uint64_t part, uint64_t whole) { return whole ? fmt::format(" ({:.1f}%)", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : std::string(); };
  v.exercised = fmt::format("{}{} round(s) over {} node(s) and {} rail(s); pairs tested: {} of {}{}; leaf-to-leaf paths: {}; nodes tested: {} of {}; "
                            "{} transient dip(s) (slow once, not when repeated)",
                            l.figure.empty() ? "" : "compared by " + l.figure + slow_below(l) + "; ", l.rounds, l.nodes, l.rails, l.pairs_tested, l.pairs_total,
                            share(l.pairs_tested, l.pairs_total),
                            l.leaves_known ? fmt::format("{} of {}{}{}", l.leaf_paths_tested, l.leaf_paths_total, share(l.leaf_paths_tested, l.leaf_paths_total),
                                                         l.leaves_from.empty() ? "" : " (leaves from " + l.leaves_from + ")")
                                           : fmt::format("unknown ({})", l.leaves_from.empty() ? "no --leaf-map, no neighbour switch read" : l.leaves_from),
                            l.nodes_tested, l.nodes, l.transient_dips);
  return v;
}

LocateView collective_locate(const CollectivesSection& section) {
  if (!section.locate) return {};
  const auto& l = *section.locate;
  auto v = answered(l.faults, l.unresolved);
  if (l.rounds == 0) v.answers.push_back(fmt::format("no round ran: locate needs two nodes or more (it had {})", l.nodes));
  else if (v.answers.empty()) v.answers.push_back("every node cleared: no node named");
  v.exercised = fmt::format("{} round(s) of {} at {} bytes over {} node(s){}; {} group test(s); nodes tested: {} of {}; {} transient dip(s) "
                            "(a slow group whose halves were not)",
                            l.rounds, l.op, l.bytes, l.nodes, l.ranks_as_nodes ? " (each rank standing for a node)" : "", l.tests.size(),
                            l.nodes_tested, l.nodes, l.transient_dips);
  return v;
}

std::vector<Matrix> matrices(const Report& report) {
  std::vector<Matrix> out;
  // locate tests a few pairs of a large fabric: its answer lines stand in for a mostly empty matrix
  if (report.verbs && !report.verbs->locate)
    for (const char* test : {"write_bw", "write_bw_bidir", "send_bw", "write_lat"})
      if (has_test(*report.verbs, test)) out.push_back(matrix_from(*report.verbs, test, "", Domain::verbs, report.findings));
  if (report.gpudirect)
    for (const auto& [memory, section] : {std::pair{"host", &report.gpudirect->host}, std::pair{"gpu", &report.gpudirect->gpu}})
      if (has_test(*section, "write_bw"))
        out.push_back(matrix_from(*section, "write_bw", fmt::format("GPUDirect, {} memory: ", memory), Domain::gpudirect, report.findings));
  return out;
}

std::vector<CurveRow> verbs_curve(const VerbsSection& section) {
  std::map<uint64_t, std::vector<std::pair<double, std::string>>> figures;
  std::map<uint64_t, size_t> missing;
  for (const auto& pair : section.pairs)
    for (const auto& t : pair.tests) {
      if (t.test != kVerbsSizesTest) continue;
      if (t.status != Status::ok || !t.gbps || static_cast<size_t>(std::max(t.from, t.to)) >= section.endpoints.size()) {
        ++missing[t.bytes];
        continue;
      }
      figures[t.bytes].emplace_back(*t.gbps, section.endpoints[static_cast<size_t>(t.from)].label() + " -> " +
                                                 section.endpoints[static_cast<size_t>(t.to)].label());
    }
  std::vector<CurveRow> rows;
  for (auto& [bytes, list] : figures) {
    std::sort(list.begin(), list.end());
    std::vector<double> values;
    for (const auto& figure : list) values.push_back(figure.first);
    rows.push_back({bytes, list.size(), missing[bytes], list.front().first, median(values), list.back().first, list.front().second});
  }
  for (const auto& [bytes, count] : missing)
    if (!figures.count(bytes)) rows.push_back({bytes, 0, count, 0, 0, 0, ""});
  std::sort(rows.begin(), rows.end(), [](const CurveRow& a, const CurveRow& b) { return a.bytes < b.bytes; });
  return rows;
}

SweepChart verbs_curve_chart(const std::vector<CurveRow>& rows) {
  SweepChart chart{"verbs", kVerbsSizesTest, {}, "RDMA WRITE bandwidth (Gb/s)"};
  for (const char* which : {"slowest pair", "median pair", "fastest pair"}) {
    Series series{0, 0, {}, which};
    for (const auto& r : rows)
      if (r.pairs)
        series.points.emplace_back(static_cast<double>(r.bytes), which[0] == 's' ? r.slowest : which[0] == 'm' ? r.median : r.fastest);
    chart.series.push_back(series);
  }
  return chart;
}

std::vector<SweepChart> sweeps(const Report& report) {
  std::vector<SweepChart> out;
  if (!report.collectives) return out;
  for (const auto& res : report.collectives->results) {
    auto chart = std::find_if(out.begin(), out.end(), [&](const SweepChart& c) { return c.engine == res.engine && c.op == res.op; });
    if (chart == out.end()) chart = out.insert(out.end(), SweepChart{res.engine, res.op, {}});
    Series series{res.nodes, res.ranks, {}, ""};
    for (const auto& row : res.rows) series.points.emplace_back(static_cast<double>(row.bytes), row.out_of_place.busbw_GBps);
    chart->series.push_back(series);
  }
  return out;
}

std::vector<ScalingChart> scaling(const Report& report) {
  std::vector<ScalingChart> out;
  if (!report.collectives) return out;
  for (const auto& s : report.collectives->scaling) {
    ScalingChart chart{s.engine, s.op, static_cast<double>(s.bytes), {}};
    for (const auto& g : s.groups) chart.points.push_back({g.nodes, g.busbw_GBps, g.nic_ceiling_GBps});
    out.push_back(chart);
  }
  return out;
}

NcclAudit nccl_audit(const Report& report) {
  NcclAudit a;
  if (!report.nccl_audit) return a;
  const auto& facts = report.nccl_audit->facts;
  a.present = true;
  a.socket_fallback = facts.socket_fallback;
  a.version = facts.version.value_or("");
  std::map<int, RankRow> rows;
  for (const auto& c : facts.connections) {
    if (c.channel < 0 || c.channel > 1024) continue;
    auto& row = rows[c.rank];
    row.rank = c.rank;
    if (row.host.empty()) row.host = c.host;
    if (row.channels.size() <= static_cast<size_t>(c.channel)) row.channels.resize(static_cast<size_t>(c.channel) + 1);
    auto& cell = row.channels[static_cast<size_t>(c.channel)];
    if (std::none_of(cell.transports.begin(), cell.transports.end(), [&](const ChannelTransport& t) { return t.text == c.transport; }))
      cell.transports.push_back({c.transport, c.transport_class, c.socket()});
    if (c.socket() && c.inter_node.value_or(true)) cell.socket_inter_node = true;
    a.channels = std::max(a.channels, c.channel + 1);
  }
  for (auto& [rank, row] : rows) {
    row.channels.resize(static_cast<size_t>(a.channels));
    a.ranks.push_back(row);
  }
  return a;
}

}  // namespace fabricproof::view
