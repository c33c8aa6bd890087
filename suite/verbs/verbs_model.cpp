#include "verbs/verbs_model.hpp"

#include <algorithm>
#include <cmath>

namespace fabricproof {
namespace {

using nlohmann::json;

VerbsMatrixCell reason_cell(std::string reason) { return {std::nullopt, std::move(reason), false}; }

json cell_json(const VerbsMatrixCell& c) {
  if (c.diagonal) return nullptr;
  if (c.value) return *c.value;
  return json{{"reason", c.reason}};
}

}  // namespace

VerbsTestType verbs_test_type(const std::string& test) {
  if (test == "write_lat") return {true, true, "usec (p50, one-way)"};
  if (test == "write_bw_bidir") return {false, true, "Gb/s"};
  return {};
}

VerbsMatrix verbs_matrix(const VerbsSection& s, const std::string& test) {
  const auto type = verbs_test_type(test);
  const bool latency = type.latency;
  VerbsMatrix m{test, type.unit, {}, {}};
  const size_t n = s.endpoints.size();
  for (const auto& e : s.endpoints) m.labels.push_back(e.label());
  m.cells.assign(n, std::vector<VerbsMatrixCell>(n));
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < n; ++k) {
      if (i == k) m.cells[i][k].diagonal = true;
      else if (s.endpoints[i].host == s.endpoints[k].host) m.cells[i][k] = reason_cell("same node");
      else m.cells[i][k] = reason_cell("not measured: pair not scheduled (rails)");
    }
  for (const auto& pair : s.pairs) {
    for (const auto& t : pair.tests) {
      if (t.test != test || t.from < 0 || t.to < 0 || static_cast<size_t>(t.from) >= n || static_cast<size_t>(t.to) >= n) continue;
      VerbsMatrixCell cell;
      if (t.status != Status::ok) cell = reason_cell(t.status == Status::error ? "error: " + t.reason : "not measured: " + t.reason);
      else if (latency) cell = t.latency ? VerbsMatrixCell{t.latency->p50_usec, "", false} : reason_cell("no samples");
      else cell = t.gbps ? VerbsMatrixCell{*t.gbps, "", false} : reason_cell("no figure");
      // Latency and bidirectional bandwidth belong to the pair: show them in both cells.
      m.cells[static_cast<size_t>(t.from)][static_cast<size_t>(t.to)] = cell;
      if (type.both_ways) m.cells[static_cast<size_t>(t.to)][static_cast<size_t>(t.from)] = cell;
    }
  }
  return m;
}

void to_json(json& j, const VerbsSection& s) {
  j = json{{"options", s.options}, {"endpoints", s.endpoints}, {"rounds", s.rounds}, {"pairs", s.pairs}, {"remeasured", s.remeasured}};
  if (s.locate) {  // a few pairs of a large fabric: no square matrix (8 192 endpoints would be 67 million cells)
    j["locate"] = *s.locate;
    return;
  }
  json labels = json::array();
  for (const auto& e : s.endpoints) labels.push_back(e.label());
  json matrix = {{"labels", labels}};
  for (const auto& test : s.options.tests) {
    const auto m = verbs_matrix(s, test);
    json rows = json::array();
    for (const auto& row : m.cells) {
      json r = json::array();
      for (const auto& c : row) r.push_back(cell_json(c));
      rows.push_back(r);
    }
    matrix[test] = {{"unit", m.unit}, {"cells", rows}};
  }
  j["matrix"] = matrix;
}

void from_json(const json& j, VerbsSection& s) {
  const VerbsSection defaults;
  s.options = j.value("options", defaults.options);
  s.endpoints = j.value("endpoints", defaults.endpoints);
  s.rounds = j.value("rounds", defaults.rounds);
  s.pairs = j.value("pairs", defaults.pairs);
  s.remeasured = j.value("remeasured", defaults.remeasured);
  if (j.contains("locate") && !j["locate"].is_null()) s.locate = j["locate"].get<VerbsLocate>();
}

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
  for (const uint64_t bytes : options.sizes) {  // the curve: one way, after the tests
    TestResult t;
    t.test = kVerbsSizesTest;
    t.bytes = bytes;
    t.from = a;
    t.to = b;
    out.push_back(t);
  }
  return out;
}

double step_budget_s(const VerbsOptions& o, const TestResult& step) {
  const double measuring = o.iterations ? o.timeout_s : o.duration_s;
  if (step.test != "write_lat") return measuring;
  return std::max(measuring, static_cast<double>(o.lat_iterations) * kSlowRoundTripS);
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

// The test locate compares pairs by: a bandwidth test where one runs (write_bw first), else the
// latency test, whose figure is round trips per second (a slow hop shows in latency long before it
// caps a stream of 32 messages in flight).
std::string locate_figure_test(const std::vector<std::string>& tests) {
  for (const char* t : {"write_bw", "send_bw", "write_bw_bidir", "write_lat"})
    if (std::find(tests.begin(), tests.end(), t) != tests.end()) return t;
  return "write_bw";
}

// The pair's figure by that test, the slower way; none when a way did not complete.
std::optional<double> locate_figure(const PairResult& r, const std::string& test) {
  std::optional<double> slowest;
  for (const auto& t : r.tests) {
    if (t.test != test) continue;
    if (t.status != Status::ok) return std::nullopt;
    const bool latency = test == "write_lat";
    if (latency ? !t.latency || t.latency->p50_usec <= 0 : !t.gbps) return std::nullopt;
    const double value = latency ? 1e6 / t.latency->p50_usec : *t.gbps;
    slowest = std::min(slowest.value_or(value), value);
  }
  return slowest;
}

}  // namespace fabricproof
