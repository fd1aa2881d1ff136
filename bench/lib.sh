# bench/lib.sh — what every benchmark script starts with, sourced as
# `. "$(dirname "$0")/lib.sh"`: strict mode, the C locale (decimal points
# in awk and printf), ROOT (the checkout), BIN (the build: BUILD, default
# build, under ROOT unless absolute) and median (of numbers on stdin, one
# a line).
set -euo pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "${BASH_SOURCE[1]}")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) BIN=$BUILD ;; *) BIN=$ROOT/$BUILD ;; esac
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
