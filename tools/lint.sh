#!/usr/bin/env bash
# Source checks no compiler warning makes (run by tools/test.sh):
#  - no DenseMap, DenseSet or their Small forms keyed by an integer type:
#    they reserve two key values (for a signed 64-bit key INT64_MAX and
#    INT64_MAX - 1) as empty and tombstone markers, and a user's constant
#    of that value corrupts the map. Key integers with std::unordered_map
#    or std::map instead.
# Prints each offending line and exits 1, or prints "lint: ok".
set -uo pipefail
cd "$(dirname "$0")/.."
dirs=(contract driver backends ir lowering passes frontend runtime tools tests examples fuzz benchmarks)
pattern='(Small)?Dense(Map|Set)<[[:space:]]*(const[[:space:]]+)?(u?int(8|16|32|64)_t|int|unsigned|long|short|size_t|ssize_t|char)[[:space:]]*[,>]'
found=$(grep -rnE "$pattern" --include='*.h' --include='*.cpp' --include='*.cc' "${dirs[@]}" 2>/dev/null)
if [ -n "$found" ]; then
  echo "lint: integer-keyed DenseMap/DenseSet (reserved keys a user's value can hit):"
  echo "$found" | sed 's/^/  /'
  exit 1
fi
echo "lint: ok"
