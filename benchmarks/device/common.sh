# Shared by the Nsight Compute scripts (ncu.sh, ncu_source.sh); sourced, not run.

# The ncu binary: on PATH, or the newest under /opt/nvidia/nsight-compute;
# fails, saying so, where there is none.
find_ncu() {
  local ncu
  ncu=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)
  [ -n "$ncu" ] || { echo "ncu: not found" >&2; return 1; }
  echo "$ncu"
}

# How many launches of a kernel to skip to profile one warm launch at a GEMM
# benchmark shape: device_runner's benchmark workload runs 2048^3, 4096^3,
# 8192^3, 3000x5000x4000 and 8192x8192x1000 in that order, each shape 1
# check, 5 warm-ups and 50 timed launches (56), and the launch picked is the
# fifth of its shape. A square size is written once (4096); fails on others.
launch_skip() {
  local index
  case "$1" in
    2048) index=0 ;; 4096) index=1 ;; 8192) index=2 ;;
    3000x5000x4000) index=3 ;; 8192x8192x1000) index=4 ;; *) return 1 ;;
  esac
  echo $((index * 56 + 4))
}

# profile_launch SIZE: "SKIP FLAGS" for one warm launch at SIZE: a benchmark
# shape (launch_skip, no flags) or, for a plain GEMM, any MxNxK, which
# device_runner then runs alone (--gemm-shapes, the fifth launch). Fails on
# anything else.
profile_launch() {
  local skip
  if skip=$(launch_skip "$1"); then
    echo "$skip"
  elif [[ "$1" =~ ^[0-9]+x[0-9]+x[0-9]+$ ]]; then
    echo "4 --gemm-shapes=$1"
  else
    return 1
  fi
}
