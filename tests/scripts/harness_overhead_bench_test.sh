#!/usr/bin/env bash
# scripts/bench/harness-overhead: the verdict is two-sided and fails closed.
# - The kept runs of 2026-12-07 (docs/bench-runs) summarised again with --from give the figures
#   docs/benchmarks.md quotes: with 30 pairs, 64 MiB met and 1 MiB inside the goal but its interval
#   not, so not shown; the run of the defaults after the thread-level change met at both, exit 0.
# - The same runs with fabricproof's times scaled by 0.79 (the non-blocking engine's "21% faster" at
#   64 MiB): NOT met, exit 1. A goal checked one way passed that.
# - Two pairs only: no 95% interval, so a ratio inside the goal is "not shown", exit 1.
# - Runs where a side gave no figure: counted, named, exit 1; a side with none: no ratio at all.
# - Live, under mpirun: a bare loop that fails, and a fabricproof that fails, are each named per run
#   and fail the benchmark; bad options and a bad --from line are errors naming them (exit 2).
#   harness_overhead_bench_test.sh BUILD_DIR WORK_DIR
set -u
build=$1 work=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
bench=$repo/scripts/bench/harness-overhead
kept=$repo/docs/bench-runs/harness-overhead-2026-12-07T0104-30-pairs.txt
. "$repo/tests/scripts/skip_missing.sh"
command -v jq >/dev/null || skip_missing "no jq (the benchmark reads fabricproof's report with it)"
command -v mpirun >/dev/null || skip_missing "no mpirun (Open MPI)"
rm -rf "$work" && mkdir -p "$work/tmp"
export TMPDIR=$work/tmp
failures=0
check() { if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; failures=$((failures + 1)); fi; }
summary() {  # NAME FILE: runs --from FILE, output in NAME.out, exit status in NAME.rc
  "$bench" --from "$2" >"$work/$1.out" 2>&1
  echo $? >"$work/$1.rc"
  cat "$work/$1.out"
}
rc() { cat "$work/$1.rc"; }

check "the kept run has 60 pairs (30 at 1 MiB, 30 at 64 MiB)" test "$(grep -c '^[0-9]' "$kept")" -eq 60
summary kept "$kept"
check "the kept run: exit 1 (1 MiB not shown)" test "$(rc kept)" -eq 1
check "1 MiB as docs/benchmarks.md quotes: inside the goal, its interval not" grep -qx '  1M: 30 of 30 pair(s) with both figures; median bare 284.7 us, fabricproof 279.3 us; fabricproof/bare per pair: median 0.997, 95% interval 0.950 .. 1.017 (geometric mean 0.956, 0.893 .. 1.024) -> goal 0.97 .. 1.03: not shown, the interval reaches outside it (more runs)' "$work/kept.out"
check "64 MiB as docs/benchmarks.md quotes: met" grep -qx '  64M: 30 of 30 pair(s) with both figures; median bare 39152.7 us, fabricproof 39430.1 us; fabricproof/bare per pair: median 0.996, 95% interval 0.980 .. 1.026 (geometric mean 0.999, 0.982 .. 1.017) -> goal 0.97 .. 1.03: met' "$work/kept.out"
grep -E '^67108864 ' "$kept" >"$work/64M.txt"
summary 64M "$work/64M.txt"
check "64 MiB alone: exit 0" test "$(rc 64M)" -eq 0

# The run of today's defaults after the thread-level change: met at both sizes, exit 0.
summary after "$repo/docs/bench-runs/harness-overhead-2026-12-07T0153-single-defaults.txt"
check "the defaults' run after the change: exit 0" test "$(rc after)" -eq 0
check "the defaults' run: 300 pairs at 1 MiB, met" grep -q '^  1M: 300 of 300 pair(s) with both figures; .* median 1.006, 95% interval 0.996 .. 1.020 .* -> goal 0.97 .. 1.03: met$' "$work/after.out"
check "the defaults' run: 60 pairs at 64 MiB, met" grep -q '^  64M: 60 of 60 pair(s) with both figures; .* median 1.006, 95% interval 0.999 .. 1.012 .* -> goal 0.97 .. 1.03: met$' "$work/after.out"

awk '{ $4 = sprintf("%.3f", $4 * 0.79); print }' "$kept" >"$work/faster.txt"
summary faster "$work/faster.txt"
check "21% faster than the bare loop: exit 1" test "$(rc faster)" -eq 1
check "21% faster than the bare loop: NOT met at both sizes" test "$(grep -c 'per pair: median 0\.7[89][0-9], .* -> goal 0.97 .. 1.03: NOT met$' "$work/faster.out")" -eq 2

grep -E '^[0-9]+ [12] ' "$kept" >"$work/two.txt"
summary two "$work/two.txt"
check "two pairs: exit 1" test "$(rc two)" -eq 1
check "two pairs: no interval, no claim either way" test "$(grep -c 'no 95% interval (fewer than 6 pairs) .* -> goal 0.97 .. 1.03: not shown without an interval (more runs)$' "$work/two.out")" -eq 2

awk '$1 == 1048576 && $2 <= 3 { $3 = "-" } $1 == 67108864 && $2 == 7 { $4 = "-" } { print }' "$kept" >"$work/holes.txt"
summary holes "$work/holes.txt"
check "runs without a figure: exit 1" test "$(rc holes)" -eq 1
check "pairs without a figure: counted and failing the size" grep -q '^  1M: 27 of 30 pair(s) with both figures; .* -> goal 0.97 .. 1.03: NOT met: 3 pair(s) without a figure (the others: not shown, .*)$' "$work/holes.out"
check "one pair without a figure fails a size otherwise met" grep -q '^  64M: 29 of 30 pair(s) with both figures; .* -> goal 0.97 .. 1.03: NOT met: 1 pair(s) without a figure (the others: met)$' "$work/holes.out"

awk '{ $3 = "-"; print }' "$kept" >"$work/none.txt"
summary none "$work/none.txt"
check "a side without figures: exit 1, no ratio" bash -c '[ "$1" -eq 1 ] && [ "$(grep -c "; no ratio -> goal 0.97 .. 1.03: NOT met$" "$2")" -eq 2 ] && ! grep -q "fabricproof/bare" "$2"' _ "$(rc none)" "$work/none.out"

# Live: the bare loop replaced by /bin/false, then fabricproof by it; 4 KiB, 2 pairs.
quick=(--reps 2 --sizes 4K --iters 20 --warmup 2)
"$bench" "${quick[@]}" --bare /bin/false >"$work/bare.out" 2>&1
status=$?
cat "$work/bare.out"
check "a failing bare loop: exit 1" test "$status" -eq 1
check "a failing bare loop: named in each run, with what mpirun said" test "$(grep -c '^    bare gave no figure (exit [1-9][0-9]*: .*)$' "$work/bare.out")" -eq 2
check "a failing bare loop: fabricproof still measured" test "$(grep -cE '^ +4K run +[12]: bare +- us +fabricproof +[0-9.]+ us$' "$work/bare.out")" -eq 2
mkdir -p "$work/fake/bench" && ln -s /bin/false "$work/fake/fabricproof" && ln -s "$build/bench/bare-allreduce" "$work/fake/bench/bare-allreduce"
FABRICPROOF_BUILD_DIR=$work/fake "$bench" "${quick[@]}" >"$work/fp.out" 2>&1
status=$?
cat "$work/fp.out"
check "a failing fabricproof: exit 1" test "$status" -eq 1
check "a failing fabricproof: named in each run, no report" test "$(grep -c '^    fabricproof gave no figure (exit [1-9][0-9]*, no report.*)$' "$work/fp.out")" -eq 2

"$bench" --reps 3 >"$work/odd.out" 2>&1
check "an odd --reps: exit 2, named" bash -c '[ "$1" -eq 2 ] && grep -qx "harness-overhead: --reps .3. is not even (the order of each pair alternates)" "$2"' _ $? "$work/odd.out"
"$bench" --sizes "1M lots" >"$work/size.out" 2>&1
check "a size that is not one: exit 2, named" bash -c '[ "$1" -eq 2 ] && grep -qx "harness-overhead: --sizes: .lots. is not a size (1M, 64M, 4096)" "$2"' _ $? "$work/size.out"
printf '1048576 1 250.0 251.0\n1048576 2 fast 251.0\n' >"$work/bad.txt"
"$bench" --from "$work/bad.txt" >"$work/bad.out" 2>&1
check "a bad --from line: exit 2, file and line named" bash -c '[ "$1" -eq 2 ] && grep -q "^harness-overhead: --from .*bad.txt: line 2 is not " "$2"' _ $? "$work/bad.out"
printf '1048576 1 250.0 251.0\n1048576 2 . 251.0\n' >"$work/dot.txt"
"$bench" --from "$work/dot.txt" >"$work/dot.out" 2>&1
check "a figure that is not a number ('.'): exit 2, line named" bash -c '[ "$1" -eq 2 ] && grep -q "^harness-overhead: --from .*dot.txt: line 2 is not " "$2"' _ $? "$work/dot.out"
printf '4096 %d 250.5 250.0\n' 1 2 3 4 5 6 >"$work/same.txt"
"$bench" --from "$work/same.txt" >"$work/same.out" 2>&1
check "six equal pairs: met at 0.998, no NaN from rounding" bash -c '[ "$1" -eq 0 ] && grep -q "median 0.998, 95% interval 0.998 .. 0.998 (geometric mean 0.998, 0.998 .. 0.998) -> goal 0.97 .. 1.03: met$" "$2"' _ $? "$work/same.out"
check "no temporary file left behind" test -z "$(ls -A "$work/tmp")"
[ $failures -eq 0 ] && echo "all checks passed" || { echo "$failures check(s) failed"; exit 1; }
