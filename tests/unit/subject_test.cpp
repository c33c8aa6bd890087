// Typed subjects: each kind's text is what the reports have always said, and its "target" reads
// back to the same subject; an older report's pair subject is read from its text, once.
#include <gtest/gtest.h>

#include "core/finding.hpp"
#include "core/subject.hpp"

namespace fabricproof {
namespace {

Subject round_trip(const Subject& s, bool pair_check = false) { return subject_from_json(s.text(), target_json(s), pair_check); }

TEST(Subject, EachKindKeepsItsTextAndReadsBack) {
  const std::vector<std::pair<Subject, std::string>> cases = {
      {Subject::cluster(), "cluster"},
      {Subject::node("node1"), "node1"},
      {Subject::port("node1", "mlx5_0", 1), "node1/mlx5_0:1"},
      {Subject::pair("node1/mlx5_0", "node2/mlx5_0", "write_bw", false), "node1/mlx5_0 -> node2/mlx5_0 (write_bw)"},
      {Subject::pair("node1/mlx5_0", "node2/mlx5_0", "write_lat", true), "node1/mlx5_0 <-> node2/mlx5_0 (write_lat)"},
      {Subject::rank(3, "rank 3 (node2)"), "rank 3 (node2)"},
      {Subject::connection(0, "rank 0 (node1)", 3, "rank 3 (node2)", true), "rank 0 (node1) <- rank 3 (node2)"},
      {Subject("node1 NCCL_SOCKET_IFNAME"), "node1 NCCL_SOCKET_IFNAME"},
  };
  ASSERT_FALSE(cases.empty());
  for (const auto& [subject, text] : cases) {
    EXPECT_EQ(subject.text(), text);
    const Subject again = round_trip(subject);
    EXPECT_EQ(again.kind, subject.kind) << text;
    EXPECT_EQ(again.text(), text);
    EXPECT_EQ(target_json(again), target_json(subject)) << text;
  }
  EXPECT_TRUE(target_json(Subject("free text")).is_null()) << "a text subject adds no target";
  const auto port = round_trip(Subject::port("node1", "mlx5_0", 2));
  EXPECT_EQ(port.device, "mlx5_0");
  EXPECT_EQ(port.number, 2);
}

TEST(Subject, AnOlderReportsPairIsReadFromItsTextOnlyForAPairCheck) {
  const auto pair = subject_from_json("a/x -> b/y (send_bw)", nullptr, true);
  ASSERT_EQ(pair.kind, Subject::Kind::pair);
  EXPECT_EQ(pair.name, "a/x");
  EXPECT_EQ(pair.peer, "b/y");
  EXPECT_EQ(pair.test, "send_bw");
  EXPECT_EQ(subject_from_json("rank 3 (node2) -> rank 0 (node1)", nullptr, false).kind, Subject::Kind::text)
      << "an NCCL connection of an older report is not a verbs pair";
  const Finding f = nlohmann::json{{"id", "verbs_pair_bw"}, {"subject", "a/x <-> b/y (write_bw_bidir)"}, {"verdict", "fail"}}.get<Finding>();
  EXPECT_EQ(f.subject.kind, Subject::Kind::pair);
  EXPECT_TRUE(f.subject.both_ways);
}

}  // namespace
}  // namespace fabricproof
