#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/inventory_rules.hpp"
#include "facts.hpp"
#include "paths.hpp"
#include "report/junit.hpp"
#include "report/markdown.hpp"
#include "report/report.hpp"

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
  r.profile = {{"name", "default"}, {"origin", "built-in:default"}};
  r.build = {{"optional_parts", {{"verbs", true}, {"cuda", false}, {"nccl", false}}}};
  set_cluster(r, c);
  r.findings = check_inventory(c, default_profile(), {});
  r.phases = {{"inventory", Verdict::fail, "", 1.5}, {"verbs", Verdict::skip, "no RDMA device on any node", 0}};
  r.sections["verbs"] = {{"matrix", nlohmann::json::array()}};
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
  r.findings.push_back({"a", "b", Verdict::warn, nullptr, nullptr, "", ""});
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
  r.findings.push_back({"x", "a|b", Verdict::fail, "line1\nline2", nullptr, "", ""});
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
  ASSERT_EQ(write_file_atomic(path, "{\"a\": 1}\n"), "");
  ASSERT_EQ(write_file_atomic(path, "{\"a\": 2}\n"), "");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"a\": 2}\n");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(tmp.path())) ++files;
  EXPECT_EQ(files, 1u);
  const auto error = write_file_atomic((tmp.path() / "missing" / "report.json").string(), "x");
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

// One finding of each verdict and the phases, with characters XML must escape: the golden file
// is what CI dashboards parse.
Report junit_report() {
  Report r;
  r.started_at = "2026-11-29T00:00:00Z";
  r.verdict = Verdict::error;
  r.findings = {
      {"port_state", "node2/mlx5_0:1", Verdict::fail, {{"state", "DOWN"}}, "ACTIVE", "port_state: every port is ACTIVE", "Check the cable <and> the switch port."},
      {"port_state", "node1/mlx5_0:1", Verdict::pass, {{"state", "ACTIVE"}}, "ACTIVE", "port_state: every port is ACTIVE", ""},
      {"roce_mtu", "node1/mlx5_0:1", Verdict::warn, {{"active_mtu", 2048}}, 4096, "roce_mtu: \"4096\" & more", "MTU first."},
      {"gpu_hca_path", "node1/0000:82:00.0", Verdict::skip, {{"class", "unknown"}}, "PIX or PXB", "gpu_hca_path: no NUMA locality", ""},
      {"profile", "site.json", Verdict::error, "site.json: /roce/mtu: unknown key", "valid", "the profile loads\x01", "Fix it."}};
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

}  // namespace
}  // namespace fabricproof
