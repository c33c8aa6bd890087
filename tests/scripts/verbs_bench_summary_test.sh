#!/usr/bin/env bash
# scripts/bench/verbs-vs-perftest --from: the summary of a kept size sweep (no lab needed). The
# 10-run sweep of 2026-12-06 15:56 (docs/bench-runs) prints the figures docs/lab.md quotes: the
# pooled line counts its 10 runs once (it counted the first-size split's runs again before); a
# size missing from one run fails the summary (exit 1) and is named; a file that is not there is
# an error naming it (exit 2) that leaves no temporary file behind.
#   verbs_bench_summary_test.sh WORK_DIR
set -u
work=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
bench=$repo/scripts/bench/verbs-vs-perftest
kept=$repo/docs/bench-runs/verbs-sweep-2026-12-06T1556-long-bands-10-runs.txt
rm -rf "$work" && mkdir -p "$work/tmp"
export TMPDIR=$work/tmp
failures=0
check() { if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; failures=$((failures + 1)); fi; }
check "the kept sweep has 230 figures of each tool" test "$(grep -c ' fabricproof ' "$kept")" -eq 230

"$bench" --from "$kept" >"$work/all.txt" 2>&1
status=$?
cat "$work/all.txt"
check "the whole sweep: exit 0" test "$status" -eq 0
check "pooled over its 10 runs, as docs/lab.md quotes" \
  grep -qx 'pooled over 23 size(s) and 10 run(s): ratio 0.979, 95% interval 0.960 .. 0.998 (goal 0.95 .. 1.05)' "$work/all.txt"
check "the first size of each band against the rest" \
  grep -qx 'first against after: 1.091, 95% interval 1.060 .. 1.123 over 10 run(s)' "$work/all.txt"
check "every size is a row with 10 runs" test "$(grep -cE '^ +[0-9]+ +10 ' "$work/all.txt")" -eq 23

grep -v '^3 fabricproof 64 ' "$kept" >"$work/dropped.txt"
"$bench" --from "$work/dropped.txt" >"$work/dropped.out" 2>&1
status=$?
cat "$work/dropped.out"
check "a size missing from one run: exit 1" test "$status" -eq 1
check "the size is marked as dropped" grep -qE '^ +64 +9 .*\(runs dropped\)' "$work/dropped.out"
check "the summary says why it failed" grep -qx 'FAILED: 1 size(s) without a paired figure in every one of the 10 run(s)' "$work/dropped.out"

"$bench" --from "$work/no-such-file.txt" >"$work/missing.out" 2>&1
status=$?
check "a missing file: exit 2, named" bash -c '[ "$1" -eq 2 ] && grep -q "^verbs-vs-perftest: --from .*no-such-file.txt: not a readable file$" "$2"' _ "$status" "$work/missing.out"
"$bench" --from "$kept" --reps 3 --bands nonsense >"$work/bands.out" 2>&1
status=$?
check "a bad --bands after --from: exit 2, named" bash -c '[ "$1" -eq 2 ] && grep -q "^verbs-vs-perftest: --bands is MIN:MAX=N" "$2"' _ "$status" "$work/bands.out"
check "no temporary file left behind" test -z "$(ls -A "$work/tmp")"
[ $failures -eq 0 ] && echo "all checks passed" || { echo "$failures check(s) failed"; exit 1; }
