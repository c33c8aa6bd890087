#pragma once
// Units and the code tables the kernel and libibverbs use for link rates, MTUs and PCIe links.
// Sources: rdma-core libibverbs/examples/devinfo.c, kernel drivers/infiniband/core/sysfs.c
// (rate_show), include/uapi/linux/pci_regs.h.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricproof {

// ---- InfiniBand / RoCE port rate ----
struct LinkRate {
  int width_code = 0;      // ibv_port_attr::active_width
  int speed_code = 0;      // ibv_port_attr::active_speed (or active_speed_ex)
  int lanes = 0;           // 1, 2, 4, 8, 12
  std::string width;       // "4X"
  std::string speed_name;  // "HDR"
  double gbps = 0;         // lanes x per-lane rate, as the kernel prints it
};

std::optional<int> lanes_for_width_code(int width_code);
std::optional<int> width_code_for_lanes(int lanes);
// Per-lane signalling rate in Gb/s as sysfs prints it (FDR 14, EDR 25, HDR 50, NDR 100, XDR 200).
std::optional<double> lane_gbps_for_speed_code(int speed_code);
std::optional<std::string_view> speed_name_for_code(int speed_code);
std::optional<int> speed_code_for_name(std::string_view name);
std::optional<LinkRate> link_rate_from_codes(int width_code, int speed_code);
// Parses sysfs ports/N/rate, e.g. "200 Gb/sec (4X HDR)", "2.5 Gb/sec (1X SDR)".
std::optional<LinkRate> parse_sysfs_rate(std::string_view text);

// ---- MTU: ibv_mtu enum 1..5 <-> bytes 256..4096 ----
std::optional<int> mtu_bytes_for_code(int mtu_code);
std::optional<int> mtu_code_for_bytes(int bytes);
// Largest RoCE MTU a netdev MTU carries. The kernel (include/rdma/ib_addr.h, iboe_get_mtu)
// subtracts GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 = 96 bytes, so 1500 gives
// 1024 and 4096 needs at least 4192 (9000 is the usual setting).
std::optional<int> roce_mtu_for_netdev_mtu(int netdev_mtu);

// ---- PCIe link ----
// "16.0 GT/s PCIe" / "8.0 GT/s" / "2.5 GT/s" -> generation 4 / 3 / 1. "Unknown" -> nullopt.
std::optional<double> parse_pcie_speed_gts(std::string_view text);
std::optional<int> pcie_generation_for_gts(double gts);

// ---- sizes ----
// "8", "8K", "64M", "8G", "1GiB", "512KB": binary multiples (nccl-tests' -b/-e semantics).
std::optional<uint64_t> parse_size(std::string_view text);
// 8589934592 -> "8G", 1536 -> "1536"; exact binary units only, bytes otherwise.
std::string format_size(uint64_t bytes);

}  // namespace fabricproof

namespace fabricproof {
// ibv_port_state / kernel port state codes -> ibv names ("ACTIVE"); nullopt for unknown codes.
std::optional<std::string_view> port_state_name(int code);
// Physical port state codes -> ibv names ("LINK_UP", "POLLING", "DISABLED", ...).
std::optional<std::string_view> phys_state_name(int code);
}  // namespace fabricproof

namespace fabricproof {
// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; empty on malformed text or a CPU id at or above `cpu_limit`
// (Linux's NR_CPUS is at most 8192 today; the default bound keeps a corrupt list from exhausting memory).
std::vector<int> parse_cpulist(std::string_view text, int cpu_limit = 65536);
// Usable PCIe bandwidth in Gb/s for a generation and lane count (about 85% of raw: Gen3 x16
// ~13.5 GB/s, Gen4 ~27, Gen5 ~54; domain.md).
std::optional<double> pcie_usable_gbps(int generation, int lanes);
// A whole decimal int ("106"; no sign of trailing text), else nothing.
std::optional<int> whole_int(std::string_view text);

}  // namespace fabricproof
