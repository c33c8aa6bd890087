// ibnetdiscover topology files and lldpd neighbour tables, real ones (tests/fixtures/cabling, each
// with its source and a ground truth computed apart from this code and checked by hand): every
// cabled CA port with its switch and switch port, the leaves, and every LLDP neighbour record.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "cabling/ibnetdiscover.hpp"
#include "cabling/lldp.hpp"
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
}

}  // namespace

#include "locate/leaf_map.hpp"

namespace {

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

}  // namespace
