#!/usr/bin/env bash
# The README's commands still work: each `fabricproof ...` line of its code blocks that needs no
# cluster runs here on the repository's fixtures (its paths replaced: the factory report is the
# real lab report, nccl.log a real fallback log), and the `run` lines of the cluster examples
# (mpirun, Slurm, the uplink) run here as one process with their options unchanged: none may be
# refused as bad input (exit 2), and each writes its report. A line the test looks for and does
# not find in the README fails the test: the README changed, and this test with it.
#   readme_commands_test.sh FABRICPROOF_BINARY WORK_DIR
set -u
bin=$1 work=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
readme="$repo/README.md"
rm -rf "$work" && mkdir -p "$work/reports/factory" "$work/specs" "$work/bin"
ln -s "$bin" "$work/bin/fabricproof"  # the README's `fabricproof`: the build's binary
cp -r "$repo/specs" "$repo/hostfiles" "$work/"
cp "$repo/tests/fixtures/reports/lab-rate-fault.json" "$work/reports/factory/report.json"
cp "$repo/tests/fixtures/nccl/mixed-fallback-per-rank/"*.log "$work/" && cat "$work"/nccl.*.log >"$work/nccl.log"
: >"$work/mpirun-stderr.log"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The README's line that starts with `$1` (inside a code block), without its trailing comment.
readme_line() {
  awk -v start="$1" '/^```/ { inside = !inside; next } inside && index($0, start) == 1 { sub(/[[:space:]]+#.*$/, ""); print; exit }' "$readme"
}

# Runs one README command in the work directory (`fabricproof` is the build's binary there);
# `allowed` exit codes, else a failure naming the line.
run_line() {
  local line=$1 allowed=$2 rc
  [ -n "$line" ] || { fail "a README command this test runs is gone (update tests/scripts/readme_commands_test.sh)"; return; }
  (cd "$work" && PATH="$work/bin:$PATH" timeout 180 bash -c "$line" >"$work/last.out" 2>&1); rc=$?
  if [[ " $allowed " == *" $rc "* ]]; then echo "ok   exit $rc: $line"; else fail "exit $rc (allowed: $allowed): $line"; tail -5 "$work/last.out"; fi
}

# The cluster spec: drafted from the factory report, then checked.
run_line "$(readme_line 'fabricproof spec draft')" "0"
[ -s "$work/specs/acme-4x4.json" ] || fail "spec draft wrote no specs/acme-4x4.json"
run_line "$(readme_line 'fabricproof spec check')" "0"
# Finalising a run from outside (the launcher's words), every format: the factory report as a run
# that stopped in the verbs phase left it (in flight, no finish).
python3 - "$work/reports/factory/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
report["verdict"] = "incomplete"
report.pop("finished_at", None)
report["in_flight"] = {"phase": "verbs", "step": "round 2 of 3", "since": report["started_at"]}
json.dump(report, open(sys.argv[1] + ".unfinished", "w"))
PY
cp "$work/reports/factory/report.json" "$work/factory-report.json"
mv "$work/reports/factory/report.json.unfinished" "$work/reports/factory/report.json"
run_line "$(readme_line 'fabricproof report --finalize')" "0 1 2"
for f in report.json report.md report.prom; do [ -s "$work/reports/factory/$f" ] || fail "report --finalize wrote no $f"; done
grep -q '"run_incomplete"' "$work/reports/factory/report.json" || fail "the finalised report does not say the run did not finish"
cp "$work/factory-report.json" "$work/reports/factory/report.json"
# The NCCL log audit (this log falls back to NET/Socket: exit 1).
run_line "$(readme_line 'fabricproof nccl-audit')" "1"

# A one-process run's report was written and holds no bad-input finding (the exit code alone does
# not tell: 2 is also an error verdict, as an unreachable uplink target here).
accepted() {  # REPORT_DIR
  [ -s "$work/$1/report.json" ] || { fail "$1: no report written"; return; }
  if grep -qE '"id": *"(command_line|profile|spec)"' "$work/$1/report.json"; then fail "$1: the input was refused"; grep -E '"(command_line|profile|spec)"' -A3 "$work/$1/report.json" | head -5; fi
}

# The profile example, loaded by a one-process run: its name reaches the report.
profile=$(awk '/^```/ { inside = !inside; next } inside && /"fabricproof.profile\/1"/ { print; exit }' "$readme")
[ -n "$profile" ] || fail "the README's profile example is gone"
printf '%s\n' "$profile" >"$work/site-a.json"
run_line "fabricproof run --profile site-a.json --phases inventory --out reports/profile" "0 1 3"
accepted reports/profile
grep -q '"name": *"site-a"' "$work/reports/profile/report.json" 2>/dev/null || fail "the profile example did not load (no site-a in the report)"

# The `run` options of the cluster examples, as one process here: parsed, judged, reported.
options_of() { sed -E 's/.* -- run //; s/.*fabricproof\.sbatch //; s/--out [^ ]+//'; }
mpirun_line=$(readme_line 'scripts/fabricproof-mpirun --hostfile hostfiles/cluster-4x4')
sbatch_line=$(readme_line 'sbatch ')
uplink_line=$(awk '/^```/ { inside = !inside; next } inside && /-- run .*--phases inventory,uplink/ { getline more; sub(/\\$/, ""); print $0 more; exit }' "$readme")
n=0
for line in "$mpirun_line" "$sbatch_line" "$uplink_line"; do
  n=$((n + 1))
  [ -n "$line" ] || { fail "cluster example $n is gone from the README"; continue; }
  # What is checked is that the options are taken; the sweep's top size is not (Localhost tests
  # the sweep): without --max-bytes, one rank's allreduce up to 4 GiB took a minute of the CI.
  extra=""
  [[ $line == *--max-bytes* ]] || extra="--max-bytes 1M"
  run_line "fabricproof run $(printf '%s' "$line" | options_of) $extra --out reports/example-$n" "0 1 2 3"
  accepted "reports/example-$n"
done
[ $failures -eq 0 ] && echo "all README commands checked" || echo "$failures failure(s)"
exit $((failures > 0))
