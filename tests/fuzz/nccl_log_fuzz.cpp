// libFuzzer target: any bytes through the NCCL log parser, the audit and the JSON output. Built
// and run by scripts/fuzz/nccl-log (clang with -fsanitize=fuzzer,address,undefined).
#include <cstdint>
#include <string_view>

#include "nccl_log/audit.hpp"
#include "nccl_log/parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto facts = fabricproof::nccl::parse_text(text);
  const auto findings = fabricproof::nccl::audit(facts, {true});
  const auto json = fabricproof::json_text(fabricproof::nccl::audit_json(facts, findings));
  const auto table = fabricproof::nccl::audit_table(facts, findings);
  return json.empty() || table.empty() ? 1 : 0;
}
