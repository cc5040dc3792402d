#!/usr/bin/env bash
# Runs on the GPU machine, after prepare.sh here: compute-sanitizer over
# every conformance kernel. memcheck over every backend's conformance
# bundle; racecheck and synccheck over sm_90a's (the warp-specialized
# kernels: mbarriers, named barriers, TMA). One process per tool and bundle
# (device_runner --workloads=conformance, which checks every result too),
# all at once, each under a time limit. Logs to $OUT/sanitize/; one line per
# run to stdout; exit status non-zero when any run found an error, failed a
# check or did not finish.
#
#   bash .device/sanitize.sh                       # everything
#   TARGETS="sm_80" TOOLS="memcheck" bash .device/sanitize.sh
set -uo pipefail
out="${OUT:-out}/sanitize"
targets="${TARGETS:-sm_60 sm_70 sm_80 sm_90a}"
tools="${TOOLS:-memcheck racecheck synccheck}"
limit="${LIMIT:-420}"
mkdir -p "$out"
runs=()
for tool in $tools; do
  for target in $targets; do
    # racecheck and synccheck: the kernels with warp roles and barriers.
    [ "$tool" != memcheck ] && [ "$target" != sm_90a ] && continue
    bundle=.device/bundles/$target.conformance.pb
    [ -f "$bundle" ] || { echo "sanitize: no $bundle" >&2; continue; }
    log="$out/$tool.$target.log"
    timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 50 \
      ./.device/device_runner --workloads=conformance "$bundle" >"$log" 2>&1 &
    runs+=("$!:$tool:$target")
  done
done
status=0
for run in "${runs[@]}"; do
  IFS=: read -r pid tool target <<<"$run"
  wait "$pid"
  rc=$?
  log="$out/$tool.$target.log"
  # memcheck and synccheck close with "ERROR SUMMARY: n errors", racecheck
  # with "RACECHECK SUMMARY: n hazards displayed (e errors, w warnings)".
  summary=$(grep -oE '(ERROR SUMMARY: [0-9]+ errors?|RACECHECK SUMMARY: [0-9]+ hazards? displayed \([0-9]+ errors?, [0-9]+ warnings?\))' "$log" | tail -n1)
  # device_runner's own closing line: "<n> passed, <m> failed".
  checks=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1)
  case $rc in
    0) verdict=clean ;;
    99) verdict=ERRORS ;;
    124) verdict=TIMEOUT ;;
    *) verdict="FAILED (exit $rc)" ;;
  esac
  ((rc != 0)) && status=1
  printf '%-10s %-7s %-16s %-26s %s\n' "$tool" "$target" "$verdict" "${summary:-no summary}" \
    "${checks:-no checks line}"
done
exit "$status"
