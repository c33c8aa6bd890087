#include "report/markdown.hpp"

#include "report/soak_view.hpp"
#include "report/views.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/units.hpp"
#include "launch/launch.hpp"

namespace fabricproof {
namespace {

std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out.empty() ? "-" : out;
}

std::string pcie_text(const PcieLink& l) {
  if (!l.current_width) return "-";
  auto gen = [](std::optional<int> g, std::optional<double> gts) {
    return g ? fmt::format("Gen{}", *g) : gts ? fmt::format("{} GT/s", *gts) : std::string("?");
  };
  return fmt::format("{} x{} (max {} x{})", gen(l.current_gen, l.current_gts), *l.current_width,
                     gen(l.max_gen, l.max_gts), view::or_dash(l.max_width));
}

void findings_table(std::string& md, const std::vector<const Finding*>& rows) {
  md += "| verdict | check | subject | measured | expected | rule | hint |\n|---|---|---|---|---|---|---|\n";
  for (const auto* f : rows)
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", verdict_label(f->verdict), cell(f->id), cell(f->subject),
                      cell(compact(f->measured)), cell(compact(f->expected)), cell(f->rule), cell(f->hint));
}

std::string gbps_cell(const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : "-"; }

// The sweeps: busbw per node count at the largest size every group ran, then each sweep's peak.
void collectives_tables(std::string& md, const CollectivesSection& c) {
  md += fmt::format("\n## Collective sweeps ({} engine)\n\n", cell(c.engine));
  if (!c.clip.reason.empty()) md += fmt::format("Top size: {}.\n\n", cell(c.clip.reason));
  if (!c.results.empty())
    md += fmt::format("Time per call: {} (`--time-stat`; nccl-tests averages the ranks by default).\n\n",
                      c.results[0].time_stat == "max" ? "the slowest rank's" : "the average of the ranks");
  if (!c.results.empty() && !c.results[0].timing.empty()) md += fmt::format("Timed by {}.\n\n", cell(c.results[0].timing));
  md += "| engine | op | bytes | nodes: busbw (GB/s), x of 1 node |\n|---|---|---|---|\n";
  for (const auto& s : c.scaling) {
    std::vector<std::string> groups;
    for (const auto& g : s.groups)
      groups.push_back(fmt::format("{}: {}{}", g.nodes, gbps_cell(g.busbw_GBps), g.vs_one_node ? fmt::format(" ({:.2f}x)", *g.vs_one_node) : ""));
    md += fmt::format("| {} | {} | {} | {} |\n", cell(s.engine), cell(s.op), s.bytes, cell(fmt::format("{}", fmt::join(groups, "; "))));
  }
  md += "\n| engine | op | nodes | ranks | status | sizes | top size | busbw at top (GB/s) | peak busbw (GB/s) |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& res : c.results) {
    const CollRow* top = res.rows.empty() ? nullptr : &res.rows.back();
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(res.engine), cell(res.op), res.nodes, res.ranks,
                      cell(to_string(res.status) + (res.reason.empty() ? "" : ": " + res.reason)), res.rows.size(), top ? std::to_string(top->bytes) : "",
                      gbps_cell(top ? std::optional(top->out_of_place.busbw_GBps) : std::nullopt), gbps_cell(std::optional(res.peak_busbw_GBps)));
  }
}

void gpudirect_table(std::string& md, const GpudirectSection& g) {
  md += "\n## GPUDirect RDMA: GPU memory against host memory (write_bw, Gb/s)\n\n| pair | host | GPU | GPU / host | GPU status |\n|---|---|---|---|---|\n";
  for (const auto& c : g.comparison)
    md += fmt::format("| {} | {} | {} | {} | {} |\n", cell(c.pair), gbps_cell(c.host_gbps), gbps_cell(c.gpu_gbps), gbps_cell(c.ratio),
                      cell(to_string(c.gpu_status) + (c.gpu_reason.empty() ? "" : ": " + c.gpu_reason)));
}

// A verbs matrix: rows send, columns receive; "x" marks no figure, "!" a cell a failing finding names.
std::string flows_cell(const UplinkFlows& f) {
  if (f.status != Status::ok) return cell(to_string(f.status) + (f.reason.empty() ? "" : ": " + f.reason) + busy_retries_note(f));
  std::string text = fmt::format("{:.3f}", f.gbps);
  if (f.per_flow_gbps.size() > 1)
    text += fmt::format(" ({:.3f}-{:.3f} per flow)", *std::min_element(f.per_flow_gbps.begin(), f.per_flow_gbps.end()),
                        *std::max_element(f.per_flow_gbps.begin(), f.per_flow_gbps.end()));
  return text + busy_retries_note(f);
}

void uplink_table(std::string& md, const UplinkSection& u) {
  md += "\n## Uplink: TCP ingest from the storage target (Gb/s)\n\n";
  md += fmt::format("Targets {}; {} s per measurement; need {}.{}\n\n", cell(fmt::format("{}", fmt::join(u.targets, ", "))), u.seconds,
                    u.need_gbps ? fmt::format("{:.4g} Gb/s ({})", *u.need_gbps, cell(u.need_source)) : std::string("not given"),
                    u.together_skipped.empty() ? "" : " All nodes together: not run, " + cell(u.together_skipped) + ".");
  md += "| node | target | interface | data fabric | link (Gb/s) | 1 flow | parallel flows | flows | all together |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& n : u.nodes)
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(n.host), cell(n.target),
                      cell(n.path.error.empty() ? n.path.interface + (n.path.links.empty() ? "" : fmt::format(" ({})", fmt::join(n.path.links, "+")))
                                                : "error: " + n.path.error),
                      n.path.rdma ? "**yes**" : "no", n.path.link_gbps ? fmt::format("{:.4g}", *n.path.link_gbps) : "-", flows_cell(n.single),
                      flows_cell(n.parallel), n.parallel.flows, u.together_skipped.empty() ? flows_cell(n.together) : "-");
}

// The soak: how far it got, each load series pass by pass, and the counter events on the time line.
void soak_tables(std::string& md, const SoakSection& soak) {
  md += fmt::format("\n## Soak (burn-in)\n\n{} of {} ({}), started {}; {} pass(es); counters sampled every {} ({} sample(s)). Load: {}.\n",
                    format_soak_time(soak.ran_s), format_soak_time(soak.duration_s), soak.finished ? "finished" : "**cut short or still running**",
                    cell(soak.started_at), soak.passes.size(), format_soak_time(soak.interval_s), soak.samples.size(), cell(soak.load));
  for (const auto& why : soak.load_not_run) md += fmt::format("\n- Not run: {}\n", cell(why));
  md += "\n| series | unit | passes ok | failed | median | worst |\n|---|---|---|---|---|---|\n";
  for (const auto& row : view::soak_series(soak))
    md += fmt::format("| {} | {} | {} | {} | {:.4g} | {:.4g} |\n", cell(row.what), row.unit, row.passes_ok, row.failed, row.median, row.worst);
  const auto events = view::soak_events(soak);
  md += fmt::format("\n### Counter events ({}; traffic counters left out)\n\n", events.size());
  if (events.empty()) md += "No error counter moved and no link went down.\n";
  else md += "| when | port | what |\n|---|---|---|\n";
  constexpr size_t kShown = 100;  // the rest are in report.json
  for (size_t i = 0; i < events.size() && i < kShown; ++i) {
    const auto& e = events[i];
    md += fmt::format("| {}-{} ({}) | {}/{}:{} | {}{} |\n", format_soak_time(e.from_s), format_soak_time(e.to_s), cell(e.time), cell(e.host), cell(e.device),
                      e.port, e.link_down ? "**link down**: " : "", cell(e.what));
  }
  if (events.size() > kShown) md += fmt::format("\n{} more event(s) in report.json (soak.samples).\n", events.size() - kShown);
}

// How the verbs tests ran and which rank drove each HCA (and why: its NUMA node, its GPU's path).
void verbs_setup(std::string& md, const VerbsSection& v) {
  const auto& o = v.options;
  md += fmt::format("\n## Verbs: how the matrix was measured\n\nRDMA tests of {} bytes, {}, {} QP(s) of depth {}; memory registered {} "
                    "relaxed ordering{}.\n\n| endpoint | port | rank | why this rank |\n|---|---|---|---|\n",
                    o.bw_bytes, o.duration_s > 0 ? fmt::format("{} s per test and direction", o.duration_s) : fmt::format("{} messages", o.iterations),
                    o.qps, o.tx_depth, o.relaxed_ordering ? "with" : "without", o.relaxed_ordering ? " (as perftest)" : "");
  for (const auto& e : v.endpoints)
    md += fmt::format("| {} | {} | {} | {} |\n", cell(e.label()), e.port, e.rank, e.placement.empty() ? "-" : cell(e.placement));
}

// The bandwidth curve (--verbs-sizes): per size, the slowest, median and fastest pair.
void curve_table(std::string& md, const VerbsSection& v) {
  const auto rows = view::verbs_curve(v);
  if (rows.empty()) return;
  md += "\n## Verbs: RDMA WRITE bandwidth by message size (Gb/s)\n\n| size | pairs | slowest | median | fastest | slowest pair |\n|---|---|---|---|---|---|\n";
  for (const auto& r : rows)
    md += fmt::format("| {} | {}{} | {} | {} | {} | {} |\n", format_size(r.bytes), r.pairs, r.not_measured ? fmt::format(" ({} without a figure)", r.not_measured) : "",
                      r.pairs ? fmt::format("{:.3g}", r.slowest) : "-", r.pairs ? fmt::format("{:.3g}", r.median) : "-",
                      r.pairs ? fmt::format("{:.3g}", r.fastest) : "-", cell(r.slowest_pair));
}

void locate_section(std::string& md, const view::LocateView& view, const std::string& title) {
  if (!view.present) return;
  md += "\n## " + title + "\n\n";
  for (const auto& a : view.answers) md += "- " + cell(a) + "\n";
  md += "\nExercised: " + cell(view.exercised) + ". A pass from locate proves no more than these tests.\n";
}

void matrix_table(std::string& md, const view::Matrix& m) {
  md += fmt::format("\n## Verbs matrix: {}\n\n| from \\ to |", m.title);
  for (const auto& l : m.labels) md += fmt::format(" {} |", cell(l));
  md += "\n|---|";
  for (size_t i = 0; i < m.labels.size(); ++i) md += "---|";
  md += "\n";
  for (size_t i = 0; i < m.labels.size(); ++i) {
    md += fmt::format("| {} |", cell(m.labels[i]));
    for (const auto& c : m.cells[i])
      md += c.diagonal ? " |" : c.value ? fmt::format(" {:.3g}{} |", *c.value, c.flagged ? " !" : "") : fmt::format(" x ({}) |", cell(c.reason));
    md += "\n";
  }
}

void nccl_table(std::string& md, const view::NcclAudit& a) {
  md += fmt::format("\n## NCCL transport audit\n\nNCCL {}; socket fallback: **{}**. Transports per rank and channel (`!` NET/Socket to another node).\n\n| rank | host |",
                    a.version.empty() ? "version not printed" : a.version, a.socket_fallback_text());
  for (int c = 0; c < a.channels; ++c) md += fmt::format(" ch {} |", c);
  md += "\n|---|---|";
  for (int c = 0; c < a.channels; ++c) md += "---|";
  md += "\n";
  for (const auto& r : a.ranks) {
    md += fmt::format("| {} | {} |", r.rank, cell(r.host));
    for (const auto& c : r.channels) {
      std::vector<std::string> texts;
      for (const auto& t : c.transports) texts.push_back(t.text);
      md += fmt::format(" {}{} |", cell(fmt::format("{}", fmt::join(texts, ", "))), c.socket_inter_node ? " !" : "");
    }
    md += "\n";
  }
}

}  // namespace

std::string compact(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return fmt::format("{:.6g}", value.get<double>());
  if (value.is_array()) {
    std::vector<std::string> parts;
    for (const auto& v : value) parts.push_back(compact(v));
    return fmt::format("{}", fmt::join(parts, ", "));
  }
  if (value.is_object()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : value.items()) parts.push_back(k + "=" + (v.is_array() ? "[" + compact(v) + "]" : compact(v)));
    return fmt::format("{}", fmt::join(parts, "; "));
  }
  return json_text(value);
}

std::vector<const Finding*> worst_first(const std::vector<Finding>& findings) {
  std::vector<const Finding*> rows;
  for (const auto& f : findings) rows.push_back(&f);
  std::stable_sort(rows.begin(), rows.end(), [](const Finding* a, const Finding* b) { return a->verdict > b->verdict; });
  return rows;
}

std::string render_findings_markdown(const std::vector<const Finding*>& findings) {
  std::string md;
  findings_table(md, findings);
  return md;
}

namespace {

// The head: verdict, when, where, what ran.
void head_table(std::string& md, const Report& r) {
  std::vector<std::string> hosts;
  for (const auto& n : r.nodes) hosts.push_back(n.host);
  std::vector<std::string> built;
  if (r.build)
    for (const auto& [part, built_in] : r.build->optional_parts) built.push_back(part + ": " + (built_in ? "yes" : "no"));
  // The first line says what was not measured: a reader who stops there must not take it for a pass.
  const auto not_proven = r.not_proven_line();
  md += fmt::format("# fabricproof acceptance report: {}{}\n\n", r.verdict_label(), not_proven.empty() ? "" : " (" + cell(not_proven) + ")");
  if (!r.finished)
    md += fmt::format("> **This run has not finished.** In flight: {}{} (since {}). The results so far are below; their verdict so far is {}.\n\n",
                      cell(r.in_flight ? r.in_flight->phase : ""), r.in_flight && !r.in_flight->step.empty() ? ": " + cell(r.in_flight->step) : "",
                      cell(r.in_flight ? r.in_flight->since : ""), verdict_label(r.verdict));
  md += "| | |\n|---|---|\n";
  md += fmt::format("| Verdict | **{}** |\n", r.verdict_label());
  md += fmt::format("| Started | {} |\n| Finished | {} |\n", cell(r.started_at), cell(r.finished_at));
  md += fmt::format("| Nodes | {} ({}) |\n", r.nodes.size(), cell(fmt::format("{}", fmt::join(hosts, ", "))));
  md += fmt::format("| Ranks | {}{} |\n", r.world_size,
                    r.missing_ranks.empty() ? "" : fmt::format(" ({} did not answer: {})", r.missing_ranks.size(), fmt::join(r.missing_ranks, ", ")));
  md += fmt::format("| Profile | {} ({}) |\n", cell(r.profile ? r.profile->name : ""), cell(r.profile ? r.profile->origin : ""));
  md += fmt::format("| Built with | {} |\n", cell(fmt::format("{}", fmt::join(built, ", "))));
  if (r.launcher) md += fmt::format("| Launched by | {} |\n", cell(describe(*r.launcher)));
  md += fmt::format("| Command | `{}` |\n\n", cell(fmt::format("{}", fmt::join(r.command, " "))));

}

// Counts, what needs attention, and where to start in the seed's triage order.
void attention_sections(std::string& md, const Report& r) {
  std::map<Verdict, int> counts;
  for (const auto& f : r.findings) ++counts[f.verdict];
  md += fmt::format("Findings: {} pass, {} warn, {} not proven, {} fail, {} error, {} skip.\n\n", counts[Verdict::pass],
                    counts[Verdict::warn], counts[Verdict::not_proven], counts[Verdict::fail], counts[Verdict::error], counts[Verdict::skip]);

  std::vector<const Finding*> attention;
  for (const auto* f : worst_first(r.findings))
    if (f->verdict >= Verdict::warn) attention.push_back(f);
  md += "## Needs attention\n\n";
  if (attention.empty()) md += "Nothing: every check passed or was skipped with its reason.\n\n";
  else {
    findings_table(md, attention);
    md += "\n";
  }

  md += "## What to check first\n\n";
  const auto steps = view::triage(r);
  if (steps.empty()) md += "Nothing: every check passed or was skipped with its reason.\n\n";
  for (const auto& s : steps) {
    md += fmt::format("### {}\n\n{}\n\n", s.title, s.advice);
    for (const auto* f : s.findings) md += fmt::format("- {} `{}` {}\n", verdict_label(f->verdict), f->id, cell(f->subject));
    md += "\n";
  }

}

// Phases, nodes and their RDMA ports.
void phase_and_node_tables(std::string& md, const Report& r) {
  md += "## Phases\n\n| phase | verdict | duration (s) | reason |\n|---|---|---|---|\n";
  for (const auto& p : r.phases)
    md += fmt::format("| {} | {} | {:.1f} | {} |\n", p.name, verdict_label(p.verdict), p.duration_s, cell(p.reason));

  md += "\n## Nodes\n\n| host | ranks | RDMA devices | GPUs | OS | kernel | mlx5_core | OFED | rdma-core | NVIDIA driver | CUDA driver / runtime | NCCL | Open MPI | nvidia_peermem |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& n : r.nodes) {
    const auto& s = n.software;
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(n.host), n.ranks.size(),
                      n.rdma_devices.size(), n.gpus.size(), cell(s.os), cell(s.kernel),
                      cell(s.mlx5_core.loaded ? s.mlx5_core.flavor + " " + s.mlx5_core.version : "not loaded"), cell(s.ofed_version),
                      cell(s.rdma_core_version), cell(s.nvidia_driver), cell(s.cuda_driver + " / " + s.cuda_runtime), cell(s.nccl),
                      cell(s.open_mpi), s.nvidia_peermem.loaded ? (s.nvidia_peermem_persisted ? "loaded, persisted" : "loaded") : "not loaded");
  }

  md += "\n## RDMA ports\n\n| node | device | port | state | physical | rate (Gb/s) | link layer | active MTU | netdev (MTU) | RoCE v2 GID | firmware | PCI | NUMA | PCIe |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& n : r.nodes)
    for (const auto& d : n.rdma_devices)
      for (const auto& p : d.ports)
        md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(n.host), cell(d.name), p.port,
                          cell(p.state), cell(p.phys_state), p.rate_gbps ? fmt::format("{:g} ({} {})", *p.rate_gbps, p.width, p.speed_name) : "-",
                          cell(p.link_layer), view::or_dash(p.active_mtu), p.netdev.empty() ? "-" : cell(p.netdev + " (" + view::or_dash(p.netdev_mtu) + ")"),
                          view::or_dash(p.roce_v2_gid_index), cell(d.fw_ver), cell(d.pci), view::or_dash(d.numa_node), cell(pcie_text(d.pcie)));

}

// Component identity, GPUs, GPU-HCA paths and what could not be read.
void component_tables(std::string& md, const Report& r) {
  md += "\n## Component identity (birth certificate)\n\n| node | kind | name | PCI slot | model / part number | serial | firmware / driver | node GUID / GPU UUID | NUMA |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : view::components(r))
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(c.host), c.kind, cell(c.name), cell(c.slot), cell(c.model), cell(c.serial),
                      cell(c.firmware), cell(c.guid), cell(c.numa));

  md += "\n## GPUs\n\n| node | index | name | UUID | PCI | NUMA | memory (GiB) | PCIe | DMA-BUF |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& n : r.nodes)
    for (const auto& g : n.gpus)
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(n.host), view::or_dash(g.index), cell(g.name), cell(g.uuid), cell(g.pci),
                        view::or_dash(g.numa_node), g.memory_bytes ? fmt::format("{:.1f}", *g.memory_bytes / 1073741824.0) : "-",
                        cell(pcie_text(g.pcie)), g.dmabuf_supported ? (*g.dmabuf_supported ? "yes" : "no") : "-");

  for (const auto& n : r.nodes) {
    if (!n.topology || n.topology->gpus.empty() || n.topology->hcas.empty()) continue;
    const auto& t = *n.topology;
    md += fmt::format("\n## GPU-HCA paths on {} (hwloc; NCCL calls NODE \"PHB\")\n\n| GPU |", cell(n.host));
    for (const auto& h : t.hcas) md += fmt::format(" {} |", cell(h.name));
    md += "\n|---|";
    for (size_t i = 0; i < t.hcas.size(); ++i) md += "---|";
    md += "\n";
    for (size_t g = 0; g < t.gpus.size() && g < t.classes.size(); ++g)
      md += fmt::format("| {} (NUMA {}) | {} |\n", cell(t.gpus[g].name), view::or_dash(t.gpus[g].numa_node), fmt::join(t.classes[g], " | "));
  }

  md += "\n## Absent, with the reason\n\n| node | what | reason |\n|---|---|---|\n";
  for (const auto& n : r.nodes)
    for (const auto& a : n.absent) md += fmt::format("| {} | {} | {} |\n", cell(n.host), cell(a.what), cell(a.reason));

}

// What the fabric phases measured.
void measurement_tables(std::string& md, const Report& r) {
  if (r.verbs) verbs_setup(md, *r.verbs);
  if (r.verbs) locate_section(md, view::verbs_locate(*r.verbs), "Verbs: locate (--verbs-mode locate)");
  for (const auto& m : view::matrices(r)) matrix_table(md, m);
  if (r.verbs) curve_table(md, *r.verbs);
  if (r.gpudirect) gpudirect_table(md, *r.gpudirect);
  if (r.collectives) collectives_tables(md, *r.collectives);
  if (r.collectives) locate_section(md, view::collective_locate(*r.collectives), "Collectives: locate (--collective-mode locate)");
  if (r.uplink) uplink_table(md, *r.uplink);
  if (r.soak) soak_tables(md, *r.soak);
  if (const auto audit = view::nccl_audit(r); audit.present) nccl_table(md, audit);

}

}  // namespace

std::string render_markdown(const Report& r) {
  std::string md;
  head_table(md, r);
  attention_sections(md, r);
  phase_and_node_tables(md, r);
  component_tables(md, r);
  measurement_tables(md, r);
  md += "\n## Rank map\n\n| rank | host | local rank | GPU |\n|---|---|---|---|\n";
  for (const auto& p : r.rank_map) md += fmt::format("| {} | {} | {} | {} |\n", p.rank, cell(p.host), p.local_rank, view::or_dash(p.gpu));

  md += "\n## All findings\n\n";
  findings_table(md, worst_first(r.findings));
  return md;
}

std::string render_console_summary(const Report& r, size_t max_findings) {
  std::map<Verdict, int> counts;
  for (const auto& f : r.findings) ++counts[f.verdict];
  std::string out = fmt::format("fabricproof: {}  ({} nodes, {} ranks; {} pass, {} warn, {} not proven, {} fail, {} error, {} skip)\n",
                                r.verdict_label(), r.nodes.size(), r.world_size, counts[Verdict::pass], counts[Verdict::warn],
                                counts[Verdict::not_proven], counts[Verdict::fail], counts[Verdict::error], counts[Verdict::skip]);
  if (const auto line = r.not_proven_line(); !line.empty()) out += "  NOT PROVEN: " + line + "\n";
  size_t shown = 0;
  for (const auto* f : worst_first(r.findings)) {
    if (f->verdict < Verdict::warn || shown == max_findings) break;
    out += fmt::format("  {:5}  {:<22} {:<28} measured {} / expected {}\n", verdict_label(f->verdict), f->id, f->subject,
                       compact(f->measured), compact(f->expected));
    ++shown;
  }
  for (const auto& p : r.phases)
    if (p.verdict == Verdict::error || p.verdict == Verdict::skip || p.verdict == Verdict::not_proven)
      out += fmt::format("  phase {} {}: {}\n", p.name, to_string(p.verdict), p.reason);
  if (!r.finished && r.in_flight) out += fmt::format("  not finished: in flight {}: {}\n", r.in_flight->phase, r.in_flight->step);
  return out;
}

}  // namespace fabricproof
