#include "report/prometheus.hpp"

#include <fmt/format.h>

#include <ctime>
#include <map>

#include "report/views.hpp"

namespace fabricproof {
namespace {


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


// Every measured verbs test: its bandwidth, or its latency by statistic.
void add_verbs(const VerbsSection& v, Family& bandwidth, Family& latency) {
  auto label = [&](int index) {
    if (index < 0 || static_cast<size_t>(index) >= v.endpoints.size()) return std::string("?");
    const auto& e = v.endpoints[static_cast<size_t>(index)];
    return fmt::format("{}/{}:{}", e.host, e.device, e.port);
  };
  for (const auto& pair : v.pairs)
    for (const auto& t : pair.tests) {
      if (t.status != Status::ok) continue;
      std::map<std::string, std::string> labels = {{"test", t.test}, {"src", label(t.from)}, {"dst", label(t.to)}};
      if (t.test == kVerbsSizesTest) labels["bytes"] = std::to_string(t.bytes);  // one series per size of the curve
      if (t.gbps) bandwidth.add(labels, *t.gbps * 1e9 / 8);
      if (t.latency)
        // "stat", not "quantile": Prometheus reserves quantile for summaries, and this is a gauge.
        for (const auto& [stat, usec] : std::map<std::string, double>{
                 {"min", t.latency->min_usec}, {"p50", t.latency->p50_usec}, {"p99", t.latency->p99_usec}, {"max", t.latency->max_usec}}) {
          auto l = labels;
          l["stat"] = stat;
          latency.add(l, usec * 1e-6);
        }
    }
}

void add_uplink(const UplinkSection& u, Family& uplink) {
  for (const auto& n : u.nodes) {
    const std::pair<const char*, const UplinkFlows*> tests[] = {{"single", &n.single}, {"parallel", &n.parallel}, {"together", &n.together}};
    for (const auto& [test, f] : tests)
      if (f->status == Status::ok)
        uplink.add({{"host", n.host}, {"interface", n.path.interface}, {"test", test}, {"flows", std::to_string(f->flows)}}, f->gbps * 1e9 / 8);
  }
}

}  // namespace

std::string render_prometheus(const Report& r) {
  Family verdict("fabricproof_run_verdict", "The run's verdict: 1 for the verdict it has (incomplete while it runs), 0 for the others.");
  for (const char* v : {"pass", "warn", "not_proven", "fail", "skip", "error", "incomplete"}) {
    const std::string have = r.finished ? std::string(to_string(r.verdict)) : "incomplete";
    verdict.add({{"verdict", v}}, have == v ? 1 : 0);
  }
  Family finished("fabricproof_run_finished_timestamp_seconds", "When the run finished (Unix time); absent while it runs.");
  if (r.finished)
    if (auto t = epoch_seconds(r.finished_at)) finished.add({}, *t);
  Family started("fabricproof_run_started_timestamp_seconds", "When the run started (Unix time).");
  if (auto t = epoch_seconds(r.started_at)) started.add({}, *t);
  Family findings("fabricproof_findings", "Findings of the run by verdict.");
  std::map<std::string, int> counts = {{"pass", 0}, {"warn", 0}, {"not_proven", 0}, {"fail", 0}, {"skip", 0}, {"error", 0}};
  for (const auto& f : r.findings) ++counts[std::string(to_string(f.verdict))];
  for (const auto& [v, n] : counts) findings.add({{"verdict", v}}, n);

  Family bandwidth("fabricproof_verbs_bandwidth_bytes_per_second", "RDMA bandwidth of a verbs test between two endpoints (src sends to dst).");
  Family latency("fabricproof_verbs_latency_seconds", "RDMA WRITE ping-pong latency of a pair, one way, by statistic (min, p50, p99, max over the samples).");
  if (r.verbs) add_verbs(*r.verbs, bandwidth, latency);
  Family busbw("fabricproof_collective_busbw_bytes_per_second", "Bus bandwidth of a collective (nccl-tests' busbw), out of place, by size.");
  if (r.collectives)
    for (const auto& res : r.collectives->results)
      for (const auto& row : res.rows)
        busbw.add({{"engine", res.engine}, {"op", res.op}, {"nodes", std::to_string(res.nodes)}, {"bytes", std::to_string(row.bytes)}},
                  row.out_of_place.busbw_GBps * 1e9);
  Family connections("fabricproof_nccl_connections", "NCCL connections by transport (NET/IB, NET/Socket, P2P, SHM) as the NCCL_DEBUG log names them.");
  Family fallback("fabricproof_nccl_socket_fallback", "1 when a connection between nodes used NET/Socket (NCCL fell back to TCP), 0 when none did.");
  if (r.nccl_audit) {
    std::map<std::string, double> by_transport;
    for (const auto& c : r.nccl_audit->facts.connections) by_transport[c.transport] += static_cast<double>(c.count);
    for (const auto& [t, n] : by_transport) connections.add({{"transport", t}}, n);
    if (const auto& f = r.nccl_audit->facts.socket_fallback) fallback.add({}, *f ? 1 : 0);
  }
  Family uplink("fabricproof_uplink_ingest_bytes_per_second",
                "TCP ingest of a node from the uplink target (iperf3 -R): test single (1 flow), parallel (alone) or together (all nodes at once).");
  if (r.uplink) add_uplink(*r.uplink, uplink);
  std::string out;
  for (const auto* f : {&verdict, &started, &finished, &findings, &bandwidth, &latency, &busbw, &connections, &fallback, &uplink}) out += f->render();
  return out;
}

}  // namespace fabricproof
