#include "soak/soak_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "core/statistics.hpp"
#include "inventory/gpu_memory_rules.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

// The counters that say a link went down: InfiniBand's LinkDownedCounter (counters/link_downed,
// and Soft-RoCE's hw_counters/link_downed), the netdev's carrier going down, and mlx5's
// link_down_events_phy (ethtool).
constexpr const char* kLinkDownCounters[] = {"link_downed", "netdev.carrier_down_count", "ethtool.link_down_events_phy"};
// Investigated whenever they move (Azure's node health checks, NVIDIA's bring-up guide).
// (mlx5's Ethernet side: symbol errors after FEC, CRC errors and discards at the port.)
constexpr const char* kAnyIncrementCounters[] = {"symbol_error", "link_error_recovery", "netdev.rx_crc_errors", "ethtool.rx_symbol_err_phy",
                                                  "ethtool.rx_crc_errors_phy", "ethtool.rx_discards_phy"};

std::string port_key(const std::string& device, int port) { return fmt::format("{}:{}", device, port); }

std::string window(double from_s, double to_s) {
  return fmt::format("between {} and {} into the soak (minute {})", format_soak_time(from_s), format_soak_time(to_s),
                     static_cast<int>(to_s / 60) + 1);
}

// A node's samples in time order.
std::map<std::string, std::vector<const NodeSample*>> samples_by_host(const SoakSection& soak) {
  std::map<std::string, std::vector<const NodeSample*>> by_host;
  for (const auto& s : soak.samples) by_host[s.host].push_back(&s);
  for (auto& [host, list] : by_host)
    std::stable_sort(list.begin(), list.end(), [](const NodeSample* a, const NodeSample* b) { return a->t_s < b->t_s; });
  return by_host;
}

const PortSample* find_port(const NodeSample& s, const std::string& device, int port) {
  for (const auto& p : s.ports)
    if (p.device == device && p.port == port) return &p;
  return nullptr;
}

// The first and the last sample of each port: what moved over the whole soak, and for how long.
struct PortSpan {
  std::string host;
  const PortSample* first = nullptr;
  const PortSample* last = nullptr;
  double first_s = 0;
  double last_s = 0;
  double seconds() const { return last_s - first_s; }
  int64_t moved(const std::string& counter) const {
    const auto a = first->counters.find(counter), b = last->counters.find(counter);
    if (a == first->counters.end() || b == last->counters.end()) return 0;
    return static_cast<int64_t>(b->second - a->second);
  }
};

std::vector<PortSpan> port_spans(const SoakSection& soak) {
  std::vector<PortSpan> spans;
  for (const auto& [host, list] : samples_by_host(soak)) {
    std::map<std::string, PortSpan> ports;
    for (const auto* s : list)
      for (const auto& p : s->ports) {
        auto [at, fresh] = ports.try_emplace(port_key(p.device, p.port), PortSpan{host, &p, &p, s->t_s, s->t_s});
        at->second.last = &p;
        at->second.last_s = s->t_s;
      }
    for (auto& [key, span] : ports) spans.push_back(span);
  }
  return spans;
}

}  // namespace

std::vector<CounterStep> counter_steps(const SoakSection& soak) {
  std::vector<CounterStep> steps;
  for (const auto& [host, list] : samples_by_host(soak)) {
    // A sample holds only the counters that changed since the previous one: carry the values forward.
    std::map<std::string, std::map<std::string, uint64_t>> values;
    for (size_t i = 0; i < list.size(); ++i) {
      for (const auto& now : list[i]->ports) {
        auto& known = values[port_key(now.device, now.port)];
        const bool seen_before = i > 0 && find_port(*list[i - 1], now.device, now.port);
        CounterStep step{host, now.device, now.port, i > 0 ? list[i - 1]->t_s : 0, list[i]->t_s, list[i]->time, {}, now.state};
        for (const auto& [name, value] : now.counters) {
          const auto was = known.find(name);
          if (seen_before && was != known.end() && value != was->second) step.deltas[name] = static_cast<int64_t>(value - was->second);
          known[name] = value;
        }
        if (seen_before && (!step.deltas.empty() || step.state != "ACTIVE")) steps.push_back(std::move(step));
      }
    }
  }
  return steps;
}

bool is_link_down_counter(const std::string& name) {
  return std::find(std::begin(kLinkDownCounters), std::end(kLinkDownCounters), name) != std::end(kLinkDownCounters);
}

std::string link_down_evidence(const CounterStep& step) {
  std::string evidence;
  for (const char* name : kLinkDownCounters) {
    const auto d = step.deltas.find(name);
    if (d != step.deltas.end() && d->second > 0) evidence += fmt::format("{}{} +{}", evidence.empty() ? "" : ", ", name, d->second);
  }
  if (step.state != "ACTIVE") evidence += fmt::format("{}state {} at the sample", evidence.empty() ? "" : ", ", step.state.empty() ? "unknown" : step.state);
  return evidence;
}

namespace {

const char* kSoakRule = "the soak (--soak): ";

// Samples from every node that ran, at least two per node (a first and a last): without them no
// counter was watched, which proves nothing.
std::vector<Finding> check_samples(const SoakSection& soak) {
  const auto by_host = samples_by_host(soak);
  if (by_host.empty())
    return {{CheckId::soak_counters, Subject::cluster(), Verdict::not_proven, json{{"samples", 0}}, "port counters sampled on every node",
             std::string(kSoakRule) + "every node's port counters are sampled at the interval",
             "No node sampled its ports: the soak ended before its first sample, or no rank could read sysfs."}};
  std::vector<Finding> out;
  for (const auto& [host, list] : by_host) {
    size_t ports = 0;
    for (const auto* s : list) ports = std::max(ports, s->ports.size());
    std::vector<std::string> errors;
    for (const auto* s : list)
      for (const auto& e : s->errors)
        if (std::find(errors.begin(), errors.end(), e) == errors.end()) errors.push_back(e);
    const bool watched = list.size() >= 2 && ports > 0;
    out.push_back({CheckId::soak_counters, Subject::node(host), watched ? Verdict::pass : Verdict::not_proven,
                   json{{"samples", list.size()}, {"ports", ports}, {"errors", errors}}, "two samples or more of at least one RDMA port",
                   std::string(kSoakRule) + "every node's port counters are sampled at the interval",
                   watched ? "" : ports == 0 ? "The node has no RDMA port to watch (read the samples' errors)." : "Only one sample: the soak was shorter than its interval."});
  }
  return out;
}

// A link that went down during the soak fails, naming the port and when (NVIDIA: every LinkDown
// is explained; Azure: more than one flap in 6 hours fails a node).
std::vector<Finding> check_link_down(const SoakSection& soak) {
  std::map<std::string, std::pair<Subject, std::vector<json>>> ports;  // "host device:port" -> the port, its link-down events
  for (const auto& span : port_spans(soak))
    ports[fmt::format("{} {}", span.host, port_key(span.first->device, span.first->port))].first =
        Subject::port(span.host, span.first->device, span.first->port);
  for (const auto& step : counter_steps(soak)) {  // a step's port has two samples: it has a span
    const auto evidence = link_down_evidence(step);
    if (!evidence.empty())
      ports[fmt::format("{} {}", step.host, port_key(step.device, step.port))].second.push_back(
          {{"between_s", {step.from_s, step.to_s}}, {"when", window(step.from_s, step.to_s)}, {"sampled_at", step.to_time}, {"evidence", evidence}});
  }
  std::vector<Finding> out;
  for (const auto& [key, port] : ports) {
    const auto& [subject, list] = port;
    const std::string hint =
        list.empty() ? ""
                     : fmt::format("{}/{} port {} went down {} ({}): check its cable and transceiver, the switch port's log at that "
                                   "time, then the HCA (dmesg).",
                                   subject.name, subject.device, subject.number, list.front().at("when").get<std::string>(),
                                   list.front().at("evidence").get<std::string>());
    out.push_back({CheckId::soak_link_down, subject, list.empty() ? Verdict::pass : Verdict::fail, json{{"link_down", list.size()}, {"events", list}},
                   json{{"link_down", 0}}, std::string(kSoakRule) + "no link goes down under load", hint});
  }
  return out;
}

// Azure's thresholds over the whole soak: PortRcvErrors above 100 and PortXmitDiscards above 1000
// fail; any SymbolError, LinkErrorRecovery or CRC error is investigated (warn).
std::vector<Finding> check_port_errors(const SoakSection& soak, const Profile::Soak& limits) {
  std::vector<Finding> out;
  for (const auto& span : port_spans(soak)) {
    json moved = json::object();
    Verdict verdict = Verdict::pass;
    auto limit = [&](const char* counter, double max) {
      const auto n = span.moved(counter);
      if (n > 0) moved[counter] = n;
      if (n > max) verdict = Verdict::fail;
    };
    limit("port_rcv_errors", limits.port_rcv_errors_max);
    limit("port_xmit_discards", limits.port_xmit_discards_max);
    for (const char* counter : kAnyIncrementCounters)
      if (const auto n = span.moved(counter); n > 0) {
        moved[counter] = n;
        verdict = std::max(verdict, Verdict::warn);
      }
    std::string hint;
    if (verdict != Verdict::pass)
      hint = fmt::format("{}/{} port {}: errors grew under load ({}); read the time line for when, then check the cable, the transceiver "
                         "and the switch port (a dirty or marginal optic shows here first).",
                         span.host, span.first->device, span.first->port, moved.dump());
    out.push_back({CheckId::soak_port_errors, Subject::port(span.host, span.first->device, span.first->port), verdict,
                   json{{"increments", moved}, {"seconds", span.seconds()}},
                   json{{"port_rcv_errors_max", limits.port_rcv_errors_max}, {"port_xmit_discards_max", limits.port_xmit_discards_max},
                        {"symbol_error", 0}, {"link_error_recovery", 0}, {"netdev.rx_crc_errors", 0}},
                   std::string(kSoakRule) + "the port's error counters stay within the limits over the soak", hint});
  }
  return out;
}

// Symbol BER from SymbolErrorCounter, the port's rate and the time sampled (NVIDIA: judged once
// the port has been up 125 minutes; below that the estimate is not judged and says so).
std::vector<Finding> check_ber(const SoakSection& soak, const Profile::Soak& limits) {
  std::vector<Finding> out;
  const std::string rule = fmt::format("{}symbol BER (symbol errors / bits carried) at most {:g}, judged after {:.0f} minutes", kSoakRule,
                                       limits.symbol_ber_max, limits.ber_min_uptime_s / 60);
  for (const auto& span : port_spans(soak)) {
    const Subject subject = Subject::port(span.host, span.first->device, span.first->port);
    const bool counted = span.first->counters.count("symbol_error") && span.last->counters.count("symbol_error");
    const double minutes = span.seconds() / 60;
    const json expected{{"symbol_ber_max", limits.symbol_ber_max}, {"min_uptime_minutes", limits.ber_min_uptime_s / 60}};
    if (span.seconds() < limits.ber_min_uptime_s) {
      out.push_back({CheckId::soak_ber, subject, Verdict::skip, json{{"minutes", minutes}, {"symbol_error_counter", counted}}, expected, rule,
                     fmt::format("Not judged: {:.1f} minutes sampled, the BER needs {:.0f} (run --soak 2h or longer).", minutes,
                                 limits.ber_min_uptime_s / 60)});
      continue;
    }
    if (!counted || !span.last->rate_gbps || *span.last->rate_gbps <= 0) {
      out.push_back({CheckId::soak_ber, subject, Verdict::not_proven, json{{"minutes", minutes}, {"symbol_error_counter", counted}}, expected, rule,
                     counted ? "The port's rate was not read." : "The port exposes no symbol_error counter (counters/symbol_error): read the BER with mlxlink."});
      continue;
    }
    const double bits = *span.last->rate_gbps * 1e9 * span.seconds();
    const auto errors = span.moved("symbol_error");
    const double ber = static_cast<double>(errors) / bits;
    out.push_back({CheckId::soak_ber, subject, ber > limits.symbol_ber_max ? Verdict::fail : Verdict::pass,
                   json{{"symbol_errors", errors}, {"bits", bits}, {"symbol_ber", ber}, {"minutes", minutes},
                        {"upper_95", (errors > 0 ? static_cast<double>(errors) : 3.0) / bits}},
                   expected, rule,
                   ber > limits.symbol_ber_max ? "The link's BER is above the limit: clean or replace the cable or optic, then soak again." : ""});
  }
  return out;
}

struct Series {
  std::vector<const SoakPass*> passes;
  std::vector<const SoakFigure*> figures;  // one per pass, same order; null where the pass had none
};

// One series judged: every pass measured, the worst pass against the median, the coefficient of
// variation. `values` holds the ok figures; `errors` the passes where it failed.
Finding judge_series(const Subject& subject, const std::vector<double>& values, const std::vector<json>& errors, const std::string& unit,
                     const Profile::Soak& limits) {
  const std::string rule = fmt::format("{}every pass measured; the worst pass at least {:g} of the median; coefficient of variation at most {:g}",
                                       kSoakRule, limits.worst_pass_ratio, limits.cv_max);
  const json expected{{"worst_pass_ratio", limits.worst_pass_ratio}, {"cv_max", limits.cv_max}, {"passes_min", 3}};
  if (!errors.empty())
    return {CheckId::soak_stability, subject, Verdict::fail, json{{"failed_passes", errors}, {"passes_ok", values.size()}}, expected, rule,
            fmt::format("{} failed in {} pass(es), first {}: {}; compare with the link-down and error findings of its ports at that time.",
                        subject.text(), errors.size(), errors.front().at("when").get<std::string>(), errors.front().at("reason").get<std::string>())};
  if (values.size() < 3)
    return {CheckId::soak_stability, subject, Verdict::not_proven, json{{"passes_ok", values.size()}}, expected, rule,
            "Fewer than 3 passes: lengthen --soak (or shorten the load) to judge stability."};
  const double middle = median(values);
  const double worst = *std::min_element(values.begin(), values.end());
  double sum = 0, squares = 0;
  for (double v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  for (double v : values) squares += (v - mean) * (v - mean);
  const double cv = mean > 0 ? std::sqrt(squares / static_cast<double>(values.size() - 1)) / mean : 0;
  const double ratio = middle > 0 ? worst / middle : 0;
  const Verdict verdict = ratio < limits.worst_pass_ratio ? Verdict::fail : cv > limits.cv_max ? Verdict::warn : Verdict::pass;
  return {CheckId::soak_stability, subject, verdict,
          json{{"passes_ok", values.size()}, {"median", middle}, {"worst", worst}, {"worst_ratio", ratio}, {"cv", cv}, {"unit", unit}}, expected, rule,
          verdict == Verdict::pass ? ""
                                   : fmt::format("{} dipped to {:.3g} {} against a median of {:.3g}: read the time line for the pass and the "
                                                 "counters of its ports then.",
                                                 subject.text(), worst, unit, middle, unit)};
}

std::vector<Finding> check_stability(const SoakSection& soak, const Profile::Soak& limits) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<json>>> by_what;
  std::map<std::string, std::string> unit_of;
  std::map<std::string, std::map<int, double>> rail_sums;  // rail -> pass -> sum (a failed figure adds 0)
  for (const auto& pass : soak.passes)
    for (const auto& f : pass.figures) {
      auto& [values, errors] = by_what[f.what];
      unit_of[f.what] = f.unit;
      if (f.status == Status::ok) values.push_back(f.value);
      else errors.push_back({{"pass", pass.index}, {"when", window(pass.start_s, pass.end_s)}, {"reason", f.reason}});
      if (!f.rail.empty()) rail_sums[f.rail][pass.index] += f.status == Status::ok ? f.value : 0;
    }
  std::vector<Finding> out;
  for (const auto& [what, series] : by_what) out.push_back(judge_series(what, series.first, series.second, unit_of[what], limits));
  for (const auto& [rail, sums] : rail_sums) {
    std::vector<double> values;
    for (const auto& [pass, sum] : sums) values.push_back(sum);
    out.push_back(judge_series(fmt::format("{}: every pair together", rail), values, {}, "Gb/s", limits));
  }
  return out;
}

// Xid events a GPU node's kernel logged during the soak (Azure's health checks fail a node on them).
// The ones an application can cause (13, 31, 43, 45) warn; the rest fail. A GPU node whose kernel
// log could not be read proves nothing.
std::vector<Finding> check_gpu_xid(const SoakSection& soak) {
  std::vector<Finding> out;
  const auto by_host = samples_by_host(soak);
  const std::string rule = std::string(kSoakRule) + "no GPU Xid event in the kernel log under load";
  for (const auto& host : soak.gpu_hosts) {
    const auto found = by_host.find(host);
    const bool read = found != by_host.end() && std::all_of(found->second.begin(), found->second.end(), [](const NodeSample* s) { return s->kernel_log; });
    if (!read) {
      out.push_back({CheckId::soak_gpu_xid, Subject::node(host), Verdict::not_proven, json{{"kernel_log", false}}, json{{"xid_events", 0}}, rule,
                     "The kernel log (/dev/kmsg) was not read on this node: run as root, or check dmesg for NVRM: Xid by hand."});
      continue;
    }
    json events = json::array();
    Verdict verdict = Verdict::pass;
    for (const auto* s : found->second)
      for (const auto& x : s->xid) {
        events.push_back({{"xid", x.xid}, {"pci", x.pci}, {"sampled_at_s", s->t_s}, {"text", x.text}});
        verdict = std::max(verdict, x.xid == 13 || x.xid == 31 || x.xid == 43 || x.xid == 45 ? Verdict::warn : Verdict::fail);
      }
    out.push_back({CheckId::soak_gpu_xid, Subject::node(host), verdict, json{{"xid_events", events}}, json{{"xid_events", 0}}, rule,
                   events.empty() ? "" : fmt::format("{}: Xid {} on the GPU at PCI {} (by {}): look the code up in NVIDIA's Xid catalogue.", host,
                                                     events[0]["xid"].get<int>(), events[0]["pci"].get<std::string>(),
                                                     format_soak_time(events[0]["sampled_at_s"].get<double>()))});
  }
  return out;
}

// How much a count grew between the two reads; 0 where either is unread or it fell (the volatile
// count restarts when the driver reloads).
template <typename T>
uint64_t growth(const std::optional<T>& before, const std::optional<T>& after) {
  return before && after && *after > *before ? static_cast<uint64_t>(*after - *before) : 0;
}
bool became(const std::optional<bool>& before, const std::optional<bool>& after) { return after.value_or(false) && !before.value_or(false); }

// What the load did to one board's memory: uncorrectable errors, remaps pending or failed and
// retirements pending fail (gpu_memory_health fails them at the next run); rows remapped on
// correctable errors warn (the board retired worn rows and still works).
struct MemoryWear {
  std::vector<std::string> failing, warning;
};

MemoryWear memory_wear(const GpuMemoryHealth& before, const GpuMemoryHealth& after) {
  MemoryWear w;
  const uint64_t errors = std::max(growth(before.uncorrected_since_driver_load, after.uncorrected_since_driver_load),
                                   growth(before.uncorrected_lifetime, after.uncorrected_lifetime));
  if (errors > 0) w.failing.push_back(fmt::format("{} uncorrectable ECC error(s)", errors));
  if (const auto n = growth(before.rows_remapped_uncorrectable, after.rows_remapped_uncorrectable))
    w.failing.push_back(fmt::format("{} row(s) remapped on uncorrectable errors", n));
  if (became(before.row_remap_failed, after.row_remap_failed)) w.failing.push_back("row remapping failed");
  if (became(before.row_remap_pending, after.row_remap_pending)) w.failing.push_back("a row remap became pending");
  if (became(before.page_retirement_pending, after.page_retirement_pending)) w.failing.push_back("a page retirement became pending");
  if (const auto n = growth(before.rows_remapped_correctable, after.rows_remapped_correctable))
    w.warning.push_back(fmt::format("{} row(s) remapped on correctable errors", n));
  return w;
}

// Each GPU's memory read before the soak (the inventory) and at its end (NVML): what the load wore.
std::vector<Finding> check_gpu_memory_wear(const SoakSection& soak) {
  std::vector<Finding> out;
  const std::string rule = std::string(kSoakRule) +
                           "no uncorrectable ECC error, no row remap pending or failed, no page retirement pending since the inventory read the "
                           "GPU's memory; rows remapped on correctable errors warn";
  const json expected = {{"grown_under_load", json::array()}};
  for (const auto& g : soak.gpu_memory) {
    const std::string subject = fmt::format("{}/gpu{}", g.host, g.index);
    if (!memory_health_read(g.after)) {
      out.push_back({CheckId::soak_gpu_memory, subject, Verdict::not_proven, json{{"read_at_end", false}, {"why", g.after.unread}}, expected, rule,
                     "NVML did not answer at the soak's end: read nvidia-smi -q -d ROW_REMAPPER,ECC by hand, and look for Xid 79 (off the "
                     "bus) in the kernel log."});
      continue;
    }
    const MemoryWear w = memory_wear(g.before, g.after);
    const Verdict verdict = !w.failing.empty() ? Verdict::fail : !w.warning.empty() ? Verdict::warn : Verdict::pass;
    std::vector<std::string> grown = w.failing;
    grown.insert(grown.end(), w.warning.begin(), w.warning.end());
    const std::string what = fmt::format("{}", fmt::join(grown, ", "));
    out.push_back({CheckId::soak_gpu_memory, subject, verdict,
                   json{{"grown_under_load", grown}, {"before", memory_health_figures(g.before)}, {"after", memory_health_figures(g.after)}}, expected, rule,
                   verdict == Verdict::fail   ? fmt::format("Under load the board's memory showed {}: reset the GPU (nvidia-smi -r) and soak again; "
                                                            "errors or remaps that come back mean an RMA.", what)
                   : verdict == Verdict::warn ? fmt::format("{} under load: watch the board (nvidia-smi -q -d ROW_REMAPPER); rows that keep "
                                                            "growing mean an RMA.", what)
                                              : ""});
  }
  return out;
}

// The load itself: passes ran, and every part of it could run.
std::vector<Finding> check_load(const SoakSection& soak) {
  std::vector<Finding> out;
  const std::string rule = std::string(kSoakRule) + "the load runs for the whole duration, every part of it";
  for (const auto& why : soak.load_not_run)
    out.push_back({CheckId::soak_load, Subject::cluster(), Verdict::not_proven, why, "every part of the load runs", rule,
                   "Part of the load could not run: the soak proves only what ran."});
  const bool ran = !soak.passes.empty();
  out.push_back({CheckId::soak_load, Subject::cluster(), ran ? Verdict::pass : Verdict::not_proven,
                 json{{"passes", soak.passes.size()}, {"ran_s", soak.ran_s}, {"duration_s", soak.duration_s}, {"load", soak.load}},
                 json{{"passes_min", 1}}, rule, ran ? "" : "No pass of the load ran."});
  return out;
}

}  // namespace

std::vector<Finding> check_soak(const SoakSection& soak, const Profile& profile) {
  std::vector<Finding> out = check_load(soak);
  for (auto part : {check_samples(soak), check_link_down(soak), check_port_errors(soak, profile.soak), check_ber(soak, profile.soak),
                    check_stability(soak, profile.soak), check_gpu_xid(soak), check_gpu_memory_wear(soak)})
    out.insert(out.end(), part.begin(), part.end());
  return out;
}

}  // namespace fabricproof
