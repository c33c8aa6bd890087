// The dcbnl decoder on netlink messages built per the kernel UAPI (linux/dcbnl.h, the structs the
// kernel itself fills), and the RoCE lossless, NCCL-environment and control-path rules: the seed's
// correct configuration (inventory-samples/023: PFC on 3, trust dscp, DSCP 26 -> 3) and each way it
// goes wrong.
#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>

#include "inventory/dcb.hpp"
#include "inventory/control_path_rules.hpp"
#include "inventory/lossless_rules.hpp"
#include "inventory/nccl_env_rules.hpp"
#include "core/located_error.hpp"
#include "inventory/subnet_manager.hpp"
#include "facts.hpp"

namespace fabricproof {
namespace {

using test::with_id;

void put_attribute(std::string& out, uint16_t type, const void* data, size_t size) {
  nlattr a{static_cast<uint16_t>(NLA_HDRLEN + size), type};
  out.append(reinterpret_cast<const char*>(&a), sizeof(a));
  out.append(static_cast<const char*>(data), size);
  out.resize(NLA_ALIGN(out.size()), '\0');
}

struct DcbSpec {
  uint8_t pfc_en = 1 << 3;
  bool trust_dscp = true;
  int dscp26_prio = 3;
  uint8_t roce_tc_bw = 50;
  uint8_t dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
};

// The RTM_GETDCB answer the kernel's dcbnl_ieee_fill() builds for such a configuration.
std::string dcb_message(const DcbSpec& spec) {
  ieee_ets ets{};
  for (int p = 0; p < 8; ++p) ets.prio_tc[p] = static_cast<uint8_t>(p);
  for (int tc = 0; tc < 8; ++tc) ets.tc_tsa[tc] = IEEE_8021QAZ_TSA_ETS;
  ets.tc_tx_bw[0] = static_cast<uint8_t>(100 - spec.roce_tc_bw);
  ets.tc_tx_bw[3] = spec.roce_tc_bw;
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = spec.pfc_en;
  std::string apps;
  if (spec.trust_dscp)
    for (uint16_t dscp = 0; dscp < 64; ++dscp) {  // mlx5 with trust dscp: the default map dscp >> 3
      dcb_app app{IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(dscp == 26 ? spec.dscp26_prio : dscp >> 3), dscp};
      put_attribute(apps, DCB_ATTR_IEEE_APP, &app, sizeof(app));
    }
  std::string ieee;
  put_attribute(ieee, DCB_ATTR_IEEE_ETS, &ets, sizeof(ets));
  put_attribute(ieee, DCB_ATTR_IEEE_PFC, &pfc, sizeof(pfc));
  put_attribute(ieee, DCB_ATTR_IEEE_APP_TABLE, apps.data(), apps.size());
  std::string body;
  put_attribute(body, DCB_ATTR_IFNAME, "ens1f0", 7);
  put_attribute(body, DCB_ATTR_IEEE | NLA_F_NESTED, ieee.data(), ieee.size());
  put_attribute(body, DCB_ATTR_DCBX, &spec.dcbx, 1);
  dcbmsg msg{AF_UNSPEC, DCB_CMD_IEEE_GET, 0};
  nlmsghdr header{static_cast<uint32_t>(NLMSG_HDRLEN + sizeof(msg) + body.size()), RTM_GETDCB, 0, 1, 0};
  std::string out(reinterpret_cast<const char*>(&header), sizeof(header));
  out.append(reinterpret_cast<const char*>(&msg), sizeof(msg));
  return out + body;
}

std::string error_message(int errno_value) {
  nlmsgerr err{-errno_value, {}};
  nlmsghdr header{static_cast<uint32_t>(NLMSG_HDRLEN + sizeof(err)), NLMSG_ERROR, 0, 1, 0};
  std::string out(reinterpret_cast<const char*>(&header), sizeof(header));
  return out.append(reinterpret_cast<const char*>(&err), sizeof(err));
}

TEST(Dcb, DecodesTheSeedsCorrectConfiguration) {
  const auto c = decode_dcb_reply(dcb_message({}));
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_EQ(c.pfc_enabled, 1 << 3);
  ASSERT_EQ(c.prio_tc.size(), 8u);
  EXPECT_EQ(c.prio_tc[3], 3);
  EXPECT_EQ(c.tc_tsa[3], IEEE_8021QAZ_TSA_ETS);
  EXPECT_EQ(c.tc_tx_bw[3], 50);
  EXPECT_TRUE(c.trusts_dscp());
  EXPECT_EQ(c.dscp_priority.size(), 64u);
  EXPECT_EQ(c.dscp_priority.at(26), 3);
  EXPECT_EQ(c.dcbx, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
}

TEST(Dcb, ADriverWithoutDcbIsUnreadableWithTheErrno) {
  const auto c = decode_dcb_reply(error_message(EOPNOTSUPP));
  EXPECT_EQ(c.error, "Operation not supported (the driver has no DCB support)");
  EXPECT_FALSE(c.pfc_enabled.has_value());
  EXPECT_NE(decode_dcb_reply(error_message(ENODEV)).error.find("errno 19"), std::string::npos);
}

TEST(Dcb, MalformedMessagesAreErrorsNotCrashes) {
  auto m = dcb_message({});
  EXPECT_FALSE(decode_dcb_reply(m.substr(0, 10)).error.empty());
  m[NLMSG_HDRLEN + sizeof(dcbmsg)] = 0x7f;  // the first attribute's length runs past the message
  EXPECT_FALSE(decode_dcb_reply(m).error.empty());
}

TEST(Dcb, RequestIsAnRtmGetdcbForTheInterface) {
  const auto r = dcb_request("eth1", 7);
  nlmsghdr header{};
  std::memcpy(&header, r.data(), sizeof(header));
  EXPECT_EQ(header.nlmsg_len, r.size());
  EXPECT_EQ(header.nlmsg_type, RTM_GETDCB);
  EXPECT_EQ(header.nlmsg_seq, 7u);
  EXPECT_EQ(static_cast<uint8_t>(r[NLMSG_HDRLEN + 1]), DCB_CMD_IEEE_GET);
  EXPECT_NE(r.find("eth1"), std::string::npos);
}

ClusterFacts roce_cluster(const std::vector<DcbSpec>& specs) {
  std::vector<NodeFacts> nodes;
  for (size_t i = 0; i < specs.size(); ++i) {
    auto port = test::roce_port();
    port.qos.dcb = decode_dcb_reply(dcb_message(specs[i]));
    nodes.push_back(test::node("node" + std::to_string(i + 1), {test::hca("mlx5_0", port)}));
  }
  return test::cluster(nodes);
}

Verdict verdict_of(const std::vector<Finding>& f, const std::string& id, const std::string& subject_part) {
  for (const auto& x : f)
    if (x.id == id && x.subject.text().find(subject_part) != std::string::npos) return x.verdict;
  ADD_FAILURE() << "no " << id << " for " << subject_part;
  return Verdict::error;
}

TEST(RoceQos, TheSeedsConfigurationPassesOnEveryNode) {
  const auto f = check_roce_qos(roce_cluster({{}, {}, {}}), default_profile());
  ASSERT_FALSE(f.empty());
  for (const auto& x : f) {
    if (x.id == "roce_ecn") continue;  // ECN is advice, reported as a warning when off
    EXPECT_EQ(x.verdict, Verdict::pass) << x.id << " " << x.subject << " " << x.measured.dump();
  }
  EXPECT_EQ(with_id(f, "roce_pfc").size(), 3u);
  EXPECT_EQ(with_id(f, "consistency_roce_qos").at(0).verdict, Verdict::pass);
}

TEST(RoceQos, EachWayItGoesWrongFailsOnItsNode) {
  DcbSpec pfc0, pfc34, pcp, wrong_map, starved;
  pfc0.pfc_en = 1 << 0;
  pfc34.pfc_en = (1 << 3) | (1 << 4);
  pcp.trust_dscp = false;
  wrong_map.dscp26_prio = 0;
  starved.roce_tc_bw = 0;
  const auto f = check_roce_qos(roce_cluster({{}, pfc0, pfc34, pcp, wrong_map, starved}), default_profile());
  EXPECT_EQ(verdict_of(f, "roce_pfc", "node1/"), Verdict::pass);
  EXPECT_EQ(verdict_of(f, "roce_pfc", "node2/"), Verdict::fail) << "PFC on 0";
  EXPECT_EQ(verdict_of(f, "roce_pfc", "node3/"), Verdict::fail) << "PFC on 3 and 4";
  EXPECT_EQ(verdict_of(f, "roce_trust", "node4/"), Verdict::fail) << "trust pcp";
  EXPECT_EQ(verdict_of(f, "roce_dscp_priority", "node4/"), Verdict::fail) << "without trust dscp the DSCP map does not apply";
  EXPECT_EQ(verdict_of(f, "roce_dscp_priority", "node5/"), Verdict::fail) << "DSCP 26 -> 0";
  EXPECT_EQ(verdict_of(f, "roce_trust", "node5/"), Verdict::pass);
  EXPECT_EQ(verdict_of(f, "roce_ets", "node6/"), Verdict::fail) << "ETS without the RoCE class";
  EXPECT_EQ(verdict_of(f, "roce_ets", "node1/"), Verdict::pass);
}

TEST(RoceQos, OneNodeDifferentIsNamed) {
  DcbSpec odd;
  odd.pfc_en = 1 << 4;
  const auto f = with_id(check_roce_qos(roce_cluster({{}, {}, odd, {}}), default_profile()), "consistency_roce_qos");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_NE(f[0].hint.find("node3 differ"), std::string::npos) << f[0].hint;
  EXPECT_EQ(f[0].hint.find("node1"), std::string::npos) << f[0].hint;
}

TEST(RoceQos, UnreadableDcbIsASkipWithTheReasonNeverAPassOrFail) {
  auto cluster = roce_cluster({{}});
  cluster.nodes[0].rdma_devices[0].ports[0].qos.dcb = decode_dcb_reply(error_message(EOPNOTSUPP));
  const auto f = with_id(check_roce_qos(cluster, default_profile()), "roce_pfc");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::skip);
  EXPECT_NE(f[0].measured.get<std::string>().find("Operation not supported"), std::string::npos);
}

TEST(RoceQos, TheTrafficsDscpComesFromNcclIbTcFirst) {
  DcbSpec spec;  // DSCP 26 -> 3; DSCP 10 -> 1 (the default map)
  auto cluster = roce_cluster({spec});
  cluster.nodes[0].ranks[0].env["NCCL_IB_TC"] = "40";  // DSCP 10
  auto f = check_roce_qos(cluster, default_profile());
  EXPECT_EQ(verdict_of(f, "roce_dscp_priority", "node1/"), Verdict::fail);
  cluster.nodes[0].ranks[0].env["NCCL_IB_TC"] = "106";  // DSCP 26
  f = check_roce_qos(cluster, default_profile());
  EXPECT_EQ(verdict_of(f, "roce_dscp_priority", "node1/"), Verdict::pass);
}

TEST(RoceQos, RdmaCmDefaultsAgreeWithNcclIbTcAndUseRoceV2) {
  auto cluster = roce_cluster({DcbSpec{}});
  auto& qos = cluster.nodes[0].rdma_devices[0].ports[0].qos;
  cluster.nodes[0].ranks[0].env["NCCL_IB_TC"] = "106";
  qos.default_roce_mode = "RoCE v2";
  qos.default_roce_tos = 106;
  EXPECT_EQ(verdict_of(check_nccl_environment(cluster), "nccl_ib_tc", "node1/"), Verdict::pass);
  EXPECT_EQ(verdict_of(check_roce_qos(cluster, default_profile()), "rdma_cm_roce_mode", "node1/"), Verdict::pass);
  qos.default_roce_tos = 0;  // RDMA-CM connections in another class than NCCL's
  const auto f = test::with_id(check_nccl_environment(cluster), "nccl_ib_tc");
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].verdict, Verdict::warn);
  EXPECT_EQ(f[0].measured.at("rdma_cm_default_tos"), 0);
  qos.default_roce_mode = "IB/RoCE v1";
  EXPECT_EQ(verdict_of(check_roce_qos(cluster, default_profile()), "rdma_cm_roce_mode", "node1/"), Verdict::warn);
  qos.default_roce_mode = "";  // not readable: no finding, the reason stays in the inventory
  EXPECT_TRUE(test::with_id(check_roce_qos(cluster, default_profile()), "rdma_cm_roce_mode").empty());
}

TEST(NcclEnvironment, ListSyntaxAsNcclReadsIt) {
  const auto plain = parse_nccl_list("mlx5_0,mlx5_1:1");
  EXPECT_TRUE(nccl_list_selects(plain, "mlx5_0"));
  EXPECT_TRUE(nccl_list_selects(plain, "mlx5_1", 1));
  EXPECT_FALSE(nccl_list_selects(plain, "mlx5_1", 2));
  EXPECT_TRUE(nccl_list_selects(parse_nccl_list("mlx5"), "mlx5_3")) << "entries are prefixes";
  EXPECT_FALSE(nccl_list_selects(parse_nccl_list("=mlx5"), "mlx5_3")) << "= matches exactly";
  EXPECT_FALSE(nccl_list_selects(parse_nccl_list("^mlx5_0"), "mlx5_0"));
  EXPECT_TRUE(nccl_list_selects(parse_nccl_list("^mlx5_0"), "mlx5_1"));
  EXPECT_TRUE(nccl_list_selects(parse_nccl_list("^=eth"), "eth0"));
}

TEST(NcclEnvironment, IbHcaNamingADeviceThatDoesNotExistFails) {
  auto cluster = test::cluster({test::node("node1", {test::hca("mlx5_0", test::roce_port())})});
  cluster.nodes[0].ranks[0].env["NCCL_IB_HCA"] = "mlx5_0,mlx5_9";
  auto f = with_id(check_nccl_environment(cluster), "nccl_ib_hca");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_EQ(f[0].measured["not_found"], nlohmann::json::array({"mlx5_9"}));
  cluster.nodes[0].ranks[0].env["NCCL_IB_HCA"] = "=mlx5_0:1";
  EXPECT_EQ(with_id(check_nccl_environment(cluster), "nccl_ib_hca").at(0).verdict, Verdict::pass);
}

TEST(NcclEnvironment, SocketIfnameOnTheDataFabricIsAManagementPlaneFailure) {
  auto cluster = test::cluster({test::node("node1", {test::hca("mlx5_0", test::roce_port())})});
  cluster.nodes[0].interfaces = {{"eno1", "up", 1500, {"10.0.0.5/24"}, false}, {"ens1f0", "up", 9000, {"10.1.0.5/24"}, true}};
  cluster.nodes[0].ranks[0].env["NCCL_SOCKET_IFNAME"] = "eno1";
  auto f = check_nccl_environment(cluster);
  EXPECT_EQ(with_id(f, "nccl_socket_ifname").at(0).verdict, Verdict::pass);
  EXPECT_EQ(with_id(f, "management_plane").at(0).verdict, Verdict::pass);
  cluster.nodes[0].ranks[0].env["NCCL_SOCKET_IFNAME"] = "ens1f0";
  f = check_nccl_environment(cluster);
  EXPECT_EQ(with_id(f, "management_plane").at(0).verdict, Verdict::fail);
  cluster.nodes[0].ranks[0].env["NCCL_SOCKET_IFNAME"] = "ib";
  EXPECT_EQ(with_id(check_nccl_environment(cluster), "nccl_socket_ifname").at(0).verdict, Verdict::fail) << "no interface matches";
}

TEST(ControlPath, FirmwareWithinANodeAndOneSubnetManager) {
  auto a = test::hca("mlx5_0", test::ib_port()), b = test::hca("mlx5_1", test::ib_port());
  b.fw_ver = "28.43.2566";
  a.fw_ver = "28.41.1000";
  auto cluster = test::cluster({test::node("node1", {a, b}), test::node("node2", {test::hca("mlx5_0", test::ib_port())})});
  auto f = check_control_path(cluster);
  ASSERT_EQ(with_id(f, "hca_firmware_in_node").size(), 1u);
  EXPECT_EQ(with_id(f, "hca_firmware_in_node").at(0).verdict, Verdict::fail) << "two CX-7 of one host on different firmware";
  EXPECT_EQ(with_id(f, "ib_subnet_manager_consistency").at(0).verdict, Verdict::pass);
  cluster.nodes[1].rdma_devices[0].ports[0].sm_lid = 7;
  EXPECT_EQ(with_id(check_control_path(cluster), "ib_subnet_manager_consistency").at(0).verdict, Verdict::fail) << "a second SM";
}

TEST(ControlPath, DefaultRouteThroughTheFabricWarns) {
  auto cluster = test::cluster({test::node("node1", {test::hca("mlx5_0", test::roce_port())})});
  cluster.nodes[0].interfaces = {{"eno1", "up", 1500, {}, false}, {"ens1f0", "up", 9000, {}, true}};
  cluster.nodes[0].default_route_interface = "ens1f0";
  EXPECT_EQ(with_id(check_control_path(cluster), "management_plane").at(0).verdict, Verdict::warn);
  cluster.nodes[0].default_route_interface = "eno1";
  EXPECT_EQ(with_id(check_control_path(cluster), "management_plane").at(0).verdict, Verdict::pass);
}

TEST(ControlPath, TheRouteToTheLaunchNodeOverTheFabricWarns) {
  auto cluster = test::cluster({test::node("node2", {test::hca("mlx5_0", test::roce_port())})});
  cluster.nodes[0].interfaces = {{"eno1", "up", 1500, {}, false}, {"ens1f0", "up", 9000, {}, true}};
  cluster.nodes[0].launch_node_address = "10.0.1.1";
  cluster.nodes[0].launch_route_interface = "ens1f0";  // the hostfile's name resolves to a data-fabric address
  auto f = test::with_id_and_subject(check_control_path(cluster), "management_plane", "node2 route to the launch node");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::warn);
  EXPECT_NE(f[0].hint.find("control path"), std::string::npos);
  cluster.nodes[0].launch_route_interface = "eno1";
  f = test::with_id_and_subject(check_control_path(cluster), "management_plane", "node2 route to the launch node");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::pass);
}

// A GetResp(SMInfo) MAD as an SM sends it (IBA 13.4.3 header, SMP data at byte 64).
std::array<uint8_t, kMadBytes> sm_info_response(uint64_t guid, int priority, int state, uint16_t status = 0) {
  auto mad = sm_info_request(0x1234);
  mad[3] = 0x81;  // GetResp
  mad[4] = static_cast<uint8_t>(status >> 8);
  mad[5] = static_cast<uint8_t>(status);
  for (int i = 0; i < 8; ++i) mad[64 + i] = static_cast<uint8_t>(guid >> (56 - 8 * i));
  mad[64 + 16 + 3] = 42;  // ActCount
  mad[64 + 20] = static_cast<uint8_t>(priority << 4 | state);
  return mad;
}

TEST(SmInfo, RequestIsAnSmpGetOfSmInfo) {
  const auto mad = sm_info_request(0x0102030405060708ull);
  EXPECT_EQ(mad[0], 1) << "base version";
  EXPECT_EQ(mad[1], 0x01) << "LID-routed SMP";
  EXPECT_EQ(mad[2], 1) << "class version";
  EXPECT_EQ(mad[3], 0x01) << "Get";
  EXPECT_EQ(mad[8], 0x01);
  EXPECT_EQ(mad[15], 0x08) << "transaction id, big endian";
  EXPECT_EQ(mad[16], 0x00);
  EXPECT_EQ(mad[17], 0x20) << "attribute SMInfo";
}

TEST(SmInfo, DecodesTheAnswerAndEveryWayItIsNotOne) {
  SmAnswer a;
  const auto master = sm_info_response(0x0002c9030045a1b2ull, 14, 3);
  decode_sm_info(master.data(), master.size(), a);
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(a.guid, "0x0002c9030045a1b2");
  EXPECT_EQ(a.priority, 14);
  EXPECT_EQ(a.state, "master");
  EXPECT_EQ(a.act_count, 42u);
  SmAnswer standby;
  const auto s = sm_info_response(0x0002c9030045a1b3ull, 1, 2);
  decode_sm_info(s.data(), s.size(), standby);
  EXPECT_EQ(standby.state, "standby");
  SmAnswer none;
  const auto no_sm = sm_info_response(0, 0, 0, 0x000c);
  decode_sm_info(no_sm.data(), no_sm.size(), none);
  EXPECT_NE(none.error.find("no subnet manager"), std::string::npos) << none.error;
  EXPECT_TRUE(none.state.empty());
  SmAnswer other;
  auto wrong = master;
  wrong[17] = 0x15;  // PortInfo
  decode_sm_info(wrong.data(), wrong.size(), other);
  EXPECT_NE(other.error.find("not an SMInfo response"), std::string::npos) << other.error;
  SmAnswer cut;
  decode_sm_info(master.data(), 40, cut);
  EXPECT_NE(cut.error.find("short MAD"), std::string::npos) << cut.error;
}

// The far end of a cable, as `smpquery -D nodeinfo 0,1` asks it: a directed-route Get one hop out
// of port 1 with permissive LIDs; the switch answers its GUID, type and the port the SMP came in by.
TEST(HopOne, RequestIsADirectedRouteGetOneHopOut) {
  const auto mad = hop_one_request(0x0102030405060708ull, kAttrNodeInfo, 2);
  EXPECT_EQ(mad[1], 0x81) << "directed-route SMP";
  EXPECT_EQ(mad[3], 0x01) << "Get";
  EXPECT_EQ(mad[6], 0) << "hop pointer";
  EXPECT_EQ(mad[7], 1) << "hop count";
  EXPECT_EQ(mad[17], 0x11) << "NodeInfo";
  EXPECT_EQ(mad[32], 0xff);
  EXPECT_EQ(mad[35], 0xff) << "DrSLID and DrDLID permissive";
  EXPECT_EQ(mad[129], 2) << "initial path [0, 2]: out of port 2";
}

TEST(HopOne, DecodesTheSwitchAndEveryWayItIsNotTheAnswer) {
  auto info = hop_one_request(7, kAttrNodeInfo, 1);
  info[3] = 0x81;  // GetResp
  info[4] = 0x80;  // the direction bit of a returning directed-route SMP, status 0
  info[64 + 2] = 2;  // switch
  for (int i = 0; i < 8; ++i) info[64 + 12 + i] = static_cast<uint8_t>(0x7cfe900300a5b0c0ull >> (56 - 8 * i));
  info[64 + 36] = 17;  // it came in by port 17
  const auto node = decode_hop_one_node_info(info.data(), info.size());
  EXPECT_EQ(node.guid, "0x7cfe900300a5b0c0");
  EXPECT_EQ(node.node_type, 2);
  EXPECT_EQ(node.local_port, 17);
  auto desc = hop_one_request(8, kAttrNodeDescription, 1);
  desc[3] = 0x81;
  const std::string name = "MF0;leaf-rail0:MQM9700/U1";
  std::copy(name.begin(), name.end(), desc.begin() + 64);
  EXPECT_EQ(decode_hop_one_description(desc.data(), desc.size()), name);
  EXPECT_THROW(decode_hop_one_description(info.data(), info.size()), LocatedError) << "the NodeInfo answer is not a description";
  auto failed = info;
  failed[5] = 0x04;
  EXPECT_THROW(decode_hop_one_node_info(failed.data(), failed.size()), LocatedError);
  EXPECT_THROW(decode_hop_one_node_info(info.data(), 64), LocatedError) << "short";
  const auto lid_routed = sm_info_response(1, 1, 3);
  EXPECT_THROW(decode_hop_one_node_info(lid_routed.data(), lid_routed.size()), LocatedError);
}

// The seed's "two software SMs fighting": two masters are named with the ports that reached them.
TEST(ControlPath, TwoMasterSubnetManagersFailAndAreNamed) {
  auto cluster = test::cluster({test::node("node1", {test::hca("mlx5_0", test::ib_port())}), test::node("node2", {test::hca("mlx5_0", test::ib_port())})});
  auto answer = [](const std::string& guid, const std::string& state, int lid) {
    SmAnswer a;
    a.device = "mlx5_0";
    a.lid = lid;
    a.guid = guid;
    a.state = state;
    return a;
  };
  cluster.nodes[0].subnet_managers = {answer("0x0002c9030045a1b2", "master", 1)};
  cluster.nodes[1].subnet_managers = {answer("0x0002c9030045a1b2", "master", 1), answer("0x0002c9030045a1b3", "standby", 5)};
  auto f = with_id(check_control_path(cluster), "ib_sm_masters");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::pass) << f[0].measured.dump();
  cluster.nodes[1].subnet_managers[1].state = "master";  // opensm started on node2 too
  f = with_id(check_control_path(cluster), "ib_sm_masters");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  ASSERT_TRUE(f[0].measured.contains("0x0002c9030045a1b3")) << f[0].measured.dump();
  EXPECT_EQ(f[0].measured["0x0002c9030045a1b3"][0], "node2/mlx5_0:1 at LID 5");
  EXPECT_EQ(triage_step(f[0]), TriageStep::link);
  // Not read (not root): a skip with the reason, never a pass.
  for (auto& n : cluster.nodes) {
    n.subnet_managers.clear();
    n.subnet_managers_unread = "needs root (/dev/infiniband/umad* are root's)";
  }
  f = with_id(check_control_path(cluster), "ib_sm_masters");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::skip);
  EXPECT_EQ(f[0].measured.size(), 2u);
}

}  // namespace
}  // namespace fabricproof
