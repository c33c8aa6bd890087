#include "cabling/lldp_frame.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cctype>
#include <cstdint>

#include "core/located_error.hpp"

namespace fabricproof::cabling {
namespace {

constexpr uint16_t kLldpEthertype = 0x88cc;
constexpr uint16_t kVlanEthertype = 0x8100;

uint16_t be16(std::string_view s, size_t at) {
  return static_cast<uint16_t>((static_cast<uint8_t>(s[at]) << 8) | static_cast<uint8_t>(s[at + 1]));
}

std::string mac_text(std::string_view b) {
  std::string out;
  for (size_t i = 0; i < b.size(); ++i) out += fmt::format("{}{:02x}", i ? ":" : "", static_cast<uint8_t>(b[i]));
  return out;
}

// A network address (IANA family byte, then the address): IPv4 and IPv6 as lldpcli prints them,
// another family as its bytes in hex.
std::string address_text(std::string_view b) {
  const int family = b.empty() ? 0 : static_cast<uint8_t>(b[0]);
  char text[INET6_ADDRSTRLEN] = {};
  if ((family == 1 && b.size() == 5 && inet_ntop(AF_INET, b.data() + 1, text, sizeof(text))) ||
      (family == 2 && b.size() == 17 && inet_ntop(AF_INET6, b.data() + 1, text, sizeof(text))))
    return text;
  return mac_text(b.substr(b.empty() ? 0 : 1));
}

// A chassis or port ID: its subtype as lldpcli names it, and its value as text.
void read_id(std::string_view v, bool chassis, std::string& type, std::string& value) {
  if (v.empty()) return;
  const uint8_t subtype = static_cast<uint8_t>(v[0]);
  const std::string_view body = v.substr(1);
  const uint8_t mac = chassis ? 4 : 3, network = chassis ? 5 : 4, ifname = chassis ? 6 : 5, alias = chassis ? 2 : 1;
  if (subtype == mac && body.size() == 6) type = "mac", value = mac_text(body);
  else if (subtype == network) type = "ip", value = address_text(body);
  else if (subtype == 7) type = "local", value = std::string(body);
  else if (subtype == ifname) type = "ifname", value = std::string(body);
  else if (subtype == alias) type = "ifalias", value = std::string(body);
  else type = "unhandled", value = std::string(body);
}

// One TLV into the record.
void read_tlv(uint8_t type, std::string_view v, LldpNeighbour& n) {
  switch (type) {
    case 1: return read_id(v, true, n.chassis_id_type, n.chassis_id);
    case 2: return read_id(v, false, n.port_id_type, n.port_id);
    case 3:
      if (v.size() >= 2) n.ttl = std::to_string(be16(v, 0));
      return;
    case 4: n.port_descr = std::string(v); return;
    case 5: n.chassis_name = std::string(v); return;
    case 6: n.chassis_descr = std::string(v); return;
    case 8:  // length of the address (with its family byte), the address
      if (v.size() >= 2 && static_cast<size_t>(static_cast<uint8_t>(v[0])) + 1 <= v.size())
        n.mgmt_ip.push_back(address_text(v.substr(1, static_cast<uint8_t>(v[0]))));
      return;
    default: return;  // organisationally specific and the rest: not needed here
  }
}

}  // namespace

std::optional<LldpNeighbour> parse_lldp_frame(std::string_view frame, const std::string& interface) {
  size_t at = 12;  // past the destination and source addresses
  if (frame.size() < at + 2) return std::nullopt;
  if (be16(frame, at) == kVlanEthertype) at += 4;
  if (frame.size() < at + 2 || be16(frame, at) != kLldpEthertype) return std::nullopt;
  at += 2;
  LldpNeighbour n;
  n.local_interface = interface;
  n.via = "LLDP";
  while (at + 2 <= frame.size()) {
    const uint16_t header = be16(frame, at);
    const uint8_t type = static_cast<uint8_t>(header >> 9);
    const size_t length = header & 0x1ff;
    at += 2;
    if (type == 0 || at + length > frame.size()) break;  // the end, or a TLV cut short
    read_tlv(type, frame.substr(at, length), n);
    at += length;
  }
  if (n.chassis_id.empty() || n.port_id.empty()) return std::nullopt;
  return n;
}

std::string bytes_of_hex(std::string_view hex) {
  std::string digits;
  for (const char c : hex)
    if (!std::isspace(static_cast<unsigned char>(c))) digits += c;
  if (digits.size() % 2) throw LocatedError("", "an odd number of hex digits");
  std::string out;
  for (size_t i = 0; i < digits.size(); i += 2) {
    const auto nibble = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      throw LocatedError("", fmt::format("'{}' is not a hex digit", c));
    };
    out += static_cast<char>(nibble(digits[i]) * 16 + nibble(digits[i + 1]));
  }
  return out;
}

}  // namespace fabricproof::cabling
