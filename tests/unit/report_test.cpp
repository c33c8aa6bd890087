#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "collectives/collective_model.hpp"
#include "collectives/collective_rules.hpp"
#include "inventory/inventory_rules.hpp"
#include "verbs/verbs_model.hpp"
#include "facts.hpp"
#include "paths.hpp"
#include "report/html.hpp"
#include "report/junit.hpp"
#include "report/markdown.hpp"
#include "report/report.hpp"
#include "report/schema_check.hpp"
#include "report/views.hpp"

namespace fabricproof {
namespace {

Report sample_report() {
  auto c = test::cluster({test::node("node1", {test::hca("rxe0", test::roce_port())}, 2),
                          test::node("node2", {test::hca("rxe0", test::roce_port())}, 2)});
  c.nodes[1].rdma_devices[0].ports[0].netdev_mtu = 1500;
  Report r;
  r.started_at = "2026-11-29T00:00:00Z";
  r.finished_at = "2026-11-29T00:01:00Z";
  r.command = {"fabricproof", "run", "--out", "x"};
  r.profile = ProfileRecord{"default", "built-in:default", nullptr};
  r.build = BuildRecord{"", "", {{"verbs", true}, {"cuda", false}, {"nccl", false}}, {}, {}};
  set_cluster(r, c);
  r.findings = check_inventory(c, default_profile(), {});
  r.phases = {{"inventory", Verdict::fail, "", 1.5}, {"verbs", Verdict::skip, "no RDMA device on any node", 0}};
  r.verbs = VerbsSection{};
  r.verdict = r.overall();
  return r;
}

TEST(Report, JsonHasTheContractKeys) {
  const nlohmann::json j = sample_report();
  for (const char* key : {"schema", "verdict", "started_at", "finished_at", "command", "profile", "build", "nodes", "findings", "phases"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["schema"], "fabricproof.report/1");
  EXPECT_EQ(j["verdict"], "fail");
  const auto& node = j["nodes"][0];
  for (const char* key : {"host", "ranks", "rdma_devices", "gpus", "software"}) EXPECT_TRUE(node.contains(key)) << key;
  const auto& dev = node["rdma_devices"][0];
  for (const char* key : {"name", "fw_ver", "pci", "numa_node", "pcie", "ports"}) EXPECT_TRUE(dev.contains(key)) << key;
  const auto& port = dev["ports"][0];
  for (const char* key : {"port", "state", "phys_state", "rate_gbps", "link_layer", "active_mtu", "netdev", "netdev_mtu", "roce_v2_gid_index"})
    EXPECT_TRUE(port.contains(key)) << key;
  const auto& finding = j["findings"][0];
  for (const char* key : {"id", "subject", "verdict", "measured", "expected", "rule", "hint"}) EXPECT_TRUE(finding.contains(key)) << key;
  const auto& phase = j["phases"][0];
  for (const char* key : {"name", "verdict", "reason", "duration_s"}) EXPECT_TRUE(phase.contains(key)) << key;
  EXPECT_EQ(j["rank_map"].size(), 4u);
  EXPECT_EQ(j["rank_map"][3]["host"], "node2");
  EXPECT_EQ(j["rank_map"][3]["local_rank"], 1);
  EXPECT_TRUE(j.contains("verbs"));  // phase sections sit at the top level
}

TEST(Report, JsonRoundTripIsLossless) {
  const nlohmann::json first = sample_report();
  const Report back = first.get<Report>();
  const nlohmann::json second = back;
  EXPECT_EQ(first, second) << nlohmann::json::diff(first, second).dump(1);
}

TEST(Report, OverallVerdictIgnoresSkipsAndTakesTheWorst) {
  Report r;
  r.phases = {{"verbs", Verdict::skip, "x", 0}};
  EXPECT_EQ(r.overall(), Verdict::pass);
  r.findings.push_back({CheckId::probe_read, "b", Verdict::warn, nullptr, nullptr, "", ""});
  EXPECT_EQ(r.overall(), Verdict::warn);
  r.phases.push_back({"inventory", Verdict::error, "profile invalid", 0});
  EXPECT_EQ(r.overall(), Verdict::error);
  EXPECT_EQ(exit_code_for(r.overall()), 2);
  EXPECT_EQ(exit_code_for(Verdict::fail), 1);
  EXPECT_EQ(exit_code_for(Verdict::warn), 0);
}

TEST(Markdown, NamesTheVerdictTheFailuresAndTheInventory) {
  const std::string md = render_markdown(sample_report());
  EXPECT_NE(md.find("# fabricproof acceptance report: FAIL"), std::string::npos);
  EXPECT_NE(md.find("## Needs attention"), std::string::npos);
  EXPECT_NE(md.find("| FAIL | roce_netdev_mtu | node2/rxe0:1 | mtu=1500; netdev=ens1f0 | 9000 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| node1 | rxe0 | 1 | ACTIVE | LINK_UP | 200 (4X HDR) | Ethernet | 4096 | ens1f0 (9000) | 3 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| verbs | SKIP | 0.0 | no RDMA device on any node |"), std::string::npos);
  EXPECT_NE(md.find("cuda: no, nccl: no, verbs: yes"), std::string::npos);
  // Failures come before passes in the full list.
  EXPECT_LT(md.find("| FAIL |", md.find("## All findings")), md.find("| PASS |", md.find("## All findings")));
}

TEST(Markdown, CellsEscapePipesAndNewlines) {
  Report r;
  r.findings.push_back({CheckId::probe_read, "a|b", Verdict::fail, "line1\nline2", nullptr, "", ""});
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("a\\|b"), std::string::npos);
  EXPECT_NE(md.find("line1 line2"), std::string::npos);
}

TEST(Console, SummaryListsWorstFirst) {
  const std::string text = render_console_summary(sample_report(), 3);
  EXPECT_EQ(text.rfind("fabricproof: FAIL", 0), 0u) << text;
  EXPECT_NE(text.find("FAIL   roce_netdev_mtu"), std::string::npos) << text;
  EXPECT_NE(text.find("phase verbs skip: no RDMA device on any node"), std::string::npos);
}

TEST(AtomicWrite, ReplacesTheFileAndLeavesNoTemporary) {
  test::TempDir tmp("atomic");
  const auto path = (tmp.path() / "report.json").string();
  ASSERT_NO_THROW(write_file_atomic(path, "{\"a\": 1}\n"));
  ASSERT_NO_THROW(write_file_atomic(path, "{\"a\": 2}\n"));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"a\": 2}\n");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(tmp.path())) ++files;
  EXPECT_EQ(files, 1u);
  const auto error = failure_of([&] { write_file_atomic((tmp.path() / "missing" / "report.json").string(), "x"); });
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("No such file or directory"), std::string::npos) << *error;
}

// The report lock between a run and `report --finalize`: a second holder waits, then gives up as
// busy; free again once the first is gone. A rename over the report, even within one clock tick,
// is another file (its inode), which is how a run sees that it was taken over.
TEST(ReportLock, ASecondHolderWaitsThenGivesUpAndAReplacedFileIsAnother) {
  test::TempDir tmp("report-lock");
  {
    const ReportLock first(tmp.path().string(), 1);
    ASSERT_EQ(first.state(), ReportLock::State::held);
    const auto asked = std::chrono::steady_clock::now();
    const ReportLock second(tmp.path().string(), 0.2);
    EXPECT_EQ(second.state(), ReportLock::State::busy);
    EXPECT_GE(std::chrono::steady_clock::now() - asked, std::chrono::milliseconds(200)) << "it waited before giving up";
  }
  EXPECT_EQ(ReportLock(tmp.path().string(), 0).state(), ReportLock::State::held);
  EXPECT_EQ(ReportLock((tmp.path() / "missing").string(), 0).state(), ReportLock::State::unsupported);
  const auto path = (tmp.path() / "report.json").string();
  write_file_atomic(path, "the run's\n");
  const auto run_wrote = file_identity(path);
  ASSERT_TRUE(run_wrote);
  EXPECT_EQ(file_identity(path), run_wrote);
  write_file_atomic(path, "the finaliser's\n");
  EXPECT_NE(file_identity(path), run_wrote);
  EXPECT_FALSE(file_identity((tmp.path() / "missing").string()));
}

// One finding of each verdict and the phases, with characters XML must escape: the golden file
// is what CI dashboards parse.
Report junit_report() {
  Report r;
  r.started_at = "2026-11-29T00:00:00Z";
  r.verdict = Verdict::error;
  r.findings = {
      {CheckId::port_state, "node2/mlx5_0:1", Verdict::fail, {{"state", "DOWN"}}, "ACTIVE", "port_state: every port is ACTIVE", "Check the cable <and> the switch port."},
      {CheckId::port_state, "node1/mlx5_0:1", Verdict::pass, {{"state", "ACTIVE"}}, "ACTIVE", "port_state: every port is ACTIVE", ""},
      {CheckId::roce_mtu, "node1/mlx5_0:1", Verdict::warn, {{"active_mtu", 2048}}, 4096, "roce_mtu: \"4096\" & more", "MTU first."},
      {CheckId::gpu_hca_path, "node1/0000:82:00.0", Verdict::skip, {{"class", "unknown"}}, "PIX or PXB", "gpu_hca_path: no NUMA locality", ""},
      {CheckId::profile, "site.json", Verdict::error, "site.json: /roce/mtu: unknown key", "valid", "the profile loads\x01", "Fix it."}};
  r.phases = {{"inventory", Verdict::fail, "", 1}, {"verbs", Verdict::skip, "no RDMA device on any node", 0}, {"collectives", Verdict::error, "rank 3: timeout", 2}};
  return r;
}

TEST(Junit, MatchesTheGoldenFile) {
  const auto path = test::fixture("golden/junit.xml");
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(render_junit(junit_report()), golden.str());
}

TEST(Junit, CountsEveryVerdictAndEscapes) {
  const auto xml = render_junit(junit_report());
  EXPECT_NE(xml.find("<testsuites name=\"fabricproof error\" tests=\"8\" failures=\"1\" errors=\"2\" skipped=\"2\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("Check the cable &lt;and&gt; the switch port."), std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos) << "control characters cannot appear in XML 1.0";
  EXPECT_EQ(xml_escape("a\"b'c&d\x02\te"), "a&quot;b&apos;c&amp;d\te");
}

// A report with every visual section: 3 HCAs (one pair failed, one flagged slow), a sweep at 1
// and 2 nodes, and an NCCL audit where a rank on a host with a hostile name fell back to sockets.
Report visual_report() {
  Report r = sample_report();
  VerbsSection v;
  for (int i = 0; i < 3; ++i)
    v.endpoints.push_back({fmt::format("node{}", i + 1), "mlx5_0", 1, i, 3, "Ethernet", 200.0, 4096, "ACTIVE", "0000:41:00.0", "MT000" + std::to_string(i), ""});
  VerbsOptions o;
  o.tests = {"write_bw", "write_lat"};
  for (auto [a, b] : std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 2}}) {
    PairResult p;
    p.a = a;
    p.b = b;
    p.tests = planned_results(o, a, b);
    for (auto& t : p.tests) {
      if (a == 1 && b == 2) {
        t.status = Status::error;
        t.reason = "remote invalid request error";
      } else if (t.test == "write_bw") {
        t.gbps = (a == 0 && b == 2 && t.from == 0) ? 90.0 : 190.0;
      } else {
        t.latency = LatencyStats{2.0, 2.1, 2.1, 2.5, 3.0, 100};
      }
    }
    v.pairs.push_back(p);
  }
  r.verbs = v;
  r.findings.push_back({CheckId::verbs_pair_outlier, Subject::pair("node1/mlx5_0", "node3/mlx5_0", "write_bw", false), Verdict::fail, 90.0, 190.0, "outlier", "(1) MTU first"});
  r.findings.back().triage = TriageStep::mtu;  // as the verbs rules set it from the diagnosis
  r.findings.push_back({CheckId::verbs_pair_error, Subject::pair("node2/mlx5_0", "node3/mlx5_0", "write_bw", true), Verdict::fail, "error", "ok", "completes", "cable"});
  std::vector<CollResult> results;
  for (int nodes : {1, 2}) {
    CollResult res;
    res.engine = "nccl";
    res.op = "allreduce";
    res.nodes = nodes;
    res.ranks = nodes * 2;
    res.hosts = nodes == 1 ? std::vector<std::string>{"node1"} : std::vector<std::string>{"node1", "node2"};
    for (uint64_t bytes = 8; bytes <= (1u << 20); bytes *= 4) {
      CollRow row;
      row.bytes = bytes;
      row.out_of_place.busbw_GBps = static_cast<double>(bytes) / (1u << 20) * 20 / nodes;
      res.rows.push_back(row);
    }
    results.push_back(res);
  }
  CollectivesSection collectives;
  collectives.engine = "nccl";
  collectives.results = results;
  ClusterFacts cluster;
  cluster.nodes = r.nodes;
  collectives.scaling = scaling_table(results, cluster, default_profile());  // as the phase derives it
  r.collectives = collectives;
  nccl::AuditSection audit;
  audit.facts.socket_fallback = true;
  audit.facts.version = "2.19.3";
  auto connection = [](int rank, int peer, int channel, const std::string& transport, const std::string& host) {
    nccl::Connection c;
    c.rank = rank;
    c.peer = peer;
    c.channel = channel;
    c.transport = transport;
    c.transport_class = nccl::transport_class_of(transport);
    c.host = host;
    c.inter_node = true;
    return c;
  };
  audit.facts.connections = {connection(0, 1, 0, "NET/IB/0/GDRDMA", "node1"), connection(0, 1, 1, "NET/IB/1/GDRDMA", "node1"),
                             connection(1, 0, 1, "NET/Socket/0", "<script>x</script>")};
  r.nccl_audit = audit;
  return r;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(Html, DrawsEveryCellPointAndChannel) {
  const auto html = render_html(visual_report());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(occurrences(html, "<svg class=\"heatmap\""), 4u) << "write_bw, write_lat (+ the planned tests of the matrix)";
  EXPECT_EQ(occurrences(html, "class=\"cell"), 4u * 6) << "3 x 3 minus the diagonal, per matrix";
  EXPECT_EQ(occurrences(html, "class=\"cell flagged\""), 1u) << "node1 -> node3 write_bw is the only measured failing cell";
  EXPECT_EQ(occurrences(html, "class=\"cell nofigure flagged\""), 2u) << "the failed pair, both ways, in write_bw";
  EXPECT_EQ(occurrences(html, "class=\"pt\""), 2u * 9) << "8 B .. 512 KiB by 4: 9 sizes, two node counts";
  EXPECT_EQ(occurrences(html, "class=\"bar\""), 2u);
  EXPECT_EQ(occurrences(html, "class=\"channel tr-socket\""), 1u);
  EXPECT_EQ(occurrences(html, "class=\"channel tr-net\""), 2u);
  EXPECT_EQ(html.find("<script>x</script>"), std::string::npos) << "a host name is text, never markup";
  EXPECT_NE(html.find("&lt;script&gt;x&lt;/script&gt;"), std::string::npos);
}

TEST(Html, IsSelfContained) {
  const auto html = render_html(visual_report());
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(occurrences(html, "http"), occurrences(html, "xmlns=\"http://www.w3.org/2000/svg\"")) << "only the SVG namespace URI";
}

TEST(Html, FindingsTableIsWorstFirstAndSortable) {
  const auto r = visual_report();
  const auto html = render_html(r);
  EXPECT_EQ(occurrences(html, "<tr class=\"finding\">"), r.findings.size());
  EXPECT_NE(html.find("<table class=\"sortable\" id=\"findings-table\">"), std::string::npos);
  const auto first_fail = html.find("data-sort=\"" + std::to_string(static_cast<int>(Verdict::fail)) + "\""), first_pass = html.find("data-sort=\"0\"");
  ASSERT_NE(first_fail, std::string::npos);
  EXPECT_LT(first_fail, first_pass);
}

TEST(Views, TriageFollowsTheSeedOrder) {
  const auto steps = view::triage(visual_report());
  ASSERT_GE(steps.size(), 2u);
  EXPECT_EQ(steps[0].title, "1. MTU") << "node2's netdev MTU 1500 and the outlier whose diagnosis starts with MTU";
  for (size_t i = 1; i < steps.size(); ++i) EXPECT_LT(steps[i - 1].title, steps[i].title);
}

TEST(Views, ScalingHasTheNicCeilingOfTheGroup) {
  const auto charts = view::scaling(visual_report());
  ASSERT_EQ(charts.size(), 1u);
  ASSERT_EQ(charts[0].points.size(), 2u);
  EXPECT_FALSE(charts[0].points[0].ceiling_GBps) << "one node: no NIC in the path";
  ASSERT_TRUE(charts[0].points[1].ceiling_GBps);
  EXPECT_DOUBLE_EQ(*charts[0].points[1].ceiling_GBps, 25.0) << "one 200 Gb/s port per node";
}

TEST(Markdown, HasTheSameSectionsAsTheHtml) {
  const auto md = render_markdown(visual_report());
  for (const char* heading : {"## What to check first", "## Component identity (birth certificate)", "## Verbs matrix: write_bw (Gb/s)",
                              "## Verbs matrix: write_lat", "## Collective sweeps", "## NCCL transport audit"})
    EXPECT_NE(md.find(heading), std::string::npos) << heading;
  EXPECT_NE(md.find("| 90 ! |"), std::string::npos) << "the failing cell is marked";
  EXPECT_NE(md.find("NET/Socket/0 ! |"), std::string::npos);
}

// How a sweep was timed decides what its small sizes mean (the NCCL engine's blocking child or a
// thread per call): said under the sweeps' heading when the engine recorded it, and not otherwise.
TEST(Markdown, SaysHowTheSweepsWereTimed) {
  auto r = visual_report();
  EXPECT_EQ(render_markdown(r).find("Timed by"), std::string::npos) << "no timing recorded (an older report): nothing claimed";
  r.collectives->results[0].timing = "one CUDA event pair over the calls, enqueued on a blocking communicator (as nccl-tests)";
  EXPECT_NE(render_markdown(r).find("Timed by one CUDA event pair over the calls, enqueued on a blocking communicator (as nccl-tests)."),
            std::string::npos);
}

std::string read_fixture(const std::string& relative) {
  std::ifstream in(test::fixture(relative), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A real lab report (tests/fixtures/reports/README.md): every section, failing verbs pairs and a
// NCCL socket fallback. Timestamps and paths are normalised in the fixture, so the output is stable.
TEST(Markdown, MatchesTheGoldenFileForARealLabReport) {
  const auto report = nlohmann::json::parse(read_fixture("reports/lab-rate-fault.json")).get<Report>();
  EXPECT_EQ(render_markdown(report), read_fixture("golden/report.md"))
      << "regenerate with: build/fabricproof report tests/fixtures/reports/lab-rate-fault.json --format md --out /tmp/x, then review the diff";
}

// Nothing in the report is lost or changed on the way through the types. The fixture predates the
// network facts (interfaces, default route, DCB), which read back as "not probed" and are the only
// additions allowed.
TEST(Report, RealLabReportRoundTripsUnchanged) {
  const auto original = nlohmann::json::parse(read_fixture("reports/lab-rate-fault.json"));
  const nlohmann::json again(original.get<Report>());
  const auto differences = nlohmann::json::diff(original, again);
  // Fields newer than the fixture read back as their defaults: the sweep's time statistic (the
  // rows of older reports are the slowest rank's: "max"), the verbs traffic class, window and
  // re-measurements (none: older runs did not re-measure), relaxed ordering (off, as they ran), the
  // NCCL communicator and buffers (today's defaults: the sweep's `timing` says what an older run
  // used), the verbs size curve (none then), why a rank drives an endpoint (not recorded then), and
  // locate's leaf map and one-pair-at-a-time flag, the collective mode, ranks standing for nodes and
  // the collective locate section (locate did not exist; the mode reads back as the CLI's "auto"),
  // and each port's neighbour switch (null: not asked then).
  const std::vector<std::string> newer = {"/qos/dcb", "/default_route_interface", "/interfaces", "/launch_node_address", "/launch_route_interface",
                                           "/qos/default_roce_mode", "/qos/default_roce_tos", "/qos/rdma_cm_unread", "/time_stat", "/timing",
                                           "/nccl_logs_missing", "/options/margin_s", "/options/traffic_class", "/options/traffic_class_source", "/options/remeasure", "/remeasured", "/triage", "/subnet_managers", "/subnet_managers_unread",
                                           "/options/nccl_comm", "/options/gpu_buffers", "/options/relaxed_ordering", "/options/sizes", "/placement",
                                           "/options/leaf_map", "/options/locate_isolated", "/options/mode", "/options/ranks_as_nodes", "/collectives/locate", "/neighbour",
                                           "/target"};  // a pair's subject, typed (read back from its text)
  for (const auto& d : differences) {
    const auto path = d.at("path").get<std::string>();
    const bool allowed = d.at("op") == "add" && std::any_of(newer.begin(), newer.end(), [&](const std::string& n) {
      return path.size() >= n.size() && path.compare(path.size() - n.size(), n.size(), n) == 0;
    });
    EXPECT_TRUE(allowed) << d.dump();
  }
}

// What the writer produces is what the published schema (and `fabricproof report`, which reads a
// report against it) accepts: matrix cells that are a reason (a failed pair, a pair not scheduled)
// included. Rejected until the schema allowed {"reason": ...} cells: a run lost mid-matrix could not
// be finalised, nor a factory report with a failed pair be rendered or compared.
TEST(Report, WhatTheWriterProducesMatchesThePublishedSchema) {
  Report r = visual_report();
  r.gpudirect = GpudirectSection{*r.verbs, *r.verbs, {}, {}};
  const nlohmann::json j = r;
  ASSERT_TRUE(j["verbs"]["matrix"]["write_bw"]["cells"][1][2].is_object()) << "the failed pair's cell is a reason";
  EXPECT_EQ(report_shape_errors(j), std::vector<std::string>{});
  auto odd = j;
  odd["verbs"]["matrix"]["write_bw"]["cells"][1][2] = {{"why", "x"}};
  EXPECT_FALSE(report_shape_errors(odd).empty()) << "a cell that is an object without a reason is not a cell";
}

TEST(Views, GpudirectHostAndGpuMatricesAreDrawnWithTheirFindings) {
  Report r = visual_report();
  r.gpudirect = GpudirectSection{*r.verbs, *r.verbs, {}, {}};
  r.findings.push_back({CheckId::gpudirect_ratio, Subject::pair("node1/mlx5_0", "node2/mlx5_0", "", false), Verdict::fail, 0.4, 0.8, "gpu/host", "nvidia-peermem"});
  const auto all = view::matrices(r);
  ASSERT_EQ(all.size(), 4u + 2u) << "the verbs matrices, then GPUDirect host and GPU write_bw";
  EXPECT_EQ(all[4].title, "GPUDirect, host memory: write_bw (Gb/s)");
  EXPECT_TRUE(all[5].cells[0][1].flagged) << "a gpudirect finding without a test names the pair in both matrices";
  EXPECT_FALSE(all[5].cells[1][0].flagged);
  r.gpudirect->comparison = {{"node1/mlx5_0 -> node2/mlx5_0", 190.0, 76.0, 0.4, Status::ok, ""}};
  EXPECT_NE(render_markdown(r).find("| node1/mlx5_0 -> node2/mlx5_0 | 190.000 | 76.000 | 0.400 | ok |"), std::string::npos);
  EXPECT_NE(render_html(r).find("<td>0.4</td>"), std::string::npos);
}

}  // namespace
}  // namespace fabricproof

namespace fabricproof {
namespace {

// The audit's fallback answer has three values up to the writers: a log that cannot tell is
// "undecidable" in report.md and report.html, never "no".
TEST(Markdown, AnUndecidableSocketFallbackIsNotShownAsNo) {
  Report r;
  r.nccl_audit = nccl::AuditSection{};
  r.nccl_audit->facts.socket_fallback = std::nullopt;
  EXPECT_NE(render_markdown(r).find("socket fallback: **undecidable**"), std::string::npos);
  EXPECT_NE(render_html(r).find("socket fallback: <b>undecidable</b>"), std::string::npos);
  r.nccl_audit->facts.socket_fallback = false;
  EXPECT_NE(render_markdown(r).find("socket fallback: **no**"), std::string::npos);
}

}  // namespace
}  // namespace fabricproof
