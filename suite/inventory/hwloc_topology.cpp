#include "inventory/hwloc_topology.hpp"

#include <fmt/format.h>
#include <hwloc.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "core/units.hpp"

namespace fabricproof::topology {
namespace {

using Kind = TopoObject::Kind;

std::string bus_id(hwloc_obj_t o) {
  const auto& p = o->attr->pcidev;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", p.domain, p.bus, p.dev, p.func);
}

bool is_nvidia_gpu(hwloc_obj_t o) {
  const auto& p = o->attr->pcidev;
  return p.vendor_id == 0x10de && (p.class_id >> 8) == 0x03;  // display controller (3D / VGA), not NVSwitch
}

// The OS device of `kind` below a PCI device (cuda0, nvml0, mlx5_0), or null.
hwloc_obj_t os_device(hwloc_obj_t pci, hwloc_obj_osdev_type_t kind, const char* prefix = nullptr) {
  for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
    if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == kind && c->name &&
        (!prefix || std::string(c->name).rfind(prefix, 0) == 0))
      return c;
  return nullptr;
}

bool is_hca(hwloc_obj_t o) {
  if (os_device(o, HWLOC_OBJ_OSDEV_OPENFABRICS)) return true;
  const auto& p = o->attr->pcidev;  // an HCA whose OS device was filtered out of the export
  return p.vendor_id == 0x15b3 && ((p.class_id >> 8) == 0x02 || p.class_id == 0x0c06);
}

std::vector<int> numa_nodes(hwloc_const_nodeset_t set) {
  std::vector<int> nodes;
  if (!set) return nodes;
  for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i)) nodes.push_back(i);
  return nodes;
}

// `<topology version="3.0">`: hwloc 3 writes XML that hwloc 2 refuses ("cannot import XML version
// 3.0 > 2"); say so instead of a bare load failure.
std::string xml_format(const std::string& path) {
  std::ifstream in(path);
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  std::smatch m;
  if (std::regex_search(head, m, std::regex(R"re(<topology\s+version="([0-9.]+)")re"))) return m[1];
  return "";
}

class Builder {
 public:
  Builder(LoadedTopology& out, hwloc_topology_t topology) : out_(out), topology_(topology) {}

  void add(hwloc_obj_t o, int parent) {
    int self = parent;
    if (o->type != HWLOC_OBJ_OS_DEVICE && o->type != HWLOC_OBJ_NUMANODE && o->type != HWLOC_OBJ_MISC) {
      TopoObject t;
      t.parent = parent;
      if (o->type == HWLOC_OBJ_BRIDGE) {
        t.kind = o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST ? Kind::host_bridge : Kind::bridge;
      } else if (o->type == HWLOC_OBJ_PCI_DEVICE) {
        t.kind = Kind::pci_device;
      } else {
        t.kind = Kind::cpu_side;
        t.numa = numa_nodes(o->nodeset);
      }
      self = static_cast<int>(out_.tree.objects.size());
      out_.tree.objects.push_back(t);
      if (o->type == HWLOC_OBJ_PCI_DEVICE) device(o, self);
    }
    for (hwloc_obj_t c = o->first_child; c; c = c->next_sibling) add(c, self);
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) add(c, self);
  }

 private:
  void device(hwloc_obj_t o, int index) {
    const bool gpu = is_nvidia_gpu(o), hca = !gpu && is_hca(o);
    if (!gpu && !hca) return;
    TopoDevice d;
    d.pci = bus_id(o);
    d.name = d.pci;
    hwloc_obj_t named = gpu ? os_device(o, HWLOC_OBJ_OSDEV_COPROC, "cuda") : os_device(o, HWLOC_OBJ_OSDEV_OPENFABRICS);
    if (!named && gpu) named = os_device(o, HWLOC_OBJ_OSDEV_GPU, "nvml");
    if (named) d.name = named->name;
    hwloc_obj_t attach = hwloc_get_non_io_ancestor_obj(topology_, o);
    if (attach && attach->nodeset && hwloc_bitmap_weight(attach->nodeset) == 1) d.numa_node = hwloc_bitmap_first(attach->nodeset);
    if (hca && named)
      if (const char* state = hwloc_obj_get_info_by_name(named, "Port1State"))
        if (auto text = port_state_name(std::atoi(state))) d.port_state = std::string(*text);
    (gpu ? out_.gpus : out_.hcas).push_back(d);
    (gpu ? out_.gpu_objects : out_.hca_objects).push_back(index);
  }

  LoadedTopology& out_;
  hwloc_topology_t topology_;
};

}  // namespace

LoadedTopology load(const std::string& xml_path) {
  LoadedTopology out;
  unsigned version = hwloc_get_api_version();
  out.source = xml_path.empty() ? fmt::format("hwloc API {}.{} (this machine)", version >> 16, (version >> 8) & 0xff)
                                : xml_path;
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) {
    out.error = "hwloc_topology_init failed";
    return out;
  }
  // Every bridge and PCI device: the path class counts bridges, and the default drops some.
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (!xml_path.empty() && hwloc_topology_set_xml(topo, xml_path.c_str()) != 0) {
    out.error = fmt::format("{}: hwloc cannot read it as an XML topology", xml_path);
  } else if (hwloc_topology_load(topo) != 0) {
    const auto format = xml_path.empty() ? "" : xml_format(xml_path);
    out.error = !format.empty() && std::atoi(format.c_str()) > static_cast<int>(version >> 16)
                    ? fmt::format("{}: XML format {} is newer than this hwloc (API {}.{}) reads", xml_path, format, version >> 16,
                                  (version >> 8) & 0xff)
                    : fmt::format("hwloc_topology_load failed for {}", out.source);
  } else {
    Builder(out, topo).add(hwloc_get_root_obj(topo), -1);
  }
  hwloc_topology_destroy(topo);
  return out;
}

TopologyFacts read_topology(const std::string& xml_path) { return classify_topology(load(xml_path)); }

}  // namespace fabricproof::topology
