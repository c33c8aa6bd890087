#include "locate/pair_locator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/statistics.hpp"
#include "verbs/schedule.hpp"

namespace fabricproof::locate {

// What the results so far say about one rail.
struct PairLocator::RailEvidence {
  double typical = 0;
  std::vector<std::vector<size_t>> by_node;  // result indices
  std::vector<bool> cleared;                 // a test at the typical rate: both ends are fine
  std::vector<bool> named;
  std::set<int> flagged_leaves;              // mostly slow across (one round may be a dip)
  std::vector<int> pending_nodes;            // slow so far, not yet named: test with a cleared partner
  std::vector<std::pair<int, int>> pending_pairs;  // slow between cleared nodes: repeat
  std::vector<Fault> ports, links, leaves;
  int dips = 0;
};

struct PairLocator::Evidence {
  std::vector<char> slow;  // by result index
  std::vector<RailEvidence> rails;
};

PairLocator::PairLocator(Fabric fabric, PairSettings settings)
    : fabric_(std::move(fabric)), settings_(settings), rng_(settings.seed), leaf_meetings_(static_cast<size_t>(fabric_.rails)) {}

bool PairLocator::tested(int rail, int a, int b) const { return tested_.count({rail, std::min(a, b), std::max(a, b)}) > 0; }

void PairLocator::record(const std::vector<PairResult>& round) {
  for (auto r : round) {
    if (r.test.a > r.test.b) std::swap(r.test.a, r.test.b);
    r.round = rounds_ - 1;
    tested_.insert({r.test.rail, r.test.a, r.test.b});
    results_.push_back(r);
  }
}

std::vector<PairTest> PairLocator::next_round() {
  if (stalled_ || rounds_ >= settings_.max_rounds || fabric_.nodes() < 2) return {};
  std::vector<PairTest> tests;
  if (rounds_ < screening_rounds()) {
    for (int rail = 0; rail < fabric_.rails; ++rail) {
      auto round = screening_round(rail);
      tests.insert(tests.end(), round.begin(), round.end());
    }
  } else {
    const auto evidence = analyse();
    for (int rail = 0; rail < fabric_.rails; ++rail) {
      auto round = follow_up(rail, evidence.rails[static_cast<size_t>(rail)]);
      tests.insert(tests.end(), round.begin(), round.end());
    }
  }
  if (tests.empty()) stalled_ = true;
  else ++rounds_;
  return tests;
}

// Up to kEveryPairUpTo nodes the screening is every pair (N-1 rounds at most, no more than the
// screening and its confirmations would take), so that a link between two good nodes is found too.
int PairLocator::screening_rounds() const {
  if (fabric_.nodes() <= kEveryPairUpTo) return static_cast<int>(round_robin(fabric_.nodes()).size());
  return (fabric_.leaves_known() ? 1 : 0) + settings_.screening_cross_rounds;
}

// Screening: with leaves known, first a round inside each leaf (it clears the nodes of a leaf whose
// uplinks are bad), then rounds across; without, rounds of random partners.
std::vector<PairTest> PairLocator::screening_round(int rail) {
  if (fabric_.nodes() <= kEveryPairUpTo) {
    const auto schedule = round_robin(fabric_.nodes());
    std::vector<PairTest> tests;
    for (auto [a, b] : schedule[static_cast<size_t>(rounds_)]) tests.push_back({rail, a, b});
    return tests;
  }
  if (fabric_.leaves_known() && rounds_ == 0) return inside_leaves(rail);
  return across_leaves(rail);
}

std::vector<PairTest> PairLocator::inside_leaves(int rail) {
  std::vector<std::vector<int>> by_leaf(static_cast<size_t>(fabric_.leaf_count(rail)));
  for (int n = 0; n < fabric_.nodes(); ++n) by_leaf[static_cast<size_t>(fabric_.leaf_of(rail, n))].push_back(n);
  std::vector<PairTest> tests;
  std::vector<int> odd;
  for (auto& nodes : by_leaf) {
    std::shuffle(nodes.begin(), nodes.end(), rng_);
    for (size_t i = 0; i + 1 < nodes.size(); i += 2) tests.push_back({rail, std::min(nodes[i], nodes[i + 1]), std::max(nodes[i], nodes[i + 1])});
    if (nodes.size() % 2) odd.push_back(nodes.back());
  }
  for (size_t i = 0; i + 1 < odd.size(); i += 2) tests.push_back({rail, std::min(odd[i], odd[i + 1]), std::max(odd[i], odd[i + 1])});
  return tests;
}

// A round of disjoint pairs across leaves: each node takes, among a few leaves that still have
// nodes free, the one its leaf has met least, so that every leaf meets as many others as it can
// (and every leaf-to-leaf path is crossed) in few rounds. Unknown leaves: random partners, new ones
// where it can.
std::vector<PairTest> PairLocator::across_leaves(int rail) {
  const int leaves = fabric_.leaf_count(rail);
  std::vector<std::vector<int>> free(static_cast<size_t>(leaves));
  std::vector<int> order(static_cast<size_t>(fabric_.nodes()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng_);
  for (int n : order) free[static_cast<size_t>(fabric_.leaf_of(rail, n))].push_back(n);
  std::vector<int> open;  // leaves with free nodes
  for (int l = 0; l < leaves; ++l)
    if (!free[static_cast<size_t>(l)].empty()) open.push_back(l);
  auto& met = leaf_meetings_[static_cast<size_t>(rail)];
  std::vector<bool> busy(static_cast<size_t>(fabric_.nodes()));
  std::vector<PairTest> tests;
  auto take = [&](int leaf, int x) {  // a free node of `leaf`, one not yet tested with x if it can
    auto& nodes = free[static_cast<size_t>(leaf)];
    while (!nodes.empty() && busy[static_cast<size_t>(nodes.back())]) nodes.pop_back();
    for (size_t k = nodes.size(), tries = 0; k-- > 0 && tries < 4; ++tries)
      if (!busy[static_cast<size_t>(nodes[k])] && nodes[k] != x && !tested(rail, x, nodes[k])) return nodes[k];
    for (size_t k = nodes.size(); k-- > 0;)
      if (!busy[static_cast<size_t>(nodes[k])] && nodes[k] != x) return nodes[k];
    return -1;
  };
  for (int x : order) {
    if (busy[static_cast<size_t>(x)]) continue;
    busy[static_cast<size_t>(x)] = true;
    const int lx = fabric_.leaf_of(rail, x);
    int best = -1, best_met = 0;
    for (int tries = 0; tries < 8 && !open.empty(); ++tries) {
      const size_t pick = std::uniform_int_distribution<size_t>(0, open.size() - 1)(rng_);
      const int l = open[pick];
      if (take(l, x) < 0) {  // no free node left there
        open[pick] = open.back();
        open.pop_back();
        continue;
      }
      const int m = met[{std::min(lx, l), std::max(lx, l)}] + (l == lx && leaves > 1 ? 1 << 20 : 0);
      if (best < 0 || m < best_met) best = l, best_met = m;
    }
    const int y = best < 0 ? -1 : take(best, x);
    if (y < 0) continue;  // x rests this round
    busy[static_cast<size_t>(y)] = true;
    ++met[{std::min(lx, best), std::max(lx, best)}];
    tests.push_back({rail, std::min(x, y), std::max(x, y)});
  }
  return tests;
}

}  // namespace fabricproof::locate

namespace fabricproof::locate {

PairLocator::Evidence PairLocator::analyse() const {
  Evidence e;
  e.slow.assign(results_.size(), 0);
  e.rails.resize(static_cast<size_t>(fabric_.rails));
  const int screening = screening_rounds();
  for (int rail = 0; rail < fabric_.rails; ++rail) {
    auto& r = e.rails[static_cast<size_t>(rail)];
    std::vector<double> values;
    r.by_node.assign(static_cast<size_t>(fabric_.nodes()), {});
    for (size_t i = 0; i < results_.size(); ++i) {
      if (results_[i].test.rail != rail) continue;
      // The healthy rate from the screening alone: its pairs were chosen blind, the follow-ups are
      // aimed at suspects (mostly slow: in a small fabric with a bad leaf they outnumber the rest).
      if (results_[i].value && results_[i].round < screening) values.push_back(*results_[i].value);
      r.by_node[static_cast<size_t>(results_[i].test.a)].push_back(i);
      r.by_node[static_cast<size_t>(results_[i].test.b)].push_back(i);
    }
    r.typical = settings_.expected.value_or(upper_quartile(values));
    r.cleared.assign(static_cast<size_t>(fabric_.nodes()), false);
    r.named.assign(static_cast<size_t>(fabric_.nodes()), false);
    for (size_t i = 0; i < results_.size(); ++i) {
      const auto& t = results_[i];
      if (t.test.rail != rail) continue;
      e.slow[i] = !t.value || *t.value < settings_.slow_below * r.typical;
      if (!e.slow[i]) r.cleared[static_cast<size_t>(t.test.a)] = r.cleared[static_cast<size_t>(t.test.b)] = true;
    }
  }
  for (int rail = 0; rail < fabric_.rails; ++rail) {
    auto& r = e.rails[static_cast<size_t>(rail)];
    flag_leaves(rail, r, e.slow);
    judge_endpoints(rail, r, e.slow);
    judge_pairs(rail, r, e.slow);
  }
  return e;
}

bool PairLocator::across_flagged(int rail, const RailEvidence& r, const PairTest& t) const {
  const int la = fabric_.leaf_of(rail, t.a), lb = fabric_.leaf_of(rail, t.b);
  return la != lb && (r.flagged_leaves.count(la) || r.flagged_leaves.count(lb));
}

// A leaf whose tests across (between cleared nodes) are mostly slow, with at least two other
// leaves, is flagged; slow in two rounds, it is named: its nodes are fine (cleared), its uplinks not.
// One leaf at a time, the worst first, and the tests across a flagged leaf no longer count against
// the others: a bad leaf makes every other leaf's tests with it slow.
void PairLocator::flag_leaves(int rail, RailEvidence& r, const std::vector<char>& slow) const {
  if (!fabric_.leaves_known()) return;
  while (true) {
    auto tallies = tally_leaves(rail, r, slow);
    const LeafTally* worst = nullptr;
    for (const auto& [leaf, t] : tallies) {
      if (r.flagged_leaves.count(leaf) || t.across < 3 || 2 * t.slow < t.across || t.slow_leaves.size() < 2) continue;
      if (!worst || t.slow * worst->across > worst->slow * t.across) worst = &t;
    }
    if (!worst) return;
    r.flagged_leaves.insert(worst->leaf);
    if (worst->slow_rounds.size() < 2) continue;
    Fault f;
    f.kind = FaultKind::leaf;
    f.leaf = worst->leaf;
    f.rail = rail;
    f.ratio = r.typical > 0 ? median(worst->values) / r.typical : 0;
    f.implicating = worst->implicating;
    f.clearing = worst->clearing;
    f.summary = fmt::format("leaf {} on rail {}: its nodes fine among themselves ({} test(s)), slow across: {} of {} test(s) with {} other leaves, "
                            "{:.2f} of the typical pair",
                            f.leaf, rail, worst->inside_ok, worst->slow, worst->across, worst->slow_leaves.size(), f.ratio);
    r.leaves.push_back(std::move(f));
  }
}

// Per leaf: its tests inside at the typical rate, and its tests across between cleared nodes
// (those with a flagged leaf left out).
std::map<int, PairLocator::LeafTally> PairLocator::tally_leaves(int rail, const RailEvidence& r, const std::vector<char>& slow) const {
  std::map<int, LeafTally> by_leaf;
  for (size_t i = 0; i < results_.size(); ++i) {
    const auto& t = results_[i];
    if (t.test.rail != rail) continue;
    const int la = fabric_.leaf_of(rail, t.test.a), lb = fabric_.leaf_of(rail, t.test.b);
    if (la == lb) {
      if (!slow[i]) ++by_leaf[la].inside_ok, by_leaf[la].clearing.push_back(i);
      continue;
    }
    if (!r.cleared[static_cast<size_t>(t.test.a)] || !r.cleared[static_cast<size_t>(t.test.b)]) continue;
    for (auto [mine, other] : {std::pair{la, lb}, {lb, la}}) {
      if (r.flagged_leaves.count(other)) continue;
      auto& tally = by_leaf[mine];
      tally.leaf = mine;
      ++tally.across;
      if (!slow[i]) continue;
      ++tally.slow;
      tally.slow_leaves.insert(other);
      tally.slow_rounds.insert(t.round);
      tally.implicating.push_back(i);
      tally.values.push_back(t.value.value_or(0));
    }
  }
  return by_leaf;
}

}  // namespace fabricproof::locate

namespace fabricproof::locate {
namespace {

int other_end(const PairTest& t, int n) { return t.a == n ? t.b : t.a; }

}  // namespace

// What cleared `node`: its first test at the typical rate, into the fault's evidence.
void PairLocator::add_clearing(const RailEvidence& r, const std::vector<char>& slow, int node, Fault& f) const {
  for (size_t i : r.by_node[static_cast<size_t>(node)])
    if (!slow[i]) {
      f.clearing.push_back(i);
      return;
    }
}

// A node without a test at the typical rate is named once `confirmations` tests with cleared
// partners found it slow, with at least three different partners (all it has, in a smaller
// fabric; one partner alone would be a link), one of them from its own leaf (with leaves known):
// tests across a flagged leaf do not count, the leaf explains them. Until then it is pending.
void PairLocator::judge_endpoints(int rail, RailEvidence& r, const std::vector<char>& slow) const {
  std::map<int, int> leaf_size;
  for (int n = 0; n < fabric_.nodes(); ++n) ++leaf_size[fabric_.leaf_of(rail, n)];
  for (int n = 0; n < fabric_.nodes(); ++n) {
    if (r.cleared[static_cast<size_t>(n)]) continue;
    std::set<int> partners;
    bool inside = false;  // a witness from its own leaf: tests across alone cannot tell it from its leaf's uplinks
    Fault f;
    std::vector<double> values;
    for (size_t i : r.by_node[static_cast<size_t>(n)]) {
      const int p = other_end(results_[i].test, n);
      if (!r.cleared[static_cast<size_t>(p)] || across_flagged(rail, r, results_[i].test)) continue;
      partners.insert(p);
      inside |= fabric_.leaf_of(rail, p) == fabric_.leaf_of(rail, n);
      f.implicating.push_back(i);
      values.push_back(results_[i].value.value_or(0));
    }
    const auto distinct_needed = static_cast<size_t>(std::min(3, fabric_.nodes() - 1));
    const bool placed = inside || leaf_size[fabric_.leaf_of(rail, n)] == 1;
    if (static_cast<int>(f.implicating.size()) < settings_.confirmations || partners.size() < distinct_needed || !placed) {
      r.pending_nodes.push_back(n);
      continue;
    }
    r.named[static_cast<size_t>(n)] = true;
    f.kind = FaultKind::port;
    f.node = n;
    f.rail = rail;
    f.ratio = r.typical > 0 ? median(values) / r.typical : 0;
    for (int p : partners) add_clearing(r, slow, p, f);
    r.ports.push_back(std::move(f));
  }
}

// A slow test between two cleared nodes (not across a flagged leaf) is repeated: one repeat at the
// typical rate makes it a transient dip; `pair_repeats` slow repeats make it a link.
void PairLocator::judge_pairs(int rail, RailEvidence& r, const std::vector<char>& slow) const {
  std::set<std::pair<int, int>> suspects;
  for (size_t i = 0; i < results_.size(); ++i) {
    const auto& t = results_[i].test;
    if (t.rail != rail || !slow[i] || !r.cleared[static_cast<size_t>(t.a)] || !r.cleared[static_cast<size_t>(t.b)]) continue;
    if (!across_flagged(rail, r, t)) suspects.insert({t.a, t.b});
  }
  for (auto [a, b] : suspects) {
    Fault f;
    int ok = 0;
    std::vector<double> values;
    for (size_t i : r.by_node[static_cast<size_t>(a)]) {
      if (other_end(results_[i].test, a) != b) continue;
      if (!slow[i]) ++ok;
      else f.implicating.push_back(i), values.push_back(results_[i].value.value_or(0));
    }
    if (ok > 0) {
      r.dips += static_cast<int>(f.implicating.size());
      continue;
    }
    if (static_cast<int>(f.implicating.size()) < 1 + settings_.pair_repeats) {
      r.pending_pairs.push_back({a, b});
      continue;
    }
    f.kind = FaultKind::link;
    f.node = a;
    f.peer = b;
    f.rail = rail;
    f.ratio = r.typical > 0 ? median(values) / r.typical : 0;
    for (int end : {a, b}) add_clearing(r, slow, end, f);
    f.summary = fmt::format("{} <-> {} on rail {}: {:.2f} of the typical pair in {} test(s); both fine with other partners", fabric_.names[static_cast<size_t>(a)],
                            fabric_.names[static_cast<size_t>(b)], rail, f.ratio, f.implicating.size());
    r.links.push_back(std::move(f));
  }
}

}  // namespace fabricproof::locate

namespace fabricproof::locate {

// After screening: slow pairs between cleared nodes again; each pending node with a cleared partner
// it has not met (from its own leaf first, so that a leaf's uplinks cannot pass for the node); the
// nodes of a flagged leaf across to cleared nodes of other leaves.
std::vector<PairTest> PairLocator::follow_up(int rail, const RailEvidence& r) {
  std::vector<bool> busy(static_cast<size_t>(fabric_.nodes()));
  std::vector<PairTest> tests;
  auto add = [&](int a, int b) {
    busy[static_cast<size_t>(a)] = busy[static_cast<size_t>(b)] = true;
    tests.push_back({rail, std::min(a, b), std::max(a, b)});
  };
  for (auto [a, b] : r.pending_pairs)
    if (!busy[static_cast<size_t>(a)] && !busy[static_cast<size_t>(b)]) add(a, b);
  const int leaves = fabric_.leaf_count(rail);
  std::vector<std::vector<int>> partners(static_cast<size_t>(leaves));  // cleared nodes by leaf
  for (int n = 0; n < fabric_.nodes(); ++n)
    if (r.cleared[static_cast<size_t>(n)]) partners[static_cast<size_t>(fabric_.leaf_of(rail, n))].push_back(n);
  for (auto& in_leaf : partners) std::shuffle(in_leaf.begin(), in_leaf.end(), rng_);
  // A new partner; where none is left, one met before if `again` (a repeat is as good a witness:
  // a dip does not come back on demand).
  auto partner_in = [&](int leaf, int x, bool again) {
    int met = -1;
    for (int p : partners[static_cast<size_t>(leaf)]) {
      if (busy[static_cast<size_t>(p)] || p == x) continue;
      if (!tested(rail, x, p)) return p;
      if (met < 0) met = p;
    }
    return again ? met : -1;
  };
  auto partner_across = [&](int x, bool own_leaf_first) {  // the first leaves tried from a random start
    const int lx = fabric_.leaf_of(rail, x);
    // A small fabric has no new partners left; in a flagged leaf only the leaf's own nodes count.
    const bool again = fabric_.nodes() <= kEveryPairUpTo || r.flagged_leaves.count(lx) > 0;
    if (own_leaf_first)
      if (const int p = partner_in(lx, x, again); p >= 0) return p;
    const int start = std::uniform_int_distribution<int>(0, leaves - 1)(rng_);
    for (int k = 0; k < leaves; ++k) {
      const int l = (start + k) % leaves;
      if (l == lx || r.flagged_leaves.count(l)) continue;
      if (const int p = partner_in(l, x, false); p >= 0) return p;
    }
    return -1;
  };
  for (int x : r.pending_nodes)
    if (!busy[static_cast<size_t>(x)])
      if (const int p = partner_across(x, true); p >= 0) add(x, p);
  for (int leaf : r.flagged_leaves) {
    if (std::any_of(r.leaves.begin(), r.leaves.end(), [&](const Fault& f) { return f.leaf == leaf; })) continue;
    for (int x : partners[static_cast<size_t>(leaf)])
      if (!busy[static_cast<size_t>(x)])
        if (const int p = partner_across(x, false); p >= 0) add(x, p);
  }
  return tests;
}

// Ports of one node named on every rail are the node.
std::vector<Fault> PairLocator::merge_ports(std::vector<Fault> ports, const Evidence& e) const {
  std::map<int, std::vector<Fault>> by_node;
  for (auto& f : ports) by_node[f.node].push_back(std::move(f));
  std::vector<Fault> out;
  for (auto& [node, faults] : by_node) {
    const std::string& name = fabric_.names[static_cast<size_t>(node)];
    if (static_cast<int>(faults.size()) == fabric_.rails) {
      Fault f = faults.front();
      f.kind = FaultKind::node;
      f.rail = -1;
      std::vector<double> ratios;
      for (size_t k = 0; k < faults.size(); ++k) {
        ratios.push_back(faults[k].ratio);
        if (k == 0) continue;
        f.implicating.insert(f.implicating.end(), faults[k].implicating.begin(), faults[k].implicating.end());
        f.clearing.insert(f.clearing.end(), faults[k].clearing.begin(), faults[k].clearing.end());
      }
      f.ratio = median(ratios);
      const std::string rails = fabric_.rails > 1 ? fmt::format(" on all {} rails", fabric_.rails) : "";
      f.summary = f.ratio == 0 ? fmt::format("{}: no test with it completed{} ({} test(s))", name, rails, f.implicating.size())
                               : fmt::format("{}: slow with every partner{}, {:.2f} of the typical pair, {} test(s)", name, rails, f.ratio, f.implicating.size());
      out.push_back(std::move(f));
      continue;
    }
    int unsettled = 0;  // rails where the node is neither named nor cleared
    for (const auto& r : e.rails) unsettled += !r.cleared[static_cast<size_t>(node)] && !r.named[static_cast<size_t>(node)];
    const std::string others = unsettled ? fmt::format("{} other rail(s) not settled", unsettled) : "its other rails fine";
    for (auto& f : faults) {
      f.summary = f.ratio == 0 ? fmt::format("{} on rail {}: no test with it completed ({} test(s)); {}", name, f.rail, f.implicating.size(), others)
                               : fmt::format("{} on rail {}: slow with every partner, {:.2f} of the typical pair, {} test(s); {}", name, f.rail, f.ratio,
                                             f.implicating.size(), others);
      out.push_back(std::move(f));
    }
  }
  return out;
}

PairAnswer PairLocator::answer() const {
  const auto e = analyse();
  PairAnswer out;
  std::vector<Fault> ports;
  for (const auto& r : e.rails) ports.insert(ports.end(), r.ports.begin(), r.ports.end());
  out.faults = merge_ports(std::move(ports), e);
  for (int rail = 0; rail < fabric_.rails; ++rail) {
    const auto& r = e.rails[static_cast<size_t>(rail)];
    out.faults.insert(out.faults.end(), r.links.begin(), r.links.end());
    out.faults.insert(out.faults.end(), r.leaves.begin(), r.leaves.end());
    out.transient_dips += r.dips;
    for (int n : r.pending_nodes)
      out.unresolved.push_back(fmt::format("{} on rail {}: {} slow test(s), not enough cleared partners to name or clear it",
                                           fabric_.names[static_cast<size_t>(n)], rail, r.by_node[static_cast<size_t>(n)].size()));
    for (auto [a, b] : r.pending_pairs)
      out.unresolved.push_back(fmt::format("{} <-> {} on rail {}: slow, not repeated enough to name or clear it", fabric_.names[static_cast<size_t>(a)],
                                           fabric_.names[static_cast<size_t>(b)], rail));
  }
  return out;
}

Coverage PairLocator::coverage() const {
  Coverage c;
  const auto n = static_cast<uint64_t>(fabric_.nodes());
  c.pairs_total = static_cast<uint64_t>(fabric_.rails) * n * (n - 1) / 2;
  c.pairs_tested = tested_.size();
  std::set<std::tuple<int, int, int>> paths;
  std::set<int> nodes;
  for (const auto& [rail, a, b] : tested_) {
    const int la = fabric_.leaf_of(rail, a), lb = fabric_.leaf_of(rail, b);
    paths.insert({rail, std::min(la, lb), std::max(la, lb)});
    nodes.insert(a);
    nodes.insert(b);
  }
  for (int rail = 0; rail < fabric_.rails; ++rail) {
    const auto l = static_cast<uint64_t>(fabric_.leaf_count(rail));
    c.leaf_paths_total += l * (l + 1) / 2;
  }
  c.leaf_paths_tested = paths.size();
  c.nodes_tested = static_cast<int>(nodes.size());
  return c;
}

}  // namespace fabricproof::locate
