#include "inventory/dcb.hpp"

#include "core/units.hpp"

#include <fmt/format.h>

#include <cstring>

namespace fabricproof {
namespace {

// Netlink's framing (linux/netlink.h, linux/rtnetlink.h), native byte order as the kernel sends it.
constexpr size_t kNlmsgHeader = 16;  // len u32, type u16, flags u16, seq u32, pid u32
constexpr size_t kDcbmsg = 4;        // family u8, cmd u8, pad u16
constexpr uint16_t kNlmsgError = 2;
constexpr uint16_t kNlmFRequest = 1;
constexpr size_t kIeeeEtsSize = 59;  // struct ieee_ets: willing, ets_cap, cbs, 7 x u8[8]
constexpr size_t kIeeePfcEnOffset = 1;

size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

template <typename T>
T read_at(std::string_view bytes, size_t at) {
  T value{};
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

// Calls f(type, payload) for each attribute in `bytes`; false when an attribute's length is bad.
template <typename F>
bool for_each_attribute(std::string_view bytes, F&& f) {
  size_t at = 0;
  while (at + 4 <= bytes.size()) {
    const auto length = read_at<uint16_t>(bytes, at);
    const auto type = static_cast<uint16_t>(read_at<uint16_t>(bytes, at + 2) & 0x3fff);  // drop NLA_F_NESTED / NET_BYTEORDER
    if (length < 4 || at + length > bytes.size()) return false;
    f(type, bytes.substr(at + 4, length - 4));
    at += align4(length);
  }
  return true;
}

std::vector<int> eight(std::string_view bytes, size_t offset) {
  std::vector<int> out;
  for (size_t i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(bytes[offset + i]));
  return out;
}

void put_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_u16(std::string& s, uint16_t v) { s.append(reinterpret_cast<const char*>(&v), 2); }

}  // namespace

std::string dcb_request(std::string_view ifname, uint32_t sequence) {
  std::string attribute;
  put_u16(attribute, static_cast<uint16_t>(4 + ifname.size() + 1));
  put_u16(attribute, kDcbAttrIfname);
  attribute.append(ifname);
  attribute.push_back('\0');
  attribute.resize(align4(attribute.size()), '\0');
  std::string message;
  put_u32(message, static_cast<uint32_t>(kNlmsgHeader + kDcbmsg + attribute.size()));
  put_u16(message, kRtmGetDcb);
  put_u16(message, kNlmFRequest);
  put_u32(message, sequence);
  put_u32(message, 0);
  message.push_back(0);  // AF_UNSPEC
  message.push_back(static_cast<char>(kDcbCmdIeeeGet));
  put_u16(message, 0);
  return message + attribute;
}

DcbConfig decode_dcb_reply(std::string_view message) {
  DcbConfig c;
  c.source = "dcbnl (RTM_GETDCB, DCB_CMD_IEEE_GET)";
  if (message.size() < kNlmsgHeader) {
    c.error = "short netlink message";
    return c;
  }
  const auto length = read_at<uint32_t>(message, 0);
  const auto type = read_at<uint16_t>(message, 4);
  if (length < kNlmsgHeader || length > message.size()) {
    c.error = fmt::format("netlink message length {} out of range", length);
    return c;
  }
  message = message.substr(0, length);
  if (type == kNlmsgError) {
    const int code = message.size() >= kNlmsgHeader + 4 ? -read_at<int32_t>(message, kNlmsgHeader) : 0;
    c.error = code == 95 ? "Operation not supported (the driver has no DCB support)" : fmt::format("{} (errno {})", std::strerror(code), code);
    return c;
  }
  if (type != kRtmGetDcb || message.size() < kNlmsgHeader + kDcbmsg) {
    c.error = fmt::format("unexpected netlink message type {}", type);
    return c;
  }
  bool ok = true;
  ok &= for_each_attribute(message.substr(kNlmsgHeader + kDcbmsg), [&](uint16_t t, std::string_view payload) {
    if (t == kDcbAttrDcbx && !payload.empty()) c.dcbx = static_cast<uint8_t>(payload[0]);
    if (t != kDcbAttrIeee) return;
    ok &= for_each_attribute(payload, [&](uint16_t it, std::string_view p) {
      if (it == kDcbAttrIeeeEts && p.size() >= kIeeeEtsSize) {
        c.tc_tx_bw = eight(p, 3);
        c.tc_tsa = eight(p, 19);
        c.prio_tc = eight(p, 27);
      } else if (it == kDcbAttrIeeePfc && p.size() > kIeeePfcEnOffset) {
        c.pfc_enabled = static_cast<uint8_t>(p[kIeeePfcEnOffset]);
      } else if (it == kDcbAttrIeeeAppTable) {
        ok &= for_each_attribute(p, [&](uint16_t at, std::string_view app) {
          if (at != kDcbAttrIeeeApp || app.size() < 4) return;
          const auto selector = static_cast<uint8_t>(app[0]), priority = static_cast<uint8_t>(app[1]);
          const auto protocol = read_at<uint16_t>(app, 2);
          if (selector == kAppSelectorDscp && protocol < 64 && priority < 8) c.dscp_priority[protocol] = priority;
        });
      }
    });
  });
  if (!ok) c.error = "malformed DCB attributes";
  return c;
}

std::optional<int> device_traffic_class(const std::string& text) {
  const auto eq = text.find('=');
  return eq == std::string::npos ? std::nullopt : whole_int(text.substr(eq + 1));
}

}  // namespace fabricproof
