#include "cli/options.hpp"

#include <gtest/gtest.h>

namespace fabricproof {
namespace {

CommandLine parse(std::vector<const char*> args) {
  args.insert(args.begin(), "fabricproof");
  return parse_command_line(static_cast<int>(args.size()), args.data());
}

TEST(Cli, RunWithEveryOption) {
  auto cl = parse({"run", "--out", "/tmp/r", "--profile", "roce-200", "--expect-nodes", "4", "--phases", "inventory,verbs",
                   "--timeout", "30", "--root", "/srv/tree", "--quiet", "--json-lines"});
  ASSERT_FALSE(cl.exit_code) << cl.message;
  EXPECT_EQ(cl.command, Command::run);
  EXPECT_EQ(cl.run.out_dir, "/tmp/r");
  EXPECT_EQ(cl.run.profile, "roce-200");
  EXPECT_EQ(cl.run.expect_nodes, 4);
  EXPECT_EQ(cl.run.phases, (std::vector<std::string>{"inventory", "verbs"}));
  EXPECT_EQ(cl.run.timeout_s, 30);
  EXPECT_EQ(cl.run.root, "/srv/tree");
  EXPECT_TRUE(cl.run.quiet);
  EXPECT_TRUE(cl.run.json_lines);
}

TEST(Cli, CollectiveSweepOptions) {
  auto cl = parse({"run", "--out", "d", "--collective-engine", "mpi", "--collective-ops", "allreduce,reduce-scatter,allgather",
                   "--min-bytes", "1K", "--max-bytes", "64M", "--factor", "4", "--iters", "7", "--warmup", "0", "--dtype", "double",
                   "--redop", "max", "--no-in-place", "--nccl-ring", "--collective-timeout", "30"});
  ASSERT_FALSE(cl.exit_code) << cl.message;
  const auto& c = cl.run.collectives;
  EXPECT_EQ(c.engine, "mpi");
  EXPECT_EQ(c.ops, (std::vector<std::string>{"allreduce", "reduce_scatter", "allgather"}));
  EXPECT_EQ(c.min_bytes, 1024u);
  EXPECT_EQ(c.max_bytes, 64u << 20);
  EXPECT_EQ(c.factor, 4);
  EXPECT_EQ(c.iters, 7);
  EXPECT_EQ(c.warmup, 0);
  EXPECT_EQ(c.dtype, "double");
  EXPECT_EQ(c.redop, "max");
  EXPECT_FALSE(c.in_place);
  EXPECT_TRUE(c.ring);
  EXPECT_EQ(c.timeout_s, 30);
  const auto defaults = parse({"run", "--out", "d"}).run.collectives;
  EXPECT_EQ(defaults.engine, "auto");
  EXPECT_EQ(defaults.min_bytes, 8u);
  EXPECT_EQ(defaults.max_bytes, 8ull << 30);  // nccl-tests' 8 B .. 8 GB, factor 2
  EXPECT_EQ(defaults.ops, (std::vector<std::string>{"allreduce"}));
}

TEST(Cli, BadCollectiveOptionsAreNamed) {
  auto cl = parse({"run", "--out", "d", "--collective-ops", "allreduce,gossip"});
  ASSERT_TRUE(cl.exit_code);
  EXPECT_NE(cl.message.find("gossip"), std::string::npos) << cl.message;
  cl = parse({"run", "--out", "d", "--max-bytes", "lots"});
  ASSERT_TRUE(cl.exit_code);
  EXPECT_NE(cl.message.find("--max-bytes"), std::string::npos) << cl.message;
  cl = parse({"run", "--out", "d", "--min-bytes", "1M", "--max-bytes", "1K"});
  ASSERT_TRUE(cl.exit_code);
  EXPECT_NE(cl.message.find("--min-bytes"), std::string::npos) << cl.message;
  cl = parse({"run", "--out", "d", "--collective-engine", "gloo"});
  ASSERT_TRUE(cl.exit_code);
  EXPECT_NE(cl.message.find("--collective-engine"), std::string::npos) << cl.message;
}

// NaN passes every range check (each comparison with it is false): each real-valued option is
// checked to be finite first, so no run goes without a deadline or with a nonsense duration.
TEST(Cli, NumbersThatAreNotFiniteAreRefused) {
  for (const char* option : {"--collective-timeout", "--timeout", "--verbs-timeout", "--verbs-duration", "--uplink-seconds", "--factor"})
    for (const char* value : {"nan", "inf", "-inf", "NaN"}) {
      const auto cl = parse({"run", "--out", "d", option, value});
      ASSERT_TRUE(cl.exit_code) << option << " " << value;
      EXPECT_EQ(*cl.exit_code, 2) << option << " " << value;
      EXPECT_NE(cl.message.find("is not a finite number"), std::string::npos) << option << " " << value << ": " << cl.message;
    }
  EXPECT_FALSE(parse({"run", "--out", "d", "--collective-timeout", "2.5"}).exit_code);
  const auto spec = parse({"spec", "draft", "--from", "/nonexistent/report.json"});
  ASSERT_TRUE(spec.exit_code);
  EXPECT_EQ(*spec.exit_code, 2);
}

TEST(Cli, DefaultsRunEveryPhaseWithTheDefaultProfile) {
  auto cl = parse({"run", "--out", "dir"});
  ASSERT_FALSE(cl.exit_code);
  EXPECT_EQ(cl.run.profile, "default");
  EXPECT_EQ(cl.run.phases, kAllPhases);
  EXPECT_FALSE(cl.run.expect_nodes);
}

TEST(Cli, UnknownOptionIsAnErrorThatStillKnowsTheOutputDirectory) {
  auto cl = parse({"run", "--out", "dir", "--fast"});
  ASSERT_TRUE(cl.exit_code);
  EXPECT_EQ(*cl.exit_code, 2);
  EXPECT_NE(cl.message.find("--fast"), std::string::npos) << cl.message;
  EXPECT_EQ(cl.out_dir_hint, "dir");
}

TEST(Cli, MissingOutAndBadValuesAreNamed) {
  auto missing = parse({"run"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.message.find("--out"), std::string::npos) << missing.message;
  auto nodes = parse({"run", "--out", "d", "--expect-nodes", "zero"});
  EXPECT_EQ(nodes.exit_code, 2);
  EXPECT_NE(nodes.message.find("--expect-nodes"), std::string::npos) << nodes.message;
  auto phase = parse({"run", "--out", "d", "--phases", "inventory,warp"});
  EXPECT_EQ(phase.exit_code, 2);
  EXPECT_NE(phase.message.find("unknown phase 'warp'"), std::string::npos);
  auto none = parse({});
  EXPECT_EQ(none.exit_code, 2);
}

TEST(Cli, HelpExitsZeroWithUsage) {
  auto cl = parse({"run", "--help"});
  EXPECT_EQ(cl.exit_code, 0);
  EXPECT_NE(cl.message.find("--expect-nodes"), std::string::npos);
}

// Issue 14's options: the time statistic, the traffic class, the duration window, and a GPU
// payload size the GPUDirect check can verify (4-byte words), refused before any pair starts.
TEST(Cli, TimeStatTrafficClassAndMargin) {
  auto cl = parse({"run", "--out", "d", "--time-stat", "max", "--verbs-tclass", "106", "--verbs-duration", "4", "--verbs-margin", "1"});
  ASSERT_FALSE(cl.exit_code) << cl.message;
  EXPECT_EQ(cl.run.collectives.time_stat, "max");
  EXPECT_EQ(cl.run.verbs.traffic_class, 106);
  EXPECT_EQ(cl.run.verbs.traffic_class_source, "--verbs-tclass");
  EXPECT_DOUBLE_EQ(cl.run.verbs.margin(), 1.0);
  EXPECT_EQ(parse({"run", "--out", "d"}).run.collectives.time_stat, "avg") << "nccl-tests' default";
  EXPECT_DOUBLE_EQ(parse({"run", "--out", "d", "--verbs-duration", "2"}).run.verbs.margin(), 0.5) << "perftest's duration / 4";
  EXPECT_EQ(parse({"run", "--out", "d", "--time-stat", "median"}).exit_code, 2);
  EXPECT_EQ(parse({"run", "--out", "d", "--verbs-tclass", "256"}).exit_code, 2);
  const auto window = parse({"run", "--out", "d", "--verbs-duration", "2", "--verbs-margin", "1"});
  EXPECT_EQ(window.exit_code, 2);
  EXPECT_NE(window.message.find("--verbs-margin"), std::string::npos) << window.message;
}

TEST(Cli, OutlierRoundsAreMeasuredAgainUnlessTurnedOff) {
  EXPECT_TRUE(parse({"run", "--out", "d"}).run.verbs.remeasure) << "on by default";
  EXPECT_FALSE(parse({"run", "--out", "d", "--no-verbs-remeasure"}).run.verbs.remeasure);
  EXPECT_TRUE(parse({"run", "--out", "d", "--verbs-remeasure"}).run.verbs.remeasure);
  EXPECT_FALSE(VerbsOptions{}.remeasure) << "a report without the field did not re-measure";
}

// perftest's defaults are the run's: relaxed ordering on; the NCCL engine as nccl-tests; both can
// be turned the other way.
TEST(Cli, RelaxedOrderingAndTheNcclFormsHaveTheReferenceToolsDefaults) {
  const auto defaults = parse({"run", "--out", "d"}).run;
  EXPECT_TRUE(defaults.verbs.relaxed_ordering);
  EXPECT_EQ(defaults.collectives.nccl_comm, "blocking");
  EXPECT_EQ(defaults.collectives.gpu_buffers, "cudaMalloc");
  EXPECT_EQ(defaults.collectives.warmup, 1);
  const auto other = parse({"run", "--out", "d", "--no-verbs-relaxed-ordering", "--nccl-comm", "split", "--gpu-buffers", "ncclMemAlloc"}).run;
  EXPECT_FALSE(other.verbs.relaxed_ordering);
  EXPECT_EQ(other.collectives.nccl_comm, "split");
  EXPECT_EQ(other.collectives.gpu_buffers, "ncclMemAlloc");
  const auto bad = parse({"run", "--out", "d", "--nccl-comm", "sometimes"});
  ASSERT_TRUE(bad.exit_code);
  EXPECT_NE(bad.message.find("--nccl-comm"), std::string::npos) << bad.message;
}

TEST(Cli, VerbsSizesAsIbWriteBwA) {
  const auto all = parse({"run", "--out", "d", "--verbs-sizes", "all"}).run.verbs.sizes;
  ASSERT_EQ(all.size(), 23u);  // 2 B .. 8 MiB, as ib_write_bw -a
  EXPECT_EQ(all.front(), 2u);
  EXPECT_EQ(all.back(), 8u << 20);
  EXPECT_EQ(parse({"run", "--out", "d", "--verbs-sizes", "4K:64K"}).run.verbs.sizes, (std::vector<uint64_t>{4096, 8192, 16384, 32768, 65536}));
  EXPECT_EQ(parse({"run", "--out", "d", "--verbs-sizes", "4K:20K"}).run.verbs.sizes, (std::vector<uint64_t>{4096, 8192, 16384}));
  EXPECT_EQ(parse({"run", "--out", "d", "--verbs-sizes", "64K,1M,4K"}).exit_code.has_value(), true) << "not ascending";
  EXPECT_EQ(parse({"run", "--out", "d", "--verbs-sizes", "2,64K,1M"}).run.verbs.sizes, (std::vector<uint64_t>{2, 65536, 1u << 20}));
  EXPECT_TRUE(parse({"run", "--out", "d"}).run.verbs.sizes.empty()) << "no curve unless asked";
  for (const char* wrong : {"lots", "8M:2", "1K,,2K", "2G"}) {
    const auto cl = parse({"run", "--out", "d", "--verbs-sizes", wrong});
    ASSERT_TRUE(cl.exit_code) << wrong;
    EXPECT_NE(cl.message.find("--verbs-sizes"), std::string::npos) << cl.message;
  }
}

TEST(Cli, GpuPayloadSizeMustBeWholeWords) {
  const auto odd = parse({"run", "--out", "d", "--verbs-size", "1001"});
  ASSERT_EQ(odd.exit_code, 2);
  EXPECT_NE(odd.message.find("multiple of 4"), std::string::npos) << odd.message;
  EXPECT_FALSE(parse({"run", "--out", "d", "--verbs-size", "1001", "--phases", "inventory,verbs"}).exit_code)
      << "without the GPUDirect phase any size goes";
  EXPECT_FALSE(parse({"run", "--out", "d", "--verbs-size", "1K"}).exit_code);
}

}  // namespace
}  // namespace fabricproof

namespace fabricproof {
namespace {

TEST(Cli, SoakAddsItsPhaseAndReadsDurations) {
  auto cl = parse({"run", "--out", "d", "--soak", "2h", "--soak-interval", "30s"});
  ASSERT_FALSE(cl.exit_code) << cl.message;
  EXPECT_EQ(cl.run.soak.duration_s, 7200);
  EXPECT_EQ(cl.run.soak.interval_s, 30);
  EXPECT_EQ(cl.run.phases.back(), "soak");
  cl = parse({"run", "--out", "d", "--phases", "inventory", "--soak", "10m"});
  ASSERT_FALSE(cl.exit_code) << cl.message;
  EXPECT_EQ(cl.run.phases, (std::vector<std::string>{"inventory", "soak"}));
  EXPECT_EQ(parse({"run", "--out", "d"}).run.soak.duration_s, 0);
}

TEST(Cli, SoakRefusesWhatIsNotADuration) {
  auto cl = parse({"run", "--out", "d", "--soak", "2 hours"});
  ASSERT_TRUE(cl.exit_code);
  EXPECT_NE(cl.message.find("--soak: '2 hours' is not a duration"), std::string::npos) << cl.message;
  cl = parse({"run", "--out", "d", "--soak", "1h", "--soak-interval", "often"});
  ASSERT_TRUE(cl.exit_code);
  EXPECT_NE(cl.message.find("--soak-interval"), std::string::npos) << cl.message;
  cl = parse({"run", "--out", "d", "--phases", "inventory,soak"});
  ASSERT_TRUE(cl.exit_code);
  EXPECT_NE(cl.message.find("--phases soak needs --soak DURATION"), std::string::npos) << cl.message;
}

}  // namespace
}  // namespace fabricproof
