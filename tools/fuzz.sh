#!/usr/bin/env bash
# Builds the libFuzzer targets (bazel build --config=fuzz //fuzz:...) and
# runs each for a while from its seed corpus (fuzz/corpus/<name>/); fails
# if one finds a crash, a sanitizer report, an assertion or a timeout.
#
#   tools/fuzz.sh                     every fuzzer, 20 s each (tools/test.sh)
#   tools/fuzz.sh --long 600          every fuzzer, 10 minutes each
#   tools/fuzz.sh --long 600 bundle   one fuzzer (tile_ir, frontend, bundle, bridge)
#
# New inputs go to a scratch corpus under $FUZZ_OUT (default
# /tmp/tessera-fuzz/<name>/corpus; a short run starts it afresh, a long run
# keeps growing it), findings to $FUZZ_OUT/<name>/ with the log; the seeds
# in the repository stay as they are. A finding is fixed and kept as a
# regression test (a lit case, a gtest, or a seed).
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=20
long=0
if [[ "${1:-}" == "--long" ]]; then
  seconds="${2:?--long needs SECONDS}"
  long=1
  shift 2
fi
names=("$@")
((${#names[@]})) || names=(tile_ir frontend bundle bridge)
out="${FUZZ_OUT:-/tmp/tessera-fuzz}"

targets=(//fuzz:tile_ir_fuzzer //fuzz:frontend_fuzzer //fuzz:bundle_fuzzer //fuzz:bridge_fuzzer)
bazel build --config=fuzz "${targets[@]}" || exit 1
bin="$(bazel info --config=fuzz bazel-bin 2>/dev/null)/fuzz"

# The fuzzers' own defaults (fuzz/sanitizer_options.cc explains them).
export ASAN_OPTIONS="${ASAN_OPTIONS:-allow_user_poisoning=0:detect_leaks=0:detect_odr_violation=0}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

failed=0
for name in "${names[@]}"; do
  case "$name" in
    tile_ir) flags=(-max_len=16384 -timeout=60 -dict=fuzz/tile_ir.dict) ;;
    frontend) flags=(-max_len=512 -timeout=60) ;;
    bundle) flags=(-max_len=65536 -timeout=10) ;;
    bridge) flags=(-max_len=1024 -timeout=10) ;;
    *) echo "fuzz: unknown fuzzer '$name' (tile_ir, frontend, bundle, bridge)" >&2; exit 2 ;;
  esac
  dir="$out/$name"
  ((long)) || rm -rf "$dir/corpus"
  mkdir -p "$dir/corpus"
  log="$dir/log.txt"
  "$bin/${name}_fuzzer" "${flags[@]}" -max_total_time="$seconds" -rss_limit_mb=6144 \
    -print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" "fuzz/corpus/$name" \
    >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  if ((rc == 0)); then
    echo "fuzz: $name ok: ${runs:-?} runs in ${seconds} s"
  else
    failed=1
    echo "fuzz: $name FAILED (exit $rc): see $log; the input is in $dir/"
    grep -m1 -E 'ERROR: |runtime error|Assertion|deadly signal|fuzz target exited' "$log" | sed 's/^/  /'
  fi
done
exit "$failed"
