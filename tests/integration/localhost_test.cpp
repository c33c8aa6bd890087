// The real binary under mpirun on this machine: 4 ranks on one node, as the README's first
// command runs it. Checks the report contract, exit codes, and that bad input still leaves a report.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>

#include "paths.hpp"
#include "report/report.hpp"
#include "run_helpers.hpp"

namespace fabricproof {
namespace {

namespace fs = std::filesystem;
using test::findings_with_id;
using test::mpirun;
using test::read_report;
using test::read_text;
using test::run_shell;

TEST(Localhost, FourRanksOneNodeWriteTheContract) {
  test::TempDir tmp("localhost");
  const auto out = tmp.path() / "report";
  // Small sweeps: this test is about the report contract, the next about the sweep itself.
  const auto o = run_shell(mpirun(4) + " run --max-bytes 64K --iters 2 --warmup 1 --out " + out.string(), tmp.path() / "log");
  // 0 or 1 where every default phase can run, 3 (not proven) where one cannot; never 2.
  ASSERT_TRUE(o.exit_code == 0 || o.exit_code == 1 || o.exit_code == 3) << o.output;
  const auto report = read_report(out);
  EXPECT_EQ(report["schema"], "fabricproof.report/1");
  EXPECT_EQ(report["world_size"], 4);
  ASSERT_EQ(report["nodes"].size(), 1u) << "four ranks on one host must merge into one node";
  const auto& node = report["nodes"][0];
  EXPECT_EQ(node["ranks"].size(), 4u);
  ASSERT_EQ(report["rank_map"].size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(report["rank_map"][r]["rank"], r);
    EXPECT_EQ(report["rank_map"][r]["local_rank"], r);
    EXPECT_EQ(report["rank_map"][r]["host"], node["host"]);
  }
  EXPECT_FALSE(node["software"]["kernel"].get<std::string>().empty());
  EXPECT_NE(node["software"]["open_mpi"].get<std::string>().find("MPI"), std::string::npos);
  EXPECT_TRUE(report["build"]["optional_parts"].contains("verbs"));
  EXPECT_TRUE(report["missing_ranks"].empty());
  // Every phase is listed; without RDMA devices the verbs phase, selected by default, did not run:
  // the run is not proven (exit 3), never a pass, and the report's first line says which and why.
  std::map<std::string, nlohmann::json> phases;
  for (const auto& p : report["phases"]) phases[p["name"]] = p;
  for (const char* name : {"inventory", "verbs", "gpudirect", "collectives", "nccl_audit"}) EXPECT_TRUE(phases.count(name)) << name;
  std::ifstream md(out / "report.md");
  std::string first_line;
  std::getline(md, first_line);
  EXPECT_EQ(first_line.rfind("# fabricproof acceptance report: ", 0), 0u) << first_line;
  if (node["rdma_devices"].empty()) {
    EXPECT_EQ(phases["verbs"]["verdict"], "not_proven");
    const std::string reason = phases["verbs"]["reason"];
    EXPECT_TRUE(reason == "no RDMA device on any node" || reason.find("built without libibverbs") == 0) << reason;
    EXPECT_EQ(findings_with_id(report, "hca_count").at(0)["verdict"], "warn");
    EXPECT_EQ(report["verdict"], "not_proven");
    EXPECT_EQ(o.exit_code, 3);
    EXPECT_NE(first_line.find("NOT PROVEN (not run: verbs (" + reason + ")"), std::string::npos) << first_line;
    EXPECT_NE(o.output.find("NOT PROVEN: not run: verbs"), std::string::npos) << o.output;
  }
  EXPECT_EQ(report["verdict"], o.exit_code == 0 ? (report["verdict"] == "warn" ? "warn" : "pass") : o.exit_code == 3 ? "not_proven" : "fail");
  EXPECT_NE(o.output.find("report: "), std::string::npos) << o.output;
}

TEST(Localhost, MpiAllreduceSweepEightBytesTo64M) {
  test::TempDir tmp("sweep");
  // 5 timed calls and 1 warm-up a size, not 20 and 5: what is checked is every row, element and
  // formula, not the figures (with the defaults this test took 48 s on 2 cores, 172 s at 1/3 of it).
  const auto o = run_shell(mpirun(4) + " run --phases collectives --collective-engine mpi --max-bytes 64M --iters 5 --warmup 1 --out " +
                               tmp.path().string(),
                           tmp.path() / "log");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto report = read_report(tmp.path());
  const auto& section = report["collectives"];
  EXPECT_EQ(section["engine"], "mpi");
  ASSERT_EQ(section["results"].size(), 1u);
  const auto& result = section["results"][0];
  EXPECT_EQ(result["op"], "allreduce");
  EXPECT_EQ(result["nodes"], 1);
  EXPECT_EQ(result["ranks"], 4);
  EXPECT_EQ(result["status"], "ok");
  const auto& rows = result["rows"];
  ASSERT_EQ(rows.size(), 24u) << "8 B .. 64 MiB by powers of two";
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    EXPECT_EQ(row["bytes"], 8ull << i);
    EXPECT_EQ(row["count"], (8ull << i) / 4);
    EXPECT_EQ(row["dtype"], "float");
    for (const char* form : {"out_of_place", "in_place"}) {
      const auto& t = row[form];
      ASSERT_TRUE(t.is_object()) << form << " at " << row["bytes"];
      EXPECT_EQ(t["wrong"], 0) << form << " at " << row["bytes"];
      EXPECT_GT(t["time_us"].get<double>(), 0);
      EXPECT_NEAR(t["busbw_GBps"].get<double>(), 1.5 * t["algbw_GBps"].get<double>(), 1e-9) << "allreduce on 4 ranks: 2(n-1)/n";
      EXPECT_NEAR(t["algbw_GBps"].get<double>(), row["bytes"].get<double>() / t["time_us"].get<double>() / 1e3, 1e-9);
    }
  }
  EXPECT_GT(result["peak_busbw_GBps"].get<double>(), 0);
  EXPECT_EQ(result["time_stat"], "avg") << "a row's time is the ranks' average by default, as in nccl-tests";
  EXPECT_NE(result["timing"].get<std::string>().find("MPI_Wtime"), std::string::npos) << "the report says how the calls were timed";
  EXPECT_NE(result["timing"].get<std::string>().find("MPI at MPI_THREAD_SINGLE"), std::string::npos)
      << "and at which thread level (Open MPI locks its progress above SINGLE)";
  ASSERT_EQ(section["scaling"].size(), 1u);
  EXPECT_EQ(section["scaling"][0]["bytes"], 64 << 20);
  EXPECT_EQ(findings_with_id(report, "collective_data").at(0)["verdict"], "pass");
  EXPECT_NE(o.output.find("67108864"), std::string::npos) << "rank 0 prints rows as they complete";
}

// The README's first command: the phases it selects are the ones a machine without RDMA devices and
// GPUs can measure, so it exits 0 there and claims nothing it did not measure.
TEST(Localhost, WhatTheFirstCommandSelectsRunsAndPasses) {
  test::TempDir tmp("first-command");
  const auto o = run_shell(mpirun(4) + " run --phases inventory,collectives --collective-engine mpi --max-bytes 64K --iters 2 --warmup 1 --out " +
                               tmp.path().string(), tmp.path() / "log");
  EXPECT_LE(o.exit_code, 1) << o.output;
  const auto report = read_report(tmp.path());
  for (const auto& p : report["phases"]) EXPECT_NE(p["verdict"], "not_proven") << p;
}

// --expect-nodes is judged whatever --phases selects: a run of the collectives alone on fewer nodes
// than ordered fails.
TEST(Localhost, ExpectNodesIsJudgedWithoutTheInventoryPhase) {
  test::TempDir tmp("expect-collectives");
  const auto o = run_shell(mpirun(2) + " run --phases collectives --collective-engine mpi --max-bytes 1K --iters 1 --warmup 0 --expect-nodes 3 --out " +
                               tmp.path().string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  const auto f = findings_with_id(read_report(tmp.path()), "node_count");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]["verdict"], "fail");
}

// --check-cabling with nothing to judge (this machine has no RDMA port; on one with ports and no
// lldpd each port is unread): not proven, never a pass.
TEST(Localhost, CheckCablingWithoutNeighboursIsNotProven) {
  test::TempDir tmp("check-cabling");
  const auto o = run_shell(mpirun(1) + " run --phases inventory --check-cabling --out " + tmp.path().string(), tmp.path() / "log");
  const auto report = read_report(tmp.path());
  const auto unread = findings_with_id(report, "cabling_unread");
  ASSERT_FALSE(unread.empty()) << o.output;
  for (const auto& f : unread) EXPECT_EQ(f["verdict"], "not_proven") << f.dump();
  EXPECT_TRUE(findings_with_id(report, "cabling_rail").empty() || report["verdict"] != "pass");
  EXPECT_EQ(o.exit_code, 3) << o.output;
}

// A spec is judged at the end of every run: one that declares more nodes than answered fails,
// whatever phases ran, and names what is missing.
TEST(Localhost, ASpecOfMoreNodesFailsWhateverPhasesRan) {
  test::TempDir tmp("spec");
  const auto spec = tmp.path() / "spec.json";
  std::ofstream(spec) << R"({"schema": "fabricproof.spec/1", "name": "two", "nodes": {"count": 2}, "require": {"nccl": false}})";
  const auto o = run_shell(mpirun(2) + " run --phases collectives --collective-engine mpi --max-bytes 1K --iters 1 --warmup 0 --spec " + spec.string() +
                               " --out " + (tmp.path() / "out").string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  const auto report = read_report(tmp.path() / "out");
  const auto nodes = findings_with_id(report, "spec_nodes");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]["verdict"], "fail");
  EXPECT_EQ(nodes[0]["measured"]["nodes"], 1);
  // The inventory phase the spec needs was not selected: it fails as not run, with that reason.
  const auto phase = findings_with_id(report, "spec_phase");
  ASSERT_FALSE(phase.empty());
  EXPECT_EQ(phase[0]["subject"], "inventory");
  EXPECT_EQ(phase[0]["measured"].get<std::string>().rfind("not selected with --phases", 0), 0u) << phase[0];
  // A spec that does not load is an error naming the key.
  std::ofstream(spec) << R"({"schema": "fabricproof.spec/1", "nodes": {"count": 0}})";
  const auto bad = run_shell(mpirun(1) + " run --phases inventory --spec " + spec.string() + " --out " + (tmp.path() / "bad").string(),
                             tmp.path() / "log2");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("/nodes/count: must be an integer from 1"), std::string::npos) << bad.output;
}

// An error one rank alone raised reaches the report in its own words, with its rank and host, and
// is told apart from a rank that stopped answering (rank_lost).
TEST(Localhost, ANonRootRanksErrorReachesTheReport) {
  test::TempDir tmp("rank-error");
  const auto log = test::fixture("nccl/h200-one-rank-2.28.3.log").string();
  const auto o = run_shell(mpirun(3, "2:nccl_audit: starting:throw") + " run --phases inventory,nccl_audit --nccl-logs " + log + " --out " +
                               tmp.path().string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  const auto report = read_report(tmp.path());
  const auto f = findings_with_id(report, "rank_error");
  ASSERT_EQ(f.size(), 1u) << o.output;
  EXPECT_EQ(f[0]["measured"]["rank"], 2);
  EXPECT_EQ(f[0]["measured"]["phase"], "nccl_audit");
  EXPECT_NE(f[0]["measured"]["error"].get<std::string>().find("FABRICPROOF_INJECT: an error raised at \"nccl_audit: starting\""), std::string::npos);
  EXPECT_TRUE(findings_with_id(report, "rank_lost").empty());
  for (const auto& p : report["phases"]) {
    if (p["name"] == "nccl_audit") {
      EXPECT_EQ(p["verdict"], "error");
    }
  }
}

TEST(Localhost, NcclEngineWithoutGpusIsNotProvenWithTheReason) {
  test::TempDir tmp("nccl-engine");
  const auto o = run_shell(mpirun(1) + " run --phases collectives --collective-engine nccl --out " + tmp.path().string(), tmp.path() / "log");
  const auto report = read_report(tmp.path());
  bool gpus = false;
  for (const auto& n : report["nodes"]) gpus |= !n["gpus"].empty();
  if (gpus) GTEST_SKIP() << "this machine has a GPU: the NCCL engine runs instead";
  EXPECT_EQ(o.exit_code, 3) << "selected and not run: not proven\n" << o.output;
  for (const auto& p : report["phases"])
    if (p["name"] == "collectives") {
      EXPECT_EQ(p["verdict"], "not_proven");
      const std::string reason = p["reason"];
      EXPECT_TRUE(reason.find("has no GPU") != std::string::npos || reason.find("built without NCCL") != std::string::npos) << reason;
    }
}

TEST(Localhost, ReportCommandReRendersWhatRunWrote) {
  test::TempDir tmp("rerender");
  const auto run_dir = tmp.path() / "run";
  const auto o = run_shell(mpirun(2) + " run --phases inventory --format md,html,junit --out " + run_dir.string(), tmp.path() / "log");
  ASSERT_LE(o.exit_code, 1) << o.output;
  for (const char* f : {"report.json", "report.md", "report.html", "junit.xml"}) ASSERT_TRUE(fs::exists(run_dir / f)) << f << ": run --format";
  const auto again = tmp.path() / "again";
  const auto r = run_shell(std::string(FABRICPROOF_BINARY) + " report " + (run_dir / "report.json").string() + " --format md,html,junit,json --out " +
                               again.string(),
                           tmp.path() / "report-log");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(again / "report.md"), read_text(run_dir / "report.md"));
  EXPECT_EQ(read_text(again / "report.html"), read_text(run_dir / "report.html"));
  EXPECT_EQ(read_text(again / "junit.xml"), read_text(run_dir / "junit.xml"));
  EXPECT_EQ(nlohmann::json::parse(read_text(again / "report.json")), nlohmann::json::parse(read_text(run_dir / "report.json")))
      << "JSON -> model -> JSON is lossless";
}

TEST(Localhost, CompareExitCodesAndFiles) {
  test::TempDir tmp("compare");
  const auto base = tmp.path() / "base";
  ASSERT_LE(run_shell(mpirun(1) + " run --phases inventory --out " + base.string(), tmp.path() / "log").exit_code, 1);
  const std::string bin = FABRICPROOF_BINARY, baseline = (base / "report.json").string();
  auto same = run_shell(bin + " compare " + baseline + " " + baseline + " --out " + (tmp.path() / "cmp").string(), tmp.path() / "same");
  EXPECT_EQ(same.exit_code, 0) << same.output;
  for (const char* f : {"compare.json", "compare.md", "compare.html", "compare-junit.xml"}) EXPECT_TRUE(fs::exists(tmp.path() / "cmp" / f)) << f;
  auto j = nlohmann::json::parse(read_text(base / "report.json"));
  j["nodes"][0]["host"] = "replacement-node";  // the baseline node is gone
  std::ofstream(tmp.path() / "after.json") << j.dump();
  auto missing = run_shell(bin + " compare --json " + baseline + " " + (tmp.path() / "after.json").string(), tmp.path() / "missing");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  const auto out = nlohmann::json::parse(missing.output);
  EXPECT_EQ(out["verdict"], "fail");
  bool named = false;
  for (const auto& f : out["findings"]) named |= f["id"] == "compare_node" && f["verdict"] == "fail";
  EXPECT_TRUE(named);
}

// Sizes as nccl-tests computes them (per-rank counts rounded down to 16 bytes: 1 KiB of float on 3
// ranks moves 1008 bytes), in-place reduce_scatter, and --time-stat max, all verified elementwise.
TEST(Localhost, ChunkedOpsOnThreeRanksCountLikeNcclTestsAndVerify) {
  test::TempDir tmp("chunked");
  const auto o = run_shell(mpirun(3) + " run --phases collectives --collective-engine mpi --collective-ops allgather,reduce_scatter,alltoall"
                                       " --min-bytes 1K --max-bytes 64K --time-stat max --out " + tmp.path().string(),
                           tmp.path() / "log");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto results = read_report(tmp.path())["collectives"]["results"];
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) {
    ASSERT_FALSE(r["rows"].empty()) << r["op"];
    EXPECT_EQ(r["status"], "ok") << r.dump();
    EXPECT_EQ(r["time_stat"], "max");
    EXPECT_EQ(r["rows"][0]["bytes"], 1008) << r["op"] << ": 1024 B on 3 ranks is 84 floats per rank, 1008 bytes";
    for (const auto& row : r["rows"]) {
      EXPECT_EQ(row["out_of_place"]["wrong"], 0) << r["op"] << " at " << row["bytes"];
      if (r["op"] == "reduce_scatter") {
        ASSERT_TRUE(row["in_place"].is_object()) << "in-place reduce_scatter is timed and verified";
        EXPECT_EQ(row["in_place"]["wrong"], 0) << "in-place reduce_scatter at " << row["bytes"];
      }
    }
  }
}

TEST(Localhost, JsonLinesPrintsOneEventPerLine) {
  test::TempDir tmp("jsonlines");
  const auto o = run_shell(mpirun(2) + " run --phases inventory,collectives --collective-engine mpi --collective-ops allreduce,allgather --max-bytes 1K --json-lines --out " +
                               tmp.path().string(),
                           tmp.path() / "log");
  ASSERT_LE(o.exit_code, 1) << o.output;
  std::istringstream lines(o.output);
  int progress = 0, summaries = 0, time_left = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.rfind("[fabricproof]", 0), std::string::npos) << "no text lines with --json-lines: " << line;
    if (line.empty() || line[0] != '{') continue;
    const auto event = nlohmann::json::parse(line);  // throws (fails the test) on a broken line
    if (event["event"] == "progress") ++progress;
    if (event["event"] == "progress" && event["text"].get<std::string>().find("1 of 2 sweeps in") != std::string::npos) ++time_left;
    if (event["event"] == "summary") {
      ++summaries;
      EXPECT_EQ(event["exit_code"], o.exit_code);
      EXPECT_EQ(event["report"], (tmp.path() / "report.json").string());
    }
  }
  EXPECT_GT(progress, 3) << o.output;
  EXPECT_EQ(time_left, 1) << "the time left after the first of two sweeps: " << o.output;
  EXPECT_EQ(summaries, 1) << o.output;
}

TEST(Localhost, ReportCommandNamesBadInput) {
  test::TempDir tmp("badreport");
  const std::string bin = FABRICPROOF_BINARY;
  std::ofstream(tmp.path() / "garbage.json") << "{\"schema\": \"fabricproof.report/1\", \"nodes\": [";
  std::ofstream(tmp.path() / "other.json") << R"({"schema": "something-else"})";
  auto truncated = run_shell(bin + " report " + (tmp.path() / "garbage.json").string(), tmp.path() / "a");
  EXPECT_EQ(truncated.exit_code, 2);
  EXPECT_NE(truncated.output.find("garbage.json: not a readable report"), std::string::npos) << truncated.output;
  auto other = run_shell(bin + " report " + (tmp.path() / "other.json").string(), tmp.path() / "b");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.output.find("not a fabricproof report"), std::string::npos) << other.output;
  auto missing = run_shell(bin + " report " + (tmp.path() / "nope.json").string(), tmp.path() / "c");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("nope.json"), std::string::npos) << missing.output;
}

TEST(Localhost, ExpectNodesMismatchFailsWithExitCode1) {
  test::TempDir tmp("expect");
  const auto o = run_shell(mpirun(2) + " run --phases inventory --expect-nodes 2 --out " + tmp.path().string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  const auto f = findings_with_id(read_report(tmp.path()), "node_count");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]["verdict"], "fail");
  EXPECT_EQ(f[0]["expected"], 2);
}

TEST(Localhost, MalformedProfileIsNamedAndTheReportStillWritten) {
  test::TempDir tmp("profile");
  const auto profile = tmp.path() / "site.json";
  std::ofstream(profile) << R"({"schema": "fabricproof.profile/1", "name": "site", "roce": {"mtu": 4096}})";
  const auto out = tmp.path() / "report";
  const auto o = run_shell(mpirun(2) + " run --phases inventory --profile " + profile.string() + " --out " + out.string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("/roce/mtu: unknown key"), std::string::npos) << o.output;
  const auto report = read_report(out);
  const auto f = findings_with_id(report, "profile");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]["verdict"], "error");
  EXPECT_NE(f[0]["measured"].get<std::string>().find(profile.string() + ": /roce/mtu"), std::string::npos);
  EXPECT_EQ(report["verdict"], "error");
  EXPECT_EQ(report["nodes"].size(), 1u) << "the inventory is still gathered";
}

TEST(Localhost, UnknownOptionLeavesAReportNamingIt) {
  test::TempDir tmp("cli");
  const auto o = run_shell(std::string(FABRICPROOF_BINARY) + " run --out " + tmp.path().string() + " --fastest", tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("--fastest"), std::string::npos) << o.output;
  const auto f = findings_with_id(read_report(tmp.path()), "command_line");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0]["measured"].get<std::string>().find("--fastest"), std::string::npos);
}

TEST(Localhost, OutputThatCannotBeWrittenFailsBeforeAnyMeasurement) {
  test::TempDir tmp("badout");
  std::ofstream(tmp.path() / "a-file") << "x";
  const auto out = tmp.path() / "a-file" / "report";
  const auto o = run_shell(mpirun(2) + " run --phases inventory,collectives --collective-engine mpi --out " + out.string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find(out.string()), std::string::npos) << "the error names the directory: " << o.output;
  EXPECT_EQ(o.output.find("inventory: probing"), std::string::npos) << "nothing is measured first: " << o.output;
}

TEST(Localhost, SavedSysfsTreeIsJudgedThroughTheWholePipeline) {
  test::TempDir tmp("root");
  const auto tree = test::fixture("sysfs/roce-cx7-gid-tables");
  const auto o = run_shell(mpirun(1) + " run --phases inventory --root " + tree.string() + " --out " + tmp.path().string(), tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 1) << o.output;  // ens1f1 at MTU 1500
  const auto report = read_report(tmp.path());
  EXPECT_EQ(report["nodes"][0]["host"], "gpu-roce-02");
  EXPECT_EQ(report["nodes"][0]["rdma_devices"][0]["ports"][0]["roce_v2_gid_index"], 5);
  bool mtu_fail = false;
  for (const auto& f : findings_with_id(report, "roce_mtu")) mtu_fail |= f["subject"] == "gpu-roce-02/mlx5_1:1" && f["verdict"] == "fail";
  EXPECT_TRUE(mtu_fail);
}

TEST(NcclAudit, ExitCodesAndJsonOfTheCommand) {
  test::TempDir tmp("audit");
  const std::string bin = FABRICPROOF_BINARY;
  const auto dir = test::fixture("nccl");
  auto ok = run_shell(bin + " nccl-audit --json --expect-gdr " + (dir / "srun-2node-ib-gdrdma.log").string(), tmp.path() / "ok");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  const auto j = nlohmann::json::parse(ok.output);
  for (const char* key : {"socket_fallback", "nccl_version", "ranks", "connections", "networks", "findings"}) EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["socket_fallback"], false);
  EXPECT_EQ(j["nccl_version"], "2.21.5+cuda12.4");
  EXPECT_EQ(j["connections"][0]["host"], "gpu-a01");

  const auto per_rank = dir / "mixed-fallback-per-rank";
  auto mixed = run_shell(bin + " nccl-audit " + (per_rank / "nccl.node1.4101.log").string() + " " + (per_rank / "nccl.node1.4102.log").string() + " " +
                             (per_rank / "nccl.node2.5201.log").string() + " " + (per_rank / "nccl.node2.5202.log").string(),
                         tmp.path() / "mixed");
  EXPECT_EQ(mixed.exit_code, 1) << mixed.output;
  EXPECT_NE(mixed.output.find("socket fallback between nodes: YES"), std::string::npos) << mixed.output;
  EXPECT_NE(mixed.output.find("rank 3 (node2) -> rank 0 (node1)"), std::string::npos) << mixed.output;

  auto from_stdin = run_shell(bin + " nccl-audit < " + (dir / "init-only-no-transport.log").string(), tmp.path() / "stdin");
  EXPECT_EQ(from_stdin.exit_code, 2) << from_stdin.output;
  EXPECT_NE(from_stdin.output.find("nccl_transport_lines"), std::string::npos) << from_stdin.output;

  // A pipe rather than a file (process substitution, FIFOs): streamed, not read with pread.
  auto piped = run_shell("bash -c '" + bin + " nccl-audit --json <(cat " + (dir / "srun-2node-ib-gdrdma.log").string() + ")'", tmp.path() / "piped");
  EXPECT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_EQ(nlohmann::json::parse(piped.output)["connections"].size(), 8u);

  auto missing = run_shell(bin + " nccl-audit /nonexistent/nccl.log", tmp.path() / "missing");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("/nonexistent/nccl.log"), std::string::npos) << missing.output;
}

TEST(Localhost, RunAuditsGivenNcclLogs) {
  test::TempDir tmp("run-audit");
  const auto per_rank = test::fixture("nccl/mixed-fallback-per-rank");
  const auto o = run_shell(mpirun(2) + " run --phases nccl_audit --out " + tmp.path().string() + " --nccl-logs " +
                               (per_rank / "nccl.node2.5202.log").string() + " " + (per_rank / "nccl.node1.4101.log").string(),
                           tmp.path() / "log");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  const auto report = read_report(tmp.path());
  EXPECT_EQ(report["nccl_audit"]["socket_fallback"], true);
  bool named = false;
  for (const auto& f : findings_with_id(report, "nccl_socket_fallback")) named |= f["verdict"] == "fail" && f["subject"].get<std::string>().find("rank 3 (node2)") != std::string::npos;
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace fabricproof
