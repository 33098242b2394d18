#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/*_fuzz.cpp; clang-14 with -fsanitize=fuzzer,address,
# undefined) in build-fuzz/ and runs each one from its committed seed corpus fuzz/corpus/<target>/
# for a bounded time. Exits non-zero when a target reports a finding (a crash, a sanitizer
# report, a failed check, a leak, a timeout or an out-of-memory); the reproducer is left in
# build-fuzz/findings/<target>/ (crash-*, leak-*, timeout-*, oom-*).
#
#   scripts/fuzz.sh                      every target, 60 s each
#   scripts/fuzz.sh --seconds N          N seconds each
#   scripts/fuzz.sh --target gather      one target (npy, registry, gather, cli); repeatable
#   scripts/fuzz.sh --build-only         build, run nothing
#   scripts/fuzz.sh --keep-corpus        add the inputs that found new coverage to
#                                        fuzz/corpus/<target>/ (default: a scratch copy in
#                                        build-fuzz/corpus/<target>/, the committed seeds untouched)
#
# Runs one target at a time, one process, -rss_limit_mb=2048, -timeout=10. The last lines
# of each run (executions, coverage, corpus size) are printed; the whole log is in
# build-fuzz/logs/<target>.log. MULTIGATHER_JOBS sets the build parallelism. CC/CXX may name
# another clang (default clang-14 / clang++-14).
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=60
TARGETS=()
BUILD_ONLY=0
KEEP=0
while (($#)); do
  case $1 in
    --seconds=*) SECONDS_EACH=${1#*=} ;;
    --seconds) SECONDS_EACH=$2; shift ;;
    --target=*) TARGETS+=("${1#*=}") ;;
    --target) TARGETS+=("$2"); shift ;;
    --build-only) BUILD_ONLY=1 ;;
    --keep-corpus) KEEP=1 ;;
    *) echo "fuzz.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
((${#TARGETS[@]})) || TARGETS=(npy registry gather scatter cli)
JOBS=${MULTIGATHER_JOBS:-$(nproc)}
BUILD=build-fuzz
CXX_FUZZ=${CXX:-clang++-14}
CC_FUZZ=${CC:-clang-14}

LAUNCHER=()
command -v ccache >/dev/null 2>&1 && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX_FUZZ" \
  -DCMAKE_C_COMPILER="$CC_FUZZ" -DMULTIGATHER_FUZZ=ON -DMULTIGATHER_CUDA=OFF \
  -DMULTIGATHER_BUILD_TESTS=OFF -DMULTIGATHER_BUILD_BENCHMARKS=OFF -DMULTIGATHER_BUILD_CLI=ON \
  "${LAUNCHER[@]}" >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]/%/_fuzz}"
((BUILD_ONLY)) && exit 0

status=0
for t in "${TARGETS[@]}"; do
  seeds=fuzz/corpus/$t
  if ((KEEP)); then
    corpus=$seeds
  else
    corpus=$BUILD/corpus/$t
    rm -rf "$corpus"; mkdir -p "$corpus"; cp -r "$seeds"/. "$corpus"/
  fi
  findings=$PWD/$BUILD/findings/$t
  mkdir -p "$findings" "$BUILD/logs"
  dict=()
  [[ -f fuzz/$t.dict ]] && dict=(-dict="fuzz/$t.dict")
  echo "=== fuzz $t: ${SECONDS_EACH}s from $seeds ($(ls "$seeds" | wc -l) seeds)"
  if ! "$BUILD/fuzz/${t}_fuzz" "$corpus" "${dict[@]}" -max_total_time="$SECONDS_EACH" \
        -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$findings/" >"$BUILD/logs/$t.log" 2>&1; then
    echo "fuzz.sh: target $t reported a finding; log: $BUILD/logs/$t.log, reproducer in $findings/" >&2
    tail -n 40 "$BUILD/logs/$t.log" >&2
    status=1
    continue
  fi
  grep -E '^#[0-9]+.*(DONE|pulse)|stat::number_of_executed_units|stat::peak_rss_mb|cov:' "$BUILD/logs/$t.log" | tail -n 3
done
exit $status
