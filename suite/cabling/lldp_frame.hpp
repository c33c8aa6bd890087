#pragma once
// One LLDP frame (IEEE 802.1AB) as it arrives on a port, for a node without lldpd: destination,
// source, an optional 802.1Q tag, ethertype 0x88cc, then TLVs (7-bit type, 9-bit length): chassis
// ID (1), port ID (2), TTL (3), port description (4), system name (5), system description (6),
// management address (8), end (0). The neighbour as lldpcli shows it (the same id types: mac, ip,
// local, ifname, ifalias); nothing when the frame is not LLDP or lacks a chassis or port ID.
#include <optional>
#include <string>
#include <string_view>

#include "cabling/lldp.hpp"

namespace fabricproof::cabling {

std::optional<LldpNeighbour> parse_lldp_frame(std::string_view frame, const std::string& interface);

// "0180c200000e..." (whitespace ignored) as bytes: a captured frame in a fixture. Throws
// LocatedError on an odd count or a character that is not a hex digit.
std::string bytes_of_hex(std::string_view hex);

}  // namespace fabricproof::cabling
