#pragma once
// RDMA devices, ports, GID tables and PCIe links from sysfs (/sys/class/infiniband and the PCI
// function behind each device). Layout: kernel Documentation/ABI/stable/sysfs-class-infiniband.
#include <map>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"
#include "inventory/file_reader.hpp"

namespace fabricproof::probe {

std::vector<RdmaDevice> read_rdma_devices(FileReader& files, std::vector<Absence>& absent);

// Board name, part and serial number from each HCA's PCI VPD (<pci function>/vpd). Slow on some
// devices (the kernel polls the VPD capability 4 bytes at a time) and root-only on most kernels,
// so the caller reads it on one rank per node; an unreadable VPD is an absence with the reason.
void read_hca_vpd(FileReader& files, std::vector<RdmaDevice>& devices, std::vector<Absence>& absent);

struct PciFunction {
  std::string address;  // "0000:17:00.0"
  std::string driver;
  std::optional<int> numa_node;
  PcieLink pcie;
};
// The PCI function at /sys/bus/pci/devices/<address> (or at an already resolved directory).
PciFunction read_pci_function(FileReader& files, const std::filesystem::path& dir);

// counters/ and hw_counters/ of one port (error counters, retries, out-of-sequence...).
std::map<std::string, uint64_t> read_port_counters(FileReader& files, const std::string& device, int port);

}  // namespace fabricproof::probe
