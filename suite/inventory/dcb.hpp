#pragma once
// The RoCE lossless configuration of a netdev as the kernel's DCB netlink interface (dcbnl) reports
// it: RTM_GETDCB with DCB_CMD_IEEE_GET answers PFC, ETS, the APP table and the DCBX mode in one
// message (linux/dcbnl.h; host-config.md). Decoding is pure: the probe sends the request, this
// reads the answer, and the tests feed it message bytes built per the kernel UAPI.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_optional.hpp"

namespace fabricproof {

struct DcbConfig {
  std::string source;  // how it was read ("dcbnl DCB_CMD_IEEE_GET")
  std::string error;   // why it could not be ("Operation not supported: the driver has no DCB support"); "" when read
  std::optional<int> pfc_enabled;         // bit p set: PFC on priority p
  std::vector<int> prio_tc;               // ETS: priority -> traffic class (8 entries when read)
  std::vector<int> tc_tsa;                // ETS: per class, 0 strict, 1 CBS, 2 ETS, 3 vendor
  std::vector<int> tc_tx_bw;              // ETS: per class, percent
  std::map<int, int> dscp_priority;       // APP table, selector DSCP (5): DSCP -> priority
  std::optional<int> dcbx;                // DCB_CAP_DCBX_* bits (host, LLD-managed, CEE, IEEE, static)
  // mlx5 semantics: the port trusts DSCP exactly when the APP table has DSCP entries.
  bool trusts_dscp() const { return !dscp_priority.empty(); }
};
FABRICPROOF_JSON(DcbConfig, source, error, pfc_enabled, prio_tc, tc_tsa, tc_tx_bw, dscp_priority, dcbx)

inline constexpr uint16_t kRtmGetDcb = 78;        // RTM_GETDCB
inline constexpr uint8_t kDcbCmdIeeeGet = 21;     // DCB_CMD_IEEE_GET
inline constexpr uint16_t kDcbAttrIfname = 1;     // DCB_ATTR_IFNAME
inline constexpr uint16_t kDcbAttrIeee = 13;      // DCB_ATTR_IEEE (nested)
inline constexpr uint16_t kDcbAttrDcbx = 14;      // DCB_ATTR_DCBX (u8)
inline constexpr uint16_t kDcbAttrIeeeEts = 1;    // struct ieee_ets
inline constexpr uint16_t kDcbAttrIeeePfc = 2;    // struct ieee_pfc
inline constexpr uint16_t kDcbAttrIeeeAppTable = 3;
inline constexpr uint16_t kDcbAttrIeeeApp = 1;    // struct dcb_app
inline constexpr uint8_t kAppSelectorDscp = 5;    // IEEE_8021QAZ_APP_SEL_DSCP

// The request for one netdev: nlmsghdr + dcbmsg + DCB_ATTR_IFNAME.
std::string dcb_request(std::string_view ifname, uint32_t sequence);

// Reads the kernel's answer (one netlink message: RTM_GETDCB, or NLMSG_ERROR with an errno).
// Never throws: a message it cannot read gives a config whose `error` says why.
DcbConfig decode_dcb_reply(std::string_view message);

// "Global tclass=106" (OFED's tc/<port>/traffic_class) -> 106.
std::optional<int> device_traffic_class(const std::string& text);

}  // namespace fabricproof
