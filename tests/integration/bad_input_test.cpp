// Bad input gets a clear error naming the input and what is wrong, and a report where `run` has
// --out: never a crash, never a hang, never a silent exit of one rank.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "paths.hpp"
#include "run_helpers.hpp"

namespace fabricproof {
namespace {

using namespace test;

TEST(BadInput, ProfileNumberBeyondADoubleIsNamedAndTheReportWritten) {
  TempDir tmp("bad-profile");
  const auto profile = tmp.path() / "bad.json";
  std::ofstream(profile) << R"({"schema": "fabricproof.profile/1", "name": "bad", "verbs": {"bw_pass_ratio": 1e400}})";
  const auto out = tmp.path() / "report";
  const auto o = run_shell(mpirun(1) + " run --phases inventory --profile " + profile.string() + " --out " + out.string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find(profile.string() + ": not valid JSON"), std::string::npos) << o.output;
  const auto f = findings_with_id(read_report(out), "profile");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]["verdict"], "error");
  EXPECT_NE(f[0]["measured"].get<std::string>().find("number overflow"), std::string::npos) << f[0].dump();

  std::ofstream(profile) << R"({"schema": "fabricproof.profile/1", "name": "bad", "verbs": {"bw_pass_ratio": 7}})";
  const auto range = run_shell(mpirun(1) + " run --phases inventory --profile " + profile.string() + " --out " + out.string(), tmp.path() / "log2");
  EXPECT_EQ(range.exit_code, 2);
  EXPECT_NE(range.output.find("/verbs/bw_pass_ratio: 7 is out of range [0, 2]"), std::string::npos) << range.output;
}

// Each section of a saved report with the wrong shape, also a section the run did not write:
// `report` and `compare` exit 2 naming the file, the JSON pointer and what the schema expects.
TEST(BadInput, ReportOrCompareOfAWrongShapeNamesFileAndPlace) {
  TempDir tmp("bad-report");
  const std::string bin = FABRICPROOF_BINARY;
  const auto good = fixture("reports/lab-rate-fault.json");
  const std::vector<std::pair<std::string, std::string>> sections = {
      {"verbs", "object"},  {"gpudirect", "object"}, {"collectives", "object"}, {"nccl_audit", "object"}, {"uplink", "object"},
      {"launcher", "object"}, {"nodes", "array"},  {"findings", "array"},     {"phases", "array"},       {"rank_map", "array"}};
  for (const auto& [section, type] : sections) {
    auto j = nlohmann::json::parse(read_text(good));
    j[section] = 5;
    const auto bad = tmp.path() / (section + ".json");
    std::ofstream(bad) << j.dump();
    const std::string named = bad.string() + ": not a valid fabricproof.report/1 report: /" + section + ": expected " + type + ", got integer";
    const auto r = run_shell(bin + " report " + bad.string() + " --out " + (tmp.path() / "out").string(), tmp.path() / "r");
    EXPECT_EQ(r.exit_code, 2) << section << ": " << r.output;
    EXPECT_NE(r.output.find(named), std::string::npos) << r.output;
    const auto c = run_shell(bin + " compare " + good.string() + " " + bad.string(), tmp.path() / "c");
    EXPECT_EQ(c.exit_code, 2) << section << ": " << c.output;
    EXPECT_NE(c.output.find(named), std::string::npos) << c.output;
  }
  EXPECT_FALSE(fs::exists(tmp.path() / "out" / "report.md")) << "nothing was rendered from a report of the wrong shape";
}

// A factory report with a failed pair (its matrix cell gives the reason instead of a figure, as
// every report of a matched-rails run does for the pairs not scheduled) is a valid report: `report`
// renders it and `compare` reads it. Both refused it until the published schema allowed such cells.
TEST(BadInput, AReportWithAFailedPairIsReadByReportAndCompare) {
  TempDir tmp("failed-pair");
  const std::string bin = FABRICPROOF_BINARY;
  const auto good = fixture("reports/lab-rate-fault.json");
  auto j = nlohmann::json::parse(read_text(good));
  auto& test = j["verbs"]["pairs"][0]["tests"][0];
  ASSERT_EQ(test["test"], "write_bw");
  test["status"] = "error";
  test["reason"] = "node4/rxe0 did not answer: no message from rank 3 in time";
  test["gbps"] = nullptr;
  std::ofstream(tmp.path() / "edited.json") << j.dump();
  // Rendered through the model, the matrix is written from the pairs: the failed pair's cell is a reason.
  const auto rewritten = run_shell(bin + " report " + (tmp.path() / "edited.json").string() + " --format json --out " + (tmp.path() / "factory").string(),
                                   tmp.path() / "w");
  ASSERT_EQ(rewritten.exit_code, 0) << rewritten.output;
  const auto factory = tmp.path() / "factory" / "report.json";
  const auto cell = nlohmann::json::parse(read_text(factory))["verbs"]["matrix"]["write_bw"]["cells"][0][3];
  ASSERT_TRUE(cell.is_object()) << cell.dump();
  EXPECT_EQ(cell["reason"], "error: node4/rxe0 did not answer: no message from rank 3 in time");
  const auto r = run_shell(bin + " report " + factory.string() + " --format md --out " + (tmp.path() / "md").string(), tmp.path() / "r");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto c = run_shell(bin + " compare " + factory.string() + " " + good.string(), tmp.path() / "c");
  EXPECT_NE(c.exit_code, 2) << c.output;
  EXPECT_EQ(c.output.find("not a valid"), std::string::npos) << c.output;
}

// A saved tree with a rate file no kernel writes and a FIFO where a file should be: the probe
// records both and reads the rest of the node; the run neither crashes nor blocks.
TEST(BadInput, OddSysfsValuesAndAFifoInARootTreeAreProbeErrors) {
  TempDir tmp("bad-root");
  const auto tree = tmp.path() / "tree";
  std::filesystem::copy(fixture("sysfs/roce-cx7-gid-tables"), tree, std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  const auto port = tree / "sys/devices/pci0000:16/0000:16:00.0/0000:17:00.0/infiniband/mlx5_0/ports/1";
  std::ofstream(port / "rate") << "100 Gb/sec (99999999999X EDR)\n";
  const auto mtu = tree / "sys/devices/pci0000:16/0000:16:00.0/0000:17:00.0/net/ens1f0/mtu";
  std::filesystem::remove(mtu);
  ASSERT_EQ(mkfifo(mtu.c_str(), 0644), 0);
  const auto out = tmp.path() / "report";
  const auto o = run_shell(mpirun(1) + " run --phases inventory --root " + tree.string() + " --out " + out.string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2) << "an unreadable source fails closed (error), never crashes or hangs: " << o.output;
  const auto report = read_report(out);
  ASSERT_EQ(report["nodes"].size(), 1u);
  std::string errors = report["nodes"][0]["probe_errors"].dump();
  EXPECT_NE(errors.find("ens1f0/mtu"), std::string::npos) << errors;
  EXPECT_NE(errors.find("not a regular file"), std::string::npos) << errors;
  EXPECT_NE(errors.find("mlx5_0/ports/1/rate"), std::string::npos) << errors;
  EXPECT_NE(errors.find("not a port rate: '100 Gb/sec (99999999999X EDR)'"), std::string::npos) << errors;
  EXPECT_EQ(findings_with_id(report, "probe_read").size(), 2u) << "each becomes an error finding";
  EXPECT_EQ(report["nodes"][0]["rdma_devices"].size(), 2u) << "the rest of the node is still read";
}

TEST(BadInput, OptionsBeyondTheirBoundsAreRefusedWithTheReason) {
  TempDir tmp("bad-options");
  const std::string bin = FABRICPROOF_BINARY;
  for (const auto& [args, expected] : std::vector<std::pair<std::string, std::string>>{
           {"--verbs-size 4G", "--verbs-size: 4294967296 is more than 1073741824"},
           {"--verbs-lat-size 4K", "--verbs-lat-size: 4096 is more than 2048"},
           {"--timeout 1e10", "--timeout"},
           {"--max-bytes 2T", "--max-bytes"},
           {"--verbs-size 1G --verbs-tx-depth 8192", "--verbs-size x 5 x --verbs-tx-depth"}}) {
    const auto out = tmp.path() / "r";
    const auto o = run_shell(bin + " run --out " + out.string() + " " + args, tmp.path() / "log");
    EXPECT_EQ(o.exit_code, 2) << args << ": " << o.output;
    EXPECT_NE(o.output.find(expected), std::string::npos) << args << ": " << o.output;
    EXPECT_EQ(findings_with_id(read_report(out), "command_line").size(), 1u) << args << ": a report names it";
  }
}

// A log that exists only where rank 0 runs is read by rank 0; one that exists nowhere is an
// error in the report, not a silent exit of the other ranks before MPI starts.
TEST(BadInput, NcclLogsAreReadByRankZeroAndAMissingOneIsNamed) {
  TempDir tmp("bad-logs");
  const auto out = tmp.path() / "report";
  const auto o = run_shell(mpirun(2) + " run --phases nccl_audit --nccl-logs /nonexistent/nccl.log --out " + out.string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  const auto report = read_report(out);
  bool named = false;
  for (const auto& p : report["phases"]) named |= p["name"] == "nccl_audit" && p["verdict"] == "error" && p["reason"].get<std::string>().find("/nonexistent/nccl.log") != std::string::npos;
  EXPECT_TRUE(named) << report["phases"].dump(2);
  EXPECT_EQ(report["world_size"], 2) << "both ranks ran";
}

TEST(BadInput, HostfileCommandNamesFileAndLine) {
  TempDir tmp("bad-hostfile");
  const auto file = tmp.path() / "hosts";
  std::ofstream(file) << "node1 slots=4\nnode2 slots=-1\n";
  const auto o = run_shell(std::string(FABRICPROOF_BINARY) + " hostfile " + file.string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find(file.string() + ":2: 'slots=-1'"), std::string::npos) << o.output;
  std::ofstream(file) << "node1 slots=4\nnode2\n";
  const auto ok = run_shell(std::string(FABRICPROOF_BINARY) + " hostfile " + file.string(), tmp.path() / "log2");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(ok.output, "node1 4\nnode2 1\n");
}

}  // namespace
}  // namespace fabricproof
