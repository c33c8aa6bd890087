# Sourced by the test scripts. A test that cannot run because a tool or package is missing skips
# (exit 77, ctest's SKIP_RETURN_CODE) with the reason; under CI=true it fails instead: .ci/run
# installs every tool these tests use, so a skip there means an install step is broken, and a CI
# that goes green by skipping proves nothing.
skip_missing() {
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: $* (CI=true: .ci/run installs it, so this skip means an install step is broken)"
    exit 1
  fi
  echo "SKIPPED: $*"
  exit 77
}
