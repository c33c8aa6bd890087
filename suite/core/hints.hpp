#pragma once
// What to check first, in the seed article's triage order for a slow or broken link:
// (1) MTU, (2) PFC on RoCE, (3) cable / transceiver, (4) PCIe generation and lanes, (5) NUMA.
namespace fabricproof::hint {

inline constexpr const char* kMtu =
    "MTU first: set MTU 9000 on the netdev and on every switch hop (RoCE needs netdev MTU >= 4192 "
    "for RoCE MTU 4096; 1500 gives RoCE MTU 1024): ip link set <if> mtu 9000.";
inline constexpr const char* kPfc =
    "PFC next (RoCE): priority 3 only, trust DSCP, DSCP 26 -> priority 3, identical on every host "
    "and switch hop (mlnx_qos -i <if>).";
inline constexpr const char* kCable =
    "Cable or transceiver: reseat or swap the cable/DAC (wrong DAC length trains 200 -> 100 Gb/s), "
    "check the switch port speed setting and its error counters.";
inline constexpr const char* kPcie =
    "PCIe: reseat the card, check the slot's electrical width and the BIOS PCIe generation setting "
    "(a 200G NIC on Gen3 x16 tops out near 100 Gb/s).";
inline constexpr const char* kNuma =
    "NUMA: run the rank on the CPU socket/NUMA node that holds the HCA and the GPU "
    "(mpirun --bind-to numa, NCCL topology).";
inline constexpr const char* kSubnetManager =
    "No subnet manager has configured the port: run opensm on one node or enable the switch's SM "
    "(check with sminfo); a port stuck in INIT with LinkUp is the classic sign.";
inline constexpr const char* kPeermem =
    "Load nvidia_peermem (modprobe nvidia_peermem) and persist it in /etc/modules-load.d/. It only "
    "builds against MLNX_OFED's peer-memory API, so install OFED first, then the NVIDIA driver, "
    "then nvidia-peermem; on inbox kernels use DMA-BUF (kernel >= 5.12, open GPU kernel modules).";
inline constexpr const char* kSoftwareSkew =
    "Install the same driver, firmware and library versions on every node (one image); the odd node "
    "is named in `measured`.";

}  // namespace fabricproof::hint
