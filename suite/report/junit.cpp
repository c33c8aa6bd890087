#include "report/junit.hpp"

#include <fmt/format.h>

#include <map>

#include "report/markdown.hpp"  // compact()

namespace fabricproof {
namespace {

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  void add(Verdict v) {
    ++tests;
    failures += v == Verdict::fail || v == Verdict::not_proven;
    errors += v == Verdict::error;
    skipped += v == Verdict::skip;
  }
};

std::string counts_attributes(const Counts& c) {
  return fmt::format("tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"", c.tests, c.failures, c.errors, c.skipped);
}

std::string testcase(const std::string& classname, const std::string& name, Verdict v, const std::string& message, const std::string& body) {
  std::string xml = fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", xml_escape(classname), xml_escape(name));
  switch (v) {
    case Verdict::pass: return xml + "/>\n";
    case Verdict::warn:
      return xml + fmt::format(">\n      <system-out>WARN: {}\n{}</system-out>\n    </testcase>\n", xml_escape(message), xml_escape(body));
    case Verdict::skip: return xml + fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xml_escape(message));
    case Verdict::not_proven:  // a CI system must not read "not measured" as a pass
    case Verdict::fail:
    case Verdict::error: {
      const char* tag = v == Verdict::error ? "error" : "failure";
      return xml + fmt::format(">\n      <{} message=\"{}\" type=\"{}\">{}</{}>\n    </testcase>\n", tag, xml_escape(message), to_string(v),
                               xml_escape(body), tag);
    }
  }
  return xml + "/>\n";
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
}

std::string render_junit(const Report& r) {
  std::map<std::string, std::vector<const Finding*>> by_id;  // suites in id order: stable output
  for (const auto& f : r.findings) by_id[f.id].push_back(&f);
  Counts total;
  std::string suites;
  for (const auto& [id, findings] : by_id) {
    Counts c;
    std::string cases;
    for (const auto* f : findings) {
      c.add(f->verdict);
      const std::string message = fmt::format("measured {} / expected {}", compact(f->measured), compact(f->expected));
      const std::string body = f->rule + (f->hint.empty() ? "" : "\nhint: " + f->hint);
      cases += testcase("fabricproof." + id, f->subject, f->verdict, f->verdict == Verdict::skip ? f->rule : message, body);
    }
    suites += fmt::format("  <testsuite name=\"{}\" {}>\n{}  </testsuite>\n", xml_escape(id), counts_attributes(c), cases);
    total.tests += c.tests, total.failures += c.failures, total.errors += c.errors, total.skipped += c.skipped;
  }
  Counts phases;
  std::string phase_cases;
  for (const auto& p : r.phases) {
    // A phase that ran passes here; its findings carry the verdicts. Errors, skips and phases
    // selected but not run (not proven: a failure to CI) say why.
    const Verdict v = p.verdict == Verdict::error || p.verdict == Verdict::skip || p.verdict == Verdict::not_proven ? p.verdict : Verdict::pass;
    phases.add(v);
    phase_cases += testcase("fabricproof.phase", p.name, v, p.reason, p.reason);
  }
  if (!r.finished) {  // CI must not read an unfinished run as green
    phases.add(Verdict::error);
    const std::string where = r.in_flight ? r.in_flight->phase + ": " + r.in_flight->step : "unknown";
    phase_cases += testcase("fabricproof.phase", "run", Verdict::error, "the run has not finished (in flight: " + where + ")", where);
  }
  suites += fmt::format("  <testsuite name=\"phases\" {}>\n{}  </testsuite>\n", counts_attributes(phases), phase_cases);
  total.tests += phases.tests, total.failures += phases.failures, total.errors += phases.errors, total.skipped += phases.skipped;
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"fabricproof {}\" {} timestamp=\"{}\">\n{}</testsuites>\n",
                     r.finished ? std::string(to_string(r.verdict)) : "incomplete", counts_attributes(total), xml_escape(r.started_at), suites);
}

}  // namespace fabricproof
