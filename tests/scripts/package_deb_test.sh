#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` from this build tree, then its contents, its dependencies (Debian
# package names only: no CUDA or NCCL), and the installed files run from outside the build tree (the
# package unpacked with dpkg-deb -x, as apt would lay it out): --version, `report` on a saved
# report, the man page, and the wrapper finding the installed binary by default.
#   package_deb_test.sh BUILD_DIR WORK_DIR
set -u
build=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/skip_missing.sh"
command -v dpkg-deb >/dev/null && command -v dpkg-shlibdeps >/dev/null ||
  skip_missing "no dpkg-deb/dpkg-shlibdeps (Debian's dpkg-dev)"
rm -rf "$work" && mkdir -p "$work"
failures=0
check() {  # check DESCRIPTION COMMAND...: one line per check, a failure counted
  if "${@:2}" >"$work/check.out" 2>&1; then echo "ok: $1"; else echo "FAILED: $1"; sed 's/^/  /' "$work/check.out"; failures=$((failures + 1)); fi
}

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; echo "FAILED: cpack"; exit 1; }
debs=("$work"/fabricproof_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || { echo "FAILED: expected one fabricproof_*.deb in $work"; ls "$work"; exit 1; }
deb=${debs[0]}
echo "package: $(basename "$deb") ($(du -h "$deb" | cut -f1))"

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for need in libopenmpi3 libibverbs1 libhwloc15 libfmt9 libc6 libstdc++6 openmpi-bin ibverbs-providers; do
  check "Depends names $need" grep -q "\b$need\b" <<<"$depends"
done
check "Depends names no CUDA or NCCL" bash -c '! grep -Eqi "cuda|nccl" <<<"$1"' _ "$depends"

dpkg-deb -c "$deb" | awk '{print $6}' >"$work/contents"
for f in ./usr/bin/fabricproof ./usr/bin/fabricproof-mpirun ./usr/share/man/man1/fabricproof.1.gz \
         ./usr/share/fabricproof/schemas/report.schema.json ./usr/share/fabricproof/hostfiles/localhost \
         ./usr/share/fabricproof/schemas/spec.schema.json ./usr/share/fabricproof/specs/mission-4x4-h100-ndr.json \
         ./usr/share/doc/fabricproof/README.md ./usr/share/doc/fabricproof/CHANGELOG.md ./usr/share/doc/fabricproof/lab.md; do
  check "package holds $f" grep -qx "$f" "$work/contents"
done

root="$work/root"
dpkg-deb -x "$deb" "$root"
bin="$root/usr/bin/fabricproof"
cd /  # outside the build tree and the checkout
check "the binary needs no library outside Debian's packages" bash -c '! ldd "$1" | grep -E "not found|/usr/local/cuda"' _ "$bin"
check "the binary has no RPATH/RUNPATH into the build tree" bash -c '! readelf -d "$1" | grep -Ei "rpath|runpath"' _ "$bin"
check "fabricproof --version" bash -c '"$1" --version | grep -qx "fabricproof [0-9.]*"' _ "$bin"
check "fabricproof report on a saved report" bash -c '"$1" report "$2" --out "$3" >/dev/null; [ -s "$3/report.md" ] && grep -q "Verdict" "$3/report.md"' \
  _ "$bin" "$here/../fixtures/reports/lab-rate-fault.json" "$work/report"
check "the installed example specs validate" bash -c '"$1" spec check "$2/usr/share/fabricproof/specs/dgx-h100-8x8.json" | grep -q "8 node(s)"' _ "$bin" "$root"
check "the man page documents the run command" bash -c 'zcat "$1" | grep -q "^\.SH COMMAND: run"' _ "$root/usr/share/man/man1/fabricproof.1.gz"
check "the wrapper finds the installed binary" bash -c \
  'env -u FABRICPROOF_BIN "$1/usr/bin/fabricproof-mpirun" --hostfile "$1/usr/share/fabricproof/hostfiles/localhost" --dry-run -- run --out /tmp/x | grep -q "$1/usr/bin/fabricproof run"' _ "$root"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "package checks passed"
