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
                   "--timeout", "30", "--root", "/srv/tree", "--quiet"});
  ASSERT_FALSE(cl.exit_code) << cl.message;
  EXPECT_EQ(cl.command, Command::run);
  EXPECT_EQ(cl.run.out_dir, "/tmp/r");
  EXPECT_EQ(cl.run.profile, "roce-200");
  EXPECT_EQ(cl.run.expect_nodes, 4);
  EXPECT_EQ(cl.run.phases, (std::vector<std::string>{"inventory", "verbs"}));
  EXPECT_EQ(cl.run.timeout_s, 30);
  EXPECT_EQ(cl.run.root, "/srv/tree");
  EXPECT_TRUE(cl.run.quiet);
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

}  // namespace
}  // namespace fabricproof
