#include "locate/simulated_fabric.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fabricproof::locate {

double SimulatedFabric::rail_factor(int rail, int a, int b) const {
  double factor = 1;
  for (const auto& f : faults) {
    if (f.rail >= 0 && f.rail != rail) continue;
    bool hits = false;
    switch (f.kind) {
      case FaultKind::node:
      case FaultKind::port: hits = a == f.node || b == f.node; break;
      case FaultKind::link: hits = std::min(a, b) == std::min(f.node, f.peer) && std::max(a, b) == std::max(f.node, f.peer); break;
      case FaultKind::leaf: {
        const int la = fabric.leaf_of(rail, a), lb = fabric.leaf_of(rail, b);
        hits = la != lb && (la == f.leaf || lb == f.leaf);
        break;
      }
    }
    if (hits) factor = std::min(factor, f.factor);
  }
  return factor;
}

std::optional<double> SimulatedFabric::noisy(double factor, std::mt19937_64& rng) const {
  if (factor <= 0) return std::nullopt;
  double v = typical * factor * (1 + noise * std::normal_distribution<double>(0, 1)(rng));
  if (std::uniform_real_distribution<double>(0, 1)(rng) < dip_rate) v *= std::uniform_real_distribution<double>(0.3, 0.8)(rng);
  return v;
}

std::optional<double> SimulatedFabric::measure(const PairTest& t, std::mt19937_64& rng) const {
  return noisy(rail_factor(t.rail, t.a, t.b), rng);
}

std::optional<double> SimulatedFabric::measure(const GroupTest& t, std::mt19937_64& rng) const {
  // A ring through the group: each rail as slow as its slowest hop, the rails summed.
  double sum = 0;
  for (int rail = 0; rail < fabric.rails; ++rail) {
    double slowest = 1;
    for (size_t i = 0; i < t.nodes.size(); ++i)
      slowest = std::min(slowest, rail_factor(rail, t.nodes[i], t.nodes[(i + 1) % t.nodes.size()]));
    if (slowest <= 0) return std::nullopt;  // a dead hop stops the collective
    sum += slowest;
  }
  return noisy(sum / fabric.rails, rng);
}

Fabric make_fabric(int nodes, int rails, int leaf_size) {
  Fabric f;
  f.rails = rails;
  for (int n = 0; n < nodes; ++n) f.names.push_back(fmt::format("node{:04d}", n + 1));
  if (leaf_size > 0) f.leaf.assign(static_cast<size_t>(rails), [&] {
      std::vector<int> row;
      for (int n = 0; n < nodes; ++n) row.push_back(n / leaf_size);
      return row;
    }());
  return f;
}

InjectedFault random_fault(const Fabric& fabric, FaultKind kind, double factor, std::mt19937_64& rng) {
  auto pick = [&](int below) { return std::uniform_int_distribution<int>(0, below - 1)(rng); };
  InjectedFault f;
  f.kind = kind;
  f.factor = factor;
  f.node = pick(fabric.nodes());
  if (kind == FaultKind::port || kind == FaultKind::link || kind == FaultKind::leaf) f.rail = pick(fabric.rails);
  if (kind == FaultKind::link)
    do f.peer = pick(fabric.nodes());
    while (f.peer == f.node);
  if (kind == FaultKind::leaf) f.leaf = pick(fabric.leaf_count(f.rail));
  return f;
}

Score score(const std::vector<InjectedFault>& injected, const std::vector<Fault>& named) {
  auto same = [](const InjectedFault& i, const Fault& f) {
    if (i.kind != f.kind || i.rail != f.rail) return false;
    switch (i.kind) {
      case FaultKind::node:
      case FaultKind::port: return i.node == f.node;
      case FaultKind::link: return std::min(i.node, i.peer) == std::min(f.node, f.peer) && std::max(i.node, i.peer) == std::max(f.node, f.peer);
      case FaultKind::leaf: return i.leaf == f.leaf;
    }
    return false;
  };
  Score s;
  for (const auto& i : injected) (std::any_of(named.begin(), named.end(), [&](const Fault& f) { return same(i, f); }) ? s.found : s.missed)++;
  auto faulty = [&](int node) {
    return std::any_of(injected.begin(), injected.end(), [&](const InjectedFault& i) { return i.kind != FaultKind::leaf && (i.node == node || i.peer == node); });
  };
  for (const auto& f : named) {
    if (std::any_of(injected.begin(), injected.end(), [&](const InjectedFault& i) { return same(i, f); })) continue;
    ++s.false_named;
    const bool leaf_injected = std::any_of(injected.begin(), injected.end(), [&](const InjectedFault& i) { return i.kind == FaultKind::leaf && i.leaf == f.leaf; });
    if (f.kind == FaultKind::leaf ? !leaf_injected : !faulty(f.node) && (f.peer < 0 || !faulty(f.peer))) ++s.healthy_named;
  }
  return s;
}

}  // namespace fabricproof::locate
