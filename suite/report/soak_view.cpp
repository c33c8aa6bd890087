#include "report/soak_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/statistics.hpp"
#include "soak/soak_rules.hpp"

namespace fabricproof::view {

bool is_background_counter(const std::string& name) {
  // The carrier coming back: the link-down event (carrier_down_count) already marks the flap.
  if (name == "netdev.carrier_changes" || name == "netdev.carrier_up_count") return true;
  // Pause frames too: a lossless RoCE fabric sends them under load by design (report.json keeps them).
  for (const char* word : {"data", "pkts", "packets", "bytes", "rdma_sends", "rdma_recvs", "multicast", "unicast", "pause"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

std::vector<SoakSeriesRow> soak_series(const SoakSection& soak) {
  std::map<std::string, std::vector<const SoakFigure*>> by_what;
  for (const auto& pass : soak.passes)
    for (const auto& f : pass.figures) by_what[f.what].push_back(&f);
  std::vector<SoakSeriesRow> rows;
  for (const auto& [what, figures] : by_what) {
    SoakSeriesRow row{what, figures.front()->unit};
    std::vector<double> ok;
    for (const auto* f : figures) {
      if (f->status == Status::ok) ok.push_back(f->value);
      else ++row.failed;
    }
    row.passes_ok = ok.size();
    if (!ok.empty()) {
      row.worst = *std::min_element(ok.begin(), ok.end());
      row.median = median(ok);
    }
    rows.push_back(row);
  }
  return rows;
}

std::vector<SoakEvent> soak_events(const SoakSection& soak) {
  std::vector<SoakEvent> events;
  for (const auto& step : counter_steps(soak)) {
    const auto down = link_down_evidence(step);
    std::string what = down;
    for (const auto& [name, delta] : step.deltas)
      if (!is_background_counter(name) && down.find(name) == std::string::npos)
        what += fmt::format("{}{} {:+}", what.empty() ? "" : ", ", name, delta);
    if (!what.empty()) events.push_back({step.host, step.device, step.port, step.from_s, step.to_s, step.to_time, what, !down.empty()});
  }
  for (const auto& s : soak.samples)
    for (const auto& x : s.xid) events.push_back({s.host, "GPU " + x.pci, 0, s.t_s, s.t_s, s.time, fmt::format("Xid {}: {}", x.xid, x.text), false});
  std::stable_sort(events.begin(), events.end(), [](const SoakEvent& a, const SoakEvent& b) { return a.to_s < b.to_s; });
  return events;
}

std::vector<PortTimeline> soak_port_timelines(const SoakSection& soak, const std::vector<SoakEvent>& events) {
  std::map<std::string, PortTimeline> ports;  // "host device:port"
  for (const auto& s : soak.samples)
    for (const auto& p : s.ports) {
      auto& t = ports[fmt::format("{} {}:{}", s.host, p.device, p.port)];
      t.host = s.host, t.device = p.device, t.port = p.port;
    }
  for (auto& [key, t] : ports)
    for (const auto& pass : soak.passes) {
      double sum = 0;
      bool any = false;
      for (const auto& f : pass.figures)
        if (f.kind == "verbs" && f.rail == "rail " + t.device && std::find(f.hosts.begin(), f.hosts.end(), t.host) != f.hosts.end()) {
          any = true;
          sum += f.status == Status::ok ? f.value : 0;
        }
      if (any) t.throughput.emplace_back((pass.start_s + pass.end_s) / 2, sum);
    }
  for (const auto& e : events) {
    const auto port = ports.find(fmt::format("{} {}:{}", e.host, e.device, e.port));
    if (port != ports.end()) port->second.events.push_back(e);  // a GPU's Xid is in the events table only
  }
  std::vector<PortTimeline> out;
  for (auto& [key, t] : ports) out.push_back(std::move(t));
  return out;
}

}  // namespace fabricproof::view
