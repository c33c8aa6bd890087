// The check registry (core/checks.def): complete, used, and the docs' tables made from it.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/checks.hpp"
#include "core/finding.hpp"
#include "paths.hpp"

namespace fabricproof {
namespace {

std::string source_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The ids named as CheckId::<id> in the suite's sources, outside the registry itself.
std::set<std::string> ids_used_in_sources() {
  std::set<std::string> used;
  const std::regex named(R"(CheckId::([a-z0-9_]+))");
  for (const auto& entry : std::filesystem::recursive_directory_iterator(test::source_dir() / "suite")) {
    const auto path = entry.path();
    if (path.extension() != ".cpp" && path.extension() != ".hpp") continue;
    if (path.filename() == "checks.cpp" || path.filename() == "checks.hpp") continue;
    const std::string text = source_text(path);
    for (std::sregex_iterator it(text.begin(), text.end(), named), end; it != end; ++it) used.insert((*it)[1]);
  }
  return used;
}

TEST(Checks, EveryCheckIsDeclaredOnceWithItsFields) {
  const auto& checks = all_checks();
  ASSERT_FALSE(checks.empty());
  std::set<std::string_view> names;
  const std::regex snake("[a-z][a-z0-9_]*");
  for (size_t i = 0; i < checks.size(); ++i) {
    const auto& c = checks[i];
    EXPECT_EQ(static_cast<size_t>(c.id), i) << c.name;
    EXPECT_TRUE(names.insert(c.name).second) << "declared twice: " << c.name;
    EXPECT_TRUE(std::regex_match(std::string(c.name), snake)) << c.name;
    EXPECT_FALSE(c.compares.empty()) << c.name;
    EXPECT_FALSE(c.hint.empty()) << c.name;
    EXPECT_NE(c.severity, Verdict::pass) << c.name;
    EXPECT_EQ(find_check(c.name), &c);
  }
  EXPECT_EQ(find_check("no_such_check"), nullptr);
}

// The compiler sees that a finding names a registered check (Finding takes a CheckId); this sees
// the other way: every registered check is emitted somewhere in suite/.
TEST(Checks, EveryRegisteredCheckIsEmittedByTheCode) {
  const auto used = ids_used_in_sources();
  ASSERT_FALSE(used.empty());
  for (const auto& c : all_checks()) EXPECT_TRUE(used.count(std::string(c.name))) << c.name << " is registered but never emitted";
  for (const auto& name : used) EXPECT_NE(find_check(name), nullptr) << name;
}

// Every profile key a check says it reads is a key of the default profile.
TEST(Checks, TheProfileKeysTheyNameExist) {
  const auto profile = nlohmann::json::parse(source_text(test::source_dir() / "suite" / "profiles" / "default.json"));
  size_t named = 0;
  for (const auto& c : all_checks()) {
    if (c.keys.empty() || c.keys.rfind("spec:", 0) == 0) continue;
    std::stringstream keys{std::string(c.keys)};
    for (std::string key; std::getline(keys, key, ',');) {
      key.erase(0, key.find_first_not_of(' '));
      std::string pointer = "/" + std::regex_replace(key, std::regex("\\."), "/");
      EXPECT_TRUE(profile.contains(nlohmann::json::json_pointer(pointer))) << c.name << " names " << key;
      ++named;
    }
  }
  EXPECT_GT(named, 10u);
}

TEST(Checks, TriageComesFromTheRegistryNotFromTheIdsText) {
  Finding gpu_link(CheckId::gpu_pcie_link, "node1/gpu0", Verdict::fail, nullptr, nullptr, "");
  EXPECT_EQ(triage_step(gpu_link), TriageStep::pcie);  // "link" in the id once filed it under link
  Finding uplink(CheckId::uplink_aggregate, "cluster", Verdict::fail, nullptr, nullptr, "");
  EXPECT_EQ(triage_step(uplink), TriageStep::other);
  Finding mtu(CheckId::consistency_active_mtus, "cluster", Verdict::fail, nullptr, nullptr, "");
  EXPECT_EQ(triage_step(mtu), TriageStep::mtu);
  mtu.triage = TriageStep::pfc;  // a diagnosis that knows the cause wins
  EXPECT_EQ(triage_step(mtu), TriageStep::pfc);
  // A report of another version: an id this one does not know is "other", not guessed from its text.
  Finding unknown = nlohmann::json{{"id", "pcie_mtu_link"}, {"subject", "x"}, {"verdict", "fail"}, {"triage", "other"}}.get<Finding>();
  EXPECT_EQ(triage_step(unknown), TriageStep::other);
}

std::string block(const std::string& text, const std::string& name) {
  const std::string start = "<!-- checks:" + name, stop = "<!-- /checks:" + name + " -->";
  const auto a = text.find(start);
  const auto b = text.find(stop);
  if (a == std::string::npos || b == std::string::npos || b < a) return "(no block " + name + ")";
  const auto body = text.find('\n', a) + 1;
  return text.substr(body, b - body);
}

TEST(Checks, DocsTablesAreTheRegistry) {
  EXPECT_EQ(block(source_text(test::source_dir() / "README.md"), "summary"), checks_markdown_summary())
      << "README.md's check table differs from the registry: run scripts/update-check-tables";
  EXPECT_EQ(block(source_text(test::source_dir() / "docs" / "checks.md"), "table"), checks_markdown_table())
      << "docs/checks.md's check table differs from the registry: run scripts/update-check-tables";
}

TEST(Checks, JsonListsEveryCheck) {
  const auto j = checks_json();
  EXPECT_EQ(j.at("schema"), "fabricproof.checks/1");
  ASSERT_EQ(j.at("checks").size(), all_checks().size());
  EXPECT_EQ(j.at("checks")[0].at("id"), all_checks()[0].name);
  EXPECT_TRUE(j.at("checks")[0].contains("triage"));
}

}  // namespace
}  // namespace fabricproof
