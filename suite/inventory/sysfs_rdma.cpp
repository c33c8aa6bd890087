#include "inventory/sysfs_rdma.hpp"

#include "core/located_error.hpp"
#include "inventory/pci_vpd.hpp"
#include "core/text_file.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <regex>

namespace fabricproof::probe {
namespace fs = std::filesystem;
namespace {

// An empty GID slot reads as zeros; an InfiniBand table also pads with the subnet prefix alone
// (fe80::), so a GID whose interface id is zero is treated as empty.
bool empty_gid(const std::string& gid) {
  return gid.size() != 39 || gid.substr(20) == "0000:0000:0000:0000";
}

bool is_pci_address(const std::string& name) {
  static const std::regex kBdf("^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]$");
  return std::regex_match(name, kBdf);
}

bool ipv4_mapped(const std::string& gid) { return gid.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0; }

std::optional<int> numa_of(FileReader& files, const fs::path& pci_dir) {
  auto n = files.integer(pci_dir / "numa_node", -1, 65535);
  if (!n || *n < 0) return std::nullopt;  // -1: firmware gave no locality (single-node machine)
  return static_cast<int>(*n);
}

PcieLink read_pcie_link(FileReader& files, const fs::path& pci_dir) {
  PcieLink link;
  auto speed = [&](const char* name) -> std::optional<double> {
    auto text = files.line(pci_dir / name);
    return text ? parse_pcie_speed_gts(*text) : std::nullopt;
  };
  auto width = [&](const char* name) -> std::optional<int> {
    auto text = files.line(pci_dir / name);
    if (!text) return std::nullopt;
    auto code = leading_code(*text);
    if (!code || *code <= 0 || *code > 32) return std::nullopt;  // 255 = unknown
    return code;
  };
  link.current_gts = speed("current_link_speed");
  link.max_gts = speed("max_link_speed");
  link.current_width = width("current_link_width");
  link.max_width = width("max_link_width");
  if (link.current_gts) link.current_gen = pcie_generation_for_gts(*link.current_gts);
  if (link.max_gts) link.max_gen = pcie_generation_for_gts(*link.max_gts);
  return link;
}

// Netdev behind a port: RoCE GID table first, then the rxe parent, then the PCI function's net/
// entry whose dev_port matches (mlx4 puts both ports' netdevs under one function).
fs::path find_netdev(FileReader& files, const fs::path& dev_dir, const fs::path& port_dir,
                     const std::optional<fs::path>& pci_dir, int port) {
  for (const auto& index : files.list(port_dir / "gid_attrs" / "ndevs")) {
    auto name = files.line_quiet(port_dir / "gid_attrs" / "ndevs" / index);
    if (name && !name->empty()) return files.path("sys/class/net") / *name;
  }
  if (auto parent = files.line_quiet(dev_dir / "parent"); parent && !parent->empty())
    return files.path("sys/class/net") / *parent;
  if (!pci_dir) return {};
  const auto names = files.list(*pci_dir / "net");
  for (const auto& name : names) {
    auto dev_port = files.line_quiet(*pci_dir / "net" / name / "dev_port");
    if (names.size() == 1 || (dev_port && leading_code(*dev_port) == port - 1)) return *pci_dir / "net" / name;
  }
  return {};
}

// RDMA-CM's default RoCE mode and ToS for the port, from configfs where its entry exists. The
// entry appears only after `mkdir /sys/kernel/config/rdma_cm/<dev>` (root), a change to the host
// that a test does not make: without it the reason is recorded, not a guess.
void read_rdma_cm_defaults(FileReader& files, const std::string& device, int number, PortQos& qos) {
  const fs::path cm = files.path("sys/kernel/config/rdma_cm");
  const fs::path port = cm / device / "ports" / std::to_string(number);
  if (files.exists(port / "default_roce_mode")) {
    qos.default_roce_mode = files.line(port / "default_roce_mode").value_or("");
    if (auto tos = files.integer(port / "default_roce_tos", 0, 255)) qos.default_roce_tos = static_cast<int>(*tos);
  } else if (files.exists(cm)) {
    qos.rdma_cm_unread = fmt::format("no rdma_cm configfs entry for {} (created by mkdir /sys/kernel/config/rdma_cm/{} as root)", device, device);
  } else {
    qos.rdma_cm_unread = "configfs rdma_cm is not there (the rdma_cm module loaded, configfs mounted on /sys/kernel/config)";
  }
}

// The port's non-empty GIDs with their types and netdevs, in index order, and the first RoCE v2
// GID holding an IPv4 address.
void read_gids(FileReader& files, const fs::path& dir, PortFacts& p) {
  for (const auto& name : files.list(dir / "gids")) {
    auto index = leading_code(name);
    auto gid = files.line_quiet(dir / "gids" / name);
    if (!index || !gid || empty_gid(*gid)) continue;
    GidEntry entry{*index, *gid, files.line_quiet(dir / "gid_attrs" / "types" / name).value_or(""),
                   files.line_quiet(dir / "gid_attrs" / "ndevs" / name).value_or("")};
    p.gids.push_back(entry);
  }
  std::sort(p.gids.begin(), p.gids.end(), [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  for (const auto& g : p.gids) {
    if (g.type == "RoCE v2" && ipv4_mapped(g.gid)) {
      p.roce_v2_gid_index = g.index;
      break;
    }
  }
}

// The port's netdev (empty: none found): its name, MTU, state and ECN on priority 3 (MLNX_OFED).
void read_netdev(FileReader& files, const fs::path& netdev, PortFacts& p) {
  if (netdev.empty()) return;
  p.netdev = netdev.filename().string();
  if (auto mtu = files.integer(netdev / "mtu", 0, 1 << 20)) p.netdev_mtu = static_cast<int>(*mtu);
  p.netdev_operstate = files.line(netdev / "operstate").value_or("");
  auto ecn = [&](const char* which) -> std::optional<bool> {
    auto v = files.line_quiet(netdev / "ecn" / which / "enable" / "3");
    if (!v) return std::nullopt;
    return *v == "1";
  };
  p.qos.ecn_np_enabled_prio3 = ecn("roce_np");
  p.qos.ecn_rp_enabled_prio3 = ecn("roce_rp");
}

PortFacts read_port(FileReader& files, const fs::path& dev_dir, const std::optional<fs::path>& pci_dir,
                    const std::string& device, int number) {
  const fs::path dir = dev_dir / "ports" / std::to_string(number);
  PortFacts p;
  p.port = number;
  auto odd = [&](const char* name, const std::string& value, const char* what) {
    files.record(dir / name, fmt::format("not {}: '{}'", what, value.substr(0, 64)));
  };
  if (auto s = files.line(dir / "state"); s) {
    if (auto code = leading_code(*s); code && port_state_name(*code)) p.state = *port_state_name(*code);
    else odd("state", *s, "a port state");
  }
  if (auto s = files.line(dir / "phys_state"); s) {
    if (auto code = leading_code(*s); code && phys_state_name(*code)) p.phys_state = *phys_state_name(*code);
    else odd("phys_state", *s, "a physical port state");
  }
  if (auto s = files.line(dir / "rate"); s) {
    if (auto rate = parse_sysfs_rate(*s)) {
      p.width_code = rate->width_code;
      p.speed_code = rate->speed_code;
      p.width = rate->width;
      p.speed_name = rate->speed_name;
      p.rate_gbps = rate->gbps;
    } else {
      odd("rate", *s, "a port rate");
    }
  }
  p.link_layer = files.line(dir / "link_layer").value_or("");
  if (auto lid = files.integer(dir / "lid", 0, 0xffff)) p.lid = static_cast<int>(*lid);
  if (auto sm = files.integer(dir / "sm_lid", 0, 0xffff)) p.sm_lid = static_cast<int>(*sm);
  read_gids(files, dir, p);
  read_netdev(files, find_netdev(files, dev_dir, dir, pci_dir, number), p);
  // sysfs has no active MTU. On RoCE the kernel derives it from the netdev MTU (iboe_get_mtu,
  // capped at the port's max); the verbs adapter replaces this with ibv_query_port's answer.
  if (p.link_layer == "Ethernet" && p.netdev_mtu) {
    p.active_mtu = roce_mtu_for_netdev_mtu(*p.netdev_mtu);
    p.active_mtu_source = "netdev";
  }
  p.qos.traffic_class = files.line_quiet(dev_dir / "tc" / std::to_string(number) / "traffic_class").value_or("");
  if (p.link_layer == "Ethernet") read_rdma_cm_defaults(files, device, number, p.qos);
  p.counters = read_port_counters(files, device, number);
  return p;
}

}  // namespace

PciFunction read_pci_function(FileReader& files, const fs::path& dir) {
  PciFunction f;
  f.address = dir.filename().string();
  if (auto driver = files.resolve(dir / "driver")) f.driver = driver->filename().string();
  f.numa_node = numa_of(files, dir);
  f.pcie = read_pcie_link(files, dir);
  return f;
}

std::map<std::string, uint64_t> read_port_counters(FileReader& files, const std::string& device, int port) {
  std::map<std::string, uint64_t> counters;
  const fs::path dir = files.path("sys/class/infiniband") / device / "ports" / std::to_string(port);
  for (const char* group : {"counters", "hw_counters"}) {
    for (const auto& name : files.list(dir / group)) {
      if (name == "lifespan") continue;  // a setting, not a counter
      auto value = files.line_quiet(dir / group / name);
      if (!value) continue;
      uint64_t number = 0;  // a counter that is not a number (or beyond 64 bits) is left out
      const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), number);
      if (ec == std::errc() && end == value->data() + value->size()) counters[name] = number;
    }
  }
  return counters;
}

std::vector<RdmaDevice> read_rdma_devices(FileReader& files, std::vector<Absence>& absent) {
  std::vector<RdmaDevice> devices;
  const fs::path class_dir = files.path("sys/class/infiniband");
  std::error_code ec;
  (void)fs::status(class_dir, ec);
  if (ec == std::errc::no_such_file_or_directory) {
    absent.push_back({"rdma_devices", "no /sys/class/infiniband: no RDMA driver loaded (ib_core, mlx5_ib, rdma_rxe)"});
    return devices;
  }
  if (ec) {
    files.errors().push_back({"/sys/class/infiniband", ec.message()});
    absent.push_back({"rdma_devices", "/sys/class/infiniband is unreadable: " + ec.message()});
    return devices;
  }
  for (const auto& name : files.list(class_dir)) {
    const fs::path dev_dir = files.resolve(class_dir / name).value_or(class_dir / name);
    RdmaDevice d;
    d.name = name;
    d.hca_type = files.line(dev_dir / "hca_type").value_or("");
    d.board_id = files.line(dev_dir / "board_id").value_or("");
    d.fw_ver = files.line(dev_dir / "fw_ver").value_or("");
    d.node_guid = files.line(dev_dir / "node_guid").value_or("");
    d.sys_image_guid = files.line(dev_dir / "sys_image_guid").value_or("");
    d.parent = files.line_quiet(dev_dir / "parent").value_or("");
    const auto pci_dir = files.resolve(dev_dir / "device");
    if (pci_dir && is_pci_address(pci_dir->filename().string())) {
      auto f = read_pci_function(files, *pci_dir);
      d.pci = f.address;
      d.driver = f.driver;
      d.numa_node = f.numa_node;
      d.pcie = f.pcie;
    } else if (!d.parent.empty()) {
      d.driver = "rdma_rxe";  // software RoCE: no PCI function of its own
    }
    for (const auto& port : files.list(dev_dir / "ports")) {
      if (auto number = leading_code(port)) d.ports.push_back(read_port(files, dev_dir, pci_dir, name, *number));
    }
    std::sort(d.ports.begin(), d.ports.end(), [](const PortFacts& a, const PortFacts& b) { return a.port < b.port; });
    devices.push_back(std::move(d));
  }
  if (devices.empty()) absent.push_back({"rdma_devices", "/sys/class/infiniband is empty: no RDMA device"});
  return devices;
}

void read_hca_vpd(FileReader& files, std::vector<RdmaDevice>& devices, std::vector<Absence>& absent) {
  constexpr size_t kMaxVpd = 4096;  // ConnectX VPDs are a few hundred bytes; the rest is padding
  for (auto& d : devices) {
    if (d.pci.empty()) continue;
    const fs::path file = files.path("sys/bus/pci/devices") / d.pci / "vpd";
    // The kernel's vpd attribute is up to 32 KiB; only its first kMaxVpd bytes are parsed.
    std::optional<std::string> content;
    const auto unreadable = failure_of([&] { content = read_regular_file(file.string(), 1u << 20); });
    if (!content) {
      if (unreadable) absent.push_back({"vpd " + d.name, fmt::format("{} is unreadable ({}): serial and part number not recorded; run as root",
                                                                     "/sys/bus/pci/devices/" + d.pci + "/vpd", *unreadable)});
      continue;
    }
    std::string bytes = content->substr(0, kMaxVpd);
    PciVpd vpd;
    if (auto failed = failure_of([&] { vpd = parse_pci_vpd(bytes); })) {
      absent.push_back({"vpd " + d.name, "/sys/bus/pci/devices/" + d.pci + "/vpd: " + *failed});
      continue;
    }
    d.board_name = vpd.product_name;
    d.part_number = vpd.part_number;
    d.serial_number = vpd.serial_number;
  }
}

}  // namespace fabricproof::probe
