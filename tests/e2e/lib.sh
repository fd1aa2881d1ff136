# tests/e2e/lib.sh — sourced by every e2e script.
#
# Each check prints exactly one of "PASS: name", "FAIL: name (why)" or
# "SKIP: name (why)"; tests/run.sh counts them. Fixture-dependent checks call
# need_fixture first and are skipped (visibly) when it is missing.
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
case "$BUILD" in /*) BIN=$BUILD ;; *) BIN=$ROOT/$BUILD ;; esac
FIX=${GGUFKIT_FIXTURES:-$ROOT/../shared/fixtures}
TMP=${GGUFKIT_TMP:-$(mktemp -d)}
mkdir -p "$TMP"

INSPECT=$BIN/gguf-inspect

CHECKS=0 # checks reported so far, for counted blocks
pass() { CHECKS=$((CHECKS + 1)); echo "PASS: $1"; }
fail() { CHECKS=$((CHECKS + 1)); echo "FAIL: $1${2:+ ($2)}"; }
skip() { CHECKS=$((CHECKS + 1)); echo "SKIP: $1${2:+ ($2)}"; }

# usage_error BIN NAME WANT ARGS...: BIN ARGS exits 2 with one line
# "TOOL: error: ...WANT... (see 'TOOL --help')" on stderr (TOOL is BIN's name).
usage_error() {
    local bin=$1 name=$2 want=$3 tool out rc
    tool=$(basename "$bin")
    shift 3
    out=$("$bin" "$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 2 ] && [[ $out == "$tool: error: "*"$want"*" (see '$tool --help')" ]]; then
        pass "usage: $name"
    else
        fail "usage: $name" "exit $rc: $out"
    fi
}

# fails_cleanly NAME OUT WANT CMD...: PASS when CMD exits 1, leaves no OUT
# and says WANT (a grep pattern) on stdout or stderr.
fails_cleanly() {
    local name=$1 out=$2 want=$3 rc
    shift 3
    rm -f "$out"
    "$@" >"$TMP/bad.log" 2>&1; rc=$?
    if [ $rc -eq 1 ] && [ ! -e "$out" ] && grep -q -- "$want" "$TMP/bad.log"; then pass "$name"
    else fail "$name" "exit $rc, $(tail -1 "$TMP/bad.log")"; fi
}

# refused NAME PREFIX CMD...: CMD (a gguf-run) exits 1 and its error
# message begins "gguf-run: error: PREFIX" (PREFIX literal).
refused() {
    local name=$1 prefix=$2 out rc
    shift 2
    out=$("$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 1 ] && [[ $out == "gguf-run: error: $prefix"* ]]; then
        pass "$name"
    else
        fail "$name" "exit $rc: $out"
    fi
}

# skip_block NAME WHY N: one SKIP line standing for N checks (counted as N
# in a block that need_fixture guards).
skip_block() { CHECKS=$((CHECKS + $3)); echo "SKIP: $1 ($2) [$3 check$([ "$3" = 1 ] || echo s)]"; }

# check NAME CMD...: PASS when CMD succeeds, FAIL otherwise.
check() { local n=$1; shift; if "$@" >/dev/null 2>&1; then pass "$n"; else fail "$n"; fi; }

# need_fixture REL NAME [N]: returns 1 (after printing SKIP) when absent.
# With N, the block of checks it guards holds N checks: when the fixture is
# absent its one SKIP line ends in "[N checks]" and tests/run.sh counts N
# skips; when present, the block must end with fixture_block_end, which
# fails if the block did not report exactly N checks (so N cannot go stale).
BLOCK_NAME='' BLOCK_N=0 BLOCK_AT=0
need_fixture() {
    if [ -e "$FIX/$1" ]; then
        if [ -n "${3:-}" ]; then
            [ -z "$BLOCK_NAME" ] || fail "test block '$BLOCK_NAME' has no fixture_block_end"
            BLOCK_NAME=$2 BLOCK_N=$3 BLOCK_AT=$CHECKS
        fi
        return 0
    fi
    CHECKS=$((CHECKS + 1))
    echo "SKIP: $2 (fixture $1 not found)${3:+ [$3 check$([ "$3" = 1 ] || echo s)]}"
    return 1
}
fixture_block_end() {
    local ran=$((CHECKS - BLOCK_AT))
    if [ -n "$BLOCK_NAME" ] && [ "$ran" -ne "$BLOCK_N" ]; then
        fail "test block '$BLOCK_NAME' reported $ran checks, its need_fixture says $BLOCK_N (update it)"
    fi
    BLOCK_NAME=''
}

# phi3_longrope DIR PCT: a copy of the phi3-rand fixture in DIR laid out as
# Phi-4-mini's rope is: context 8192 over an original 2048 (scale 4), and
# LongRoPE long/short factors for partial_rotary_factor PCT (1 or 0.75:
# 16 or 12 per list). Needs jq.
phi3_longrope() {
    local long short
    if [ "$2" = 1 ]; then
        long='[1,1.418,1.7631,2.0122,2.4266,3.3119,4.7366,6.4698,8.1927,9.7925,11.4654,13.5367,16.1615,19.1821,22.2732,25.2406]'
        short='[1,1.0004,1.0036,1.012,1.0284,1.0556,1.096,1.1524,1.2276,1.324,1.4444,1.5916,1.768,1.9764,2.2196,2.5]'
    else
        long='[1,1.5097,2.1298,2.8373,3.8935,5.6039,8.0371,10.9621,14.0603,17.2186,20.6334,24.63]'
        short='[1,1.0011,1.009,1.0304,1.0721,1.1409,1.2434,1.3866,1.577,1.8216,2.127,2.5]'
    fi
    rm -rf "$1" && cp -r "$FIX/models/phi3-rand" "$1" && chmod -R u+w "$1" &&
        jq ".max_position_embeddings = 8192 | .original_max_position_embeddings = 2048 |
            .partial_rotary_factor = $2 |
            .rope_scaling = {\"type\": \"longrope\", \"long_factor\": $long, \"short_factor\": $short}" \
            "$FIX/models/phi3-rand/config.json" >"$1/config.json"
}

# --- the architecture families -----------------------------------------------
# Test and benchmark family lists come from the registry (gguf-inspect
# --arches), never from a copy of it: a family added there is tested here.

# arch_families: the architectures gguf-inspect --arches lists, one a line,
# in its order (jq reads the JSON listing; without jq, the text table's
# first column, which inspect.sh holds to name the same architectures).
arch_families() {
    if command -v jq >/dev/null; then
        "$INSPECT" --arches --json | jq -r '.architectures | keys_unsorted[]'
    else
        "$INSPECT" --arches | awk 'NR > 2 && !NF { exit } NR > 2 { print $1 }'
    fi
}

# arch_has ARCH FEATURE: whether ARCH's --arches features include FEATURE
# (a word such as experts or convert:mxfp4-experts). Needs jq.
arch_has() {
    "$INSPECT" --arches --json |
        jq -e --arg a "$1" --arg f "$2" '.architectures[$a].features | split(" ") | index($f) != null' >/dev/null 2>&1
}

# The reference set of llama.cpp e21cdc11 that tests an architecture:
# models/NAME (a small random-weight Hugging Face checkpoint) with
# upstream/{convert,quantize,greedy,imatrix}/NAME-* (or the same under
# upstream-next/, see upstream_root). NAME is the architecture's name
# without '-', then "-rand" (gpt-oss: gptoss-rand), but where
# UPSTREAM_SET_EXCEPT says otherwise: llama's set is Mixtral's (llama's
# dense layout is held to c392e50's references in reference/: wp-llama-5m,
# llama3rope-rand); mistral is a second name for llama that no Hugging Face
# class converts to; qwen2's references are c392e50's (reference/convert/
# qwen2-rand-*). An architecture without a set is named here with nothing
# after its '='; inspect.sh fails for one that has neither a set nor a place
# here.
UPSTREAM_SET_EXCEPT="llama=mixtral-rand mistral= qwen2="

# upstream_set ARCH: the name of ARCH's reference set, empty when it has none.
upstream_set() {
    local e
    for e in $UPSTREAM_SET_EXCEPT; do
        if [ "${e%%=*}" = "$1" ]; then echo "${e#*=}"; return; fi
    done
    echo "${1//-/}-rand"
}

# upstream_sets: the reference sets of every architecture in --arches, one a
# line, in the registry's order.
upstream_sets() {
    local a s
    for a in $(arch_families); do
        s=$(upstream_set "$a")
        [ -z "$s" ] || echo "$s"
    done
}

# upstream_root NAME: the folder holding reference set NAME's manifests:
# $FIX/upstream, or $FIX/upstream-next when only that has them (the
# families whose references were made before the code that reads them).
upstream_root() {
    if [ ! -e "$FIX/upstream/convert/$1-f32.json" ] && [ -e "$FIX/upstream-next/convert/$1-f32.json" ]; then
        echo "$FIX/upstream-next"
    else
        echo "$FIX/upstream"
    fi
}

# gguf_meta GGUF [SELECT] / manifest_meta MANIFEST [SELECT]: metadata keys as
# sorted "key type value" lines (the value as JSON, so a string with spaces
# is compared whole) or "key type count sha256" for arrays (the sha256 of
# their bytes). SELECT is a jq condition on a {key, value} entry (default:
# every key). A manifest is gguf_manifest.py's JSON.
gguf_meta() {
    jq -r --slurpfile h <("$INSPECT" --hash --json "$1") \
        "(\$h[0].arrays | map({(.key): .sha256}) | add // {}) as \$sha | .metadata | to_entries[] | select(${2:-true}) |
         \"\(.key) \(.value.type) \(if (.value.type | startswith(\"arr\")) then \"\(.value.count) \(\$sha[.key])\" else (.value.value | tojson) end)\"" \
        <("$INSPECT" --json "$1") | sort
}
manifest_meta() {
    jq -r ".metadata | to_entries[] | select(${2:-true}) |
           \"\(.key) \(.value.type) \(if .value.sha256 then \"\(.value.count) \(.value.sha256)\" else (.value.value | tojson) end)\"" "$1" | sort
}

# imatrix_dump FILE: "name index value" for every f32 value of every tensor;
# FILE may also be a text dump of one (imatrix_text's: "name v0 v1 ..." a
# line per tensor, "#" lines aside)
imatrix_dump() {
    local data
    case "$1" in *.txt)
        awk '!/^#/ { for (i = 2; i <= NF; i++) print $1, i - 2, $i }' "$1"
        return ;;
    esac
    data=$("$INSPECT" --json "$1" | jq -r .summary.data_offset)
    "$INSPECT" --json "$1" | jq -r '.tensors[] | "\(.name) \(.offset) \(.elements)"' |
        while read -r name off n; do
            od -An -v -tf4 -w4 -j $((data + off)) -N $((4 * n)) "$1" | awk -v t="$name" '{ print t, NR - 1, $1 }'
        done
}

# imatrix_check NAME OURS THEIRS [LIMIT [COUNTS]]: the same tensors, equal
# .counts (with COUNTS > 0: each within COUNTS of theirs relative, and each
# tensor's total equal), and every .in_sum2 value within LIMIT (default
# 1e-3) of theirs relative to the tensor's largest (1 check)
imatrix_check() {
    local d limit=${4:-1e-3} counts=${5:-0}
    d=$(join -j1 -a1 -a2 -e MISSING -o 0,1.2,2.2 <(imatrix_dump "$2" | awk '{ print $1 "#" $2, $3 }' | sort) \
                                             <(imatrix_dump "$3" | awk '{ print $1 "#" $2, $3 }' | sort) |
        awk -v lim="$limit" -v clim="$counts" '{ split($1, k, "#"); t = k[1]
               if ($2 == "MISSING" || $3 == "MISSING") { bad[t] = 1; next }
               if (t ~ /counts$/) { c = $2 - $3; if (c < 0) c = -c; ours[t] += $2; theirs[t] += $3
                                    if (c > clim * $3) bad[t] = 1; next }
               d = $2 - $3; if (d < 0) d = -d; a = $3 < 0 ? -$3 : $3
               if (d > md[t]) md[t] = d; if (a > mx[t]) mx[t] = a }
             END { for (t in ours) if (ours[t] != theirs[t]) bad[t] = 1
                   for (t in md) { r = md[t] / (mx[t] > 0 ? mx[t] : 1); if (r > lim) bad[t] = 1; if (r > w) w = r }
                   for (t in bad) if (n++ < 4) list = list " " t
                   printf "%s|%.2g\n", list, w }')
    if [ -n "$d" ] && [ -z "${d%%|*}" ]; then
        local c="counts"
        [ "$counts" = 0 ] || c="counts within $counts (totals equal)"
        pass "imatrix $1: llama-imatrix e21cdc11's entries and $c, sums within ${d#*|} (limit $limit)"
    else
        fail "imatrix $1" "differs:${d%%|*}"
    fi
}

# st_rewrite IN OUT JQ-FILTER: a copy of the safetensors file IN whose
# header is JQ-FILTER applied to IN's ($dend: the data section's size, for
# tensors appended as 64 zero bytes), padded with spaces to 8 bytes.
st_rewrite() {
    local in=$1 out=$2 n hdr end pad i
    n=$(od -An -t u8 -N8 "$in" | tr -d ' ')
    end=$(( $(stat -c %s "$in") - 8 - n ))
    hdr=$(tail -c +9 "$in" | head -c "$n" | jq -c --argjson dend "$end" "$3") || return 1
    pad=$(( (8 - ${#hdr} % 8) % 8 ))
    hdr="$hdr$(printf '%*s' $pad '')"
    { for i in 0 1 2 3 4 5 6 7; do printf "\\x$(printf %02x $(( (${#hdr} >> (8 * i)) & 255 )))"; done
      printf '%s' "$hdr"
      tail -c +$(( 9 + n )) "$in"
      head -c 64 /dev/zero; } >"$out"
}

# mkqpack KIND DIR [MODEL]: a quantized copy of models/MODEL (default
# qwen3-rand) in DIR (tests/tools/mkqpack.py: KIND ct, ctsym, kimi, gptq, gptq8,
# ctfp8, ctfp8b, ctint, ctnaive or bitnet). 1 when there is no python3 with NumPy or no fixture
# (the caller skips).
mkqpack() {
    local py=/usr/bin/python3 src=$FIX/models/${3:-qwen3-rand}
    [ -x "$py" ] || py=python3
    [ -d "$src" ] && "$py" -c 'import numpy' 2>/dev/null &&
        "$py" "$ROOT/tests/tools/mkqpack.py" "$1" "$src" "$2" >/dev/null
}

# st_poke FILE TENSOR INDEX HEX-BYTES [ESIZE]: overwrites bytes of the
# safetensors FILE's TENSOR from element INDEX on (ESIZE bytes an element,
# default 4), HEX-BYTES as printf takes them ('\x00\x00\xc0\x7f').
st_poke() {
    local n begin
    n=$(od -An -t u8 -N8 "$1" | tr -d ' ')
    begin=$(tail -c +9 "$1" | head -c "$n" | jq -r --arg t "$2" '.[$t].data_offsets[0]')
    printf "$4" | dd of="$1" bs=1 seek=$((8 + n + begin + $3 * ${5:-4})) conv=notrunc 2>/dev/null
}
