// The cluster spec: its loader (every error named by its JSON pointer), the fail-closed rules over a
// finished report, the draft from a known-good run, and the verdict "not proven".
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/profile.hpp"
#include "facts.hpp"
#include "paths.hpp"
#include "report/report.hpp"
#include "spec/draft.hpp"
#include "spec/spec.hpp"
#include "spec/spec_rules.hpp"

namespace fabricproof {
namespace {

using test::with_id;

std::string spec_read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A real lab report (tests/fixtures/reports/README.md): 4 nodes, one rxe each, every pair measured.
Report lab_run_report() { return nlohmann::json::parse(spec_read_text(test::fixture("reports/lab-rate-fault.json"))).get<Report>(); }
ClusterSpec lab_spec_file() { return load_spec_file((test::source_dir() / "specs" / "lab-soft-roce.json").string()).spec.value(); }
Profile lab_spec_profile() { return load_profile("lab-soft-roce").profile.value(); }

std::vector<Finding> spec_failing(const std::vector<Finding>& findings, const std::string& id = "") {
  std::vector<Finding> out;
  for (const auto& f : findings)
    if (f.verdict != Verdict::pass && (id.empty() || f.id == id)) out.push_back(f);
  return out;
}

TEST(Verdict, NotProvenHasItsOwnNameExitCodeAndRank) {
  EXPECT_EQ(to_string(Verdict::not_proven), "not_proven");
  EXPECT_EQ(verdict_label(Verdict::not_proven), "NOT PROVEN");
  EXPECT_EQ(parse_verdict("not_proven"), Verdict::not_proven);
  EXPECT_EQ(exit_code_for(Verdict::pass), 0);
  EXPECT_EQ(exit_code_for(Verdict::warn), 0);
  EXPECT_EQ(exit_code_for(Verdict::fail), 1);
  EXPECT_EQ(exit_code_for(Verdict::error), 2);
  EXPECT_EQ(exit_code_for(Verdict::not_proven), 3);
  EXPECT_EQ(worst(Verdict::warn, Verdict::not_proven), Verdict::not_proven) << "a run that did not look cannot pass";
  EXPECT_EQ(worst(Verdict::fail, Verdict::not_proven), Verdict::fail) << "a failure says more";
}

TEST(Report, APhaseSelectedAndNotRunMakesTheRunNotProvenAndSaysWhy) {
  Report r;
  r.phases = {{"inventory", Verdict::pass, "", 1}, {"verbs", Verdict::not_proven, "no RDMA device on any node", 0},
              {"uplink", Verdict::skip, "not selected with --phases", 0}};
  EXPECT_EQ(r.overall(), Verdict::not_proven);
  EXPECT_EQ(r.not_proven_line(), "not run: verbs (no RDMA device on any node)");
  r.findings.push_back({CheckId::port_state, "node1/mlx5_0:1", Verdict::fail, nullptr, nullptr, "", ""});
  EXPECT_EQ(r.overall(), Verdict::fail);
}

TEST(Spec, TheShippedSpecsLoad) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "specs")) {
    const auto result = load_spec_file(entry.path().string());
    EXPECT_TRUE(result.spec) << entry.path() << ": " << (result.errors.empty() ? "" : result.errors.front());
    loaded += result.spec.has_value();
  }
  EXPECT_GE(loaded, 3) << "the mission's 4x4, the 8-rail node and the lab";
  const auto dgx = load_spec_file((test::source_dir() / "specs" / "dgx-h100-8x8.json").string()).spec.value();
  EXPECT_EQ(dgx.rails.size(), 8u);
  EXPECT_TRUE(spec_needs_nccl(dgx));
  EXPECT_TRUE(spec_needs_gpudirect(dgx));
  EXPECT_EQ(spec_required_phases(dgx), (std::vector<std::string>{"inventory", "verbs", "gpudirect", "collectives", "nccl_audit"}));
}

TEST(Spec, EveryErrorNamesItsPointer) {
  auto errors = [](const std::string& text) { return load_spec_text(text, "s.json").errors; };
  EXPECT_EQ(errors(R"({"schema": "fabricproof.spec/1", "nodes": {"count": 4}})").size(), 0u);
  auto e = errors(R"({"schema": "fabricproof.spec/1", "nodes": {"count": 4}, "per_node": {"rdma_devices": {"count": 4, "rate_gbps": 1e999}}})");
  ASSERT_EQ(e.size(), 1u) << "a number too large for a double is refused, not read as infinity";
  EXPECT_NE(e[0].find("s.json: not JSON"), std::string::npos) << e[0];
  EXPECT_NE(e[0].find("1e999"), std::string::npos) << e[0];
  e = errors(R"({"schema": "fabricproof.spec/1", "nodes": {"count": 4}, "per_node": {"rdma_devices": {"count": 4, "rate_gbps": -5}}})");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("s.json: /per_node/rdma_devices/rate_gbps: must be a finite number from 0.001 to 100000, got -5"), std::string::npos) << e[0];
  e = errors(R"({"schema": "fabricproof.spec/1", "nodes": {"count": 3, "hosts": ["a", "b"]}, "colour": 1})");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_NE(e[0].find("/colour: unknown key"), std::string::npos) << e[0];
  EXPECT_NE(e[1].find("/nodes: count 3 and the 2 hosts listed disagree"), std::string::npos) << e[1];
  e = errors(R"({"schema": "fabricproof.spec/2", "nodes": {}})");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_NE(e[0].find("/schema"), std::string::npos);
  e = errors(R"({"schema": "fabricproof.spec/1", "nodes": {"count": 2}, "require": {"phases": ["verbs", "burn"], "nccl": "yes"}})");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_NE(e[0].find("unknown phase 'burn'"), std::string::npos) << e[0];
  EXPECT_NE(e[1].find("/require/nccl: must be true or false"), std::string::npos) << e[1];
  EXPECT_NE(errors("{not json").at(0).find("s.json: not JSON"), std::string::npos);
}

TEST(SpecRules, TheLabReportPassesTheLabSpec) {
  const auto findings = check_spec(lab_spec_file(), lab_run_report(), lab_spec_profile());
  ASSERT_FALSE(findings.empty());
  EXPECT_TRUE(spec_failing(findings).empty()) << spec_failing(findings).front().id << " " << spec_failing(findings).front().subject;
  // Every rail between every two of the 4 nodes was looked for (none missing), and the devices judged.
  EXPECT_EQ(with_id(findings, "spec_rdma_device").size(), 4u);
  EXPECT_EQ(with_id(findings, "spec_nodes").size(), 1u);
}

// The lab as a 1-rail cluster with a cabling plan: rail 0 is rxe0 on leaf-rail0, and the table puts
// each node on its own switch port. Each port's neighbour as lldpd would report it.
const char* const kCablingSpec = R"({"schema": "fabricproof.spec/1", "nodes": {"count": 4},
  "per_node": {"rails": [{"hca": "rxe0", "gpu": 0, "switch": "leaf-rail0"}]},
  "cabling": {"rail_optimised": true, "cables": [
    {"host": "node1", "hca": "rxe0", "switch": "leaf-rail0", "switch_port": "node1"},
    {"host": "node3", "hca": "rxe0", "port": 1, "switch": "leaf-rail0", "switch_port": "node3"}]}})";

Report cabled_lab(const std::string& node3_switch) {
  auto r = lab_run_report();
  for (auto& n : r.nodes)
    n.rdma_devices.at(0).ports.at(0).neighbour = PortNeighbour{"lldpd", n.host == "node3" ? node3_switch : "leaf-rail0", "mac 52:54:00:00:00:01", n.host, "", ""};
  return r;
}

TEST(SpecRules, TheCablingPlanIsJudgedPortByPortAndAPortNotReadFails) {
  const auto load = load_spec_text(kCablingSpec, "cabling.json");
  ASSERT_TRUE(load.spec) << load.errors.front();
  EXPECT_EQ(load.spec->cabling.cables.size(), 2u);
  EXPECT_EQ(load.spec->rails.at(0).leaf, "leaf-rail0");
  auto passes = with_id(check_spec(*load.spec, cabled_lab("leaf-rail0"), lab_spec_profile()), "spec_cabling");
  ASSERT_EQ(passes.size(), 5u) << "two from the table, two more from the rail's switch, one for rail_optimised";
  for (const auto& f : passes) EXPECT_EQ(f.verdict, Verdict::pass) << f.subject.text();
  const auto moved = spec_failing(check_spec(*load.spec, cabled_lab("leaf-rail1"), lab_spec_profile()), "spec_cabling");
  ASSERT_EQ(moved.size(), 2u) << "the cable, and rail_optimised (a port off its rail's leaf)";
  EXPECT_EQ(moved[1].subject.text(), "rail_optimised");
  EXPECT_EQ(moved[0].subject.text(), "node3/rxe0:1");
  EXPECT_EQ(moved[0].measured.at("switch"), "leaf-rail1");
  EXPECT_EQ(moved[0].expected.at("switch"), "leaf-rail0");
  EXPECT_EQ(moved[0].expected.at("switch_port"), "node3");
  auto unread = cabled_lab("leaf-rail0");
  unread.nodes.at(1).rdma_devices.at(0).ports.at(0).neighbour->unread = "no LLDP neighbour heard on eth1";
  const auto not_read = spec_failing(check_spec(*load.spec, unread, lab_spec_profile()), "spec_cabling");
  ASSERT_EQ(not_read.size(), 2u) << "the cable, and rail_optimised";
  EXPECT_EQ(not_read[0].measured.at("not_read"), "no LLDP neighbour heard on eth1");
}

// rail_optimised alone (no rails declared) is judged on every node's HCAs, and is never silent:
// one leaf per rail passes, two rails on one leaf fail, a port not read fails.
TEST(SpecRules, RailOptimisedWithoutRailsIsJudgedAndFailsClosed) {
  const auto load = load_spec_text(R"({"schema": "fabricproof.spec/1", "nodes": {"count": 4}, "cabling": {"rail_optimised": true}})", "r.json");
  ASSERT_TRUE(load.spec) << load.errors.front();
  auto judged = [&](const Report& r) { return with_id(check_spec(*load.spec, r, lab_spec_profile()), "spec_cabling"); };
  auto two_rails = cabled_lab("leaf-rail0");
  for (auto& n : two_rails.nodes) {
    auto second = n.rdma_devices.at(0);
    second.name = "rxe1";
    second.ports.at(0).neighbour->switch_name = "leaf-rail1";
    n.rdma_devices.push_back(second);
  }
  const auto one_leaf_per_rail = judged(two_rails);
  ASSERT_EQ(one_leaf_per_rail.size(), 1u);
  EXPECT_EQ(one_leaf_per_rail[0].verdict, Verdict::pass) << one_leaf_per_rail[0].measured.dump();
  for (auto& n : two_rails.nodes) n.rdma_devices.at(1).ports.at(0).neighbour->switch_name = "leaf-rail0";
  const auto shared = spec_failing(check_spec(*load.spec, two_rails, lab_spec_profile()));
  ASSERT_EQ(shared.size(), 2u) << "the shared leaf, and the rail_optimised summary";
  EXPECT_EQ(shared[0].id, "cabling_rail_shared");
  EXPECT_EQ(shared[0].subject.text(), "leaf-rail0");
  auto unread = cabled_lab("leaf-rail0");
  unread.nodes.at(2).rdma_devices.at(0).ports.at(0).neighbour->unread = "no LLDP neighbour heard on eth1";
  const auto not_read = judged(unread);
  ASSERT_EQ(not_read.size(), 1u);
  EXPECT_EQ(not_read[0].verdict, Verdict::fail);
  EXPECT_NE(not_read[0].measured.dump().find("no LLDP neighbour heard on eth1"), std::string::npos) << not_read[0].measured.dump();
  auto none = cabled_lab("leaf-rail0");
  for (auto& n : none.nodes) n.rdma_devices.clear();
  EXPECT_EQ(judged(none).at(0).verdict, Verdict::fail) << "no rail port at all is no proof";
}

// The cable table may be a CSV sheet beside the spec: judged as the same table in JSON.
TEST(SpecRules, TheCableSheetIsJudgedAsTheTable) {
  const auto dir = test::fixture("cabling");
  const auto load = load_spec_text(R"({"schema": "fabricproof.spec/1", "nodes": {"count": 4}, "cabling": {"cables": "lab-cable-sheet.csv"}})",
                                   (dir / "lab.spec.json").string());
  ASSERT_TRUE(load.spec) << load.errors.front();
  ASSERT_EQ(load.spec->cabling.cables.size(), 4u);
  const auto moved = spec_failing(check_spec(*load.spec, cabled_lab("leaf-rail1"), lab_spec_profile()), "spec_cabling");
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].subject.text(), "node3/rxe0:1");
  EXPECT_EQ(moved[0].expected.at("switch_port"), "node3");
  const auto missing = load_spec_text(R"({"schema": "fabricproof.spec/1", "nodes": {"count": 4}, "cabling": {"cables": "no-such.csv"}})",
                                      (dir / "lab.spec.json").string());
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_NE(missing.errors[0].find("/cabling/cables: "), std::string::npos) << missing.errors[0];
  EXPECT_NE(missing.errors[0].find("no-such.csv: cannot be read"), std::string::npos) << missing.errors[0];
}

TEST(Spec, CablingErrorsNameTheirPointer) {
  const auto load = load_spec_text(R"({"schema": "fabricproof.spec/1", "nodes": {"count": 1}, "cabling": {"cables": [
    {"host": "n1", "hca": "mlx5_0"}, {"host": "n1", "hca": "mlx5_1", "switch": "a"}, {"host": "n1", "hca": "mlx5_1", "switch": "b"}],
    "rail_optimized": true}})", "c.json");
  ASSERT_EQ(load.errors.size(), 3u);
  EXPECT_EQ(load.errors[0], "c.json: /cabling/rail_optimized: unknown key (known: cables, rail_optimised)");
  EXPECT_EQ(load.errors[1], "c.json: /cabling/cables/0: needs host, hca and switch (port and switch_port are optional)");
  EXPECT_EQ(load.errors[2], "c.json: /cabling/cables/2: n1 mlx5_1 port 1 is listed twice");
}

TEST(SpecRules, AMissingNodeFailsAndItsPairsAreNotMeasured) {
  auto r = lab_run_report();
  r.nodes.pop_back();  // node4 did not take part
  auto spec = lab_spec_file();
  const auto findings = check_spec(spec, r, lab_spec_profile());
  const auto nodes = spec_failing(findings, "spec_nodes");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].measured.at("missing"), nlohmann::json::array({"node4"}));
  // The pairs of node4 were measured in this report; with node4 gone from the spec's hosts it is
  // the node count that fails. A spec of 5 nodes fails on 4 whatever else passed.
  spec.hosts.clear();
  spec.node_count = 5;
  EXPECT_EQ(spec_failing(check_spec(spec, lab_run_report(), lab_spec_profile()), "spec_nodes").size(), 1u);
}

TEST(SpecRules, WhatWasDeclaredAndNotMeasuredFailsWithTheReason) {
  auto r = lab_run_report();
  for (auto& p : r.phases)
    if (p.name == "verbs") p = {"verbs", Verdict::not_proven, "no RDMA device on any node", 0};
  r.verbs.reset();
  const auto findings = check_spec(lab_spec_file(), r, lab_spec_profile());
  const auto phase = spec_failing(findings, "spec_phase");
  ASSERT_EQ(phase.size(), 1u);
  EXPECT_EQ(phase[0].subject, "verbs");
  EXPECT_EQ(phase[0].measured, "no RDMA device on any node");
  EXPECT_EQ(spec_failing(findings, "spec_verbs_pair").size(), 6u) << "6 node pairs x 1 rail, none measured";
}

TEST(SpecRules, NcclRequiredIsNeverMetByTheMpiEngine) {
  auto spec = lab_spec_file();
  spec.nccl = true;
  const auto nccl = spec_failing(check_spec(spec, lab_run_report(), lab_spec_profile()), "spec_nccl");
  ASSERT_EQ(nccl.size(), 1u);
  EXPECT_EQ(nccl[0].measured.at("engine"), "mpi");
  spec.gpudirect = true;
  const auto gdr = spec_failing(check_spec(spec, lab_run_report(), lab_spec_profile()), "spec_gpudirect");
  ASSERT_EQ(gdr.size(), 1u) << "declared, and the report has no GPUDirect figure";
}

TEST(SpecRules, FloorsFailBelowAndWhenNotMeasured) {
  auto spec = lab_spec_file();
  spec.floors.busbw = {{4, 262144, 1000.0}, {4, 262144, 1e-6}, {4, 1ull << 30, 1e-6}};
  spec.floors.verbs_write_bw_gbps = 0.1;
  const auto findings = check_spec(spec, lab_run_report(), lab_spec_profile());
  const auto busbw = with_id(findings, "spec_busbw_floor");
  ASSERT_EQ(busbw.size(), 3u);
  EXPECT_EQ(busbw[0].verdict, Verdict::fail);
  EXPECT_EQ(busbw[1].verdict, Verdict::pass);
  EXPECT_EQ(busbw[2].verdict, Verdict::fail);
  EXPECT_EQ(busbw[2].measured, "not measured");
  // write_bw towards node3 ran at ~0.05 Gb/s in this report (its rate fault): its 3 pairs fail.
  const auto verbs = spec_failing(findings, "spec_verbs_floor");
  ASSERT_EQ(verbs.size(), 3u);
  for (const auto& f : verbs) EXPECT_NE(f.subject.text().find("node3"), std::string::npos) << f.subject;
}

TEST(SpecDraft, ADraftFromAKnownGoodRunLoadsAndPassesOnTheSameRun) {
  const auto r = lab_run_report();
  const auto draft = draft_spec(r, lab_spec_profile(), "lab");
  const auto loaded = load_spec_text(draft.spec.dump(2), "draft");
  ASSERT_TRUE(loaded.spec) << loaded.errors.front();
  EXPECT_EQ(loaded.spec->hosts, (std::vector<std::string>{"node1", "node2", "node3", "node4"}));
  ASSERT_TRUE(loaded.spec->rdma);
  EXPECT_EQ(loaded.spec->rdma->count, 1);
  EXPECT_EQ(loaded.spec->rdma->link_layer, "Ethernet");
  EXPECT_EQ(loaded.spec->rdma->active_mtu, 4096);
  // Only the phases that passed or warned are required: verbs and nccl_audit failed in that run.
  EXPECT_EQ(loaded.spec->phases, (std::vector<std::string>{"inventory", "collectives"}));
  const auto findings = check_spec(*loaded.spec, r, lab_spec_profile());
  EXPECT_TRUE(spec_failing(findings).empty()) << spec_failing(findings).front().id << " " << spec_failing(findings).front().subject;
}

}  // namespace
}  // namespace fabricproof
