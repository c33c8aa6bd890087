#include "report/prometheus.hpp"

#include <fmt/format.h>

#include <ctime>
#include <map>

#include "report/views.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

std::string escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// One metric family: its samples are added with labels; rendered with HELP and TYPE once.
class Family {
 public:
  Family(std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {}
  void add(const std::map<std::string, std::string>& labels, double value) {
    std::string text;
    for (const auto& [k, v] : labels) text += (text.empty() ? "" : ",") + k + "=\"" + escape(v) + "\"";
    samples_ += name_ + (labels.empty() ? "" : "{" + text + "}") + " " + fmt::format("{:.17g}", value) + "\n";
  }
  std::string render() const {
    if (samples_.empty()) return "";
    return fmt::format("# HELP {} {}\n# TYPE {} gauge\n{}", name_, help_, name_, samples_);
  }

 private:
  std::string name_, help_, samples_;
};

std::optional<double> epoch_seconds(const std::string& utc) {  // "2026-11-29T17:42:46Z"
  std::tm tm{};
  if (utc.size() < 20 || !strptime(utc.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return std::nullopt;
  return static_cast<double>(timegm(&tm));
}

std::string str(const json& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : ""; }

}  // namespace

std::string render_prometheus(const Report& r) {
  Family verdict("fabricproof_run_verdict", "The run's verdict: 1 for the verdict it has (incomplete while it runs), 0 for the others.");
  for (const char* v : {"pass", "warn", "fail", "skip", "error", "incomplete"}) {
    const std::string have = r.finished ? std::string(to_string(r.verdict)) : "incomplete";
    verdict.add({{"verdict", v}}, have == v ? 1 : 0);
  }
  Family finished("fabricproof_run_finished_timestamp_seconds", "When the run finished (Unix time); absent while it runs.");
  if (r.finished)
    if (auto t = epoch_seconds(r.finished_at)) finished.add({}, *t);
  Family started("fabricproof_run_started_timestamp_seconds", "When the run started (Unix time).");
  if (auto t = epoch_seconds(r.started_at)) started.add({}, *t);
  Family findings("fabricproof_findings", "Findings of the run by verdict.");
  std::map<std::string, int> counts = {{"pass", 0}, {"warn", 0}, {"fail", 0}, {"skip", 0}, {"error", 0}};
  for (const auto& f : r.findings) ++counts[std::string(to_string(f.verdict))];
  for (const auto& [v, n] : counts) findings.add({{"verdict", v}}, n);

  Family bandwidth("fabricproof_verbs_bandwidth_bytes_per_second", "RDMA bandwidth of a verbs test between two endpoints (src sends to dst).");
  Family latency("fabricproof_verbs_latency_seconds", "RDMA WRITE ping-pong latency of a pair, one way, by statistic (min, p50, p99, max over the samples).");
  if (const auto it = r.sections.find("verbs"); it != r.sections.end() && it->is_object()) {
    const auto& endpoints = it->value("endpoints", json::array());
    auto label = [&](const json& index) {
      if (!index.is_number_integer() || index.get<int>() < 0 || static_cast<size_t>(index.get<int>()) >= endpoints.size()) return std::string("?");
      const auto& e = endpoints[index.get<size_t>()];
      return str(e, "host") + "/" + str(e, "device") + (e.contains("port") ? ":" + e["port"].dump() : "");
    };
    for (const auto& pair : it->value("pairs", json::array()))
      for (const auto& t : pair.value("tests", json::array())) {
        if (str(t, "status") != "ok") continue;
        const std::map<std::string, std::string> labels = {{"test", str(t, "test")}, {"src", label(t.value("from", json()))}, {"dst", label(t.value("to", json()))}};
        if (t.contains("gbps") && t["gbps"].is_number()) bandwidth.add(labels, t["gbps"].get<double>() * 1e9 / 8);
        if (t.contains("latency") && t["latency"].is_object())
          // "stat", not "quantile": Prometheus reserves quantile for summaries, and this is a gauge.
          for (const auto& [stat, key] : std::map<std::string, std::string>{{"min", "min_usec"}, {"p50", "p50_usec"}, {"p99", "p99_usec"}, {"max", "max_usec"}})
            if (t["latency"].contains(key) && t["latency"][key].is_number()) {
              auto l = labels;
              l["stat"] = stat;
              latency.add(l, t["latency"][key].get<double>() * 1e-6);
            }
      }
  }
  Family busbw("fabricproof_collective_busbw_bytes_per_second", "Bus bandwidth of a collective (nccl-tests' busbw), out of place, by size.");
  if (const auto it = r.sections.find("collectives"); it != r.sections.end() && it->is_object())
    for (const auto& res : it->value("results", json::array()))
      for (const auto& row : res.value("rows", json::array()))
        if (row.contains("out_of_place") && row["out_of_place"].is_object() && row["out_of_place"].contains("busbw_GBps") &&
            row["out_of_place"]["busbw_GBps"].is_number())
          busbw.add({{"engine", str(res, "engine")}, {"op", str(res, "op")}, {"nodes", res.value("nodes", json(0)).dump()},
                     {"bytes", row.value("bytes", json(0)).dump()}},
                    row["out_of_place"]["busbw_GBps"].get<double>() * 1e9);
  Family connections("fabricproof_nccl_connections", "NCCL connections by transport (NET/IB, NET/Socket, P2P, SHM) as the NCCL_DEBUG log names them.");
  Family fallback("fabricproof_nccl_socket_fallback", "1 when a connection between nodes used NET/Socket (NCCL fell back to TCP), 0 when none did.");
  if (const auto it = r.sections.find("nccl_audit"); it != r.sections.end() && it->is_object()) {
    std::map<std::string, double> by_transport;
    for (const auto& c : it->value("connections", json::array())) by_transport[str(c, "transport")] += c.value("count", 1.0);
    for (const auto& [t, n] : by_transport) connections.add({{"transport", t}}, n);
    if (it->contains("socket_fallback") && (*it)["socket_fallback"].is_boolean()) fallback.add({}, (*it)["socket_fallback"].get<bool>() ? 1 : 0);
  }
  Family uplink("fabricproof_uplink_ingest_bytes_per_second",
                "TCP ingest of a node from the uplink target (iperf3 -R): test single (1 flow), parallel (alone) or together (all nodes at once).");
  if (const auto u = view::uplink(r))
    for (const auto& n : u->nodes) {
      const std::pair<const char*, const UplinkFlows*> tests[] = {{"single", &n.single}, {"parallel", &n.parallel}, {"together", &n.together}};
      for (const auto& [test, f] : tests)
        if (f->status == "ok")
          uplink.add({{"host", n.host}, {"interface", n.path.interface}, {"test", test}, {"flows", std::to_string(f->flows)}}, f->gbps * 1e9 / 8);
    }
  std::string out;
  for (const auto* f : {&verdict, &started, &finished, &findings, &bandwidth, &latency, &busbw, &connections, &fallback, &uplink}) out += f->render();
  return out;
}

}  // namespace fabricproof
