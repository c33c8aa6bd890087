#include "inventory/verbs_probe.hpp"

#include <dlfcn.h>

#include <endian.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/units.hpp"
#include "verbs/handles.hpp"

namespace fabricproof::verbs {
namespace {

std::string format_guid(__be64 guid_be) {
  const uint64_t g = be64toh(guid_be);
  return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", (g >> 48) & 0xffff, (g >> 32) & 0xffff, (g >> 16) & 0xffff, g & 0xffff);
}

std::string format_gid(const ibv_gid& gid) {
  std::string out;
  for (int i = 0; i < 16; i += 2) out += fmt::format("{}{:02x}{:02x}", i ? ":" : "", gid.raw[i], gid.raw[i + 1]);
  return out;
}

// The loaded library's file name carries its version: libibverbs.so.1.14.44.0 is rdma-core 44.0.
void library_versions(SoftwareFacts& sw) {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&ibv_get_device_list), &info) || !info.dli_fname) return;
  char resolved[PATH_MAX];
  if (!realpath(info.dli_fname, resolved)) return;
  const std::string name = std::filesystem::path(resolved).filename().string();
  const std::string prefix = "libibverbs.so.";
  if (name.rfind(prefix, 0) != 0) return;
  sw.libibverbs_version = name.substr(prefix.size());
  const std::string abi = "1.14.";  // the stable ABI prefix; the rest is the rdma-core release
  if (sw.libibverbs_version.rfind(abi, 0) == 0) sw.rdma_core_version = sw.libibverbs_version.substr(abi.size());
}

std::string gid_type_name(int type) {
  switch (type) {
    case IBV_GID_TYPE_ROCE_V2:
      return "RoCE v2";
    case IBV_GID_TYPE_ROCE_V1:
    case IBV_GID_TYPE_IB:
      return "IB/RoCE v1";  // the kernel's sysfs name for both
    default:
      return "";
  }
}

// NCCL's probe (src/transport/net_ib.cc): a registration with fd -1 fails with EOPNOTSUPP or
// EPROTONOSUPPORT when the stack lacks DMA-BUF; any other errno (EBADF) means it would try.
void probe_dmabuf(ibv_context* context, RdmaDevice& device) {
  ProtectionDomain pd(ibv_alloc_pd(context));
  if (!pd) {
    device.dmabuf_detail = fmt::format("ibv_alloc_pd failed: {}", std::strerror(errno));
    return;
  }
  errno = 0;
  MemoryRegion mr(ibv_reg_dmabuf_mr(pd.get(), 0, 0, 0, -1, 0));
  const int error = errno;
  device.dmabuf_supported = !(error == EOPNOTSUPP || error == EPROTONOSUPPORT);
  device.dmabuf_detail = fmt::format("ibv_reg_dmabuf_mr(fd=-1): {} ({})", std::strerror(error), error);
}

void merge_port(ibv_context* context, int number, const ibv_port_attr& attr, PortFacts& p) {
  p.port = number;
  if (auto s = port_state_name(attr.state)) p.state = *s;
  if (auto s = phys_state_name(attr.phys_state)) p.phys_state = *s;
  int speed = attr.active_speed;
#ifdef FABRICPROOF_HAVE_ACTIVE_SPEED_EX
  if (attr.active_speed_ex) speed = static_cast<int>(attr.active_speed_ex);  // XDR lives only here
#endif
  if (auto rate = link_rate_from_codes(attr.active_width, speed)) {
    p.width_code = rate->width_code;
    p.speed_code = rate->speed_code;
    p.width = rate->width;
    p.speed_name = rate->speed_name;
    if (!p.rate_gbps) p.rate_gbps = rate->gbps;  // keep the kernel's own figure when sysfs had it
  }
  p.link_layer = attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
  p.active_mtu = mtu_bytes_for_code(attr.active_mtu);
  p.max_mtu = mtu_bytes_for_code(attr.max_mtu);
  p.active_mtu_source = "verbs";
  p.lid = attr.lid;
  p.sm_lid = attr.sm_lid;
  for (auto& gid : p.gids) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(context, number, gid.index, &entry, 0) == 0 && gid.type.empty())
      gid.type = gid_type_name(entry.gid_type);
  }
  if (p.gids.empty()) {  // no sysfs GID table (unusual): take the verbs view
    for (int i = 0; i < attr.gid_tbl_len; ++i) {
      ibv_gid_entry entry{};
      if (ibv_query_gid_ex(context, number, i, &entry, 0) != 0) continue;
      p.gids.push_back({i, format_gid(entry.gid), gid_type_name(entry.gid_type), ""});
    }
  }
}

}  // namespace

VerbsError::VerbsError(std::string api, int code, const std::string& detail, const std::string& device)
    : LocatedError(device, fmt::format("{}: {} ({}){}", api, std::strerror(code), code, detail.empty() ? "" : ": " + detail)),
      api_(std::move(api)),
      code_(code) {}

Context open_device(const std::string& name) {
  int count = 0;
  DeviceList list(ibv_get_device_list(&count));
  if (!list) throw VerbsError("ibv_get_device_list", errno, name);
  for (int i = 0; i < count; ++i) {
    if (name != ibv_get_device_name(list.get()[i])) continue;
    Context context(ibv_open_device(list.get()[i]));
    if (!context) throw VerbsError("ibv_open_device", errno, name, name);
    return context;
  }
  throw VerbsError("ibv_get_device_list", ENODEV, "no RDMA device named " + name, name);
}

void augment_with_verbs(NodeFacts& node) {
  library_versions(node.software);
  int count = 0;
  DeviceList list(ibv_get_device_list(&count));
  if (!list) {
    node.absent.push_back({"verbs_devices", fmt::format("ibv_get_device_list: {}", std::strerror(errno))});
    return;
  }
  for (int i = 0; i < count; ++i) {
    const std::string name = ibv_get_device_name(list.get()[i]);
    auto it = std::find_if(node.rdma_devices.begin(), node.rdma_devices.end(), [&](const RdmaDevice& d) { return d.name == name; });
    if (it == node.rdma_devices.end()) {
      node.rdma_devices.push_back(RdmaDevice{});
      it = std::prev(node.rdma_devices.end());
      it->name = name;
    }
    Context context(ibv_open_device(list.get()[i]));
    if (!context) {
      node.probe_errors.push_back({"ibv_open_device(" + name + ")", std::strerror(errno)});
      continue;
    }
    ibv_device_attr attr{};
    if (ibv_query_device(context.get(), &attr) == 0) {
      it->fw_ver = attr.fw_ver;
      if (it->node_guid.empty()) it->node_guid = format_guid(attr.node_guid);
      if (it->sys_image_guid.empty()) it->sys_image_guid = format_guid(attr.sys_image_guid);
      for (int port = 1; port <= attr.phys_port_cnt; ++port) {
        ibv_port_attr port_attr{};
        if (ibv_query_port(context.get(), port, &port_attr) != 0) {
          node.probe_errors.push_back({fmt::format("ibv_query_port({}, {})", name, port), std::strerror(errno)});
          continue;
        }
        auto p = std::find_if(it->ports.begin(), it->ports.end(), [&](const PortFacts& x) { return x.port == port; });
        if (p == it->ports.end()) {
          it->ports.push_back(PortFacts{});
          p = std::prev(it->ports.end());
        }
        merge_port(context.get(), port, port_attr, *p);
      }
    } else {
      node.probe_errors.push_back({"ibv_query_device(" + name + ")", std::strerror(errno)});
    }
    probe_dmabuf(context.get(), *it);
  }
  // A device that sysfs lists and verbs cannot see has no user-space provider (rdma-core missing).
  for (auto& d : node.rdma_devices) {
    bool seen = false;
    for (int i = 0; i < count; ++i) seen |= d.name == ibv_get_device_name(list.get()[i]);
    if (!seen) node.absent.push_back({"verbs:" + d.name, "libibverbs does not list it: is the provider (ibverbs-providers / rdma-core) installed?"});
  }
}

}  // namespace fabricproof::verbs
