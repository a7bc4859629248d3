#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs the
# packages, builds, runs every lit test, and ends with "N passed, M failed".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSION_BUILD_DIR:-$root/build}

"$root/scripts/install-deps.sh"
# Everything (tools, runtimes), then the generated references the docs test
# compares against.
"$root/scripts/build.sh"
"$root/scripts/build.sh" fusion-doc

log=$(mktemp)
status=0
/usr/lib/llvm-22/bin/lit -v "$build/test" 2>&1 | tee "$log" || status=$?

# lit's summary lines ("Passed: N", "Failed: N", ...), as one closing line.
count() { { grep -oP "^\s*($1)\s*:\s*\K[0-9]+" "$log" || true; } | awk '{ s += $1 } END { print s + 0 }'; }
passed=$(count 'Passed|Expectedly Failed')
failed=$(count 'Failed|Unresolved|Timed Out|Unexpectedly Passed')
skipped=$(count 'Unsupported')
rm -f "$log"
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
exit "$status"
