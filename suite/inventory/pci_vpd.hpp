#pragma once
// PCI Vital Product Data (PCI Local Bus 3.0, section 6.4; sysfs `vpd`): the board's product name,
// part number and serial number as the manufacturer burnt them. The serial is what a swap changes
// and what the RMA paperwork names, so it belongs in the report's component identity.
#include <string>
#include <string_view>

#include "core/located_error.hpp"

namespace fabricproof {

struct PciVpd {
  std::string product_name;      // large resource 0x82 (identifier string)
  std::string part_number;       // VPD-R keyword PN
  std::string serial_number;     // VPD-R keyword SN
  std::string engineering_change;  // VPD-R keyword EC (board revision)
  bool checksum_ok = false;      // RV: all bytes up to and including the checksum sum to 0
};

// Parses raw VPD bytes; a LocatedError says what is wrong (the reader names the file). Stops at the
// end tag (0x78) or at 0xff/0x00 padding, whichever comes first.
PciVpd parse_pci_vpd(std::string_view bytes);

}  // namespace fabricproof
