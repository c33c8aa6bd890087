#pragma once
#include <optional>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"

namespace fabricproof::gpu {

// Adds the CUDA view to the node's GPUs (matched to the PCI bus by address): ordinal, name, UUID,
// memory, compute capability, DMA-BUF support; the CUDA driver and runtime versions; and the
// GPU this rank drives (local rank modulo the GPU count). Without a usable driver or device the
// GPU list keeps what the PCI bus showed and `absent` says why.
void augment_with_cuda(NodeFacts& node, RankFacts& rank);

// The memory health (ECC errors, remapped rows, pending retirements) of the GPUs at these PCI
// addresses, read from NVML now, in the order given; one not read says why in `unread`. The soak
// reads it again at its end to compare with the inventory's read.
std::vector<GpuMemoryHealth> read_memory_health(const std::vector<std::string>& pci_addresses);

// Looks up a CUDA driver API function without linking libcuda (absent on CI machines):
// cudaGetDriverEntryPointByVersion. nullptr when the driver is missing.
void* driver_function(const char* name);

// CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED of CUDA device `ordinal`; nullopt when it cannot be read.
std::optional<bool> dmabuf_supported(int ordinal);

}  // namespace fabricproof::gpu
