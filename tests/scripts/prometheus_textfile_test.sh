#!/usr/bin/env bash
# report.prom as node_exporter's textfile collector reads it: `promtool check metrics` finds no
# problem (names, types, help, units), and the figures of a real lab report are in it.
#   prometheus_textfile_test.sh FABRICPROOF_BINARY REPORT.json WORK_DIR
set -u
bin=$1 report=$2 work=$3
source "$(dirname "${BASH_SOURCE[0]}")/skip_missing.sh"
command -v promtool >/dev/null || skip_missing "no promtool (scripts/install-deps --browser installs Debian's prometheus)"
rm -rf "$work" && mkdir -p "$work"
"$bin" report "$report" --format prom --out "$work" || { echo "FAIL: report --format prom"; exit 1; }
prom="$work/report.prom"
failures=0
out=$(promtool check metrics <"$prom" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -z "$out" ]; then echo "ok   promtool check metrics: no problem"; else echo "FAIL promtool check metrics (exit $rc): $out"; failures=$((failures + 1)); fi
for expected in 'fabricproof_run_verdict{verdict="fail"} 1' 'fabricproof_findings{verdict="fail"}' \
                'fabricproof_verbs_bandwidth_bytes_per_second{dst="node3/rxe0:1",src="node1/rxe0:1",test="write_bw"}' \
                'fabricproof_verbs_latency_seconds{dst=' 'stat="p50"' '# TYPE fabricproof_verbs_bandwidth_bytes_per_second gauge'; do
  if grep -qF "$expected" "$prom"; then echo "ok   has $expected"; else echo "FAIL missing $expected"; failures=$((failures + 1)); fi
done
[ $failures -eq 0 ] && echo "all checks passed" || head -40 "$prom"
exit $((failures > 0))
