#include "core/verbs_model.hpp"

#include <algorithm>
#include <cmath>

namespace fabricproof {
namespace {

using nlohmann::json;

json reason_cell(const std::string& reason) { return json{{"reason", reason}}; }

// One square table for a test: rows are the writer/sender, columns the receiver.
json matrix_for(const VerbsSection& s, const std::string& test, bool latency) {
  const size_t n = s.endpoints.size();
  json rows = json::array();
  for (size_t i = 0; i < n; ++i) {
    json row = json::array();
    for (size_t j = 0; j < n; ++j) {
      if (i == j) row.push_back(nullptr);
      else if (s.endpoints[i].host == s.endpoints[j].host) row.push_back(reason_cell("same node"));
      else row.push_back(reason_cell("not measured: pair not scheduled (rails)"));
    }
    rows.push_back(row);
  }
  for (const auto& pair : s.pairs) {
    for (const auto& t : pair.tests) {
      if (t.test != test) continue;
      json cell;
      if (t.status != "ok") cell = reason_cell(t.status == "error" ? "error: " + t.reason : "not measured: " + t.reason);
      else if (latency) cell = t.latency ? json(t.latency->p50_usec) : reason_cell("no samples");
      else cell = t.gbps ? json(*t.gbps) : reason_cell("no figure");
      // Latency and bidirectional bandwidth belong to the pair: show them in both cells.
      rows[t.from][t.to] = cell;
      if (latency || test == "write_bw_bidir") rows[t.to][t.from] = cell;
    }
  }
  return rows;
}

}  // namespace

json verbs_section_json(const VerbsSection& s) {
  json j = s;
  json labels = json::array();
  for (const auto& e : s.endpoints) labels.push_back(e.label());
  json matrix = {{"labels", labels}};
  for (const auto& test : s.options.tests) {
    const bool latency = test == "write_lat";
    matrix[test] = {{"unit", latency ? "usec (p50, one-way)" : "Gb/s"}, {"cells", matrix_for(s, test, latency)}};
  }
  j["matrix"] = matrix;
  return j;
}

VerbsSection verbs_section_from_json(const json& j) { return j.get<VerbsSection>(); }

std::vector<TestResult> planned_results(const VerbsOptions& options, int a, int b) {
  std::vector<TestResult> out;
  for (const auto& test : options.tests) {
    TestResult t;
    t.test = test;
    t.bytes = test == "write_lat" ? options.lat_bytes : options.bw_bytes;
    t.from = a;
    t.to = b;
    out.push_back(t);
    if (test == "write_bw" || test == "send_bw") {
      std::swap(t.from, t.to);
      out.push_back(t);
    }
  }
  return out;
}

LatencyStats latency_stats(std::vector<double> samples) {
  LatencyStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  auto percentile = [&](double p) {
    const size_t index = static_cast<size_t>(std::ceil(p * static_cast<double>(samples.size()))) - 1;
    return samples[std::min(index, samples.size() - 1)];
  };
  double sum = 0;
  for (double v : samples) sum += v;
  s.samples = samples.size();
  s.min_usec = samples.front();
  s.max_usec = samples.back();
  s.avg_usec = sum / static_cast<double>(samples.size());
  s.p50_usec = percentile(0.50);
  s.p99_usec = percentile(0.99);
  return s;
}

}  // namespace fabricproof
