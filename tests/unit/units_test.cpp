#include "core/units.hpp"

#include <gtest/gtest.h>

#include "core/statistics.hpp"

namespace fabricproof {
namespace {

TEST(Median, MiddleValueOrTheMeanOfTheTwoMiddleOnesInAnyOrder) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({7}), 7);
  EXPECT_EQ(median({9, 1, 5}), 5);
  EXPECT_EQ(median({8, 2, 6, 4}), 5);  // (4 + 6) / 2: the lower middle found wherever nth_element left it
  EXPECT_EQ(median({3, 3, 1, 10, 10, 10}), 6.5);
}

TEST(LinkRate, WidthAndSpeedCodesFollowTheVerbsTables) {
  // width codes 1->1X 2->4X 4->8X 8->12X 16->2X (rdma-core devinfo.c)
  EXPECT_EQ(lanes_for_width_code(1), 1);
  EXPECT_EQ(lanes_for_width_code(2), 4);
  EXPECT_EQ(lanes_for_width_code(4), 8);
  EXPECT_EQ(lanes_for_width_code(8), 12);
  EXPECT_EQ(lanes_for_width_code(16), 2);
  EXPECT_FALSE(lanes_for_width_code(3));
  EXPECT_EQ(lane_gbps_for_speed_code(1), 2.5);
  EXPECT_EQ(lane_gbps_for_speed_code(2), 5.0);
  EXPECT_EQ(lane_gbps_for_speed_code(4), 10.0);
  EXPECT_EQ(lane_gbps_for_speed_code(8), 10.0);
  EXPECT_EQ(lane_gbps_for_speed_code(16), 14.0);
  EXPECT_EQ(lane_gbps_for_speed_code(32), 25.0);
  EXPECT_EQ(lane_gbps_for_speed_code(64), 50.0);
  EXPECT_EQ(lane_gbps_for_speed_code(128), 100.0);
  EXPECT_EQ(lane_gbps_for_speed_code(256), 200.0);
  EXPECT_FALSE(lane_gbps_for_speed_code(512));
}

TEST(LinkRate, RateFromCodes) {
  auto hdr = link_rate_from_codes(2, 64);
  ASSERT_TRUE(hdr);
  EXPECT_EQ(hdr->gbps, 200);
  EXPECT_EQ(hdr->width, "4X");
  EXPECT_EQ(hdr->speed_name, "HDR");
  EXPECT_EQ(link_rate_from_codes(2, 128)->gbps, 400);   // NDR 4X
  EXPECT_EQ(link_rate_from_codes(2, 256)->gbps, 800);   // XDR 4X (active_speed_ex)
  EXPECT_EQ(link_rate_from_codes(16, 128)->gbps, 200);  // 2X NDR: the other 200G encoding
  EXPECT_EQ(link_rate_from_codes(1, 32)->gbps, 25);     // sample 013: 1X, 25 Gb/s lane
  EXPECT_EQ(link_rate_from_codes(2, 16)->gbps, 56);     // FDR 4X
  EXPECT_FALSE(link_rate_from_codes(3, 64));
}

TEST(LinkRate, ParsesSysfsRateStrings) {
  auto fdr = parse_sysfs_rate("56 Gb/sec (4X FDR)");  // sample 022, mlx4
  ASSERT_TRUE(fdr);
  EXPECT_EQ(fdr->gbps, 56);
  EXPECT_EQ(fdr->width_code, 2);
  EXPECT_EQ(fdr->speed_code, 16);
  auto sdr = parse_sysfs_rate("2.5 Gb/sec (1X SDR)\n");  // sample 008's reduced rate
  ASSERT_TRUE(sdr);
  EXPECT_EQ(sdr->gbps, 2.5);
  EXPECT_EQ(sdr->lanes, 1);
  EXPECT_EQ(parse_sysfs_rate("40 Gb/sec (4X QDR)")->speed_name, "QDR");
  EXPECT_EQ(parse_sysfs_rate("400 Gb/sec (4X NDR)")->gbps, 400);
  EXPECT_EQ(parse_sysfs_rate("100 Gb/sec (2X HDR)")->lanes, 2);
  EXPECT_FALSE(parse_sysfs_rate("200"));
  EXPECT_FALSE(parse_sysfs_rate("fast (4X HDR)"));
  EXPECT_FALSE(parse_sysfs_rate("200 Gb/sec (4X WARP)"));
}

TEST(Mtu, CodesAndRoceMtuFromNetdevMtu) {
  EXPECT_EQ(mtu_bytes_for_code(5), 4096);
  EXPECT_EQ(mtu_bytes_for_code(3), 1024);
  EXPECT_FALSE(mtu_bytes_for_code(0));
  EXPECT_EQ(mtu_code_for_bytes(2048), 4);
  EXPECT_FALSE(mtu_code_for_bytes(9000));
  EXPECT_EQ(roce_mtu_for_netdev_mtu(9000), 4096);
  EXPECT_EQ(roce_mtu_for_netdev_mtu(1500), 1024);  // domain.md: 1500 gives RoCE MTU 1024
  EXPECT_EQ(roce_mtu_for_netdev_mtu(4192), 4096);  // 4096 + 96 bytes of headers
  EXPECT_EQ(roce_mtu_for_netdev_mtu(4191), 2048);
  EXPECT_FALSE(roce_mtu_for_netdev_mtu(300));
}

TEST(Pcie, SpeedsAndGenerations) {
  EXPECT_EQ(parse_pcie_speed_gts("16.0 GT/s PCIe"), 16.0);
  EXPECT_EQ(parse_pcie_speed_gts("8.0 GT/s"), 8.0);
  EXPECT_EQ(parse_pcie_speed_gts("2.5 GT/s PCIe\n"), 2.5);
  EXPECT_FALSE(parse_pcie_speed_gts("Unknown"));
  EXPECT_FALSE(parse_pcie_speed_gts("Unknown speed"));
  EXPECT_EQ(pcie_generation_for_gts(2.5), 1);
  EXPECT_EQ(pcie_generation_for_gts(8.0), 3);
  EXPECT_EQ(pcie_generation_for_gts(32.0), 5);
  EXPECT_EQ(pcie_generation_for_gts(64.0), 6);
  EXPECT_FALSE(pcie_generation_for_gts(12.0));
}

TEST(Sizes, ParseAndFormatBinaryUnits) {
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("8G"), 8ull << 30);
  EXPECT_EQ(parse_size("64M"), 64ull << 20);
  EXPECT_EQ(parse_size("1GiB"), 1ull << 30);
  EXPECT_EQ(parse_size("512KB"), 512ull << 10);
  EXPECT_EQ(parse_size("4k"), 4096u);
  EXPECT_EQ(parse_size("100B"), 100u);
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("G"));
  EXPECT_FALSE(parse_size("8X"));
  EXPECT_FALSE(parse_size("-1"));
  EXPECT_FALSE(parse_size("99999999999T"));
  EXPECT_EQ(format_size(8ull << 30), "8G");
  EXPECT_EQ(format_size(1536), "1536");
  EXPECT_EQ(format_size(2048), "2K");
  EXPECT_EQ(format_size(8), "8");
}

TEST(PortStates, NamesMatchIbvEnums) {
  EXPECT_EQ(port_state_name(4), "ACTIVE");
  EXPECT_EQ(port_state_name(1), "DOWN");
  EXPECT_EQ(port_state_name(2), "INIT");
  EXPECT_FALSE(port_state_name(9));
  EXPECT_EQ(phys_state_name(5), "LINK_UP");
  EXPECT_EQ(phys_state_name(2), "POLLING");
  EXPECT_EQ(phys_state_name(3), "DISABLED");
  EXPECT_FALSE(phys_state_name(-1));
}

}  // namespace
}  // namespace fabricproof
