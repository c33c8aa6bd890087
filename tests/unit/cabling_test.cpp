// ibnetdiscover topology files and lldpd neighbour tables, real ones (tests/fixtures/cabling, each
// with its source and a ground truth computed apart from this code and checked by hand): every
// cabled CA port with its switch and switch port, the leaves, and every LLDP neighbour record.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "cabling/cable_sheet.hpp"
#include "cabling/ibnetdiscover.hpp"
#include "cabling/lldp.hpp"
#include "cabling/lldp_frame.hpp"
#include "cabling/rails.hpp"
#include "facts.hpp"
#include "inventory/ib_neighbours.hpp"
#include "inventory/inventory_rules.hpp"
#include "inventory/neighbours.hpp"
#include "locate/leaf_map.hpp"
#include "paths.hpp"

using namespace fabricproof::cabling;
using nlohmann::json;

namespace {

std::string read(const std::string& name) {
  std::ifstream in(fabricproof::test::fixture("cabling/" + name), std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json truth(const std::string& stem) { return json::parse(read(stem + ".json")).at("ground_truth"); }

using PortKey = std::tuple<std::string, std::string, int, std::string, int, std::string, std::string, int, std::string>;

std::set<PortKey> expected_ports(const json& t) {
  std::set<PortKey> out;
  for (const auto& p : t.at("ca_ports"))
    out.insert({p.at("node_desc"), p.at("node_guid"), p.at("port"), p.at("port_guid"), p.value("lid", -1), p.at("switch_guid"), p.at("switch_desc"),
                p.at("switch_port"), p.at("width_speed")});
  return out;
}

std::set<PortKey> parsed_ports(const IbTopology& topology) {
  std::set<PortKey> out;
  for (const auto& p : ca_ports(topology))
    out.insert({p.node_desc, p.node_guid, p.port, p.port_guid, p.lid.value_or(-1), p.switch_guid, p.switch_desc, p.switch_port, p.width_speed});
  return out;
}

class IbnetdiscoverSamples : public testing::TestWithParam<std::string> {};

TEST_P(IbnetdiscoverSamples, EveryCabledCaPortAndEveryLeafAsTheGroundTruth) {
  const auto topology = parse_ibnetdiscover(read(GetParam() + ".txt"), GetParam());
  const auto t = truth(GetParam());
  EXPECT_TRUE(topology.errors.empty()) << topology.errors.front();
  int switches = 0, cas = 0;
  for (const auto& n : topology.nodes) (n.kind == "Switch" ? switches : cas) += n.kind == "Switch" || n.kind == "Ca";
  EXPECT_EQ(switches, t.at("counts").at("switches"));
  EXPECT_EQ(cas, t.at("counts").at("ca_nodes"));
  const auto expected = expected_ports(t);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(parsed_ports(topology), expected);
  std::set<std::string> leaves;
  for (const auto& l : t.at("leaves")) leaves.insert(l.at("guid").get<std::string>());
  const auto found = leaf_switches(topology);
  EXPECT_EQ(std::set<std::string>(found.begin(), found.end()), leaves);
}

INSTANTIATE_TEST_SUITE_P(Real, IbnetdiscoverSamples,
                         testing::Values("03-ibnetdiscover-fdr10-qdr-dual-port-hcas", "04-ibnetdiscover-mixed-speeds-sdr-hca-loopback-cables",
                                         "05-ibnetdiscover-qdr-ddr-unnamed-hcas"));

class LldpSamples : public testing::TestWithParam<std::string> {};

std::optional<std::string> text_or_null(const json& j, const char* key) {
  return j.contains(key) && j.at(key).is_string() ? std::optional<std::string>(j.at(key).get<std::string>()) : std::nullopt;
}

TEST_P(LldpSamples, EveryNeighbourAsTheGroundTruth) {
  const auto got = parse_lldp(read(GetParam() + ".txt"), GetParam());
  const auto t = truth(GetParam());
  EXPECT_TRUE(got.errors.empty()) << got.errors.front();
  EXPECT_EQ(got.flavour, t.at("flavour"));
  const auto& expected = t.at("neighbours");
  ASSERT_FALSE(expected.empty());
  ASSERT_EQ(got.neighbours.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& e = expected[i];
    const auto& n = got.neighbours[i];
    SCOPED_TRACE(n.local_interface);
    EXPECT_EQ(n.local_interface, e.at("local_interface"));
    EXPECT_EQ(n.via, e.at("via"));
    EXPECT_EQ(n.rid, e.at("rid"));
    EXPECT_EQ(n.chassis_name, text_or_null(e, "chassis_name"));
    EXPECT_EQ(n.chassis_id_type, e.at("chassis_id_type"));
    EXPECT_EQ(n.chassis_id, e.at("chassis_id"));
    EXPECT_EQ(n.chassis_descr, text_or_null(e, "chassis_descr"));
    EXPECT_EQ(n.mgmt_ip, e.at("mgmt_ip").get<std::vector<std::string>>());
    EXPECT_EQ(n.port_id_type, e.at("port_id_type"));
    EXPECT_EQ(n.port_id, e.at("port_id"));
    EXPECT_EQ(n.port_descr, text_or_null(e, "port_descr"));
    EXPECT_EQ(n.ttl, text_or_null(e, "ttl"));
  }
}

INSTANTIATE_TEST_SUITE_P(Real, LldpSamples,
                         testing::Values("06-lldpcli-json0-gpu-node-four-rail-leaves", "07-lldpcli-json0-h3c-switch-and-back-to-back-host",
                                         "08-lldpcli-json-single-interface-chassis-without-name", "09-lldpctl-keyvalue-dual-homed-port-id-ifindex"));

TEST(Cabling, BadInputIsNamedWithItsLine) {
  const auto ib = parse_ibnetdiscover("Switch 36 \"S-1\" # \"leaf\" base port 0 lid 1 lmc 0\n[1] garbage here\n", "fabric.topo");
  ASSERT_EQ(ib.errors.size(), 1u);
  EXPECT_EQ(ib.errors[0], "fabric.topo:2: not an ibnetdiscover node header or port line: [1] garbage here");
  EXPECT_EQ(parse_ibnetdiscover("hello\n", "x.topo").errors.size(), 1u);
  EXPECT_EQ(parse_ibnetdiscover("", "empty.topo").errors.at(0), "empty.topo: no node in it (is it ibnetdiscover's topology file?)");
  EXPECT_EQ(parse_lldp("", "n.json").errors.at(0), "n.json: empty (is lldpd running?)");
  EXPECT_NE(parse_lldp("{\"lldp\": [", "n.json").errors.at(0).find("n.json: not lldpcli's JSON"), std::string::npos);
  EXPECT_EQ(parse_lldp("interface eth0\n", "n.txt").errors.at(0), "n.txt:1: not an 'lldp.<interface>.<key>=<value>' line: interface eth0");
  // Found by the fuzzer (tests/fuzz/regressions/cabling): numbers beyond an int and a nameless
  // interface are lines in error, not an exception or a neighbour of no port.
  const auto huge = parse_ibnetdiscover("Switch 36 \"S-1\" # \"leaf\" base port 0 lid 1 lmc 0\n"
                                        "[99999999999] \"S-2\"[1] # \"spine\" lid 268 4xEDR\n", "huge.topo");
  ASSERT_EQ(huge.errors.size(), 1u);
  EXPECT_EQ(huge.errors[0].rfind("huge.topo:2: not an ibnetdiscover node header or port line", 0), 0u) << huge.errors[0];
  const auto nameless = parse_lldp("lldp..chassis.name=leaf\n", "k.txt");
  EXPECT_TRUE(nameless.neighbours.empty());
  EXPECT_EQ(nameless.errors.size(), 1u);
  EXPECT_EQ(parse_lldp(R"({"lldp": [{"interface": [{"name": ""}]}]})", "e.json").errors.at(0), "e.json: an interface without a name");
}

// The point-to-point sheet as CSV: columns by name in any order, extra ones ignored, quoted
// fields, a row without a port is port 1; every bad row named with its line.
TEST(CableSheet, ReadsTheIntegratorsCsvAndNamesBadRows) {
  const auto sheet = fabricproof::cabling::parse_cable_sheet(read("lab-cable-sheet.csv"), "cables.csv");
  EXPECT_TRUE(sheet.errors.empty()) << sheet.errors.front();
  ASSERT_EQ(sheet.cables.size(), 4u);
  EXPECT_EQ(sheet.cables[2].host, "node3");
  EXPECT_EQ(sheet.cables[2].hca, "rxe0");
  EXPECT_EQ(sheet.cables[2].leaf, "leaf-rail0");
  EXPECT_EQ(sheet.cables[2].switch_port, "node3");
  EXPECT_EQ(sheet.cables[3].port, 1) << "no port: port 1";
  EXPECT_EQ(sheet.cables[3].line, 7);
  const auto reordered = fabricproof::cabling::parse_cable_sheet("switch_port,SWITCH,hca,node\nEthernet1,LEAF01,mlx5_0,gpu1\n", "x.csv");
  ASSERT_EQ(reordered.cables.size(), 1u);
  EXPECT_EQ(reordered.cables[0].host, "gpu1");
  EXPECT_EQ(reordered.cables[0].switch_port, "Ethernet1");
  const auto bad = fabricproof::cabling::parse_cable_sheet("host,hca,port,switch\nn1,mlx5_0,x,L1\nn2,,1,L1\n\"n3,mlx5_0,1,L1\n", "bad.csv");
  ASSERT_EQ(bad.errors.size(), 3u);
  EXPECT_EQ(bad.errors[0], "bad.csv:2: port 'x' is not a port number (1..255)");
  EXPECT_EQ(bad.errors[1], "bad.csv:3: needs host, hca and switch");
  EXPECT_EQ(bad.errors[2], "bad.csv:4: a quote is not closed");
  EXPECT_EQ(fabricproof::cabling::parse_cable_sheet("node,port\n", "h.csv").errors.at(0),
            "h.csv:1: the header needs the columns host, hca and switch (port and switch_port are optional)");
  EXPECT_EQ(fabricproof::cabling::parse_cable_sheet("# nothing\n", "e.csv").errors.at(0), "e.csv: no header row (host, hca, port, switch, switch_port)");
}

// A frame captured in the lab (fixture README): leaf-rail0's lldpd to node3's eth1.
std::string lab_frame() { return fabricproof::cabling::bytes_of_hex(read("10-lldp-frame-lab-leaf-rail0.hex")); }

TEST(LldpFrame, ALeafsFrameGivesWhatLldpcliShows) {
  const auto n = fabricproof::cabling::parse_lldp_frame(lab_frame(), "eth1");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->local_interface, "eth1");
  EXPECT_EQ(n->chassis_name, "leaf-rail0");
  EXPECT_EQ(n->chassis_id_type, "mac");
  EXPECT_EQ(n->chassis_id, "76:a2:45:b0:24:78");
  EXPECT_EQ(n->port_id_type, "local");
  EXPECT_EQ(n->port_id, "node3");
  EXPECT_EQ(n->port_descr, "node3");
  EXPECT_EQ(n->ttl, "4");
  EXPECT_EQ(n->mgmt_ip, (std::vector<std::string>{"10.99.0.254", "fe80::7c16:fdff:fe6e:f915"}));
  EXPECT_NE(n->chassis_descr.value_or("").find("Debian GNU/Linux 12"), std::string::npos);
  // The same behind an 802.1Q tag; cut short before the port ID, or not LLDP: nothing.
  auto tagged = lab_frame();
  tagged.insert(12, std::string("\x81\x00\x00\x64", 4));
  EXPECT_EQ(fabricproof::cabling::parse_lldp_frame(tagged, "eth1")->port_id, "node3");
  EXPECT_FALSE(fabricproof::cabling::parse_lldp_frame(lab_frame().substr(0, 25), "eth1").has_value());
  auto arp = lab_frame();
  arp[12] = '\x08', arp[13] = '\x06';
  EXPECT_FALSE(fabricproof::cabling::parse_lldp_frame(arp, "eth1").has_value());
  EXPECT_THROW(fabricproof::cabling::bytes_of_hex("0g"), fabricproof::LocatedError);
  EXPECT_THROW(fabricproof::cabling::bytes_of_hex("012"), fabricproof::LocatedError);
}

// Listening for real: the lab's frame sent on the loopback device is heard there (root: a packet
// socket); a netdev that does not exist is said so; nothing heard within the time is no neighbour.
TEST(LldpFrame, AFrameSentOnTheLoopbackIsHeard) {
  if (geteuid() != 0) GTEST_SKIP() << "listening for frames needs root (a packet socket)";
  const int out = socket(AF_PACKET, SOCK_RAW, htons(0x88cc));
  ASSERT_GE(out, 0) << std::strerror(errno);
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = static_cast<int>(if_nametoindex("lo"));
  to.sll_halen = 6;
  std::atomic<bool> stop{false};
  const auto frame = lab_frame();
  std::thread sender([&] {
    for (int i = 0; i < 40 && !stop; ++i) {
      sendto(out, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  const auto heard = fabricproof::probe::listen_for_lldp({"lo", "no-such-netdev0"}, 3);
  stop = true;
  sender.join();
  close(out);
  ASSERT_EQ(heard.neighbours.size(), 1u) << (heard.errors.empty() ? "" : heard.errors.front());
  EXPECT_EQ(heard.neighbours[0].local_interface, "lo");
  EXPECT_EQ(heard.neighbours[0].chassis_name, "leaf-rail0");
  ASSERT_EQ(heard.errors.size(), 1u);
  EXPECT_EQ(heard.errors[0].rfind("no-such-netdev0: cannot listen there", 0), 0u) << heard.errors[0];
  EXPECT_TRUE(fabricproof::probe::listen_for_lldp({"lo"}, 0.2).neighbours.empty()) << "no frame sent: none heard";
}

// --leaf-map given ibnetdiscover's output: each HCA's leaf is the switch its port is cabled to,
// by the CA's node description "<hostname> <device>" (sample 04: r-ufm101 has HCA-1 and HCA-2 on
// the SX6012, r-ufm111 HCA-1 on the SwitchIB).
TEST(Cabling, AnIbnetdiscoverFileIsALeafMap) {
  const auto map = fabricproof::locate::read_leaf_map(read("04-ibnetdiscover-mixed-speeds-sdr-hca-loopback-cables.txt"), "fabric.topo");
  EXPECT_TRUE(map.errors.empty()) << map.errors.front();
  EXPECT_EQ(map.by_device.size(), 6u);
  EXPECT_EQ(map.leaf_of("r-ufm101", "HCA-1"), "S-f4521403005764b0");
  EXPECT_EQ(map.leaf_of("r-ufm101", "HCA-2"), "S-f4521403005764b0");
  EXPECT_EQ(map.leaf_of("r-ufm111.example.org", "HCA-1"), "S-e41d2d030003e470") << "a full host name matches its short form";
  EXPECT_EQ(map.leaf_of("r-ufm111", "HCA-2"), "") << "not in the file";
  // CAs without host names (sample 05: every one "MT25408 ConnectX Mellanox Technologies", on six
  // leaves): one description on several switches is an error of the map, named once.
  const auto unnamed = fabricproof::locate::read_leaf_map(read("05-ibnetdiscover-qdr-ddr-unnamed-hcas.txt"), "x5.topo");
  ASSERT_EQ(unnamed.errors.size(), 1u);
  EXPECT_NE(unnamed.errors[0].find("x5.topo: 'MT25408 ConnectX Mellanox Technologies' is cabled to S-"), std::string::npos) << unnamed.errors[0];
  EXPECT_EQ(fabricproof::locate::read_leaf_map("node1 leafA\n", "map.txt").leaf_of("node1", "mlx5_0"), "leafA");
}

const std::vector<std::string> kSlots = {"0000:17:00.0", "0000:2a:00.0", "0000:3d:00.0", "0000:5d:00.0",
                                         "0000:9a:00.0", "0000:ab:00.0", "0000:bd:00.0", "0000:db:00.0"};

// Four nodes of eight rails, HCA i of every node on leaf-rail<i>, each node on switch port
// Ethernet<4*node>.
std::vector<CabledPort> eight_rails() {
  std::vector<CabledPort> ports;
  for (int node = 1; node <= 4; ++node)
    for (int rail = 0; rail < 8; ++rail)
      ports.push_back({fmt::format("node{}", node), fmt::format("mlx5_{}", rail), 1, kSlots[static_cast<size_t>(rail)], rail,
                       fmt::format("leaf-rail{}", rail), fmt::format("Ethernet{}", 4 * node), "", "lldpd"});
  return ports;
}

std::vector<std::string> failed(const std::vector<fabricproof::Finding>& findings, const std::string& id) {
  std::vector<std::string> out;
  for (const auto& f : findings)
    if (f.id == id && f.verdict == fabricproof::Verdict::fail) out.push_back(f.subject.text());
  return out;
}

TEST(CablingRails, ARailOptimisedClusterPassesEveryRail) {
  const auto findings = check_rails(eight_rails(), {});
  ASSERT_FALSE(findings.empty());
  int passes = 0;
  for (const auto& f : findings) {
    EXPECT_NE(f.verdict, fabricproof::Verdict::fail) << f.subject.text();
    passes += f.id == "cabling_rail" && f.verdict == fabricproof::Verdict::pass;
  }
  EXPECT_EQ(passes, 8);
}

// node3's cards in slots 0 and 1 swapped (each card keeps its cable): by device, node3's mlx5_0
// and mlx5_1 reach each other's rail; by PCIe address, node3 is the odd node on both leaves.
TEST(CablingRails, OneHcaSwappedBetweenTwoSlotsOnOneNodeNamesThatNode) {
  auto ports = eight_rails();
  for (auto& p : ports)
    if (p.host == "node3" && p.rail < 2) p.switch_name = fmt::format("leaf-rail{}", 1 - p.rail);
  const auto findings = check_rails(ports, {});
  EXPECT_EQ(failed(findings, "cabling_rail"), (std::vector<std::string>{"node3/mlx5_0:1", "rail 0", "node3/mlx5_1:1", "rail 1"}));
  EXPECT_EQ(failed(findings, "cabling_pci_slot"), (std::vector<std::string>{"node3/mlx5_1:1", "node3/mlx5_0:1"}));
  for (const auto& f : findings)
    if (f.id == "cabling_rail" && f.subject.text() == "node3/mlx5_0:1") {
      EXPECT_EQ(f.measured["switch"], "leaf-rail1");
      EXPECT_EQ(f.expected["switch"], "leaf-rail0");
    }
}

TEST(CablingRails, DeclaredSwitchesUnreadPortsAndSharedLeaves) {
  auto ports = eight_rails();
  for (auto& p : ports)
    if (p.rail == 7) p.switch_name = "leaf-rail6";  // every rail-7 cable on rail 6's leaf
  ports[0].switch_name.reset();
  ports[0].unread = "lldpcli: no neighbour heard on ens1np0";
  RailPlan plan;
  for (int rail = 0; rail < 8; ++rail) plan.switches.push_back(fmt::format("leaf-rail{}", rail));
  plan.rail_optimised = true;
  const auto findings = check_rails(ports, plan);
  EXPECT_EQ(failed(findings, "cabling_rail").size(), 4u + 1u) << "four rail-7 ports against the spec, and rail 7";
  bool unread = false;
  for (const auto& f : findings) unread |= f.id == "cabling_unread" && f.verdict == fabricproof::Verdict::not_proven && f.subject.text() == "node1/mlx5_0:1";
  EXPECT_TRUE(unread);
  EXPECT_TRUE(failed(findings, "cabling_rail_shared").empty()) << "the spec's switches are distinct";
  plan.switches.clear();  // by majority, rails 6 and 7 now share leaf-rail6
  EXPECT_EQ(failed(check_rails(ports, plan), "cabling_rail_shared"), std::vector<std::string>{"leaf-rail6"});
}

// A GPU node of the unifabric sample (06): four RoCE HCAs on ens108np0, ens110np0, ens841np0,
// ens842np0 (LEAF01..04, each on Ethernet184), as mlx5_0..3.
fabricproof::NodeFacts sample_06_node(const std::string& host) {
  std::vector<fabricproof::RdmaDevice> devices;
  const std::vector<std::string> netdevs = {"ens108np0", "ens110np0", "ens841np0", "ens842np0"};
  for (size_t i = 0; i < netdevs.size(); ++i) {
    auto port = fabricproof::test::roce_port();
    port.netdev = netdevs[i];
    auto d = fabricproof::test::hca(fmt::format("mlx5_{}", i), port);
    d.pci = kSlots[i];
    devices.push_back(d);
  }
  auto node = fabricproof::test::node(host, devices);
  fabricproof::probe::assign_port_neighbours(node, read("06-lldpcli-json0-gpu-node-four-rail-leaves.txt"), "");
  return node;
}

TEST(CablingProbe, EachRocePortGetsItsLldpNeighbourOrWhyNot) {
  auto node = sample_06_node("gpu1");
  ASSERT_EQ(node.rdma_devices.size(), 4u);
  const auto& n = node.rdma_devices[2].ports[0].neighbour;
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->switch_name, "LEAF03");
  EXPECT_EQ(n->switch_port, "Ethernet184");
  EXPECT_EQ(n->switch_id, "mac 70:06:92:6e:32:1c");
  EXPECT_TRUE(n->unread.empty());
  node.rdma_devices[0].ports[0].netdev = "ens9np0";  // a port lldpd hears nothing on
  node.rdma_devices[1].ports[0] = fabricproof::test::ib_port();
  fabricproof::probe::assign_port_neighbours(node, read("06-lldpcli-json0-gpu-node-four-rail-leaves.txt"), "");
  EXPECT_NE(node.rdma_devices[0].ports[0].neighbour->unread.find("no LLDP neighbour heard on ens9np0"), std::string::npos);
  EXPECT_NE(node.rdma_devices[1].ports[0].neighbour->unread.find("ibnetdiscover"), std::string::npos);
  fabricproof::probe::assign_port_neighbours(node, "", "lldpcli not found: install and run lldpd to read each port's switch");
  EXPECT_EQ(node.rdma_devices[3].ports[0].neighbour->unread, "lldpcli not found: install and run lldpd to read each port's switch");
}

// Without --leaf-map, locate takes each HCA's leaf from the switch its port reached: four nodes of
// the four-leaf sample give every rail its leaf; a port not heard is left out of the map, and
// assign_leaves then refuses the partial map, naming that HCA.
TEST(CablingProbe, TheNeighbourSwitchesAreLocatesLeafMap) {
  std::vector<fabricproof::NodeFacts> nodes;
  for (int i = 1; i <= 4; ++i) nodes.push_back(sample_06_node(fmt::format("gpu{}", i)));
  const auto map = fabricproof::locate::leaf_map_of_ports(fabricproof::cabled_ports(nodes, {}));
  ASSERT_EQ(map.by_device.size(), 16u);
  EXPECT_EQ(map.leaf_of("gpu2", "mlx5_2"), "LEAF03");
  fabricproof::locate::Fabric fabric;
  fabric.names = {"gpu1", "gpu2", "gpu3", "gpu4"};
  fabric.rails = 4;
  const std::vector<std::vector<std::string>> devices(4, {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"});
  EXPECT_TRUE(fabricproof::locate::assign_leaves(fabric, map, devices).empty());
  EXPECT_TRUE(fabric.leaves_known());
  nodes[3].rdma_devices[1].ports[0].neighbour->unread = "no LLDP neighbour heard on ens110np0";
  fabricproof::locate::Fabric partial;
  partial.names = fabric.names;
  partial.rails = 4;
  const auto missing = fabricproof::locate::assign_leaves(partial, fabricproof::locate::leaf_map_of_ports(fabricproof::cabled_ports(nodes, {})), devices);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("gpu4"), std::string::npos) << missing[0];
  EXPECT_FALSE(partial.leaves_known());
}

// Switches read by each node's own SMP are named by description; one shared by two switches (a
// default description) gets the GUID, a description of one switch stays as it is.
TEST(CablingProbe, SharedSwitchDescriptionsGetTheirGuid) {
  auto ib_node = [](const std::string& host, const std::string& leaf, const std::string& guid) {
    auto n = fabricproof::test::node(host, {fabricproof::test::hca("mlx5_0", fabricproof::test::ib_port())});
    n.rdma_devices[0].ports[0].neighbour = fabricproof::PortNeighbour{"smp", leaf, "guid " + guid, "3", "", ""};
    return n;
  };
  auto cluster = fabricproof::test::cluster({ib_node("n1", "SwitchIB Mellanox Technologies", "0x1"), ib_node("n2", "SwitchIB Mellanox Technologies", "0x2"),
                                             ib_node("n3", "leaf-7", "0x3")});
  fabricproof::name_shared_switch_descriptions(cluster);
  EXPECT_EQ(cluster.nodes[0].rdma_devices[0].ports[0].neighbour->switch_name, "SwitchIB Mellanox Technologies [guid 0x1]");
  EXPECT_EQ(cluster.nodes[1].rdma_devices[0].ports[0].neighbour->switch_name, "SwitchIB Mellanox Technologies [guid 0x2]");
  EXPECT_EQ(cluster.nodes[2].rdma_devices[0].ports[0].neighbour->switch_name, "leaf-7");
}

// One rank per node asks lldpd; the node's facts take the neighbours from whichever rank that was.
TEST(CablingProbe, TheNodeKeepsTheNeighboursOfTheRankThatAskedLldpd) {
  auto asked = sample_06_node("gpu1");
  asked.ranks = {fabricproof::RankFacts{}};
  auto first = asked;
  first.ranks[0].rank = 0;
  for (auto& d : first.rdma_devices)
    for (auto& p : d.ports) p.neighbour.reset();
  asked.ranks[0].rank = 1;
  const auto merged = fabricproof::merge_rank_facts({first, asked});
  ASSERT_EQ(merged.nodes.size(), 1u);
  ASSERT_EQ(merged.nodes[0].rdma_devices.size(), 4u);
  for (const auto& d : merged.nodes[0].rdma_devices) {
    ASSERT_TRUE(d.ports.at(0).neighbour.has_value()) << d.name;
    EXPECT_EQ(d.ports[0].neighbour->source, "lldpd");
  }
  EXPECT_EQ(merged.nodes[0].rdma_devices[2].ports[0].neighbour->switch_name, "LEAF03");
}

// Four such nodes; on gpu3 the rail-0 cable moved to LEAF02: --check-cabling names gpu3's
// mlx5_0, LEAF02 and LEAF01, and nobody else; without lldpd every port is not proven.
TEST(CablingProbe, CheckCablingNamesTheMovedCableFromTheInventory) {
  std::vector<fabricproof::NodeFacts> nodes;
  for (int i = 1; i <= 4; ++i) nodes.push_back(sample_06_node(fmt::format("gpu{}", i)));
  EXPECT_TRUE(failed(fabricproof::check_cabling(fabricproof::test::cluster(nodes)), "cabling_rail").empty());
  nodes[2].rdma_devices[0].ports[0].neighbour->switch_name = "LEAF02";
  const auto findings = fabricproof::check_cabling(fabricproof::test::cluster(nodes));
  EXPECT_EQ(failed(findings, "cabling_rail"), (std::vector<std::string>{"gpu3/mlx5_0:1", "rail 0"}));
  for (const auto& f : findings)
    if (f.subject.text() == "gpu3/mlx5_0:1" && f.id == "cabling_rail") {
      EXPECT_EQ(f.measured["switch"], "LEAF02");
      EXPECT_EQ(f.expected["switch"], "LEAF01");
    }
  for (auto& n : nodes) fabricproof::probe::assign_port_neighbours(n, "", "lldpcli not found");
  int unread = 0;
  for (const auto& f : fabricproof::check_cabling(fabricproof::test::cluster(nodes))) {
    EXPECT_NE(f.verdict, fabricproof::Verdict::pass) << f.subject.text();
    unread += f.id == "cabling_unread";
  }
  EXPECT_EQ(unread, 16);
  EXPECT_EQ(fabricproof::check_cabling(fabricproof::test::cluster({})).at(0).verdict, fabricproof::Verdict::not_proven);
}

// --ibnetdiscover: InfiniBand ports found by node GUID (sysfs writes it with colons) and port.
TEST(CablingProbe, InfinibandPortsGetTheirSwitchFromIbnetdiscoverByNodeGuid) {
  EXPECT_EQ(fabricproof::normal_guid("0002:c903:0004:e938"), "0002c9030004e938");
  EXPECT_EQ(fabricproof::normal_guid("0x2c9030004e938"), "0002c9030004e938");
  auto ib = [](const std::string& guid) {
    auto d = fabricproof::test::hca("mlx5_0", fabricproof::test::ib_port());
    d.node_guid = guid;
    return d;
  };
  auto cluster = fabricproof::test::cluster({fabricproof::test::node("r-ufm101", {ib("0002:c903:0004:e938")}),
                                             fabricproof::test::node("r-ufm216", {ib("e41d:2d03:0061:f957")}),
                                             fabricproof::test::node("elsewhere", {ib("1111:2222:3333:4444")})});
  const auto topology = parse_ibnetdiscover(read("04-ibnetdiscover-mixed-speeds-sdr-hca-loopback-cables.txt"), "fabric.topo");
  fabricproof::apply_ibnetdiscover(cluster, topology, "fabric.topo");
  const auto& a = *cluster.nodes[0].rdma_devices[0].ports[0].neighbour;
  EXPECT_EQ(a.switch_name, "MF0;switch-de779e:SX6012/U1");
  EXPECT_EQ(a.switch_port, "2");
  EXPECT_EQ(a.switch_id, "guid f4521403005764b0");
  EXPECT_EQ(cluster.nodes[1].rdma_devices[0].ports[0].neighbour->switch_port, "34");
  EXPECT_EQ(cluster.nodes[2].rdma_devices[0].ports[0].neighbour->unread, "fabric.topo: no cable of node GUID 1111:2222:3333:4444 port 1 in it");
  // A file that did not read leaves every InfiniBand port unread with its problem.
  fabricproof::apply_ibnetdiscover(cluster, parse_ibnetdiscover("", "missing.topo"), "missing.topo");
  EXPECT_NE(cluster.nodes[0].rdma_devices[0].ports[0].neighbour->unread.find("missing.topo: no node in it"), std::string::npos);
}

}  // namespace
