#!/usr/bin/env bash
# Compile time to PTX on this machine's CPU: each static tessera-compile in
# .device/ctime/bin (static_compiler.sh; `new` and, for a ratio, `old`)
# compiles each example kernel's tile IR in .device/ctime/*.mlir (written by
# `CTIME=1 prepare.sh`) RUNS times, the binaries taking turns, and the table
# gives the minimum and median of `--timing`'s total (the compile, not the
# process start or the file reads) in ms.
#
#   bash .device/compile_time.sh [RUNS]     # default 20
set -euo pipefail
cd "$(dirname "$0")"
runs=${1:-20}
for packed in ctime/bin/*.xz; do
  [ -e "$packed" ] || continue
  python3 -c "import lzma, sys; open(sys.argv[1][:-3], 'wb').write(lzma.open(sys.argv[1]).read())" "$packed"
  chmod +x "${packed%.xz}"
done
bins=()
for b in new old; do [ -x ctime/bin/$b ] && bins+=($b); done
[ ${#bins[@]} -gt 0 ] || { echo "compile_time.sh: no binary in ctime/bin" >&2; exit 1; }
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
printf '| kernel |'; for b in "${bins[@]}"; do printf ' %s min | %s median |' $b $b; done; echo
for file in ctime/*.mlir; do
  name=$(basename "$file" .mlir)
  declare -A times=()
  for i in $(seq "$runs"); do
    for b in "${bins[@]}"; do
      t=$(ctime/bin/$b "$file" --emit=ptx --timing -o /dev/null 2>&1 | grep -o 'PTX: [0-9.]*' | cut -d' ' -f2)
      [ -n "$t" ] || { echo "compile_time.sh: $b failed on $file" >&2; exit 1; }
      times[$b]="${times[$b]:-} $t"
    done
  done
  printf '| %s |' "$name"
  for b in "${bins[@]}"; do
    python3 -c "import statistics as s, sys; v=[float(x) for x in sys.argv[1:]]; print(' %.1f | %.1f |' % (min(v), s.median(v)), end='')" ${times[$b]}
  done
  echo
  unset times
done
