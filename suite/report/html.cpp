#include "report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/units.hpp"
#include "report/markdown.hpp"
#include "report/soak_view.hpp"
#include "report/views.hpp"

namespace fabricproof {
namespace {

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) { return fmt::format("{:.3g}", v); }

constexpr const char* kStyle = R"(
:root{--pass:#1a7f37;--warn:#b08800;--not_proven:#bc4c00;--fail:#cf222e;--error:#8250df;--skip:#6e7781;--ink:#1f2328;--line:#d0d7de}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);margin:0 auto;max-width:1280px;padding:0 20px 40px}
h1{margin:.2em 0}h2{border-bottom:1px solid var(--line);padding-bottom:4px;margin-top:2em}
.banner{color:#fff;padding:18px 24px;border-radius:8px;margin:16px 0;display:flex;gap:24px;align-items:baseline;flex-wrap:wrap}
.banner .v{font-size:32px;font-weight:700;letter-spacing:1px}
.pass{background:var(--pass)}.warn{background:var(--warn)}.not_proven{background:var(--not_proven)}.fail{background:var(--fail)}.error{background:var(--error)}.skip{background:var(--skip)}
.tag{color:#fff;border-radius:4px;padding:1px 6px;font-size:12px;font-weight:600;white-space:nowrap}
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid var(--line);padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f6f8fa}table.sortable th{cursor:pointer}table.sortable th:after{content:" \2195";color:#8c959f}
td.num{text-align:right;font-variant-numeric:tabular-nums}
nav a{margin-right:12px}code{font-size:12px}
.step{border-left:4px solid var(--line);padding:4px 12px;margin:10px 0}.step h3{margin:4px 0}
.chart{margin:10px 18px 10px 0;display:inline-block;vertical-align:top}
svg text{font:11px system-ui,sans-serif;fill:#1f2328}
.tr-net{background:#dafbe1}.tr-socket{background:#ffd8d3;font-weight:700}.tr-p2p{background:#ddf4ff}.tr-shm{background:#fff8c5}
.muted{color:#6e7781}
)";

// Clicking a header sorts by that column; cells with data-sort sort by that value (verdict rank).
constexpr const char* kScript = R"(
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,i){
    th.addEventListener('click',function(){
      var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows),down=th.dataset.dir!=='down';
      th.dataset.dir=down?'down':'up';
      function key(r){var c=r.cells[i];return c.dataset.sort!==undefined?Number(c.dataset.sort):c.textContent;}
      rows.sort(function(a,b){var x=key(a),y=key(b),d=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y));return down?-d:d;});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
)";

std::string tag(Verdict v) { return fmt::format("<span class=\"tag {}\">{}</span>", to_string(v), verdict_label(v)); }

std::string page_head(const std::string& title) {
  return fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><style>{}</style></head><body>\n",
                     esc(title), kStyle);
}

std::string page_tail() { return fmt::format("<script>{}</script>\n</body></html>\n", kScript); }

std::string findings_table(const std::vector<const Finding*>& rows, const char* id) {
  std::string h = fmt::format("<table class=\"sortable\" id=\"{}\"><thead><tr><th>verdict</th><th>check</th><th>subject</th><th>measured</th>"
                              "<th>expected</th><th>rule</th><th>hint</th></tr></thead><tbody>\n",
                              id);
  for (const auto* f : rows)
    h += fmt::format("<tr class=\"finding\"><td data-sort=\"{}\">{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     static_cast<int>(f->verdict), tag(f->verdict), esc(f->id), esc(f->subject.text()), esc(compact(f->measured)),
                     esc(compact(f->expected)), esc(f->rule), esc(f->hint));
  return h + "</tbody></table>\n";
}

std::string banner(Verdict v, const std::string& label, const std::string& title, const std::string& detail) {
  return fmt::format("<div class=\"banner {}\" id=\"verdict\"><span class=\"v\">{}</span><span>{}</span><span>{}</span></div>\n", to_string(v),
                     label, esc(title), esc(detail));
}

std::string counts_text(const std::vector<Finding>& findings) {
  std::map<Verdict, int> n;
  for (const auto& f : findings) ++n[f.verdict];
  return fmt::format("{} pass, {} warn, {} not proven, {} fail, {} error, {} skip", n[Verdict::pass], n[Verdict::warn], n[Verdict::not_proven],
                     n[Verdict::fail], n[Verdict::error], n[Verdict::skip]);
}

// A generic table from rows of already-escaped cells.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows, const char* cls = "") {
  std::string h = fmt::format("<table class=\"{}\"><thead><tr>", cls);
  for (const auto& c : header) h += "<th>" + esc(c) + "</th>";
  h += "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    h += "<tr>";
    for (const auto& c : r) h += "<td>" + c + "</td>";
    h += "</tr>\n";
  }
  return h + "</tbody></table>\n";
}

// Heatmap of one verbs matrix: greener is better relative to the best cell; grey cross = no
// figure (reason in the tooltip); red outline = a failing finding names the cell.
std::string heatmap(const view::Matrix& m) {
  const size_t n = m.labels.size();
  const double cw = 64, ch = 30, left = 130, top = 24;
  double best = 0;
  for (const auto& row : m.cells)
    for (const auto& c : row)
      if (c.value) best = best == 0 ? *c.value : (m.lower_is_better ? std::min(best, *c.value) : std::max(best, *c.value));
  const double width = left + cw * static_cast<double>(n) + 10, height = top + ch * static_cast<double>(n) + 6;
  std::string s = fmt::format("<figure class=\"chart\"><figcaption><b>{}</b></figcaption><svg class=\"heatmap\" data-test=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" "
                              "width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">\n",
                              esc(m.title), esc(m.test), width, height, width, height);
  for (size_t k = 0; k < n; ++k)
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", left + cw * (static_cast<double>(k) + 0.5), top - 8, k);
  for (size_t i = 0; i < n; ++i) {
    const double y = top + ch * static_cast<double>(i);
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} {}</text>", left - 6, y + ch / 2 + 4, esc(m.labels[i]), i);
    for (size_t k = 0; k < n; ++k) {
      const auto& c = m.cells[i][k];
      const double x = left + cw * static_cast<double>(k);
      if (c.diagonal) {
        s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f0f0f0\"/>", x, y, cw - 2, ch - 2);
        continue;
      }
      std::string cls = "cell", fill = "#57606a", text = "&#215;", tip = m.labels[i] + " -> " + m.labels[k] + ": ";
      if (c.value) {
        const double rel = best <= 0 ? 0 : (m.lower_is_better ? best / *c.value : *c.value / best);
        const double hue = 120 * std::clamp((rel - 0.5) / 0.5, 0.0, 1.0);  // half the best or worse: red
        fill = fmt::format("hsl({:.0f},65%,{}%)", hue, 72);
        text = num(*c.value);
        tip += num(*c.value);
      } else {
        cls += " nofigure";
        tip += c.reason;
      }
      if (c.flagged) cls += " flagged";
      s += fmt::format("<g><title>{}</title><rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}/>"
                       "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\"{}>{}</text></g>",
                       esc(tip), cls, x, y, cw - 2, ch - 2, fill, c.flagged ? " stroke=\"#cf222e\" stroke-width=\"3\"" : "", x + cw / 2 - 1,
                       y + ch / 2 + 3, c.value ? "" : " style=\"fill:#fff\"", text);
    }
    s += "\n";
  }
  return s + fmt::format("</svg><figcaption class=\"muted\">Rows: from (writer, sender); columns: to. Green: near the {} cell;<br>"
                         "grey &#215;: no figure (hover for why); red outline: a failing finding.</figcaption></figure>\n",
                         m.lower_is_better ? "lowest" : "highest");
}

const char* kColors[] = {"#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83"};

// busbw against message size, log2 x, one polyline and its points per node count.
std::string sweep_chart(const view::SweepChart& c) {
  const double w = 640, h = 300, l = 60, r = 140, t = 16, b = 40;
  double xmin = 0, xmax = 0, ymax = 0;
  for (const auto& s : c.series)
    for (const auto& [bytes, busbw] : s.points) {
      xmin = xmin == 0 ? bytes : std::min(xmin, bytes);
      xmax = std::max(xmax, bytes);
      ymax = std::max(ymax, busbw);
    }
  if (xmin <= 0 || xmax <= xmin) xmax = xmin * 2 + 2, xmin = std::max(1.0, xmin);
  if (ymax <= 0) ymax = 1;
  const auto X = [&](double bytes) { return l + (w - l - r) * (std::log2(bytes) - std::log2(xmin)) / (std::log2(xmax) - std::log2(xmin)); };
  const auto Y = [&](double v) { return t + (h - t - b) * (1 - v / (ymax * 1.05)); };
  std::string s = fmt::format("<figure class=\"chart\"><figcaption><b>{} {}</b>: {} vs message size</figcaption>"
                              "<svg class=\"sweep\" data-engine=\"{}\" data-op=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">\n",
                              esc(c.engine), esc(c.op), esc(c.quantity), esc(c.engine), esc(c.op), w, h, w, h);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#8c959f\"/><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#8c959f\"/>", l, h - b, w - r, h - b,
                   l, t, l, h - b);
  const int decades = static_cast<int>(std::round(std::log2(xmax) - std::log2(xmin)));
  const int step = std::max(1, (decades + 7) / 8);
  for (int k = 0; k <= decades; k += step) {
    const double bytes = xmin * std::pow(2.0, k);
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#eaeef2\"/><text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>", X(bytes), t,
                     h - b, h - b + 14, esc(format_size(static_cast<uint64_t>(bytes))));
  }
  for (int k = 0; k <= 4; ++k) {
    const double v = ymax * 1.05 * k / 4;
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", l - 4, Y(v) + 4, num(v));
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">message size (bytes, log scale)</text>", (l + w - r) / 2, h - 6);
  for (size_t i = 0; i < c.series.size(); ++i) {
    const auto& se = c.series[i];
    const char* color = kColors[i % std::size(kColors)];
    std::string points;
    for (const auto& [bytes, busbw] : se.points) points += fmt::format("{:.1f},{:.1f} ", X(bytes), Y(busbw));
    s += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>", color, points);
    const std::string legend = se.label.empty() ? fmt::format("{} node(s), {} rank(s)", se.nodes, se.ranks) : se.label;
    for (const auto& [bytes, busbw] : se.points)
      s += fmt::format("<circle class=\"pt\" data-nodes=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}, {}: {}</title></circle>", se.nodes,
                       X(bytes), Y(busbw), color, esc(legend), esc(format_size(static_cast<uint64_t>(bytes))), num(busbw));
    s += fmt::format("<text x=\"{}\" y=\"{}\" style=\"fill:{}\">{}</text>\n", w - r + 8, t + 14 + 16 * static_cast<double>(i), color, esc(legend));
  }
  return s + "</svg></figure>\n";
}

// busbw at one size for 1 -> 2 -> 4 nodes as bars, the group's NIC ceiling as a dashed mark.
std::string scaling_chart(const view::ScalingChart& c) {
  const double w = 360, h = 260, l = 60, t = 16, b = 40, slot = 80;
  double ymax = 0;
  for (const auto& p : c.points) ymax = std::max({ymax, p.busbw_GBps.value_or(0), p.ceiling_GBps.value_or(0)});
  if (ymax <= 0) ymax = 1;
  const auto Y = [&](double v) { return t + (h - t - b) * (1 - v / (ymax * 1.1)); };
  std::string s = fmt::format("<figure class=\"chart\"><figcaption><b>{} {}</b> at {}: busbw (GB/s) by node count; dashed: NIC ceiling</figcaption>"
                              "<svg class=\"scaling\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">\n",
                              esc(c.engine), esc(c.op), esc(format_size(static_cast<uint64_t>(c.bytes))), w, h, w, h);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#8c959f\"/>", l, h - b, w - 10, h - b);
  for (int k = 0; k <= 4; ++k) {
    const double v = ymax * 1.1 * k / 4;
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", l - 4, Y(v) + 4, num(v));
  }
  for (size_t i = 0; i < c.points.size(); ++i) {
    const auto& p = c.points[i];
    const double x = l + 20 + slot * static_cast<double>(i);
    if (p.busbw_GBps)
      s += fmt::format("<rect class=\"bar\" data-nodes=\"{}\" x=\"{}\" y=\"{:.1f}\" width=\"40\" height=\"{:.1f}\" fill=\"#0969da\"><title>{} node(s): {} GB/s</title></rect>"
                       "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>",
                       p.nodes, x, Y(*p.busbw_GBps), h - b - Y(*p.busbw_GBps), p.nodes, num(*p.busbw_GBps), x + 20, Y(*p.busbw_GBps) - 4, num(*p.busbw_GBps));
    if (p.ceiling_GBps)
      s += fmt::format("<line class=\"ceiling\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#cf222e\" stroke-width=\"2\" stroke-dasharray=\"5,3\">"
                       "<title>NIC ceiling {} GB/s</title></line>",
                       x - 10, Y(*p.ceiling_GBps), x + 50, Y(*p.ceiling_GBps), num(*p.ceiling_GBps));
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{} node(s)</text>\n", x + 20, h - b + 16, p.nodes);
  }
  return s + "</svg></figure>\n";
}

// Per node: one flow against parallel flows (alone) and all nodes together, as bars on one scale,
// with the node's share of the ingest need as a dashed mark: one flow short of the mark while
// parallel flows pass it is the seed's "open parallel streams".
std::string uplink_chart(const UplinkSection& u) {
  const double row = 54, l = 90, r = 20, w = 560, t = 20;
  const double h = t + row * static_cast<double>(u.nodes.size()) + 24;
  const double share = u.need_gbps ? *u.need_gbps / static_cast<double>(std::max<size_t>(1, u.nodes.size())) : 0;
  double xmax = share;
  for (const auto& n : u.nodes) xmax = std::max({xmax, n.single.gbps, n.parallel.gbps, n.together.gbps});
  if (xmax <= 0) xmax = 1;
  const auto X = [&](double v) { return l + (w - l - r) * v / (xmax * 1.1); };
  std::string s = fmt::format("<figure class=\"chart\"><figcaption><b>Uplink ingest per node (Gb/s)</b>: 1 flow, parallel flows, all nodes together"
                              "{}</figcaption><svg class=\"uplink\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">\n",
                              share > 0 ? "; dashed: the node's share of the need" : "", w, h, w, h);
  const std::pair<const char*, const char*> kinds[] = {{"single", "#8c959f"}, {"parallel", "#0969da"}, {"together", "#1a7f37"}};
  for (size_t i = 0; i < u.nodes.size(); ++i) {
    const auto& n = u.nodes[i];
    const double y = t + row * static_cast<double>(i);
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", l - 6, y + 26, esc(n.host));
    const UplinkFlows* flows[] = {&n.single, &n.parallel, &n.together};
    for (size_t k = 0; k < 3; ++k) {
      const auto& f = *flows[k];
      if (f.status != Status::ok) continue;
      const std::string label = k == 0 ? "1 flow" : k == 1 ? fmt::format("{} flows", f.flows) : "together";
      s += fmt::format("<rect class=\"bar\" data-node=\"{}\" data-kind=\"{}\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"14\" fill=\"{}\">"
                       "<title>{} {}: {} Gb/s</title></rect><text x=\"{:.1f}\" y=\"{}\">{} {}</text>",
                       esc(n.host), kinds[k].first, l, y + 16 * static_cast<double>(k), X(f.gbps) - l, kinds[k].second, esc(n.host), label,
                       num(f.gbps), X(f.gbps) + 4, y + 16 * static_cast<double>(k) + 11, label, num(f.gbps));
    }
    if (share > 0)
      s += fmt::format("<line class=\"share\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#cf222e\" stroke-width=\"2\" "
                       "stroke-dasharray=\"5,3\"><title>share of the need: {} Gb/s</title></line>",
                       X(share), y - 2, X(share), y + 48, num(share));
  }
  return s + "</svg></figure>\n";
}

std::string uplink_section(const UplinkSection& u) {
  std::string h = "<h2 id=\"uplink\">Uplink</h2>\n";
  std::string targets;
  for (const auto& t : u.targets) targets += (targets.empty() ? "" : ", ") + t;
  h += fmt::format("<p>TCP ingest from {} (iperf3 -R), {} s per measurement; need: {}.{}</p>\n", esc(targets), num(u.seconds),
                   u.need_gbps ? num(*u.need_gbps) + " Gb/s (" + esc(u.need_source) + ")" : std::string("not given"),
                   u.together_skipped.empty() ? "" : " All nodes together: not run, " + esc(u.together_skipped) + ".");
  h += uplink_chart(u);
  std::vector<std::vector<std::string>> rows;
  auto shown = [](const UplinkFlows& f) { return f.status == Status::ok ? num(f.gbps) : esc(to_string(f.status) + ": " + f.reason); };
  for (const auto& n : u.nodes)
    rows.push_back({esc(n.host), esc(n.target), esc(n.path.error.empty() ? n.path.interface : "error: " + n.path.error), n.path.rdma ? "<b>yes</b>" : "no",
                    n.path.link_gbps ? num(*n.path.link_gbps) : "-", shown(n.single), shown(n.parallel), std::to_string(n.parallel.flows),
                    u.together_skipped.empty() ? shown(n.together) : "-"});
  return h + table({"node", "target", "interface", "data fabric", "link (Gb/s)", "1 flow", "parallel", "flows", "together"}, rows);
}

// One port's time line: the load through it pass by pass (a line; a failed figure counts 0) and
// its counter events (red: the link went down; orange: an error counter moved), on the soak's time.
std::string port_timeline_chart(const view::PortTimeline& t, double seconds) {
  const double w = 560, h = 90, l = 50, r = 10, top = 10, bottom = 20;
  double ymax = 0;
  for (const auto& [at, v] : t.throughput) ymax = std::max(ymax, v);
  if (ymax <= 0) ymax = 1;
  seconds = std::max(seconds, 1.0);
  const auto X = [&](double at) { return l + (w - l - r) * std::clamp(at / seconds, 0.0, 1.0); };
  const auto Y = [&](double v) { return top + (h - top - bottom) * (1 - v / (ymax * 1.1)); };
  std::string s = fmt::format("<figure class=\"chart\"><figcaption><b>{}/{}:{}</b>: Gb/s through its pairs per pass; red: link down, orange: "
                              "errors</figcaption><svg class=\"soak-port\" data-port=\"{}/{}:{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
                              "height=\"{}\" viewBox=\"0 0 {} {}\">\n",
                              esc(t.host), esc(t.device), t.port, esc(t.host), esc(t.device), t.port, w, h, w, h);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><text x=\"{}\" y=\"{}\">0:00</text><text x=\"{}\" y=\"{}\" "
                   "text-anchor=\"end\">{}</text>",
                   l - 4, top + 8, num(ymax), l, h - 4, w - r, h - 4, format_soak_time(seconds));
  std::string points;
  for (const auto& [at, v] : t.throughput) points += fmt::format("{:.1f},{:.1f} ", X(at), Y(v));
  if (!points.empty()) s += fmt::format("<polyline fill=\"none\" stroke=\"#0969da\" stroke-width=\"2\" points=\"{}\"/>", points);
  for (const auto& e : t.events)
    s += fmt::format("<rect class=\"{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" opacity=\"0.5\"><title>{}-{}: {}</title></rect>",
                     e.link_down ? "link-down" : "errors", X(e.from_s), top, std::max(2.0, X(e.to_s) - X(e.from_s)), h - top - bottom,
                     e.link_down ? "#cf222e" : "#bf8700", format_soak_time(e.from_s), format_soak_time(e.to_s), esc(e.what));
  return s + "</svg></figure>\n";
}

std::string soak_section(const SoakSection& soak) {
  std::string h = "<h2 id=\"soak\">Soak (burn-in)</h2>\n";
  h += fmt::format("<p>{} of {} ({}), started {}; {} pass(es); counters sampled every {} ({} sample(s)). Load: {}.</p>\n", format_soak_time(soak.ran_s),
                   format_soak_time(soak.duration_s), soak.finished ? "finished" : "<b>cut short or still running</b>", esc(soak.started_at),
                   soak.passes.size(), format_soak_time(soak.interval_s), soak.samples.size(), esc(soak.load));
  for (const auto& why : soak.load_not_run) h += "<p class=\"not-proven\">Not run: " + esc(why) + "</p>\n";
  constexpr size_t kCharts = 64;  // ports beyond: their events are in the table
  const auto events = view::soak_events(soak);
  const auto timelines = view::soak_port_timelines(soak, events);
  for (size_t i = 0; i < timelines.size() && i < kCharts; ++i) h += port_timeline_chart(timelines[i], soak.ran_s);
  if (timelines.size() > kCharts) h += fmt::format("<p class=\"muted\">{} more port(s): their events are in the table.</p>\n", timelines.size() - kCharts);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : view::soak_series(soak))
    rows.push_back({esc(r.what), esc(r.unit), std::to_string(r.passes_ok), std::to_string(r.failed), num(r.median), num(r.worst)});
  h += table({"series", "unit", "passes ok", "failed", "median", "worst"}, rows);
  std::vector<std::vector<std::string>> event_rows;
  for (const auto& e : events)
    event_rows.push_back({esc(format_soak_time(e.from_s) + "-" + format_soak_time(e.to_s) + " (" + e.time + ")"), esc(e.host + "/" + e.device + ":" + std::to_string(e.port)),
                      (e.link_down ? "<b>link down</b>: " : "") + esc(e.what)});
  return h + "<h3>Counter events (traffic counters left out)</h3>\n" + (event_rows.empty() ? "<p>No error counter moved and no link went down.</p>\n" : table({"when", "port", "what"}, event_rows));
}

// The colour of a transport, from the class the NCCL log parser decided.
std::string css_class(const view::ChannelTransport& t) {
  if (t.socket) return "tr-socket";
  switch (t.transport_class) {
    case nccl::TransportClass::net:
    case nccl::TransportClass::collnet: return "tr-net";
    case nccl::TransportClass::shm: return "tr-shm";
    default: return "tr-p2p";
  }
}

std::string nccl_section(const view::NcclAudit& a) {
  std::string h = fmt::format("<p>NCCL {}; socket fallback: <b>{}</b>. Each cell: the transports a rank's channel used "
                              "(red: NET/Socket to another node).</p>\n",
                              esc(a.version.empty() ? "version not printed" : a.version), a.socket_fallback_text());
  h += "<table class=\"nccl\"><thead><tr><th>rank</th><th>host</th>";
  for (int c = 0; c < a.channels; ++c) h += fmt::format("<th>ch {}</th>", c);
  h += "</tr></thead><tbody>\n";
  for (const auto& r : a.ranks) {
    h += fmt::format("<tr class=\"nccl-rank\"><td>{}</td><td>{}</td>", r.rank, esc(r.host));
    for (const auto& c : r.channels) {
      std::string text, cls;
      for (const auto& t : c.transports) {
        text += (text.empty() ? "" : "<br>") + esc(t.text);
        if (cls.empty() || t.socket) cls = css_class(t);
      }
      h += fmt::format("<td class=\"channel {}\">{}</td>", c.transports.empty() ? "" : cls, text.empty() ? "-" : text);
    }
    h += "</tr>\n";
  }
  return h + "</tbody></table>\n";
}

std::string inventory_section(const Report& r) {
  std::string h = "<h3>Nodes</h3>";
  std::vector<std::vector<std::string>> rows;
  for (const auto& n : r.nodes) {
    const auto& s = n.software;
    rows.push_back({esc(n.host), std::to_string(n.ranks.size()), std::to_string(n.rdma_devices.size()), std::to_string(n.gpus.size()), esc(s.os),
                    esc(s.kernel), esc(s.mlx5_core.loaded ? s.mlx5_core.flavor + " " + s.mlx5_core.version : "not loaded"), esc(s.ofed_version),
                    esc(s.rdma_core_version), esc(s.nvidia_driver), esc(s.cuda_driver + " / " + s.cuda_runtime), esc(s.nccl), esc(s.open_mpi),
                    s.nvidia_peermem.loaded ? "loaded" : "not loaded", fmt::format("{:.3f}", n.clock_offset_s)});
  }
  h += table({"host", "ranks", "RDMA devices", "GPUs", "OS", "kernel", "mlx5_core", "OFED", "rdma-core", "NVIDIA driver", "CUDA driver / runtime",
              "NCCL", "Open MPI", "nvidia_peermem", "clock offset (s)"},
             rows);
  rows.clear();
  for (const auto& n : r.nodes)
    for (const auto& d : n.rdma_devices)
      for (const auto& p : d.ports)
        rows.push_back({esc(n.host), esc(d.name), std::to_string(p.port), esc(p.state), esc(p.phys_state),
                        p.rate_gbps ? fmt::format("{:g} ({} {})", *p.rate_gbps, esc(p.width), esc(p.speed_name)) : "-", esc(p.link_layer),
                        view::or_dash(p.active_mtu), p.netdev.empty() ? "-" : esc(p.netdev) + " (" + view::or_dash(p.netdev_mtu) + ")", view::or_dash(p.roce_v2_gid_index),
                        esc(p.qos.traffic_class)});
  h += "<h3>RDMA ports</h3>" + table({"node", "device", "port", "state", "physical", "rate (Gb/s)", "link layer", "active MTU", "netdev (MTU)",
                                      "RoCE v2 GID", "traffic class"},
                                     rows);
  rows.clear();
  for (const auto& c : view::components(r))
    rows.push_back({esc(c.host), esc(c.kind), esc(c.name), esc(c.slot), esc(c.model), esc(c.serial.empty() ? "-" : c.serial), esc(c.firmware),
                    "<code>" + esc(c.guid) + "</code>", esc(c.numa)});
  h += "<h3 id=\"components\">Component identity (birth certificate)</h3>" +
       table({"node", "kind", "name", "PCI slot", "model / part number", "serial", "firmware / driver", "node GUID / GPU UUID", "NUMA"}, rows);
  return h;
}

}  // namespace

namespace {

// The verdict banner, where the run stands, and the head table.
std::string head_section(const Report& r) {
  std::vector<std::string> hosts;
  for (const auto& n : r.nodes) hosts.push_back(n.host);
  std::string h = page_head(fmt::format("fabricproof {}: {}", r.verdict_label(), fmt::join(hosts, ", ")));
  h += "<h1>fabricproof acceptance report</h1>\n";
  // An unfinished run shows as an error banner: nothing in it may read as a pass.
  h += banner(r.finished ? r.verdict : Verdict::error, r.verdict_label(), fmt::format("{} node(s), {} rank(s)", r.nodes.size(), r.world_size),
              counts_text(r.findings));
  if (const auto line = r.not_proven_line(); !line.empty())
    h += fmt::format("<p class=\"not-proven\" id=\"not-proven\"><b>Not proven:</b> {}.</p>\n", esc(line));
  if (!r.finished && r.in_flight)
    h += fmt::format("<p class=\"incomplete\"><b>This run has not finished.</b> In flight: {}: {} (since {}). The results so far are below.</p>\n",
                     esc(r.in_flight->phase), esc(r.in_flight->step), esc(r.in_flight->since));
  h += "<nav><a href=\"#triage\">What to check first</a><a href=\"#verbs\">Verbs matrix</a><a href=\"#collectives\">Collectives</a>"
       "<a href=\"#uplink\">Uplink</a><a href=\"#soak\">Soak</a><a href=\"#nccl\">NCCL audit</a><a href=\"#findings\">Findings</a><a href=\"#inventory\">Inventory</a><a href=\"#phases\">Phases</a></nav>\n";
  std::vector<std::string> built;
  if (r.build)
    for (const auto& [part, built_in] : r.build->optional_parts) built.push_back(part + ": " + (built_in ? "yes" : "no"));
  const std::string profile = r.profile ? r.profile->name : "";
  return h + table({"", ""}, {{"Started", esc(r.started_at)},
                              {"Finished", esc(r.finished_at)},
                              {"Nodes", esc(fmt::format("{}", fmt::join(hosts, ", ")))},
                              {"Ranks", fmt::format("{}{}", r.world_size, r.missing_ranks.empty() ? "" : fmt::format(" ({} did not answer)", r.missing_ranks.size()))},
                              {"Profile", esc(profile)},
                              {"Built with", esc(fmt::format("{}", fmt::join(built, ", ")))},
                              {"Command", "<code>" + esc(fmt::format("{}", fmt::join(r.command, " "))) + "</code>"}});
}

std::string triage_section(const Report& r) {
  std::string h = "<h2 id=\"triage\">What to check first</h2>\n";
  const auto steps = view::triage(r);
  if (steps.empty()) h += "<p>Nothing: every check passed or was skipped with its reason.</p>\n";
  for (const auto& s : steps) {
    h += fmt::format("<div class=\"step\"><h3>{}</h3><p>{}</p><ul>", esc(s.title), esc(s.advice));
    constexpr size_t kShown = 5;  // the rest are in the findings table
    for (size_t i = 0; i < s.findings.size() && i < kShown; ++i) {
      const auto* f = s.findings[i];
      h += fmt::format("<li>{} <code>{}</code> {}{}</li>", tag(f->verdict), esc(f->id), esc(f->subject.text()), f->hint.empty() ? "" : ": " + esc(f->hint));
    }
    if (s.findings.size() > kShown) h += fmt::format("<li class=\"muted\">and {} more in the findings table</li>", s.findings.size() - kShown);
    h += "</ul></div>\n";
  }
  return h;
}

// A locate answer: its lines, then what it exercised, so a pass claims no more.
std::string locate_list(const view::LocateView& locate, const std::string& title) {
  std::string h = "<h3>" + esc(title) + "</h3>\n<ul>";
  for (const auto& a : locate.answers) h += "<li>" + esc(a) + "</li>";
  return h + "</ul>\n<p>Exercised: " + esc(locate.exercised) + ". A pass from locate proves no more than these tests.</p>\n";
}

// The verbs matrices, GPUDirect, the sweeps, the uplink and the NCCL audit.
std::string measurement_sections(const Report& r) {
  std::string h = "<h2 id=\"verbs\">RDMA verbs matrix</h2>\n";
  const auto mats = view::matrices(r);
  if (const auto locate = r.verbs ? view::verbs_locate(*r.verbs) : view::LocateView{}; locate.present) {
    h += locate_list(locate, "Locate (--verbs-mode locate)");
  } else if (mats.empty()) {
    h += "<p>No verbs measurements in this report (see Phases for the reason).</p>\n";
  }
  for (const auto& m : mats) h += heatmap(m);
  if (r.gpudirect) {
    std::vector<std::vector<std::string>> rows;
    auto figure = [](const std::optional<double>& v) { return v ? num(*v) : std::string("-"); };
    for (const auto& c : r.gpudirect->comparison)
      rows.push_back({esc(c.pair), figure(c.host_gbps), figure(c.gpu_gbps), figure(c.ratio),
                      esc(to_string(c.gpu_status) + (c.gpu_reason.empty() ? "" : ": " + c.gpu_reason))});
    h += "<h3>GPUDirect RDMA: GPU memory against host memory (write_bw, Gb/s)</h3>" + table({"pair", "host", "GPU", "GPU / host", "GPU status"}, rows);
  }

  const auto curve = r.verbs ? view::verbs_curve(*r.verbs) : std::vector<view::CurveRow>{};
  if (!curve.empty()) h += "<h3>Verbs: RDMA WRITE bandwidth by message size (--verbs-sizes)</h3>\n" + sweep_chart(view::verbs_curve_chart(curve));

  h += "<h2 id=\"collectives\">Collective sweeps</h2>\n";
  const auto charts = view::sweeps(r);
  const auto located = r.collectives ? view::collective_locate(*r.collectives) : view::LocateView{};
  if (located.present) h += locate_list(located, "Locate (--collective-mode locate)");
  if (charts.empty() && !located.present) h += "<p>No collective sweeps in this report (see Phases for the reason).</p>\n";
  for (const auto& c : charts) h += sweep_chart(c);
  const auto scaling = view::scaling(r);
  if (!scaling.empty()) h += "<h3>Scaling 1 &#8594; 2 &#8594; 4 nodes</h3>\n";
  for (const auto& c : scaling) h += scaling_chart(c);

  h += r.uplink ? uplink_section(*r.uplink)
                : "<h2 id=\"uplink\">Uplink</h2>\n<p>No uplink measurement in this run (on request: "
                  "<code>--phases ...,uplink --uplink-target HOST[:PORT]</code>).</p>\n";

  if (r.soak) h += soak_section(*r.soak);

  h += "<h2 id=\"nccl\">NCCL transport audit</h2>\n";
  const auto audit = view::nccl_audit(r);
  return h + (audit.present ? nccl_section(audit) : "<p>No NCCL logs audited in this run (see Phases for the reason).</p>\n");
}

std::string phases_section(const Report& r) {
  std::string h = "<h2 id=\"phases\">Phases</h2>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : r.phases) rows.push_back({esc(p.name), tag(p.verdict), fmt::format("{:.1f}", p.duration_s), esc(p.reason)});
  h += table({"phase", "verdict", "duration (s)", "reason"}, rows);
  rows.clear();
  for (const auto& n : r.nodes)
    for (const auto& a : n.absent) rows.push_back({esc(n.host), esc(a.what), esc(a.reason)});
  h += "<h3>Absent, with the reason</h3>" + table({"node", "what", "reason"}, rows);
  rows.clear();
  for (const auto& p : r.rank_map) rows.push_back({std::to_string(p.rank), esc(p.host), std::to_string(p.local_rank), view::or_dash(p.gpu), esc(p.gpu_uuid)});
  return h + "<h3>Rank map</h3>" + table({"rank", "host", "local rank", "GPU", "GPU UUID"}, rows);
}

}  // namespace

std::string render_html(const Report& r) {
  std::string h = head_section(r) + triage_section(r) + measurement_sections(r);
  h += "<h2 id=\"findings\">Findings</h2><p class=\"muted\">Worst first; click a column header to sort.</p>\n" + findings_table(worst_first(r.findings), "findings-table");
  h += "<h2 id=\"inventory\">Inventory</h2>\n" + inventory_section(r);
  return h + phases_section(r) + page_tail();
}

std::string render_findings_html(const std::string& title, Verdict verdict, const std::string& intro, const std::vector<Finding>& findings) {
  std::string h = page_head(title);
  h += fmt::format("<h1>{}</h1>\n", esc(title));
  h += banner(verdict, verdict_label(verdict), intro, counts_text(findings));
  h += "<h2 id=\"findings\">Findings</h2>\n" + findings_table(worst_first(findings), "findings-table");
  return h + page_tail();
}

}  // namespace fabricproof
