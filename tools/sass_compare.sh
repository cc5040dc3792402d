#!/usr/bin/env bash
# Compares the machine code of two directories written by tools/ptx_dump.sh:
# every kernel whose PTX text differs is assembled on both sides with ptxas
# and disassembled with cuobjdump, and the instruction lists (addresses and
# encodings dropped) compared. Where ptx_compare.py reports a changed PTX
# text or mix, identical SASS shows that the change cannot alter the
# kernel's speed or behaviour on that architecture.
#
#   tools/sass_compare.sh BEFORE_DIR AFTER_DIR [ARCH]
#
# PTX for sm_60 / sm_70 is assembled for ARCH (default sm_90: what the
# driver's JIT does on an H200), every other kernel for its own target.
# Needs cuobjdump and nvdisasm 13 (no GPU): on PATH, or from PyPI:
#   python3 -m pip install --target /opt/tessera/cuobjdump nvidia-cuda-cuobjdump==13.*
#   python3 -m pip install --target /opt/tessera/nvdisasm nvidia-cuda-nvdisasm==13.*
# (this script looks there too). Exit status 1 when any kernel's SASS differs.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: tools/sass_compare.sh BEFORE_DIR AFTER_DIR [ARCH]" >&2
  exit 2
fi
before=$1 after=$2 legacy=${3:-sm_90}
PATH=$PATH:/opt/tessera/cuobjdump/nvidia/cu13/bin:/opt/tessera/nvdisasm/nvidia/cu13/bin
for tool in cuobjdump nvdisasm; do
  command -v $tool >/dev/null || { echo "sass_compare: no $tool (see this script's header)" >&2; exit 2; }
done
ptxas=/usr/local/cuda/bin/ptxas
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sass() {  # sass PTX ARCH: the instruction list of PTX assembled for ARCH
  "$ptxas" -arch="$2" "$1" -o "$work/k.cubin" 2>/dev/null || return 1
  cuobjdump -sass "$work/k.cubin" | grep -E '^\s+/\*[0-9a-f]{4}\*/' |
    sed -E 's#/\*[0-9a-f]{4}\*/##; s#;.*##; s/ +/ /g'
}
same=0 different=0 failed=0
while read -r kernel; do
  [ -f "$after/$kernel" ] || continue
  cmp -s "$before/$kernel" "$after/$kernel" && continue
  arch=$(grep -m1 -oE '^\.target sm_[0-9]+a?' "$after/$kernel" | awk '{print $2}')
  case $arch in sm_60 | sm_70) arch=$legacy ;; esac
  if ! sass "$before/$kernel" "$arch" >"$work/before" || ! sass "$after/$kernel" "$arch" >"$work/after" ||
    [ ! -s "$work/after" ]; then
    echo "cannot assemble or disassemble: $kernel ($arch)"
    failed=$((failed + 1))
  elif cmp -s "$work/before" "$work/after"; then
    same=$((same + 1))
  else
    echo "SASS differs: $kernel ($arch): $(wc -l <"$work/before") -> $(wc -l <"$work/after") instructions"
    different=$((different + 1))
  fi
done < <(cd "$before" && find . -name '*.ptx' | sed 's#^\./##' | sort)
echo "sass_compare: of the kernels whose PTX differs, $same have identical SASS, $different differ, $failed could not be compared"
((different == 0 && failed == 0))
