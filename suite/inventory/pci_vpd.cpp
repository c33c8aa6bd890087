#include "inventory/pci_vpd.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "core/located_error.hpp"

namespace fabricproof {
namespace {

std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s)
    if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

[[noreturn]] void malformed(const std::string& what) { throw LocatedError("", what); }

}  // namespace

PciVpd parse_pci_vpd(std::string_view bytes) {
  PciVpd out;
  size_t pos = 0;
  bool any = false;
  while (pos < bytes.size()) {
    const auto tag = static_cast<uint8_t>(bytes[pos]);
    if (tag == 0x78 || tag == 0x79) {  // small resource: end tag
      if (!any) malformed("VPD ends before any field");
      return out;
    }
    if (tag == 0xff || tag == 0x00) {
      if (!any) malformed("no VPD (the device answers padding)");
      return out;
    }
    if (!(tag & 0x80)) malformed(fmt::format("unexpected small resource tag 0x{:02x} at byte {}", tag, pos));
    if (pos + 3 > bytes.size()) malformed(fmt::format("truncated resource header at byte {}", pos));
    const size_t length = static_cast<uint8_t>(bytes[pos + 1]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[pos + 2])) << 8);
    const size_t body = pos + 3;
    if (body + length > bytes.size()) malformed(fmt::format("resource 0x{:02x} at byte {} claims {} bytes, {} left", tag, pos, length, bytes.size() - body));
    const auto data = bytes.substr(body, length);
    if (tag == 0x82) {
      out.product_name = printable(data);
    } else if (tag == 0x90 || tag == 0x91) {  // VPD-R (read-only) and VPD-W: keyword, length, data
      for (size_t k = 0; k + 3 <= data.size();) {
        const auto key = data.substr(k, 2);
        const size_t n = static_cast<uint8_t>(data[k + 2]);
        if (k + 3 + n > data.size()) malformed(fmt::format("keyword {} at byte {} overruns its resource", printable(key), body + k));
        const auto value = data.substr(k + 3, n);
        if (tag == 0x90 && key == "PN") out.part_number = printable(value);
        else if (tag == 0x90 && key == "SN") out.serial_number = printable(value);
        else if (tag == 0x90 && key == "EC") out.engineering_change = printable(value);
        else if (tag == 0x90 && key == "RV" && n >= 1) {
          uint8_t sum = 0;  // from byte 0 through the checksum byte (the first byte of RV's data)
          for (size_t i = 0; i <= body + k + 3; ++i) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(bytes[i]));
          out.checksum_ok = sum == 0;
        }
        k += 3 + n;
      }
    }
    any = true;
    pos = body + length;
  }
  if (!any) malformed("empty VPD");
  return out;
}

}  // namespace fabricproof
