#include "core/profile.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fabricproof {
namespace {

bool any_error_contains(const ProfileLoad& load, const std::string& text) {
  for (const auto& e : load.errors)
    if (e.find(text) != std::string::npos) return true;
  return false;
}

std::string errors_of(const ProfileLoad& load) {
  std::string out;
  for (const auto& e : load.errors) out += e + "\n";
  return out;
}

TEST(Profile, EveryBuiltInLoadsAndValidates) {
  for (const auto& name : builtin_profile_names()) {
    auto load = load_profile(name);
    ASSERT_TRUE(load.profile) << name << ": " << errors_of(load);
    EXPECT_EQ(load.profile->name, name);
    EXPECT_EQ(load.profile->origin, "built-in:" + name);
  }
  EXPECT_GE(builtin_profile_names().size(), 3u);
}

TEST(Profile, DefaultDerivesExpectationsFromHardware) {
  const Profile p = default_profile();
  EXPECT_FALSE(p.ports.rate_gbps);
  EXPECT_FALSE(p.ports.link_layer);
  EXPECT_FALSE(p.cluster.nodes);
  EXPECT_EQ(p.roce.active_mtu, 4096);
  EXPECT_EQ(p.roce.min_netdev_mtu, 9000);
  EXPECT_EQ(p.pcie.gpu_speed_downtrained, Verdict::warn);
  EXPECT_TRUE(p.includes_device("anything"));
}

TEST(Profile, ClusterProfilesSetTheShape) {
  auto ib = load_profile("ib-hdr200-4x4").profile;
  ASSERT_TRUE(ib);
  EXPECT_EQ(ib->cluster.nodes, 4);
  EXPECT_EQ(ib->cluster.gpus_per_node, 4);
  EXPECT_EQ(ib->ports.rate_gbps, 200);
  EXPECT_EQ(ib->ports.link_layer, "InfiniBand");
  EXPECT_EQ(ib->roce.active_mtu, 4096);  // inherited from the default
  auto roce = load_profile("roce-200").profile;
  ASSERT_TRUE(roce);
  EXPECT_EQ(roce->ports.link_layer, "Ethernet");
}

// Locate by bandwidth names what stays below this share of the rail's healthy rate: 0.85 on a real
// fabric, the lab's own outlier margin (half) under TCG, whose healthy pairs repeat at 0.72-0.78.
TEST(Profile, LocateThresholdIsTheDefaultsOrTheLabsAndOutOfRangeIsNamed) {
  EXPECT_EQ(default_profile().verbs.locate_slow_below, 0.85);
  const auto lab = load_profile("lab-soft-roce").profile;
  ASSERT_TRUE(lab);
  EXPECT_EQ(lab->verbs.locate_slow_below, lab->verbs.outlier_ratio);
  EXPECT_EQ(lab->verbs.locate_slow_below, 0.5);
  const auto bad = load_profile_text(R"({"schema": "fabricproof.profile/1", "name": "x", "verbs": {"locate_slow_below": 1.5}})", "p.json");
  EXPECT_FALSE(bad.profile);
  EXPECT_TRUE(any_error_contains(bad, "p.json: /verbs/locate_slow_below: 1.5 is out of range")) << errors_of(bad);
}

TEST(Profile, OverlayKeepsDefaultsAndEchoesTheEffectiveDocument) {
  auto load = load_profile_text(R"({"schema": "fabricproof.profile/1", "name": "lab", "roce": {"min_netdev_mtu": 4200},
                                    "ports": {"devices": ["rxe0"]}})", "lab.json");
  ASSERT_TRUE(load.profile) << errors_of(load);
  EXPECT_EQ(load.profile->roce.min_netdev_mtu, 4200);
  EXPECT_EQ(load.profile->roce.active_mtu, 4096);
  EXPECT_TRUE(load.profile->includes_device("rxe0"));
  EXPECT_FALSE(load.profile->includes_device("mlx5_0"));
  EXPECT_EQ(load.profile->effective["roce"]["min_netdev_mtu"], 4200);
  EXPECT_EQ(load.profile->effective["description"], default_profile().description);
}

TEST(Profile, MalformedJsonNamesFileLineAndColumn) {
  auto load = load_profile_text("{\n  \"schema\": \"fabricproof.profile/1\",\n  \"name\": oops\n}", "bad.json");
  EXPECT_FALSE(load.profile);
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_NE(load.errors[0].find("bad.json: not valid JSON at line 3"), std::string::npos) << load.errors[0];
}

TEST(Profile, UnknownKeyIsNamedWithItsPointer) {
  auto load = load_profile_text(R"({"schema": "fabricproof.profile/1", "name": "x", "roce": {"mtu": 4096}})", "typo.json");
  EXPECT_FALSE(load.profile);
  EXPECT_TRUE(any_error_contains(load, "typo.json: /roce/mtu: unknown key (known here: active_mtu, dscp, min_netdev_mtu, pfc_priority)")) << errors_of(load);
}

TEST(Profile, WrongTypesRangesAndEnumsAreNamed) {
  auto load = load_profile_text(R"({"schema": "fabricproof.profile/1", "name": "x",
      "roce": {"active_mtu": 9000, "min_netdev_mtu": "9000"},
      "ports": {"link_layer": "Ethernt", "rate_gbps": -5, "devices": "mlx5_0"},
      "pcie": {"hca_downtrained": "maybe"},
      "cluster": {"nodes": 2.5}})", "p.json");
  EXPECT_FALSE(load.profile);
  EXPECT_TRUE(any_error_contains(load, "p.json: /roce/active_mtu: 9000 is out of range")) << errors_of(load);
  EXPECT_TRUE(any_error_contains(load, "/roce/min_netdev_mtu: must be an integer")) << errors_of(load);
  EXPECT_TRUE(any_error_contains(load, "/ports/link_layer: \"Ethernt\" is not one of InfiniBand, Ethernet")) << errors_of(load);
  EXPECT_TRUE(any_error_contains(load, "/ports/rate_gbps: -5 is out of range")) << errors_of(load);
  EXPECT_TRUE(any_error_contains(load, "/ports/devices: must be a list of strings")) << errors_of(load);
  EXPECT_TRUE(any_error_contains(load, "/pcie/hca_downtrained: must be one of pass, skip, warn, fail, error")) << errors_of(load);
  EXPECT_TRUE(any_error_contains(load, "/cluster/nodes: must be an integer")) << errors_of(load);
  EXPECT_EQ(load.errors.size(), 7u) << errors_of(load);
}

TEST(Profile, SchemaAndNameAreRequired) {
  auto missing = load_profile_text(R"({"roce": {}})", "a.json");
  EXPECT_TRUE(any_error_contains(missing, "a.json: /schema: missing")) << errors_of(missing);
  EXPECT_TRUE(any_error_contains(missing, "a.json: /name: missing")) << errors_of(missing);
  auto future = load_profile_text(R"({"schema": "fabricproof.profile/2", "name": "x"})", "b.json");
  EXPECT_TRUE(any_error_contains(future, "b.json: /schema: \"fabricproof.profile/2\" is not supported")) << errors_of(future);
  auto array = load_profile_text("[1, 2]", "c.json");
  EXPECT_TRUE(any_error_contains(array, "c.json: must be a JSON object, got array"));
  auto scalar_section = load_profile_text(R"({"schema": "fabricproof.profile/1", "name": "x", "roce": 5})", "d.json");
  EXPECT_TRUE(any_error_contains(scalar_section, "d.json: /roce: must be an object, got number")) << errors_of(scalar_section);
}

TEST(Profile, MissingFileNamesThePathAndTheBuiltIns) {
  auto load = load_profile("/nonexistent/fabricproof-profile.json");
  EXPECT_FALSE(load.profile);
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_NE(load.errors[0].find("/nonexistent/fabricproof-profile.json: cannot read the profile (No such file or directory)"), std::string::npos);
  EXPECT_NE(load.errors[0].find("ib-hdr200-4x4"), std::string::npos);
}

TEST(Profile, LoadsFromAFile) {
  const auto path = std::filesystem::temp_directory_path() / "fabricproof-profile-test.json";
  std::ofstream(path) << R"({"schema": "fabricproof.profile/1", "name": "site", "cluster": {"nodes": 2}})";
  auto load = load_profile(path.string());
  ASSERT_TRUE(load.profile) << errors_of(load);
  EXPECT_EQ(load.profile->cluster.nodes, 2);
  EXPECT_EQ(load.profile->origin, path.string());
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace fabricproof
