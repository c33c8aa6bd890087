// libFuzzer targets, one binary for all (built once by scripts/fuzz/run; FABRICPROOF_FUZZ_TARGET
// picks the target): every parser of outside input. A violated invariant is __builtin_trap(),
// which libFuzzer reports as a crash (a non-zero return value it ignores).
//   nccl_log  NCCL_DEBUG text -> facts, audit, JSON and table
//   profile   profile JSON -> a profile or errors, never both, never neither
//   report    saved report.json -> the model -> every format, and compare with itself
//   sysfs     rates, cpulists, PCIe speeds, sizes, port states (one value per input line)
//   vpd       PCI VPD bytes
//   hostfile  Open MPI hostfiles
//   cabling   ibnetdiscover's topology file, lldpcli's output, an LLDP frame, the cable sheet (CSV)
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include "cabling/cable_sheet.hpp"
#include "cabling/ibnetdiscover.hpp"
#include "cabling/lldp.hpp"
#include "cabling/lldp_frame.hpp"
#include "core/located_error.hpp"
#include "launch/hostfile.hpp"
#include "inventory/pci_vpd.hpp"
#include "core/profile.hpp"
#include "core/units.hpp"
#include "nccl_log/audit.hpp"
#include "nccl_log/parser.hpp"
#include "report/compare.hpp"
#include "report/formats.hpp"
#include "report/report.hpp"
#include "report/schema_check.hpp"

namespace {

using namespace fabricproof;

void check(bool invariant) {
  if (!invariant) __builtin_trap();
}

void nccl_log(std::string_view text) {
  const auto facts = nccl::parse_text(text);
  const auto findings = nccl::audit(facts, {true});
  check(!findings.empty());  // a log without transport lines is an error finding, never silence
  check(!json_text(nlohmann::json(nccl::AuditSection{facts, findings})).empty());
  check(!nccl::audit_table(facts, findings).empty());
  // The block reader (one scan a line for its end, colours and anchors) reads what the line
  // reader reads.
  nccl::Parser blocks;
  blocks.begin_file("");
  std::istringstream in{std::string(text)};
  blocks.add_stream(in);
  check(nlohmann::json(blocks.finish()) == nlohmann::json(facts));
  // The block reader runs one of two line scans, by CPU: where both run, they read alike.
  if (nccl::detail::has_avx2()) {
    std::string block(text);
    block.append(nccl::kScanPadding, 'L');
    for (size_t at = 0; at < text.size();) {
      nccl::LineScan a, b;
      nccl::detail::scan_line_sse2(block.data() + at, text.size() - at, a);
      check(nccl::detail::scan_line_avx2(block.data() + at, text.size() - at, b));
      check(a.length == b.length && a.newline == b.newline && a.escape == b.escape && a.overflow == b.overflow);
      if (!a.overflow) check(a.candidates == b.candidates && std::equal(a.at, a.at + a.candidates, b.at));
      at += a.length + 1;
    }
  }
}

void profile(std::string_view text) {
  const auto loaded = load_profile_text(text, "fuzz.json");
  check(loaded.profile.has_value() != !loaded.errors.empty());
  for (const auto& e : loaded.errors) check(e.rfind("fuzz.json: ", 0) == 0);  // every error names the file
}

// As `fabricproof report` and `compare` read a saved report: a std::exception is the error they
// name (exit 2); anything else (a crash, UB, a leak) is a bug.
void report(std::string_view text) {
  Report r;
  try {
    const auto j = nlohmann::json::parse(text);
    if (!j.is_object() || j.value("schema", std::string()) != kReportSchema) return;
    if (!report_shape_errors(j).empty()) return;  // named by its pointer, exit 2
    r = j.get<Report>();
  } catch (const std::exception&) {
    return;
  }
  try {
    // What the suite writes from a report it accepted, it accepts again: the writer and the
    // published schema agree (they did not on a failed pair's matrix cell until 2026-12-03).
    check(report_shape_errors(nlohmann::json(r)).empty());
    for (const auto& format : kReportFormats) (void)render_report_format(r, format);
    (void)compare_reports(r, r, 0.05);
  } catch (const std::exception&) {
  }
}

void sysfs(std::string_view text) {
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const auto line = text.substr(start, end - start);
    if (auto rate = parse_sysfs_rate(line)) check(rate->gbps > 0 && rate->gbps < 1e7);
    check(parse_cpulist(line).size() <= 65536);
    if (auto gts = parse_pcie_speed_gts(line)) check(*gts > 0);
    (void)parse_size(line);
    start = end + 1;
  }
}

void vpd(std::string_view bytes) {
  try {
    const PciVpd v = parse_pci_vpd(bytes);
    check(v.serial_number.size() <= bytes.size() && v.part_number.size() <= bytes.size() && v.product_name.size() <= bytes.size());
  } catch (const LocatedError& e) {
    check(std::string_view(e.what()).size() > 0);  // a refusal says what is wrong
  }
}

void hostfile(std::string_view text) {
  const auto h = parse_hostfile(text, "hf");
  check(!h.errors.empty() || !h.hosts.empty());
  for (const auto& host : h.hosts) check(host.slots >= 1 && host.slots <= kMaxSlots && !host.host.empty());
}

// The same text through the three cabling parsers: each gives records or says why not, every
// record it gives is whole (a cable with its host, HCA and switch; a port on a node).
void cabling_text(std::string_view text) {
  const std::string whole(text);
  const auto topology = cabling::parse_ibnetdiscover(whole, "t");
  for (const auto& node : topology.nodes) check(!node.guid.empty());
  const auto lldp = cabling::parse_lldp(whole, "l");
  for (const auto& n : lldp.neighbours) check(!n.local_interface.empty());
  if (const auto frame = cabling::parse_lldp_frame(text, "eth0")) check(!frame->chassis_id.empty() && !frame->port_id.empty());
  const auto sheet = cabling::parse_cable_sheet(text, "s");
  const auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (const auto& c : sheet.cables)
    check(!c.host.empty() && !c.hca.empty() && !c.leaf.empty() && c.port >= 1 && c.port <= 255 && c.line >= 2 && c.line <= lines);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string target = [] {
    const char* t = std::getenv("FABRICPROOF_FUZZ_TARGET");
    return std::string(t ? t : "nccl_log");
  }();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (target == "nccl_log") nccl_log(input);
  else if (target == "profile") profile(input);
  else if (target == "report") report(input);
  else if (target == "sysfs") sysfs(input);
  else if (target == "vpd") vpd(input);
  else if (target == "hostfile") hostfile(input);
  else if (target == "cabling") cabling_text(input);
  else __builtin_trap();  // a misspelt target must not pass as a clean run
  return 0;
}
