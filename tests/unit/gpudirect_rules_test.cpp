// GPUDirect findings on hand-built verbs sections: the same pair measured on host and GPU memory.
#include <gtest/gtest.h>

#include "gpudirect/gpudirect_rules.hpp"
#include "core/profile.hpp"
#include "facts.hpp"

namespace fabricproof {
namespace {

using test::with_id;

// Two endpoints and one pair with write_bw both ways at the given figures (Gb/s; nullopt = error).
VerbsSection section(std::optional<double> a_to_b, std::optional<double> b_to_a, uint64_t send_mismatches = 0) {
  VerbsSection s;
  s.endpoints = {{"node1", "mlx5_0", 1, 0, 3, "Ethernet", 200.0, 4096, "ACTIVE", "", "", ""}, {"node2", "mlx5_0", 1, 1, 3, "Ethernet", 200.0, 4096, "ACTIVE", "", "", ""}};
  PairResult p;
  p.a = 0;
  p.b = 1;
  p.tests = planned_results(s.options, 0, 1);
  for (auto& t : p.tests) {
    if (t.test == "write_bw") {
      const auto figure = t.from == 0 ? a_to_b : b_to_a;
      if (figure) t.gbps = figure;
      else t.status = Status::error, t.reason = "ibv_reg_dmabuf_mr: Bad address";
    }
    if (t.test == "send_bw") t.verified = 100, t.mismatches = send_mismatches;
  }
  s.pairs = {p};
  return s;
}

TEST(GpudirectRules, GpuWithinTenPercentOfHostPasses) {
  const auto f = with_id(check_gpudirect(section(190, 188), section(185, 180), {}, default_profile()), "gpudirect_ratio");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].verdict, Verdict::pass);
  EXPECT_EQ(f[0].subject, "node1/mlx5_0 -> node2/mlx5_0");
  EXPECT_NEAR(f[0].measured["ratio"].get<double>(), 185.0 / 190, 1e-12);
  EXPECT_EQ(f[1].subject, "node2/mlx5_0 -> node1/mlx5_0");
}

TEST(GpudirectRules, FiveTimesSlowerIsAHostBounce) {
  const auto f = with_id(check_gpudirect(section(190, 190), section(38, 150), {}, default_profile()), "gpudirect_ratio");
  EXPECT_EQ(f.at(0).verdict, Verdict::fail);  // 0.2: the seed's ~5x
  EXPECT_NE(f.at(0).hint.find("Host bounce"), std::string::npos);
  EXPECT_EQ(f.at(1).verdict, Verdict::warn);  // 0.79: between the limits
}

TEST(GpudirectRules, RegistrationFailureIsGpudirectNotAvailable) {
  GpuRegistration failed{1, "node2", 0, "", "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0", "ibv_reg_mr: Bad address (14); nvidia_peermem not loaded", {{"failed", 1}}, ""};
  GpuRegistration fine{0, "node1", 0, "dmabuf", "", "", {{"dmabuf", 4}}, "not needed"};
  const auto findings = check_gpudirect(section(190, 190), section(std::nullopt, std::nullopt), {fine, failed}, default_profile());
  const auto available = with_id(findings, "gpudirect_available");
  ASSERT_EQ(available.size(), 1u);
  EXPECT_EQ(available[0].verdict, Verdict::fail);
  EXPECT_EQ(available[0].subject, "node2 rank 1 GPU 0");
  EXPECT_NE(available[0].measured["peermem"].get<std::string>().find("not loaded"), std::string::npos);
  EXPECT_NE(available[0].hint.find("GPUDirect not available"), std::string::npos);
  for (const auto& f : with_id(findings, "gpudirect_ratio")) EXPECT_EQ(f.verdict, Verdict::fail);
}

TEST(GpudirectRules, GpuPayloadMismatchesFail) {
  const auto findings = check_gpudirect(section(190, 190), section(185, 185, 3), {}, default_profile());
  const auto payload = with_id(findings, "gpudirect_payload");
  ASSERT_EQ(payload.size(), 2u);  // send_bw in each direction
  EXPECT_EQ(payload[0].verdict, Verdict::fail);
  EXPECT_EQ(payload[0].measured["mismatches"], 3);
  EXPECT_TRUE(with_id(check_gpudirect(section(190, 190), section(185, 185, 0), {}, default_profile()), "gpudirect_payload").empty());
}

TEST(GpudirectRules, HostFailureLeavesNothingToCompare) {
  const auto f = with_id(check_gpudirect(section(std::nullopt, 190), section(185, 185), {}, default_profile()), "gpudirect_ratio");
  EXPECT_EQ(f.at(0).verdict, Verdict::skip);
  EXPECT_EQ(f.at(1).verdict, Verdict::pass);
}

TEST(GpudirectRules, ComparisonRowsCarryBothFigures) {
  const auto rows = gpudirect_comparison(section(200, 100), section(180, std::nullopt));
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_TRUE(rows[0].ratio.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].ratio, 0.9);
  EXPECT_FALSE(rows[1].ratio.has_value());
  EXPECT_EQ(rows[1].gpu_status, Status::error);
}

}  // namespace
}  // namespace fabricproof
