#include "app/nccl_audit_command.hpp"

#include <iostream>

#include "nccl_log/audit.hpp"
#include "nccl_log/parser.hpp"

namespace fabricproof::app {

int nccl_audit(const AuditOptionsCli& options) {
  nccl::LogFacts facts;
  try {
    facts = nccl::parse_files(options.files.empty() ? std::vector<std::string>{"-"} : options.files, nccl::ParseOptions{options.multi_node});
  } catch (const std::exception& e) {
    std::cerr << "fabricproof nccl-audit: " << e.what() << "\n";
    return 2;
  }
  const auto findings = nccl::audit(facts, nccl::AuditOptions{options.expect_gdr});
  // Logs carry arbitrary bytes: invalid UTF-8 is replaced, never a reason to fail the audit.
  if (options.json) std::cout << json_text(nlohmann::json(nccl::AuditSection{facts, findings}), 2) << "\n";
  else std::cout << nccl::audit_table(facts, findings);
  return exit_code_for(worst_verdict(findings));
}

}  // namespace fabricproof::app
