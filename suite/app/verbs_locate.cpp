#include "app/verbs_locate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/located_error.hpp"
#include "core/text_file.hpp"

namespace fabricproof::app {

LocateDriver::LocateDriver(const VerbsPlan& plan, const Profile::Verbs& limits, const locate::LeafMap& neighbours)
    : figure_test_(locate_figure_test(plan.options.tests)) {
  std::map<std::string, int> node_of;
  for (const auto& e : plan.endpoints)
    if (node_of.emplace(e.host, static_cast<int>(fabric_.names.size())).second) fabric_.names.push_back(e.host);
  endpoint_.assign(fabric_.names.size(), {});
  devices_.assign(fabric_.names.size(), {});
  for (size_t i = 0; i < plan.endpoints.size(); ++i) {  // the i-th endpoint of a node is its rail i
    const auto node = static_cast<size_t>(node_of[plan.endpoints[i].host]);
    endpoint_[node].push_back(static_cast<int>(i));
    devices_[node].push_back(plan.endpoints[i].device);
  }
  for (const auto& rails : endpoint_) fabric_.rails = std::max(fabric_.rails, static_cast<int>(rails.size()));
  for (auto& rails : endpoint_) rails.resize(static_cast<size_t>(fabric_.rails), -1);
  if (!plan.options.leaf_map.empty()) read_leaves(plan.options.leaf_map);
  else if (!neighbours.by_device.empty()) leaves_from_neighbours(neighbours);
  locate::PairSettings settings;
  settings.slow_below = limits.locate_slow_below;
  if (figure_test_ == "write_lat" && limits.latency_outlier_factor > 1) settings.slow_below = 1 / limits.latency_outlier_factor;
  locator_ = std::make_unique<locate::PairLocator>(fabric_, settings);
}

// Without a --leaf-map, the switches the run read itself (every HCA's, or none: a partial map would
// make the HCAs it lacks one leaf). Not a problem of the run when some were not read: locate then
// works without leaves, and says so.
void LocateDriver::leaves_from_neighbours(const locate::LeafMap& neighbours) {
  const auto missing = locate::assign_leaves(fabric_, neighbours, devices_);
  leaves_from_ = missing.empty() ? "the ports' neighbour switches (lldpd, --ibnetdiscover)"
                                 : fmt::format("unknown: {} HCA(s) without a neighbour switch read, e.g. {}", missing.size(), missing.front());
}

// The --leaf-map file into the fabric's leaves. A map that cannot be read or is wrong is worse than
// none: its problems are reported, and the run goes on without leaves.
void LocateDriver::read_leaves(const std::string& name) {
  std::optional<std::string> text;
  if (const auto failed = failure_of([&] { text = read_regular_file(name, 16u << 20); })) {
    leaf_map_problems_.push_back(name + ": " + *failed);
    return;
  }
  if (!text) {
    leaf_map_problems_.push_back(name + ": no such file");
    return;
  }
  const auto map = locate::read_leaf_map(*text, name);
  leaf_map_problems_ = map.errors;
  leaves_from_ = "--leaf-map " + name;
  if (!map.errors.empty()) return;
  const auto missing = locate::assign_leaves(fabric_, map, devices_);
  if (!missing.empty())
    leaf_map_problems_.push_back(fmt::format("{}: says nothing of {} HCA(s), e.g. {}: leaves not used", name, missing.size(), missing.front()));
}

std::vector<VerbsTask> LocateDriver::next_tasks(int first_id) {
  std::vector<VerbsTask> tasks;
  while (tasks.empty()) {
    const auto tests = locator_->next_round();
    if (tests.empty()) return tasks;
    std::vector<PairResult> none;
    for (const auto& t : tests) {
      const int a = endpoint_[static_cast<size_t>(t.a)][static_cast<size_t>(t.rail)], b = endpoint_[static_cast<size_t>(t.b)][static_cast<size_t>(t.rail)];
      if (a < 0 || b < 0) {
        unrunnable_.push_back(t);
        continue;
      }
      VerbsTask task;
      task.id = first_id + static_cast<int>(tasks.size());
      task.a = a;
      task.b = b;
      test_of_task_[task.id] = t;
      tasks.push_back(task);
    }
    if (tasks.empty()) record(none);  // nothing of this round could run: its tests did not complete
  }
  return tasks;
}

void LocateDriver::record(const std::vector<PairResult>& results) {
  std::vector<locate::PairResult> round;
  for (const auto& r : results) {
    const auto test = test_of_task_.find(r.task);
    if (test == test_of_task_.end()) continue;
    round.push_back({test->second, 0, locate_figure(r, figure_test_)});
    task_of_result_.push_back(r.task);
    first_task_.emplace(std::minmax(r.a, r.b), r.task);
  }
  for (const auto& t : unrunnable_) {
    round.push_back({t, 0, std::nullopt});
    task_of_result_.push_back(-1);
  }
  unrunnable_.clear();
  locator_->record(round);
}

std::string LocateDriver::device_of(int node, int rail) const {
  const auto& devices = devices_[static_cast<size_t>(node)];
  return static_cast<size_t>(rail) < devices.size() ? devices[static_cast<size_t>(rail)] : "HCA";
}

int LocateDriver::first_task_of(const PairResult& r) const {
  const auto found = first_task_.find(std::minmax(r.a, r.b));
  return found == first_task_.end() || found->second == r.task ? -1 : found->second;
}

}  // namespace fabricproof::app

namespace fabricproof::app {

VerbsLocate LocateDriver::outcome() const {
  VerbsLocate out;
  const auto& l = *locator_;
  out.rounds = l.rounds();
  out.figure = figure_test_ == "write_lat" ? "write_lat: round trips per second (1 / median latency)" : figure_test_ + ": Gb/s, the slower way";
  out.slow_below = l.settings().slow_below;
  out.nodes = fabric_.nodes();
  out.rails = fabric_.rails;
  out.leaves_known = fabric_.leaves_known();
  out.leaves_from = out.leaves_known ? leaves_from_ : leaves_from_.rfind("unknown", 0) == 0 ? leaves_from_ : "";
  const auto answer = l.answer();
  out.transient_dips = answer.transient_dips;
  out.unresolved = answer.unresolved;
  out.leaf_map_problems = leaf_map_problems_;
  const auto c = l.coverage();
  out.pairs_tested = c.pairs_tested;
  out.pairs_total = c.pairs_total;
  out.leaf_paths_tested = c.leaf_paths_tested;
  out.leaf_paths_total = c.leaf_paths_total;
  out.nodes_tested = c.nodes_tested;
  auto tasks = [&](const std::vector<size_t>& results) {
    std::vector<int> ids;
    for (size_t i : results)
      if (i < task_of_result_.size() && task_of_result_[i] >= 0) ids.push_back(task_of_result_[i]);
    return ids;
  };
  for (const auto& f : answer.faults) {
    LocatedFault o;
    o.kind = locate::to_string(f.kind);
    o.summary = f.summary;
    if (f.node >= 0) o.hosts.push_back(fabric_.names[static_cast<size_t>(f.node)]);
    if (f.peer >= 0) o.hosts.push_back(fabric_.names[static_cast<size_t>(f.peer)]);
    if (f.rail >= 0 && f.node >= 0) o.device = device_of(f.node, f.rail);
    if (f.kind == locate::FaultKind::leaf) o.summary += fmt::format(" (rail {} is the {} of each node)", f.rail, device_of(0, f.rail));
    o.leaf = f.leaf;
    o.ratio = f.ratio;
    o.implicating = tasks(f.implicating);
    o.clearing = tasks(f.clearing);
    out.faults.push_back(std::move(o));
  }
  return out;
}

}  // namespace fabricproof::app
