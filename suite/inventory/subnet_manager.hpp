#pragma once
// The subnet managers an InfiniBand fabric answers with: SMInfo (IBA 14.2.5.13) asked by a
// LID-routed SMP Get, as `sminfo` does. Two masters fighting over one subnet are counted from the
// answers of every node (inventory/lossless_rules.cpp, ib_sm_masters). Pure: bytes in, facts out.
#include <array>
#include <cstdint>
#include <string>

#include "core/json_optional.hpp"

namespace fabricproof {

// One port's question to one LID (its SM LID, or its own to find an SM running there) and the answer.
struct SmAnswer {
  std::string device;    // the asking port
  int port = 1;
  int lid = 0;           // the LID asked
  std::string guid;      // the SM's port GUID, "0x0002c9030045a1b2"
  int priority = 0;
  std::string state;     // "not_active", "discovering", "standby", "master"
  uint32_t act_count = 0;
  std::string error;     // no SMInfo: why (a port without an SM answers "unsupported attribute")
};
FABRICPROOF_JSON(SmAnswer, device, port, lid, guid, priority, state, act_count, error)

inline constexpr size_t kMadBytes = 256;

// The 256-byte MAD of a LID-routed SMP Get(SMInfo) with transaction id `tid`.
std::array<uint8_t, kMadBytes> sm_info_request(uint64_t tid);

// Reads a GetResp(SMInfo) MAD into `answer` (device, port and lid are the caller's); sets
// answer.error when the bytes are not one (short, another class or attribute, a MAD status).
void decode_sm_info(const uint8_t* mad, size_t bytes, SmAnswer& answer);

// The node at the far end of a port's cable, as `smpquery -D nodeinfo 0,<port>` and `-D nodedesc`
// ask it: a directed-route SMP Get one hop out of the port (IBA 14.2.1.2; permissive LIDs), which
// needs no LID and no subnet manager.
inline constexpr uint16_t kAttrNodeDescription = 0x0010;
inline constexpr uint16_t kAttrNodeInfo = 0x0011;
std::array<uint8_t, kMadBytes> hop_one_request(uint64_t tid, uint16_t attribute, int port);

struct HopOneNode {
  std::string guid;     // its node GUID, "0x7cfe900300a5b0c0"
  int node_type = 0;    // 1 channel adapter, 2 switch, 3 router
  int local_port = 0;   // the port the SMP came in by: the switch port of this cable
};
// The answers; a MAD that is not one (short, another class, method or attribute, a status) throws
// LocatedError saying which.
HopOneNode decode_hop_one_node_info(const uint8_t* mad, size_t bytes);
std::string decode_hop_one_description(const uint8_t* mad, size_t bytes);

}  // namespace fabricproof
