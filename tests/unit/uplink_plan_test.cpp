// The uplink calculator pinned to the seed's worked figures.
#include <gtest/gtest.h>

#include "uplink/uplink_plan.hpp"

namespace fabricproof {
namespace {

TEST(UplinkPlan, TheSeedsWorkedFigures) {
  UplinkPlanInput in;  // 4 nodes x 4 GPUs, vision, 70B, 25/100/400 GbE, 22 GB/s busbw
  const auto p = plan_uplink(in);
  ASSERT_TRUE(p.error.empty()) << p.error;
  EXPECT_DOUBLE_EQ(p.need_GBps, 16);   // 4 x 4 GPUs x 1 GB/s
  EXPECT_DOUBLE_EQ(p.need_gbps, 128);  // = 128 Gb/s
  EXPECT_NEAR(p.east_west_gbps, 700, 5) << "~700 Gb/s east-west for 4 nodes at 22 GB/s busbw";
  EXPECT_DOUBLE_EQ(p.weights_GB, 140);     // 70B at 2 bytes
  EXPECT_DOUBLE_EQ(p.checkpoint_GB, 280);  // 2x
  ASSERT_EQ(p.options.size(), 3u);
  EXPECT_NEAR(p.options[0].checkpoint_seconds, 90, 1) << "~90 s at 25 GbE";
  EXPECT_NEAR(p.options[1].checkpoint_seconds, 22, 1) << "~22 s at 100 GbE";
  EXPECT_FALSE(p.options[0].carries_need) << "4 x 25 GbE = 100 Gb/s < 128";
  EXPECT_TRUE(p.options[1].carries_need);
  EXPECT_EQ(p.options[0].single_flow_gbps, 25) << "one flow gets one link";
}

TEST(UplinkPlan, TwentyFiveGbeCarriesLlmTokenPretraining) {
  UplinkPlanInput in;
  in.workload = "llm";
  in.uplinks_gbps = {25};
  const auto p = plan_uplink(in);
  ASSERT_TRUE(p.error.empty());
  EXPECT_LE(p.need_gbps, 4);
  EXPECT_TRUE(p.options[0].carries_need);
}

TEST(UplinkPlan, ParallelStreamsAdviceWhenOneFlowIsNotEnough) {
  UplinkPlanInput in;
  in.uplinks_gbps = {25};
  in.links_per_node = 4;  // 4 x 25 GbE per node: 400 Gb/s aggregate, 25 per flow
  const auto p = plan_uplink(in);
  EXPECT_TRUE(p.options[0].carries_need);
  EXPECT_EQ(p.options[0].flows_per_node, 2) << "32 Gb/s per node over 25 GbE links";
  bool streams = false;
  for (const auto& a : p.advice) streams |= a.find("parallel streams") != std::string::npos;
  EXPECT_TRUE(streams);
}

TEST(UplinkPlan, TopologyAdviceFollowsTheNodeCount) {
  auto advice_of = [](int nodes) {
    UplinkPlanInput in;
    in.nodes = nodes;
    std::string all;
    for (const auto& a : plan_uplink(in).advice) all += a + "\n";
    return all;
  };
  EXPECT_NE(advice_of(4).find("one switch suffices"), std::string::npos);
  EXPECT_NE(advice_of(8).find("From about 8 nodes"), std::string::npos);
  EXPECT_NE(advice_of(16).find("only sensible answer"), std::string::npos);
}

TEST(UplinkPlan, BadInputIsNamed) {
  UplinkPlanInput in;
  in.workload = "custom:abc";
  EXPECT_NE(plan_uplink(in).error.find("custom:GBPS"), std::string::npos);
  in.workload = "video";
  EXPECT_NE(plan_uplink(in).error.find("'video'"), std::string::npos);
  in.workload = "custom:2.5";
  EXPECT_DOUBLE_EQ(plan_uplink(in).need_GBps, 40);
}

}  // namespace
}  // namespace fabricproof
