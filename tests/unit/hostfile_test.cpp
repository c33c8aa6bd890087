// The hostfile parser behind `fabricproof hostfile` and scripts/fabricproof-mpirun.
#include <gtest/gtest.h>

#include "launch/hostfile.hpp"

namespace fabricproof {
namespace {

TEST(Hostfile, HostsSlotsCommentsAndBlankLines) {
  const auto h = parse_hostfile("# rack A\nnode1 slots=4\n\n  node2\tslots=2 max_slots=8  # spare\nnode3.example.com\r\n", "hf");
  ASSERT_TRUE(h.errors.empty()) << h.errors.front();
  ASSERT_EQ(h.hosts.size(), 3u);
  EXPECT_EQ(h.hosts[0].host, "node1");
  EXPECT_EQ(h.hosts[0].slots, 4);
  EXPECT_EQ(h.hosts[1].slots, 2) << "max_slots is not slots";
  EXPECT_EQ(h.hosts[2].host, "node3.example.com");
  EXPECT_EQ(h.hosts[2].slots, 1);
  EXPECT_EQ(h.hosts[2].line, 5);
  EXPECT_EQ(h.total_slots(), 7);
}

TEST(Hostfile, EveryProblemNamesFileAndLine) {
  auto first = [](const Hostfile& h) { return h.errors.empty() ? std::string("(none)") : h.errors.front(); };
  EXPECT_EQ(first(parse_hostfile("node1 slots=4\nnode2 slots=four\n", "f")), "f:2: 'slots=four': slots must be a positive integer of at most 4096");
  EXPECT_EQ(first(parse_hostfile("node1 slots=0\n", "f")), "f:1: 'slots=0': slots must be a positive integer of at most 4096");
  EXPECT_EQ(first(parse_hostfile("node1 slots=99999999999999999999\n", "f")).substr(0, 5), "f:1: ") << "no overflow";
  EXPECT_EQ(first(parse_hostfile("node1\nnode1 slots=2\n", "f")), "f:2: host 'node1' is listed twice (line 1)");
  EXPECT_EQ(first(parse_hostfile("node1 gpus=4\n", "f")), "f:1: unknown field 'gpus=4' (expected slots=N)");
  EXPECT_EQ(first(parse_hostfile("-node1\n", "f")), "f:1: '-node1' is not a host name");
  EXPECT_EQ(first(parse_hostfile("no$de\n", "f")), "f:1: 'no$de' is not a host name");
  EXPECT_EQ(first(parse_hostfile("# nothing\n\n", "f")), "f: no hosts");
  EXPECT_EQ(first(parse_hostfile("", "f")), "f: no hosts");
}

}  // namespace
}  // namespace fabricproof
