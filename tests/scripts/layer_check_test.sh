#!/usr/bin/env bash
# The build's layer check (cmake/PureLibraries.cmake) refuses a pure library that links an adapter,
# includes an adapter's header or a hardware header, and accepts one that does neither.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
configure() {  # FAULT -> the configure's output on one line (CMake wraps its messages); status in $status
  status=0
  cmake -S "$repo/tests/cmake/layer_check" -B "$work/$1" -DFABRICPROOF_ROOT="$repo" -DFAULT="$1" >"$work/$1.raw" 2>&1 || status=$?
  tr '\n' ' ' <"$work/$1.raw" | tr -s ' ' >"$work/$1.log"
}
failed=0
configure none
if [ "$status" -ne 0 ] || ! grep -q "layer check: 1 pure libraries" "$work/none.log"; then
  echo "FAIL: a clean pure library was refused"; cat "$work/none.log"; failed=1
fi
for fault in link include hardware; do
  configure "$fault"
  case $fault in
    link) expected="pure library rules links device" ;;
    include) expected="includes demo/device.hpp" ;;
    hardware) expected="includes infiniband/verbs.h" ;;
  esac
  if [ "$status" -eq 0 ] || ! grep -q "$expected" "$work/$fault.log"; then
    echo "FAIL: fault '$fault' was not refused with '$expected'"; cat "$work/$fault.log"; failed=1
  else
    echo "ok: fault '$fault' refused ($expected)"
  fi
done
exit "$failed"
