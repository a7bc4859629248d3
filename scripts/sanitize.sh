#!/usr/bin/env bash
# Builds Fusion with AddressSanitizer and UndefinedBehaviorSanitizer into
# build-sanitize/ (git-ignored) and runs the whole lit suite with it: the
# tools, the passes and the CPU runtime instrumented; the Python tests load
# the runtime with the ASan library preloaded. Any report fails the run
# (UBSan does not recover; leak checking is off: MLIR's tools keep their
# contexts alive until exit by design; see ASAN_OPTIONS below for the one
# check that mixing with the uninstrumented MLIR libraries rules out).
#   scripts/sanitize.sh            # configure, build, run
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSION_SANITIZE_DIR:-$root/build-sanitize}
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
fi
cmake --build "$build" -j "${FUSION_JOBS:-2}"
cmake --build "$build" --target fusion-doc

# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs in code
# instantiated in Fusion's (instrumented) objects, while the same allocator
# (MLIR's uniquer) also hands out memory from Debian's uninstrumented
# libMLIR.so, which never unpoisons it: a false use-after-poison report.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_init_order=1:allow_user_poisoning=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Python is not instrumented: the ASan runtime must come first.
export FUSION_TEST_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
# The embedding test builds a project against the instrumented libraries.
export CFLAGS="$flags" CXXFLAGS="$flags" LDFLAGS="-fsanitize=address,undefined"
/usr/lib/llvm-22/bin/lit -v "$build/test"
