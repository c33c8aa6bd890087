// The soak: durations, the rules over a time line (link down, port errors, BER, stability, load),
// the views, and the sampler on a copy of a real sysfs tree.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "paths.hpp"
#include "report/html.hpp"
#include "report/markdown.hpp"
#include "report/report.hpp"
#include "report/schema_check.hpp"
#include "report/soak_view.hpp"
#include "soak/port_sampler.hpp"
#include "soak/soak_rules.hpp"

namespace fabricproof {
namespace {

namespace fs = std::filesystem;

PortSample ib_port(const std::string& device, std::map<std::string, uint64_t> counters, std::string state = "ACTIVE") {
  return {device, 1, "", "InfiniBand", std::move(state), 400.0, std::move(counters)};
}

NodeSample node_at(const std::string& host, double t, std::vector<PortSample> ports) { return {host, t, "2026-12-05T10:00:00Z", std::move(ports), {}, {}, true}; }

// Two nodes sampled at 0, 10, 20 and 30 s; node2's port loses its link between 10 and 20. The
// samples between the first and last hold only what changed, as the sampler writes them.
SoakSection two_nodes_node2_link_down() {
  SoakSection s;
  s.duration_s = 30;
  s.interval_s = 10;
  s.finished = true;
  for (double t : {0.0, 10.0, 20.0, 30.0}) {
    const bool full = t == 0 || t == 30;
    // node1's traffic and carrier-change counters move at every sample: background, never an event.
    const uint64_t moving = static_cast<uint64_t>(t);
    s.samples.push_back(node_at("node1", t, {ib_port("mlx5_0", full ? std::map<std::string, uint64_t>{{"link_downed", 2}, {"port_xmit_data", 100 + moving},
                                                                                                      {"netdev.carrier_changes", 3 + moving}}
                                                                   : std::map<std::string, uint64_t>{{"port_xmit_data", 100 + moving},
                                                                                                     {"netdev.carrier_changes", 3 + moving}})}));
    const uint64_t downed = t >= 20 ? 1 : 0;
    std::map<std::string, uint64_t> counters{{"link_downed", downed}};
    if (!full && t != 20) counters.clear();
    s.samples.push_back(node_at("node2", t, {ib_port("mlx5_0", counters)}));
  }
  return s;
}

const Finding* find(const std::vector<Finding>& findings, const std::string& id, const std::string& subject) {
  for (const auto& f : findings)
    if (f.id == id && f.subject.text() == subject) return &f;
  return nullptr;
}

TEST(SoakDuration, ReadsUnitsAndRefusesTheRest) {
  EXPECT_EQ(parse_duration("2h"), 7200);
  EXPECT_EQ(parse_duration("90s"), 90);
  EXPECT_EQ(parse_duration("10m"), 600);
  EXPECT_EQ(parse_duration("1d"), 86400);
  EXPECT_EQ(parse_duration("3600"), 3600);
  EXPECT_EQ(parse_duration("1.5h"), 5400);
  for (const char* bad : {"", "2x", "-1h", "0", "h", "nan", "1 h"}) EXPECT_FALSE(parse_duration(bad)) << bad;
  EXPECT_EQ(format_soak_time(95), "1:35");
  EXPECT_EQ(format_soak_time(4530), "1:15:30");
}

TEST(SoakRules, ALinkDownFailsNamingThePortAndTheMinute) {
  const auto findings = check_soak(two_nodes_node2_link_down(), default_profile());
  const auto* down = find(findings, "soak_link_down", "node2/mlx5_0:1");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->verdict, Verdict::fail);
  ASSERT_EQ(down->measured.at("events").size(), 1u);
  EXPECT_EQ(down->measured.at("events")[0].at("between_s"), nlohmann::json({10.0, 20.0}));
  EXPECT_NE(down->hint.find("between 0:10 and 0:20 into the soak (minute 1)"), std::string::npos) << down->hint;
  EXPECT_NE(down->hint.find("link_downed +1"), std::string::npos) << down->hint;
  // node1's link_downed stood at 2 throughout (earlier flaps are not the soak's), carried forward
  // through the samples that left it out.
  const auto* healthy = find(findings, "soak_link_down", "node1/mlx5_0:1");
  ASSERT_NE(healthy, nullptr);
  EXPECT_EQ(healthy->verdict, Verdict::pass);
}

TEST(SoakRules, TheCarrierGoingDownOrAPortNotActiveIsALinkDownToo) {
  SoakSection s;
  s.samples = {node_at("node3", 0, {ib_port("rxe0", {{"netdev.carrier_down_count", 4}}), ib_port("rxe1", {})}),
               node_at("node3", 10, {ib_port("rxe0", {{"netdev.carrier_down_count", 5}}), ib_port("rxe1", {}, "DOWN")})};
  const auto findings = check_soak(s, default_profile());
  ASSERT_NE(find(findings, "soak_link_down", "node3/rxe0:1"), nullptr);
  EXPECT_EQ(find(findings, "soak_link_down", "node3/rxe0:1")->verdict, Verdict::fail);
  EXPECT_EQ(find(findings, "soak_link_down", "node3/rxe1:1")->verdict, Verdict::fail);
}

TEST(SoakRules, PortErrorsAgainstAzuresLimits) {
  SoakSection s;
  s.samples = {node_at("n", 0, {ib_port("a", {{"port_rcv_errors", 0}}), ib_port("b", {{"port_rcv_errors", 0}}), ib_port("c", {{"symbol_error", 7}})}),
               node_at("n", 60, {ib_port("a", {{"port_rcv_errors", 150}}), ib_port("b", {{"port_rcv_errors", 50}}), ib_port("c", {{"symbol_error", 8}})})};
  const auto findings = check_soak(s, default_profile());
  EXPECT_EQ(find(findings, "soak_port_errors", "n/a:1")->verdict, Verdict::fail);
  EXPECT_EQ(find(findings, "soak_port_errors", "n/b:1")->verdict, Verdict::pass);
  EXPECT_EQ(find(findings, "soak_port_errors", "n/c:1")->verdict, Verdict::warn);
  EXPECT_EQ(find(findings, "soak_port_errors", "n/c:1")->measured.at("increments").at("symbol_error"), 1);
}

TEST(SoakRules, BerIsJudgedOnlyAfter125MinutesAndFromTheSymbolErrors) {
  SoakSection short_soak;
  short_soak.samples = {node_at("n", 0, {ib_port("a", {{"symbol_error", 0}})}), node_at("n", 600, {ib_port("a", {{"symbol_error", 0}})})};
  const auto* skipped = find(check_soak(short_soak, default_profile()), "soak_ber", "n/a:1");
  ASSERT_NE(skipped, nullptr);
  EXPECT_EQ(skipped->verdict, Verdict::skip);
  EXPECT_NE(skipped->hint.find("needs 125"), std::string::npos) << skipped->hint;

  SoakSection long_soak;
  long_soak.samples = {node_at("n", 0, {ib_port("clean", {{"symbol_error", 0}}), ib_port("dirty", {{"symbol_error", 0}}), ib_port("blind", {})}),
                       node_at("n", 8000, {ib_port("clean", {{"symbol_error", 0}}), ib_port("dirty", {{"symbol_error", 10000}}), ib_port("blind", {})})};
  const auto findings = check_soak(long_soak, default_profile());
  EXPECT_EQ(find(findings, "soak_ber", "n/clean:1")->verdict, Verdict::pass);
  const auto* dirty = find(findings, "soak_ber", "n/dirty:1");
  EXPECT_EQ(dirty->verdict, Verdict::fail);
  EXPECT_NEAR(dirty->measured.at("symbol_ber").get<double>(), 10000 / (400e9 * 8000), 1e-18);
  EXPECT_EQ(find(findings, "soak_ber", "n/blind:1")->verdict, Verdict::not_proven);
}

SoakPass pass_of(int index, double start, std::vector<std::pair<double, Status>> values) {
  SoakPass p{index, start, start + 5, {}};
  const char* names[] = {"n1/rxe0 -> n2/rxe0 write_bw", "n2/rxe0 -> n1/rxe0 write_bw"};
  for (size_t i = 0; i < values.size(); ++i)
    p.figures.push_back({names[i], "verbs", "rail rxe0", {"n1", "n2"}, values[i].second, values[i].second == Status::ok ? "" : "retry exceeded",
                         values[i].first, "Gb/s"});
  return p;
}

TEST(SoakRules, StabilityPassByPassPerPairAndPerRail) {
  SoakSection s;
  const auto ok = Status::ok;
  for (int i = 0; i < 5; ++i) s.passes.push_back(pass_of(i + 1, i * 10.0, {{10, ok}, {i == 3 ? 5.0 : 10.0, ok}}));
  auto findings = check_soak(s, default_profile());
  EXPECT_EQ(find(findings, "soak_stability", "n1/rxe0 -> n2/rxe0 write_bw")->verdict, Verdict::pass);
  const auto* dipped = find(findings, "soak_stability", "n2/rxe0 -> n1/rxe0 write_bw");
  EXPECT_EQ(dipped->verdict, Verdict::fail);
  EXPECT_DOUBLE_EQ(dipped->measured.at("worst_ratio").get<double>(), 0.5);
  const auto* rail = find(findings, "soak_stability", "rail rxe0: every pair together");  // 15 Gb/s against 20 in pass 4
  ASSERT_NE(rail, nullptr);
  EXPECT_EQ(rail->verdict, Verdict::fail);
  EXPECT_DOUBLE_EQ(rail->measured.at("worst_ratio").get<double>(), 0.75);

  s.passes[2].figures[0].status = Status::error;
  findings = check_soak(s, default_profile());
  const auto* failed = find(findings, "soak_stability", "n1/rxe0 -> n2/rxe0 write_bw");
  EXPECT_EQ(failed->verdict, Verdict::fail);
  EXPECT_NE(failed->hint.find("between 0:20 and 0:25"), std::string::npos) << failed->hint;

  s.passes.resize(2);
  s.passes[0].figures[0].status = s.passes[1].figures[0].status = ok;
  EXPECT_EQ(find(check_soak(s, default_profile()), "soak_stability", "n1/rxe0 -> n2/rxe0 write_bw")->verdict, Verdict::not_proven);
}

TEST(SoakRules, NoPassNoSampleOrALoadNotRunIsNotProven) {
  SoakSection s;
  s.load_not_run = {"verbs: no RDMA device on any node"};
  const auto findings = check_soak(s, default_profile());
  size_t load_not_proven = 0;
  for (const auto& f : findings) load_not_proven += f.id == "soak_load" && f.verdict == Verdict::not_proven;
  EXPECT_EQ(load_not_proven, 2u);
  EXPECT_EQ(find(findings, "soak_counters", "cluster")->verdict, Verdict::not_proven);
}

TEST(SoakReport, RoundTripsValidatesAndShowsTheTimeLine) {
  Report r;
  r.started_at = "2026-12-05T10:00:00Z";
  r.soak = two_nodes_node2_link_down();
  r.soak->passes.push_back(pass_of(1, 0, {{10, Status::ok}, {0, Status::error}}));
  const nlohmann::json j = r;
  const auto problems = report_shape_errors(j);
  EXPECT_TRUE(problems.empty()) << (problems.empty() ? "" : problems.front());
  EXPECT_EQ(j.get<Report>().soak->samples.size(), r.soak->samples.size());
  const auto events = view::soak_events(*r.soak);
  ASSERT_EQ(events.size(), 1u);  // node1's traffic and carrier-change counters moved too, and are left out
  EXPECT_TRUE(events[0].link_down);
  const auto md = render_markdown(r);
  EXPECT_NE(md.find("## Soak (burn-in)"), std::string::npos);
  EXPECT_NE(md.find("**link down**: link_downed +1"), std::string::npos);
  const auto html = render_html(r);
  EXPECT_NE(html.find("data-port=\"node2/mlx5_0:1\""), std::string::npos);
  EXPECT_NE(html.find("class=\"link-down\""), std::string::npos);
}

TEST(SoakGpu, XidLinesOfTheKernelLog) {
  const auto off = parse_xid_line("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.");
  ASSERT_TRUE(off);
  EXPECT_EQ(off->pci, "0000:3b:00");
  EXPECT_EQ(off->xid, 79);
  const auto ecc = parse_xid_line("[ 8123.4] NVRM: Xid (PCI:0000:b7:00): 94, pid='<unknown>', name=<unknown>, Contained: SM (0x1). RST: No, D-RST: No");
  ASSERT_TRUE(ecc);
  EXPECT_EQ(ecc->xid, 94);
  EXPECT_FALSE(parse_xid_line("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15"));
  EXPECT_FALSE(parse_xid_line("mlx5_core 0000:41:00.0: Port module event: module 0, Cable plugged"));
}

TEST(SoakGpu, KernelLogGivesOnlyTheEventsSinceTheLastRead) {
  test::TempDir root("soak-kmsg");
  fs::create_directories(root.path() / "dev");
  std::ofstream(root.path() / "dev/kmsg") << "NVRM: Xid (PCI:0000:3b:00): 48, pid=1, DBE (double bit error) ECC error\nnot an xid\nNVRM: Xid (PCI:00";
  probe::KernelLog log(root.path().string());
  ASSERT_TRUE(log.readable()) << log.unreadable_reason();
  auto first = log.new_xid_events();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].xid, 48);
  std::ofstream(root.path() / "dev/kmsg", std::ios::app) << "00:5e:00): 79, pid=2, GPU has fallen off the bus.\n";
  const auto second = log.new_xid_events();  // the line ended after the first read: read whole
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].pci, "0000:5e:00");
  EXPECT_TRUE(log.new_xid_events().empty());
  probe::KernelLog absent((root.path() / "nowhere").string());
  EXPECT_FALSE(absent.readable());
  EXPECT_NE(absent.unreadable_reason().find("dev/kmsg"), std::string::npos) << absent.unreadable_reason();
}

TEST(SoakGpu, AnXidFailsAnApplicationsWarnsAnUnreadLogIsNotProven) {
  SoakSection s;
  s.gpu_hosts = {"g1", "g2", "g3", "g4"};
  auto sample = [](const std::string& host, bool read, std::vector<XidEvent> xid) {
    NodeSample n = node_at(host, 10, {});
    n.kernel_log = read;
    n.xid = std::move(xid);
    return n;
  };
  s.samples = {sample("g1", true, {{"0000:3b:00", 79, "off the bus"}}), sample("g2", true, {{"0000:3b:00", 13, "graphics engine exception"}}),
               sample("g3", false, {}), sample("g4", true, {}), sample("cpu-node", false, {})};
  const auto findings = check_soak(s, default_profile());
  EXPECT_EQ(find(findings, "soak_gpu_xid", "g1")->verdict, Verdict::fail);
  EXPECT_NE(find(findings, "soak_gpu_xid", "g1")->hint.find("Xid 79"), std::string::npos);
  EXPECT_EQ(find(findings, "soak_gpu_xid", "g2")->verdict, Verdict::warn);
  EXPECT_EQ(find(findings, "soak_gpu_xid", "g3")->verdict, Verdict::not_proven);
  EXPECT_EQ(find(findings, "soak_gpu_xid", "g4")->verdict, Verdict::pass);
  EXPECT_EQ(find(findings, "soak_gpu_xid", "cpu-node"), nullptr);  // no GPU: nothing to judge
}

// A board's memory as NVML reads it on a healthy H100: ECC on, nothing remapped, no error.
GpuMemoryHealth board_memory_at_start() {
  GpuMemoryHealth h;
  h.ecc_enabled = h.ecc_enabled_after_reboot = true;
  h.uncorrected_since_driver_load = 0;
  h.uncorrected_lifetime = 2;  // from before the factory: not the soak's
  h.rows_remapped_correctable = 1;
  h.rows_remapped_uncorrectable = 0;
  h.row_remap_pending = h.row_remap_failed = h.page_retirement_pending = false;
  return h;
}

// The inventory's read before the soak against NVML's at the end, board by board: what grew under
// load fails (uncorrectable errors, remaps pending) or warns (rows remapped on correctable errors);
// a board NVML did not answer for at the end is not proven; unchanged passes.
TEST(SoakGpu, MemoryWornUnderLoadFailsOrWarnsAndAnUnreadEndIsNotProven) {
  SoakSection s;
  auto board = [](const std::string& host, int index, std::function<void(GpuMemoryHealth&)> at_end) {
    SoakGpuMemory m{host, index, fmt::format("0000:{:02x}:00.0", 0x18 + index), "GPU-" + host, board_memory_at_start(), board_memory_at_start()};
    at_end(m.after);
    return m;
  };
  s.gpu_memory = {board("g1", 0, [](GpuMemoryHealth&) {}),
                  board("g1", 1, [](GpuMemoryHealth& h) { h.uncorrected_since_driver_load = 3, h.uncorrected_lifetime = 5, h.row_remap_pending = true; }),
                  board("g2", 0, [](GpuMemoryHealth& h) { h.rows_remapped_correctable = 4; }),
                  board("g2", 1, [](GpuMemoryHealth& h) { h = GpuMemoryHealth{}, h.unread = "NVML did not initialise (nvmlInit_v2)"; }),
                  board("g3", 0, [](GpuMemoryHealth& h) { h.uncorrected_since_driver_load = 0, h.uncorrected_lifetime = 3; })};
  const auto findings = check_soak(s, default_profile());
  ASSERT_NE(find(findings, "soak_gpu_memory", "g1/gpu0"), nullptr);
  EXPECT_EQ(find(findings, "soak_gpu_memory", "g1/gpu0")->verdict, Verdict::pass);
  const Finding* worn = find(findings, "soak_gpu_memory", "g1/gpu1");
  ASSERT_NE(worn, nullptr);
  EXPECT_EQ(worn->verdict, Verdict::fail);
  EXPECT_EQ(worn->measured["grown_under_load"], nlohmann::json({"3 uncorrectable ECC error(s)", "a row remap became pending"})) << worn->measured;
  EXPECT_NE(worn->hint.find("RMA"), std::string::npos) << worn->hint;
  EXPECT_EQ(find(findings, "soak_gpu_memory", "g2/gpu0")->verdict, Verdict::warn);
  EXPECT_EQ(find(findings, "soak_gpu_memory", "g2/gpu0")->measured["grown_under_load"][0], "3 row(s) remapped on correctable errors");
  EXPECT_EQ(find(findings, "soak_gpu_memory", "g2/gpu1")->verdict, Verdict::not_proven);
  EXPECT_EQ(find(findings, "soak_gpu_memory", "g2/gpu1")->measured["why"], "NVML did not initialise (nvmlInit_v2)");
  // The volatile count restarted (a driver reload) while the board's lifetime count grew: the larger growth counts.
  EXPECT_EQ(find(findings, "soak_gpu_memory", "g3/gpu0")->verdict, Verdict::fail);
  EXPECT_EQ(find(findings, "soak_gpu_memory", "g3/gpu0")->measured["grown_under_load"][0], "1 uncorrectable ECC error(s)");
  // The section with its reads round-trips through report.json and its schema.
  Report r;
  r.started_at = "2026-12-05T10:00:00Z";
  r.soak = s;
  const nlohmann::json j = r;
  EXPECT_EQ(report_shape_errors(j), std::vector<std::string>{});
  ASSERT_EQ(j.get<Report>().soak->gpu_memory.size(), 5u);
  EXPECT_EQ(j.get<Report>().soak->gpu_memory[1].after.row_remap_pending, true);
}

// The sampler on a copy of a real sysfs tree (an HDR200 ConnectX-6, tests/fixtures/sysfs):
// every counter in the first and last sample, only what changed between.
TEST(PortSampler, SamplesOnItsOwnThreadAndKeepsOnlyWhatChanged) {
  test::TempDir dir("soak-sysfs");
  fs::copy(test::fixture("sysfs/ib-hdr200-cx6"), dir.path(), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const auto zero = std::chrono::steady_clock::now();
  probe::PortSampler sampler(dir.path().string(), "node1", 0.05, zero);
  std::vector<NodeSample> samples;
  // Waits (at most 10 s: a loaded machine delays the thread, never the outcome) until `enough` holds.
  auto collect_until = [&](auto enough) {
    for (int i = 0; i < 1000 && !enough(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      for (auto& sample : sampler.take()) samples.push_back(std::move(sample));
    }
  };
  collect_until([&] { return samples.size() >= 2; });
  std::ofstream(dir.path() / "sys/class/infiniband/mlx5_0/ports/1/counters/link_downed") << "9\n";
  collect_until([&] { return !samples.empty() && samples.back().ports.front().counters.count("link_downed"); });
  sampler.stop();
  for (auto& sample : sampler.take()) samples.push_back(std::move(sample));
  ASSERT_GE(samples.size(), 4u);
  ASSERT_FALSE(samples.front().ports.empty());
  EXPECT_EQ(samples.front().host, "node1");
  const auto& first = samples.front().ports.front();
  EXPECT_EQ(first.device, "mlx5_0");
  EXPECT_EQ(first.state, "ACTIVE");
  EXPECT_EQ(first.rate_gbps, 200.0);
  EXPECT_TRUE(first.counters.count("symbol_error"));
  EXPECT_TRUE(samples.back().ports.front().counters.count("symbol_error"));
  EXPECT_EQ(samples.back().ports.front().counters.at("link_downed"), 9u);
  size_t changed = 0;
  for (size_t i = 1; i + 1 < samples.size(); ++i) {
    EXPECT_FALSE(samples[i].ports.front().counters.count("symbol_error")) << "sample " << i;
    changed += samples[i].ports.front().counters.count("link_downed");
  }
  EXPECT_EQ(changed, 1u);
  SoakSection s;
  s.samples = samples;
  const auto* down = find(check_soak(s, default_profile()), "soak_link_down", "node1/mlx5_0:1");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->verdict, Verdict::fail);
}

}  // namespace
}  // namespace fabricproof

namespace fabricproof {
namespace {

TEST(SoakEthtool, KeepsPauseDiscardsErrorsAndFecNotTraffic) {
  for (const char* kept : {"rx_pause_ctrl_phy", "tx_prio3_pause", "rx_discards_phy", "rx_out_of_buffer", "rx_corrected_bits_phy",
                           "rx_symbol_err_phy", "link_down_events_phy", "rx_drops", "rx_crc_errors_phy"})
    EXPECT_TRUE(probe::soak_keeps_ethtool_stat(kept)) << kept;
  for (const char* left : {"rx_packets_phy", "tx_bytes", "rx_queue_0_drops", "ch0_events", "rx_vport_unicast_bytes"})
    EXPECT_FALSE(probe::soak_keeps_ethtool_stat(left)) << left;
}

// The driver statistics of this machine's NICs, read as ethtool -S reads them; lo has none.
TEST(SoakEthtool, ReadsTheDriversStatisticsAndNamesANetdevWithout) {
  const auto lo = failure_of([] { probe::read_ethtool_stats("lo"); });
  ASSERT_TRUE(lo);
  EXPECT_NE(lo->find("lo"), std::string::npos) << *lo;
  std::vector<std::string> read;
  for (const auto& entry : fs::directory_iterator("/sys/class/net")) {
    const auto name = entry.path().filename().string();
    std::map<std::string, uint64_t> stats;
    if (!failure_of([&] { stats = probe::read_ethtool_stats(name); }) && !stats.empty()) read.push_back(name);
  }
  if (read.empty()) GTEST_SKIP() << "no netdev here has driver statistics (ethtool -S)";
  const auto stats = probe::read_ethtool_stats(read.front());
  ASSERT_FALSE(stats.empty());
  // The same names as `ethtool -S` prints, where the tool is installed (each "  name: value" line).
  FILE* pipe = popen(("ethtool -S " + read.front() + " 2>/dev/null").c_str(), "r");
  std::string printed;
  for (char buffer[512]; pipe && fgets(buffer, sizeof(buffer), pipe);) printed += buffer;
  if (pipe) pclose(pipe);
  if (printed.empty()) return;
  for (const auto& [name, value] : stats) EXPECT_NE(printed.find(" " + name + ": "), std::string::npos) << name << " not in ethtool -S " << read.front();
}

}  // namespace
}  // namespace fabricproof
