#pragma once
// What the localisation planners reason about: the nodes, their rails, where each HCA hangs (its
// leaf switch, when known), the tests they choose and what those measured, and the faults they name.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricproof::locate {

struct Fabric {
  std::vector<std::string> names;        // one per node
  int rails = 1;
  std::vector<std::vector<int>> leaf;    // [rail][node]: the leaf switch of the node's HCA on that rail; empty: unknown
  int nodes() const { return static_cast<int>(names.size()); }
  bool leaves_known() const { return !leaf.empty(); }
  int leaf_of(int rail, int node) const { return leaf.empty() ? 0 : leaf[static_cast<size_t>(rail)][static_cast<size_t>(node)]; }
  int leaf_count(int rail) const;
};

// One verbs pair test on one rail (a < b), and what it measured: a bandwidth, or nothing when the
// test did not complete (a dead port, a lost node).
struct PairTest {
  int rail = 0;
  int a = 0;
  int b = 0;
  bool operator==(const PairTest&) const = default;
};
struct PairResult {
  PairTest test;
  int round = 0;
  std::optional<double> value;
};

// One collective on a group of nodes (all rails at once), and its bus bandwidth.
struct GroupTest {
  std::vector<int> nodes;
};
struct GroupResult {
  GroupTest test;
  int round = 0;
  std::optional<double> value;
};

enum class FaultKind {
  node,  // slow or dead with every partner, on every rail
  port,  // slow or dead with every partner on some rails only: the HCA, its cable or its leaf port
  link,  // one pair slow on a rail, both of its ends fine with everyone else
  leaf,  // the nodes of one leaf fine among themselves and slow across: its uplinks
};
const char* to_string(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::node;
  int node = -1;
  int peer = -1;     // link: the other end
  int rail = -1;     // -1: every rail
  int leaf = -1;
  double ratio = 0;  // median of the implicating tests against the typical one (0: none completed)
  std::vector<size_t> implicating;  // result indices: the tests that named it
  std::vector<size_t> clearing;     // the tests that cleared its partners (or, for a leaf, its nodes)
  std::string summary;              // one line: "node17: slow with every partner, 0.68 of the typical pair, 6 tests"
};

// How much of the fabric the tests exercised: a pass from locate claims no more than this.
struct Coverage {
  uint64_t pairs_tested = 0;    // distinct (rail, a, b)
  uint64_t pairs_total = 0;
  uint64_t leaf_paths_tested = 0;  // distinct (rail, leaf, leaf), a leaf with itself included
  uint64_t leaf_paths_total = 0;
  int nodes_tested = 0;
};

// The healthy rate of a set of tests: their upper quartile, not their median, which a bad leaf or a
// few bad nodes of a small fabric (a third of the tests slow, or more) would drag under the
// threshold. With 3% noise it sits 2% above the healthy median: a healthy test 3 sigma low still passes.
double upper_quartile(std::vector<double> values);

}  // namespace fabricproof::locate
