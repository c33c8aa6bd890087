#!/usr/bin/env bash
# Every kind of report the suite writes validates against schemas/report.schema.json (the published
# contract of fabricproof.report/1): a finished run, a run stopped by bad input, a run whose rank
# was lost, an unfinished run's report and the same report finalised, and the real lab report.
#   report_schema_test.sh FABRICPROOF_BINARY MPIEXEC WORK_DIR
set -u
bin=$1 mpiexec=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
schema="$here/../../schemas/report.schema.json"
python=/usr/bin/python3
source "$(dirname "${BASH_SOURCE[0]}")/skip_missing.sh"
"$python" -c 'import jsonschema' 2>/dev/null || skip_missing "no python3-jsonschema (scripts/install-deps --browser installs it)"
rm -rf "$work" && mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
"$mpiexec" -np 2 "$bin" run --phases inventory,collectives --collective-engine mpi --max-bytes 4K --out "$work/finished" >/dev/null 2>&1
"$bin" run --out "$work/bad-input" --no-such-option >/dev/null 2>&1
FABRICPROOF_INJECT="1:inventory: probing:stop" "$mpiexec" -np 2 -x FABRICPROOF_INJECT "$bin" run --phases inventory --timeout 3 --out "$work/lost" >/dev/null 2>&1
# An unfinished run: a copy of the finished report as a run writes it mid-phase, then finalised.
jq '.verdict = "incomplete" | del(.finished_at) | .in_flight = {"phase": "collectives", "step": "allreduce on 1 node(s): 4K", "since": .started_at}' \
  "$work/finished/report.json" >"$work/incomplete.json"
mkdir -p "$work/finalised" && cp "$work/incomplete.json" "$work/finalised/report.json"
"$bin" report --finalize "$work/finalised" --launcher-status "test" >/dev/null 2>&1
"$python" - "$schema" "$work/finished/report.json" "$work/bad-input/report.json" "$work/lost/report.json" "$work/incomplete.json" \
  "$work/finalised/report.json" "$here/../fixtures/reports/lab-rate-fault.json" <<'PY'
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
validator = Draft202012Validator(schema)
failures = 0
for path in sys.argv[2:]:
    try:
        report = json.load(open(path))
    except Exception as e:
        print(f"FAIL {path}: not written or not JSON: {e}"); failures += 1; continue
    errors = sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path))
    for e in errors[:5]:
        print(f"FAIL {path}: /{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}")
    failures += bool(errors)
    if not errors: print(f"ok   {path} ({report['verdict']})")
# A matrix cell is a figure, null (the diagonal) or why there is none: a failed pair's cell is valid.
failed_pair = json.load(open(sys.argv[-1]))
failed_pair["verbs"]["matrix"]["send_bw"]["cells"][0][1] = {"reason": "error: node2/rxe0 did not answer"}
if validator.is_valid(failed_pair): print("ok   the schema accepts a matrix cell that gives the reason")
else: print("FAIL the schema rejects a matrix cell that gives the reason"); failures += 1
# The schema must reject what is not a report: a wrong verdict, a section of the wrong shape.
bad = json.load(open(sys.argv[2])); bad["verdict"] = "green"
bad2 = json.load(open(sys.argv[2])); bad2["collectives"] = 5
bad3 = json.load(open(sys.argv[-1])); bad3["verbs"]["matrix"]["send_bw"]["cells"][0][1] = {"why": "x"}
for name, doc in (("an unknown verdict", bad), ("collectives: 5", bad2), ("a matrix cell without a reason", bad3)):
    if validator.is_valid(doc): print(f"FAIL the schema accepts {name}"); failures += 1
    else: print(f"ok   the schema rejects {name}")
sys.exit(1 if failures else 0)
PY
status=$?
# The cluster specs shipped in specs/ (and one drafted from the real lab report) validate against
# schemas/spec.schema.json, which refuses what is not a spec.
"$bin" spec draft --from "$here/../fixtures/reports/lab-rate-fault.json" --profile lab-soft-roce --out "$work/drafted.spec.json" >/dev/null 2>&1 ||
  { echo "FAIL spec draft from the lab report"; status=1; }
"$python" - "$here/../../schemas/spec.schema.json" "$here"/../../specs/*.json "$work/drafted.spec.json" <<'PY' || status=1
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
validator = Draft202012Validator(schema)
failures = 0
if len(sys.argv) < 5: print("FAIL fewer specs than the three examples and the draft"); failures += 1
for path in sys.argv[2:]:
    errors = list(validator.iter_errors(json.load(open(path))))
    for e in errors[:3]: print(f"FAIL {path}: /{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}")
    failures += bool(errors)
    if not errors: print(f"ok   {path} is a fabricproof.spec/1")
bad = json.load(open(sys.argv[2])); bad["nodes"] = {"count": 0}
bad2 = json.load(open(sys.argv[2])); bad2["per_node"] = {"rdma_devices": {"count": 4, "link_layer": "Ethernets"}}
bad3 = json.load(open(sys.argv[2])); bad3["colour"] = "blue"
for name, doc in (("a count of 0 nodes", bad), ("an unknown link layer", bad2), ("an unknown key", bad3)):
    if validator.is_valid(doc): print(f"FAIL the spec schema accepts {name}"); failures += 1
    else: print(f"ok   the spec schema rejects {name}")
sys.exit(1 if failures else 0)
PY
exit $status
