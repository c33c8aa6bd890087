#!/usr/bin/env bash
# scripts/bench/nccl-vs-nccl-tests: a run that gives no figures is a failure, never a comparison.
# Here neither side can give one: nccl-tests' binary is /bin/false, and fabricproof has no GPU (on a
# machine with one, the nccl-tests side still fails). The benchmark must exit 1, name each run that
# gave nothing, count the runs with figures per side (0 of 2), and print no ratio; the same with
# --ranks 2 (both sides under mpirun), and --ranks 0 refused.
#   nccl_bench_fails_closed_test.sh BUILD_DIR WORK_DIR
set -u
build=$1 work=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tests/scripts/skip_missing.sh"
command -v jq >/dev/null || skip_missing "no jq (the benchmark reads fabricproof's report with it)"
rm -rf "$work" && mkdir -p "$work"
FABRICPROOF_BUILD_DIR=$build "$repo/scripts/bench/nccl-vs-nccl-tests" --runs 2 --max 64 --perf /bin/false --out "$work" >"$work/out.txt" 2>&1
status=$?
cat "$work/out.txt"
failures=0
check() { if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; failures=$((failures + 1)); fi; }
check "it exits 1" test "$status" -eq 1
check "each run names the nccl-tests side that gave nothing" test "$(grep -c 'nccl-tests gave no figure' "$work/out.txt")" -eq 2
check "each run names the fabricproof side that gave nothing, with the phase's reason" \
  test "$(grep -c 'fabricproof blocking/cudaMalloc gave no figure (collectives ' "$work/out.txt")" -eq 2
check "the runs with figures are counted: 0 of 2 each side" test "$(grep -c 'figures from 0 of 2 run(s)' "$work/out.txt")" -eq 2
check "no size has a ratio; the summary says none was paired" grep -q '^0 size(s) of 0 below 0.98 or without a paired figure$' "$work/out.txt"
# The same with two ranks under mpirun (gpu-check's run on a machine with several GPUs).
FABRICPROOF_BUILD_DIR=$build "$repo/scripts/bench/nccl-vs-nccl-tests" --ranks 2 --runs 1 --max 64 --perf /bin/false --out "$work/two" >"$work/two.txt" 2>&1
status=$?
cat "$work/two.txt"
check "two ranks: it exits 1" test "$status" -eq 1
check "two ranks: the header says so" grep -q '^allreduce, 2 rank(s), 8 B \.\. 64,' "$work/two.txt"
check "two ranks: fabricproof's side is named with the phase's reason" grep -q 'run 1: fabricproof blocking/cudaMalloc gave no figure (collectives ' "$work/two.txt"
check "two ranks: 0 of 1 runs with figures on each side" test "$(grep -c 'figures from 0 of 1 run(s)' "$work/two.txt")" -eq 2
"$repo/scripts/bench/nccl-vs-nccl-tests" --ranks 0 >"$work/zero.txt" 2>&1
status=$?
check "--ranks 0 is refused (exit 2) with the option named" bash -c '[ "$1" -eq 2 ] && grep -q "^nccl-vs-nccl-tests: --ranks .0. is not a whole number of ranks >= 1$" "$2"' _ "$status" "$work/zero.txt"
[ $failures -eq 0 ] && echo "all checks passed" || { echo "$failures check(s) failed"; exit 1; }
