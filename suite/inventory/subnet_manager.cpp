#include "inventory/subnet_manager.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/located_error.hpp"

namespace fabricproof {
namespace {

// MAD header (IBA 13.4.3) and the LID-routed SMP (14.2.1.1): data at byte 64.
constexpr uint8_t kBaseVersion = 1;
constexpr uint8_t kClassSmpLidRouted = 0x01;
constexpr uint8_t kMethodGet = 0x01;
constexpr uint8_t kMethodGetResp = 0x81;
constexpr uint16_t kAttrSmInfo = 0x0020;
constexpr size_t kSmpData = 64;

uint64_t big_endian(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}

void put_big_endian(uint8_t* p, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) p[n - 1 - i] = static_cast<uint8_t>(v >> (8 * i));
}

const char* state_name(unsigned s) {
  switch (s) {
    case 0: return "not_active";
    case 1: return "discovering";
    case 2: return "standby";
    case 3: return "master";
  }
  return "unknown";
}

}  // namespace

std::array<uint8_t, kMadBytes> sm_info_request(uint64_t tid) {
  std::array<uint8_t, kMadBytes> mad{};
  mad[0] = kBaseVersion;
  mad[1] = kClassSmpLidRouted;
  mad[2] = 1;  // class version
  mad[3] = kMethodGet;
  put_big_endian(&mad[8], tid, 8);
  put_big_endian(&mad[16], kAttrSmInfo, 2);
  return mad;  // attribute modifier 0, M_Key 0
}

void decode_sm_info(const uint8_t* mad, size_t bytes, SmAnswer& a) {
  if (bytes < kSmpData + 24) {
    a.error = fmt::format("short MAD ({} bytes)", bytes);
    return;
  }
  if (mad[1] != kClassSmpLidRouted || mad[3] != kMethodGetResp || big_endian(&mad[16], 2) != kAttrSmInfo) {
    a.error = fmt::format("not an SMInfo response (class 0x{:02x}, method 0x{:02x}, attribute 0x{:04x})", mad[1], mad[3], big_endian(&mad[16], 2));
    return;
  }
  // The status's 15-bit code without the direction bit; 0x0c: the port has no SM ("unsupported
  // method/attribute combination"), which is how a port without an SM answers.
  const auto status = static_cast<uint16_t>(big_endian(&mad[4], 2) & 0x7fff);
  if (status != 0) {
    a.error = status == 0x0c ? "no subnet manager at this LID (unsupported attribute)" : fmt::format("MAD status 0x{:04x}", status);
    return;
  }
  const uint8_t* d = mad + kSmpData;
  a.guid = fmt::format("0x{:016x}", big_endian(d, 8));
  a.act_count = static_cast<uint32_t>(big_endian(d + 16, 4));
  a.priority = d[20] >> 4;
  a.state = state_name(d[20] & 0x0f);
}

namespace {

constexpr uint8_t kClassSmpDirected = 0x81;
constexpr uint16_t kPermissiveLid = 0xffff;
constexpr size_t kInitialPath = 128;

// The SMP data of a directed-route GetResp for `attribute`, or why the MAD is not one.
const uint8_t* hop_one_data(const uint8_t* mad, size_t bytes, uint16_t attribute) {
  if (bytes < kSmpData + 64) throw LocatedError("", fmt::format("short MAD ({} bytes)", bytes));
  if (mad[1] != kClassSmpDirected || mad[3] != kMethodGetResp || big_endian(&mad[16], 2) != attribute)
    throw LocatedError("", fmt::format("not the directed-route answer (class 0x{:02x}, method 0x{:02x}, attribute 0x{:04x})", mad[1], mad[3],
                                       big_endian(&mad[16], 2)));
  if (const auto status = big_endian(&mad[4], 2) & 0x7fff; status != 0)  // without the direction bit
    throw LocatedError("", fmt::format("MAD status 0x{:04x}", status));
  return mad + kSmpData;
}

}  // namespace

std::array<uint8_t, kMadBytes> hop_one_request(uint64_t tid, uint16_t attribute, int port) {
  std::array<uint8_t, kMadBytes> mad{};
  mad[0] = kBaseVersion;
  mad[1] = kClassSmpDirected;
  mad[2] = 1;  // class version
  mad[3] = kMethodGet;
  mad[6] = 0;  // hop pointer
  mad[7] = 1;  // hop count: one cable out
  put_big_endian(&mad[8], tid, 8);
  put_big_endian(&mad[16], attribute, 2);
  put_big_endian(&mad[32], kPermissiveLid, 2);  // DrSLID
  put_big_endian(&mad[34], kPermissiveLid, 2);  // DrDLID
  mad[kInitialPath + 1] = static_cast<uint8_t>(port);  // out of this node's port
  return mad;
}

HopOneNode decode_hop_one_node_info(const uint8_t* mad, size_t bytes) {
  const uint8_t* d = hop_one_data(mad, bytes, kAttrNodeInfo);
  return {fmt::format("0x{:016x}", big_endian(d + 12, 8)), d[2], d[36]};
}

std::string decode_hop_one_description(const uint8_t* mad, size_t bytes) {
  const uint8_t* d = hop_one_data(mad, bytes, kAttrNodeDescription);
  std::string text(reinterpret_cast<const char*>(d), 64);
  text.resize(std::min(text.find('\0'), text.size()));
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace fabricproof
