#!/usr/bin/env bash
# The HTML report in a real headless browser (Debian's chromium): it loads with no console error
# and no network request, and its SVG charts have the cells and points the report's data implies.
# Usage: html_report_browser_test.sh FABRICPROOF REPORT.json OUT_DIR   (exit 77 = skipped)
set -euo pipefail
fabricproof=$1 report=$2 out=$3
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
source "$(dirname "${BASH_SOURCE[0]}")/skip_missing.sh"
[[ -n $browser ]] || skip_missing "no chromium on this machine (scripts/install-deps --browser installs it)"
command -v jq >/dev/null || skip_missing "jq is needed to derive the expected counts"
rm -rf "$out" && mkdir -p "$out"

# Headless, no sandbox (root in CI), every host name unresolvable: a page that tried to fetch
# anything would log a failed request on the console.
load() {  # load PAGE: DOM to $out/dom.html, console lines to $out/console.txt
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --host-resolver-rules="MAP * ~NOTFOUND" \
    --enable-logging=stderr --v=0 --virtual-time-budget=2000 --dump-dom "file://$1" >"$out/dom.html" 2>"$out/stderr.txt" || true
  grep -E ':CONSOLE[:(]' "$out/stderr.txt" >"$out/console.txt" || true
}

# The console check must be able to fail: a page with a script error is caught.
printf '<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>\n' >"$out/broken.html"
load "$out/broken.html"
if [[ ! -s $out/console.txt ]]; then echo "FAIL: the console check did not see a deliberate script error"; cat "$out/stderr.txt"; exit 1; fi

"$fabricproof" report "$report" --format html --out "$out" >/dev/null
load "$out/report.html"
fail=0
if [[ -s $out/console.txt ]]; then echo "FAIL: console messages:"; cat "$out/console.txt"; fail=1; fi
if ! grep -q '</html>' "$out/dom.html"; then echo "FAIL: the browser returned no document"; tail -5 "$out/stderr.txt"; exit 1; fi

count() { grep -o "$1" "$out/dom.html" | wc -l; }
expect() {  # expect WHAT ACTUAL WANTED
  if [[ $2 -ne $3 ]]; then echo "FAIL: $1: $2 in the page, $3 expected"; fail=1; else echo "ok: $1: $2"; fi
}
cells=$(jq '[.verbs.matrix // {} | to_entries[] | select(.key != "labels") | .value.cells | length as $n | $n * ($n - 1)] | add // 0' "$report")
points=$(jq '[.collectives.results // [] | .[].rows | length] | add // 0' "$report")
bars=$(jq '[.collectives.scaling // [] | .[].groups[] | select(.busbw_GBps != null)] | length' "$report")
ranks=$(jq '[.nccl_audit.connections // [] | .[].rank] | unique | length' "$report")
heatmaps=$(jq '[.verbs.matrix // {} | keys[] | select(. != "labels")] | length' "$report")
flagged_json=$(jq '[.findings[] | select((.verdict == "fail" or .verdict == "error" or .verdict == "warn") and (.id | startswith("verbs_")) and (.subject | test(" -> | <-> ")))] | length' "$report")
expect "heatmaps (svg.heatmap)" "$(count '<svg class="heatmap"')" "$heatmaps"
expect "verbs matrix cells (rect.cell)" "$(count 'class="cell')" "$cells"
expect "busbw points (circle.pt)" "$(count 'class="pt"')" "$points"
expect "scaling bars (rect.bar)" "$(count 'class="bar"')" "$bars"
expect "NCCL audit rows (ranks)" "$(count '<tr class="nccl-rank">')" "$ranks"
# Every failing pair finding marks at least one cell (a bidirectional one marks two).
flagged=$(count 'class="cell[a-z ]*flagged')
if [[ $flagged_json -gt 0 && $flagged -lt $flagged_json ]]; then echo "FAIL: $flagged flagged cells for $flagged_json failing pair findings"; fail=1; else echo "ok: flagged cells: $flagged"; fi
# Self-contained: no external resource (the SVG namespace URI is an identifier, not a fetch).
if grep -Eo '(src|href)="(https?:)?//[^"]*' "$out/report.html"; then echo "FAIL: external references above"; fail=1; else echo "ok: no external references"; fi
# The findings table is sortable and starts worst first.
expect "sortable findings rows" "$(count '<tr class="finding">')" "$(jq '.findings | length' "$report")"

# Sorting works in the browser: one click on "verdict" puts the worst first, a second the best.
sed 's#</body></html>#<script>var th=document.querySelector("\#findings-table th");function first(){return document.querySelector("\#findings-table tbody tr td").dataset.sort;}th.click();document.body.dataset.one=first();th.click();document.body.dataset.two=first();</script></body></html>#' \
  "$out/report.html" >"$out/sort-check.html"
load "$out/sort-check.html"
worst=$(jq '[.findings[].verdict | {"pass":0,"skip":1,"warn":2,"not_proven":3,"fail":4,"error":5}[.]] | max' "$report")
expect "worst verdict first after one click" "$(grep -o 'data-one="[0-9]"' "$out/dom.html" | grep -o '[0-9]' || echo -1)" "$worst"
expect "best verdict first after two clicks" "$(grep -o 'data-two="[0-9]"' "$out/dom.html" | grep -o '[0-9]' || echo -1)" 0
[[ -s $out/console.txt ]] && { echo "FAIL: console messages while sorting:"; cat "$out/console.txt"; fail=1; }

timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --host-resolver-rules="MAP * ~NOTFOUND" --window-size=1300,2400 \
  --screenshot="$out/report.png" "file://$out/report.html" >/dev/null 2>&1 || true
[[ -s $out/report.png ]] && echo "screenshot: $out/report.png"
exit $fail
