// The uplink phase end to end on this machine: the real binary under mpirun against stock
// `iperf3 -s` servers on the loopback (Debian's iperf3; skipped with the reason where it is not
// installed). Loopback has no link rate and no bond: what is checked is the orchestration, the
// figures arriving in the report, and each verdict (pass, a need above the uplink, no server).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <thread>

#include "paths.hpp"
#include "run_helpers.hpp"
#include "uplink/iperf3.hpp"

namespace fabricproof {
namespace {

using namespace test;

bool have_iperf3() { return std::system("command -v iperf3 >/dev/null 2>&1") == 0; }

// Waits up to 5 s for `ss ARGS` to list a socket (a server listening, a client connected).
void wait_for_socket(const std::string& ss_args) {
  const std::string listed = "ss -H " + ss_args + " | grep -q .";
  for (int i = 0; i < 50 && std::system(listed.c_str()) != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

// Two servers, one port each, as a user starts them on a storage host.
class Iperf3Servers {
 public:
  Iperf3Servers(const fs::path& dir, std::vector<int> ports) : ports_(std::move(ports)) {
    for (int p : ports_) servers_.push_back(std::make_unique<Background>("exec iperf3 -s -B 127.0.0.1 -p " + std::to_string(p), dir / ("iperf3-" + std::to_string(p) + ".log")));
    // Listening before the run starts: the client would be refused otherwise.
    wait_for_socket(fmt::format("-ltn '( sport = :{} )'", ports_.back()));
  }
  std::string targets() const {
    std::string t;
    for (int p : ports_) t += (t.empty() ? "127.0.0.1:" : ",127.0.0.1:") + std::to_string(p);
    return t;
  }

 private:
  std::vector<int> ports_;
  std::vector<std::unique_ptr<Background>> servers_;  // killed with their group at the end
};

TEST(UplinkPhase, OneFlowAndParallelFlowsReachTheReportAndPass) {
  if (!have_iperf3()) GTEST_SKIP() << "iperf3 is not installed (apt-get install iperf3; scripts/install-deps installs it)";
  TempDir tmp("uplink");
  Iperf3Servers servers(tmp.path(), {15211, 15212});
  const auto out = tmp.path() / "report";
  const auto o = run_shell(mpirun(2) + " run --phases inventory,uplink --uplink-target " + servers.targets() +
                               " --uplink-seconds 1 --uplink-need 0.01 --format json,md,html,prom --out " + out.string(),
                           tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  const auto report = read_report(out);
  const auto& u = report["uplink"];
  ASSERT_EQ(u["nodes"].size(), 1u) << "two ranks on one host are one node: " << u.dump();
  const auto& n = u["nodes"][0];
  EXPECT_EQ(n["path"]["interface"], "lo");
  EXPECT_EQ(n["path"]["rdma"], false);
  for (const char* test : {"single", "parallel", "together"}) {
    EXPECT_EQ(n[test]["status"], "ok") << test << ": " << n[test].dump();
    EXPECT_GT(n[test]["gbps"].get<double>(), 0) << test;
  }
  EXPECT_EQ(n["single"]["flows"], 1);
  EXPECT_EQ(n["parallel"]["flows"], 2) << "a plain interface: 2 flows";
  EXPECT_EQ(n["parallel"]["per_flow_gbps"].size(), 2u);
  const auto aggregate = findings_with_id(report, "uplink_aggregate");
  ASSERT_EQ(aggregate.size(), 1u);
  EXPECT_EQ(aggregate[0]["verdict"], "pass") << aggregate[0].dump();
  // Together is counted over the window every node measured: this node's own, placed on rank 0's clock.
  ASSERT_FALSE(n["together"]["intervals"].empty()) << n["together"].dump();
  EXPECT_GT(n["together"]["ended_at"].get<double>(), 1.7e9);
  EXPECT_NEAR(aggregate[0]["measured"]["common_window_s"].get<double>(), n["together"]["seconds"].get<double>(), 0.2) << aggregate[0].dump();
  EXPECT_NEAR(aggregate[0]["measured"]["gbps"].get<double>(), n["together"]["gbps"].get<double>(), 0.05 * n["together"]["gbps"].get<double>());
  EXPECT_NE(read_text(out / "report.md").find("## Uplink"), std::string::npos);
  EXPECT_NE(read_text(out / "report.html").find("class=\"uplink\""), std::string::npos) << "the per-node chart";
  EXPECT_NE(read_text(out / "report.prom").find("fabricproof_uplink_ingest_bytes_per_second{flows=\"2\",host="), std::string::npos);
}

TEST(UplinkPhase, ANeedAboveWhatTheUplinkCarriesFails) {
  if (!have_iperf3()) GTEST_SKIP() << "iperf3 is not installed (apt-get install iperf3)";
  TempDir tmp("uplink-need");
  Iperf3Servers servers(tmp.path(), {15213});
  const auto out = tmp.path() / "report";
  const auto o = run_shell(mpirun(1) + " run --phases inventory,uplink --uplink-target " + servers.targets() +
                               " --uplink-seconds 1 --uplink-need 100000 --out " + out.string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  const auto report = read_report(out);
  EXPECT_EQ(findings_with_id(report, "uplink_aggregate").at(0)["verdict"], "fail");
  EXPECT_EQ(findings_with_id(report, "uplink_node_share").at(0)["verdict"], "fail");
  EXPECT_EQ(findings_with_id(report, "uplink_single_flow").at(0)["verdict"], "warn");
}

// One rank's uplink phase against `target`, 1 s a test, its report in tmp/report.
Outcome run_uplink_alone(const TempDir& tmp, const std::string& target) {
  return run_shell(mpirun(1) + " run --phases inventory,uplink --uplink-target " + target + " --uplink-seconds 1 --out " + (tmp.path() / "report").string(),
                   tmp.path() / "log");
}

TEST(UplinkPhase, NoServerIsAnErrorNamingIt) {
  if (!have_iperf3()) GTEST_SKIP() << "iperf3 is not installed (apt-get install iperf3)";
  TempDir tmp("uplink-none");
  const auto o = run_uplink_alone(tmp, "127.0.0.1:15219");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  const auto report = read_report(tmp.path() / "report");
  const auto measured = findings_with_id(report, "uplink_measured");
  ASSERT_FALSE(measured.empty());
  for (const auto& f : measured) {
    EXPECT_EQ(f["verdict"], "error");
    EXPECT_NE(f["measured"]["reason"].get<std::string>().find("Connection refused"), std::string::npos) << f.dump();
  }
  EXPECT_EQ(report["verdict"], "error");
}

// A target with no route (".invalid" never resolves, RFC 6761): the node's tests are not measured,
// each with the flows it was planned with, and the report says why; not a pass.
TEST(UplinkPhase, ATargetWithoutARouteIsNotMeasuredAndSaysWhy) {
  TempDir tmp("uplink-no-route");
  const auto o = run_uplink_alone(tmp, "storage.invalid:5201");
  EXPECT_NE(o.exit_code, 0) << o.output;
  const auto report = read_report(tmp.path() / "report");
  ASSERT_EQ(report["uplink"]["nodes"].size(), 1u) << o.output;
  const auto& n = report["uplink"]["nodes"][0];
  EXPECT_NE(n["path"]["error"].get<std::string>().find("'storage.invalid' does not resolve"), std::string::npos) << n.dump();
  for (const char* test : {"single", "parallel", "together"}) EXPECT_EQ(n[test]["status"], "not_measured") << test << ": " << n[test].dump();
  EXPECT_EQ(n["single"]["flows"], 1);
  EXPECT_EQ(n["parallel"]["flows"], 2) << "planned for a node without a route: the default 2";
  EXPECT_NE(o.output.find("1 flow not_measured; 2 flows not_measured"), std::string::npos) << o.output;
  ASSERT_FALSE(findings_with_id(report, "uplink_path").empty());
  EXPECT_EQ(findings_with_id(report, "uplink_path")[0]["verdict"], "error");
}

// Another client's test running on the server, from the moment its connection is up.
std::unique_ptr<Background> busy_server_for(const fs::path& dir, int port, int seconds) {
  auto client = std::make_unique<Background>(fmt::format("exec iperf3 -c 127.0.0.1 -p {} -t {}", port, seconds), dir / "other-client.log");
  wait_for_socket(fmt::format("-tn state established '( dport = :{} )'", port));
  return client;
}

TEST(UplinkEngine, AServerBusyWithAnotherTestIsTriedAgainAndTheTriesCounted) {
  if (!have_iperf3()) GTEST_SKIP() << "iperf3 is not installed (apt-get install iperf3)";
  TempDir tmp("uplink-busy");
  Iperf3Servers server(tmp.path(), {15214});
  const auto other = busy_server_for(tmp.path(), 15214, 1);
  const UplinkFlows f = uplink::run_iperf3({{"127.0.0.1", 15214}, 1, 1, 0, ""});
  EXPECT_EQ(f.status, Status::ok) << f.reason;
  EXPECT_GT(f.gbps, 0);
  EXPECT_GE(f.server_busy_retries, 1) << "the other client's 1 s test was running when this one started";
  EXPECT_LE(f.server_busy_retries, uplink::kIperf3BusyRetries);
}

TEST(UplinkEngine, AServerBusyForLongerThanTheRetriesIsAnErrorSayingSo) {
  if (!have_iperf3()) GTEST_SKIP() << "iperf3 is not installed (apt-get install iperf3)";
  TempDir tmp("uplink-busy-long");
  Iperf3Servers server(tmp.path(), {15215});
  const auto other = busy_server_for(tmp.path(), 15215, 10);
  const UplinkFlows f = uplink::run_iperf3({{"127.0.0.1", 15215}, 2, 1, 0, ""});
  EXPECT_EQ(f.status, Status::error);
  EXPECT_EQ(f.server_busy_retries, uplink::kIperf3BusyRetries);
  EXPECT_EQ(f.flows, 2);
  EXPECT_NE(f.reason.find("iperf3: the server is busy running a test"), std::string::npos) << f.reason;
  EXPECT_NE(f.reason.find("refused as busy 5 times over 3.8 s: is another client testing against this server?"), std::string::npos) << f.reason;
  EXPECT_EQ(busy_retries_note(f), "; server busy, started again 4 time(s)");
}

TEST(UplinkPhase, ThePhaseWithoutATargetIsRefused) {
  TempDir tmp("uplink-cli");
  const auto o = run_shell(std::string(FABRICPROOF_BINARY) + " run --phases inventory,uplink --out " + (tmp.path() / "r").string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("--phases uplink needs --uplink-target"), std::string::npos) << o.output;
  const auto bad = run_shell(std::string(FABRICPROOF_BINARY) + " run --phases uplink --uplink-target host:0 --out " + (tmp.path() / "r").string(),
                             tmp.path() / "log2");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("--uplink-target: 'host:0': port '0' is not 1-65535"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace fabricproof
