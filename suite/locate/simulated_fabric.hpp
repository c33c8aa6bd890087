#pragma once
// A model of a cluster's fabric for the localisation planners' tests and benchmark (never used by a
// run): every healthy test measures `typical` with Gaussian noise, a rare one dips (a transient),
// and injected faults slow or kill the tests they touch, each as the real fault would:
// a node or port every test with it (on its rail, for a port), a link the tests of one pair, a
// leaf every test across it (its uplinks).
#include <optional>
#include <random>
#include <vector>

#include "locate/fabric.hpp"

namespace fabricproof::locate {

struct InjectedFault {
  FaultKind kind = FaultKind::node;
  int node = -1;
  int peer = -1;
  int rail = -1;  // -1: every rail
  int leaf = -1;
  double factor = 0.7;  // 0: dead (its tests do not complete)
};

struct SimulatedFabric {
  Fabric fabric;
  double typical = 400;     // Gb/s of a healthy pair (or busbw of a healthy group)
  double noise = 0.03;      // relative standard deviation
  double dip_rate = 0.01;   // share of tests that dip, to 0.3-0.8 of what they would measure
  std::vector<InjectedFault> faults;

  std::optional<double> measure(const PairTest& t, std::mt19937_64& rng) const;
  // A collective over the group on every rail: as slow as its slowest member's rails (a port fault
  // costs its share of the rails), and as a leaf's uplinks when the group spans that leaf and others.
  std::optional<double> measure(const GroupTest& t, std::mt19937_64& rng) const;

 private:
  double rail_factor(int rail, int a, int b) const;
  std::optional<double> noisy(double factor, std::mt19937_64& rng) const;
};

// `nodes` nodes named node0001..., `rails` rails, leaves of `leaf_size` nodes (the same on every
// rail; 0: leaves unknown).
Fabric make_fabric(int nodes, int rails, int leaf_size);

// A fault of `kind` at random places (a leaf fault needs leaves), slowing to `factor`.
InjectedFault random_fault(const Fabric& fabric, FaultKind kind, double factor, std::mt19937_64& rng);

// Whether the planner's faults name exactly the injected ones (a node fault matched by the same
// node; a port by node and rail; a link by its pair and rail; a leaf by leaf and rail), how many
// named faults are not injected, and how many of those accuse the healthy.
struct Score {
  int found = 0;
  int missed = 0;
  int false_named = 0;    // named faults that are not an injected one as it is (a faulty node named on some rails only counts)
  int healthy_named = 0;  // of those, the ones that accuse a healthy node (no fault of its own), pair or leaf
};
Score score(const std::vector<InjectedFault>& injected, const std::vector<Fault>& named);

}  // namespace fabricproof::locate
