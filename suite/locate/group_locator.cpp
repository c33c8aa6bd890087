#include "locate/group_locator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "core/statistics.hpp"

namespace fabricproof::locate {

GroupLocator::GroupLocator(Fabric fabric, GroupSettings settings)
    : fabric_(std::move(fabric)),
      settings_(settings),
      rng_(settings.seed),
      cleared_(static_cast<size_t>(fabric_.nodes())),
      named_node_(static_cast<size_t>(fabric_.nodes())),
      slow_partners_(static_cast<size_t>(fabric_.nodes())),
      implicating_(static_cast<size_t>(fabric_.nodes())) {}

std::vector<int> GroupLocator::cleared_pool() const {
  std::vector<int> pool;
  for (int n = 0; n < fabric_.nodes(); ++n)
    if (cleared_[static_cast<size_t>(n)]) pool.push_back(n);
  return pool;
}

std::vector<GroupTest> GroupLocator::next_round() {
  if (rounds_ >= settings_.max_rounds || fabric_.nodes() < 2) return {};
  std::vector<GroupTest> tests;
  planned_.clear();
  std::vector<bool> busy(static_cast<size_t>(fabric_.nodes()));
  auto add = [&](std::vector<int> nodes, Planned p) {
    for (int n : nodes) busy[static_cast<size_t>(n)] = true;
    tests.push_back({std::move(nodes)});
    planned_.push_back(p);
  };
  if (rounds_ == 0) {  // everyone, in `first_groups` groups of (nearly) equal size, at least two nodes each
    std::vector<int> all(static_cast<size_t>(fabric_.nodes()));
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng_);
    const int groups = std::max(1, std::min(settings_.first_groups, fabric_.nodes() / 2));
    for (int g = 0; g < groups; ++g)
      add(std::vector<int>(all.begin() + static_cast<long>(all.size() * g / groups), all.begin() + static_cast<long>(all.size() * (g + 1) / groups)), {});
  } else {
    for (auto& group : to_split_) {  // halves, side by side
      const auto half = static_cast<long>(group.size() / 2);
      const int first = static_cast<int>(tests.size());
      add(std::vector<int>(group.begin(), group.begin() + half), {Role::split, -1, first + 1});
      add(std::vector<int>(group.begin() + half, group.end()), {Role::split, -1, first});
    }
    to_split_.clear();
    auto pool = cleared_pool();
    std::shuffle(pool.begin(), pool.end(), rng_);
    for (int x : singles_) {
      const auto& met = slow_partners_[static_cast<size_t>(x)];
      auto p = std::find_if(pool.begin(), pool.end(), [&](int c) { return !busy[static_cast<size_t>(c)] && std::find(met.begin(), met.end(), c) == met.end(); });
      if (p != pool.end()) add({x, *p}, {Role::single, x});
    }
    if (tests.empty()) return {};  // nothing left that a test can settle
    add_controls(tests, pool, busy);
  }
  if (tests.empty()) return {};
  ++rounds_;
  return tests;
}

// For each size this round tests, `controls` groups of cleared nodes of that size, where there are
// enough: the round's reference for the size is the median of its groups.
void GroupLocator::add_controls(std::vector<GroupTest>& tests, std::vector<int>& pool, std::vector<bool>& busy) {
  std::map<size_t, int> sizes;
  for (const auto& t : tests) ++sizes[t.nodes.size()];
  for (auto [size, count] : sizes) {
    for (int c = 0; c < settings_.controls; ++c) {
      std::vector<int> group;
      for (int n : pool)
        if (!busy[static_cast<size_t>(n)] && group.size() < size) group.push_back(n);
      if (group.size() < size) break;
      for (int n : group) busy[static_cast<size_t>(n)] = true;
      tests.push_back({group});
      planned_.push_back({Role::control, -1});
    }
  }
}

}  // namespace fabricproof::locate

namespace fabricproof::locate {

// The round's reference per group size: its healthy rate, the upper quartile of its groups of that
// size. A round without a control group of a size holds suspects only there (a slow node's halves
// and singles), and a slowdown they share would read as normal: its reference is then at least the
// median of that size's earlier healthy groups (controls, and the first round's groups not slow).
std::map<size_t, double> GroupLocator::references(const std::vector<GroupResult>& round) const {
  std::map<size_t, std::vector<double>> by_size;
  std::map<size_t, bool> controlled;
  for (size_t i = 0; i < round.size(); ++i) {
    const size_t size = round[i].test.nodes.size();
    if (round[i].value) by_size[size].push_back(*round[i].value);
    controlled[size] |= rounds_ == 1 || (i < planned_.size() && planned_[i].role == Role::control);
  }
  std::map<size_t, double> out;
  for (const auto& [size, values] : by_size) {
    out[size] = upper_quartile(values);
    const auto earlier = healthy_values_.find(size);
    if (!controlled[size] && earlier != healthy_values_.end()) out[size] = std::max(out[size], median(earlier->second));
  }
  return out;
}

void GroupLocator::record(const std::vector<GroupResult>& round) {
  auto reference_of = references(round);
  std::vector<bool> slow(round.size());
  for (size_t i = 0; i < round.size(); ++i) {
    const double reference = reference_of[round[i].test.nodes.size()];
    slow[i] = !round[i].value || *round[i].value < settings_.slow_below * reference;
    results_.push_back(round[i]);
    results_.back().round = rounds_ - 1;
    ratios_.push_back(reference > 0 && round[i].value ? *round[i].value / reference : 0);
  }
  const size_t first = results_.size() - round.size();
  // The fabric's noise, before this round's singles are judged: the first round (every node, most
  // of them healthy) and every control group, measured without regard to what cleared them.
  for (size_t i = 0; i < round.size() && i < planned_.size(); ++i) {
    const bool control = planned_[i].role == Role::control;
    if ((rounds_ == 1 || control) && ratios_[first + i] != 1.0)  // not the reference itself
      noise_ratios_.push_back(ratios_[first + i]);
    if (round[i].value && (control || (rounds_ == 1 && !slow[i]))) healthy_values_[round[i].test.nodes.size()].push_back(*round[i].value);
  }
  for (size_t i = 0; i < round.size() && i < planned_.size(); ++i) {
    const auto& plan = planned_[i];
    const auto& nodes = round[i].test.nodes;
    if (plan.role == Role::control) {
      dips_ += slow[i];  // cleared nodes: a slow control is a dip
    } else if (plan.role == Role::single) {
      judge_single(plan.single, nodes[0] == plan.single ? nodes[1] : nodes[0], slow[i], first + i);
    } else if (!slow[i]) {
      for (int n : nodes) cleared_[static_cast<size_t>(n)] = true;
      // Both halves of a slow group at the reference: the group's slow test was a dip.
      if (plan.sibling > static_cast<int>(i) && !slow[static_cast<size_t>(plan.sibling)]) ++dips_;
    } else if (nodes.size() > 3) {
      to_split_.push_back(nodes);
    } else {
      for (int n : nodes)
        if (std::find(singles_.begin(), singles_.end(), n) == singles_.end()) singles_.push_back(n);
    }
  }
}

// How far a healthy group strays: the noise samples' median less three robust deviations (MAD x
// 1.4826), a slow group of the first round being an outlier the MAD ignores. With a few percent of
// noise it sits above `slow_below`, which then decides alone; on a noisy fabric it is lower, and
// only a test below it can name a node. (Tried in logarithms, as bandwidth noise multiplies: with
// 20% Gaussian noise that named 5 healthy nodes in 400 simulated trials, this none.)
double GroupLocator::naming_bar() const {
  const double mid = median(noise_ratios_);
  std::vector<double> deviations;
  for (double r : noise_ratios_) deviations.push_back(std::abs(r - mid));
  return std::min(settings_.slow_below, mid - 3 * 1.4826 * median(deviations));
}

// A node of a slow small group, tested with a cleared partner: at the reference, it is cleared.
// Slow with `confirmations` different cleared partners, it is named if that many of those tests
// fall below the noise floor, once enough groups have measured it; else it is tested
// further, and left unsettled after twice as many slow tests.
void GroupLocator::judge_single(int node, int partner, bool slow, size_t result) {
  const auto n = static_cast<size_t>(node);
  if (!slow) {
    cleared_[n] = true;
    singles_.erase(std::remove(singles_.begin(), singles_.end(), node), singles_.end());
    return;
  }
  slow_partners_[n].push_back(partner);
  implicating_[n].push_back(result);
  const int tests = static_cast<int>(slow_partners_[n].size());
  if (tests < settings_.confirmations) return;
  std::vector<size_t> beyond_noise;
  const double bar = noise_known() ? naming_bar() : 0.0;  // 0: no test is beyond a noise not yet measured
  for (size_t i : implicating_[n])
    if (ratios_[i] < bar) beyond_noise.push_back(i);
  if (static_cast<int>(beyond_noise.size()) >= settings_.confirmations) return name_node(node, beyond_noise);
  if (tests < 2 * settings_.confirmations) return;
  singles_.erase(std::remove(singles_.begin(), singles_.end(), node), singles_.end());
  unsettled_.push_back(fmt::format("{}: slow in {} test(s) with cleared partners, {} of them beyond this fabric's noise (healthy groups "
                                   "put its floor at {:.2f} of the reference): neither named nor cleared",
                                   fabric_.names[n], tests, beyond_noise.size(), bar));
}

void GroupLocator::name_node(int node, const std::vector<size_t>& implicating) {
  const auto n = static_cast<size_t>(node);
  singles_.erase(std::remove(singles_.begin(), singles_.end(), node), singles_.end());
  named_node_[n] = true;
  Fault f;
  f.kind = FaultKind::node;
  f.node = node;
  std::vector<double> ratios;
  for (size_t i : implicating) ratios.push_back(ratios_[i]);
  f.ratio = median(ratios);
  f.implicating = implicating;
  const auto& name = fabric_.names[n];
  f.summary = f.ratio == 0 ? fmt::format("{}: no collective with it completed ({} with cleared partners)", name, f.implicating.size())
                           : fmt::format("{}: slow with every cleared partner, {:.2f} of the reference group, {} test(s)", name, f.ratio,
                                         f.implicating.size());
  named_.push_back(std::move(f));
}

std::vector<std::string> GroupLocator::unresolved() const {
  std::vector<std::string> out = unsettled_;
  for (int n : singles_)
    out.push_back(fmt::format("{}: slow in {} test(s) with cleared partners, no cleared partner left to name or clear it",
                              fabric_.names[static_cast<size_t>(n)], slow_partners_[static_cast<size_t>(n)].size()));
  for (const auto& g : to_split_) out.push_back(fmt::format("a slow group of {} node(s) not split further", g.size()));
  return out;
}

}  // namespace fabricproof::locate
