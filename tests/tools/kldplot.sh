#!/usr/bin/env bash
# tests/tools/kldplot.sh — draws mean KL divergence (log scale) against file
# size as an SVG, the picture beside `make demo`'s table.
#
#   kldplot.sh [-t TITLE] ROWS.tsv OUT.svg
#
# ROWS.tsv holds one point a line, four tab-separated fields:
#
#   LABEL  SERIES  BYTES  KLD
#
# SERIES is `stock` (a stock preset made with an importance matrix: a filled
# circle), `stock-plain` (a stock preset made without one: an open circle)
# or `target` (a mix chosen for a target size: a square); BYTES the file's
# size (a whole number > 0, drawn in MiB); KLD its mean KL divergence. Lines
# starting with '#' and empty lines are skipped. A KLD of 0 or below (F16
# against F32 prints 0.000000 or -0.000000: rounding, or the 16-bit base
# file) has no place on a log scale: it is drawn at the plot's floor, a
# decade under the least positive KLD, its label says "(clamped)" and a note
# under the title names the rows. Every point is labelled with its LABEL,
# stock ones to the left and target ones to the right of the marker, moved
# up or down (with a leader line) where labels would overlap. Each marker
# carries class "pt SERIES" and a <title> with its numbers. A few sizes far
# past the rest (F16 beside the quantized files: a gap over 45% of the
# range, at most a quarter of the points past it) are drawn in a strip of
# their own at the right, the axis broken, so the rest keep the width.
# More than 16 points get a larger canvas.
#
# Bad input (a field missing, a number that is not one or out of range, an
# unknown series, no rows) is refused with the file and line named, exit 1
# and no output written; the output is written whole or not at all (a
# temporary file renamed), never over the input, a directory or a device.
set -euo pipefail
export LC_ALL=C
me=kldplot
die() { echo "$me: error: $*" >&2; exit 1; }
usage() { echo "usage: $me [-t TITLE] ROWS.tsv OUT.svg" >&2; exit 2; }

title="mean KL divergence against file size"
while [ $# -gt 0 ]; do
    case $1 in
    -t) [ $# -ge 2 ] || usage; title=$2; shift 2 ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -*) echo "$me: error: unknown option '$1'" >&2; usage ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || usage
in=$1 out=$2
[ -e "$in" ] || die "$in: no such file"
[ -f "$in" ] || die "$in: not a regular file"
[ -r "$in" ] || die "$in: cannot be read"
if [ -e "$out" ] || [ -L "$out" ]; then
    [ -f "$out" ] || die "$out: not a regular file: refusing to write it"
    [ ! "$in" -ef "$out" ] || die "$out: is the input: refusing to overwrite it"
fi
dir=$(dirname -- "$out")
[ -d "$dir" ] || die "$out: its folder $dir does not exist"
tmp=$(mktemp "$dir/.kldplot.XXXXXX") || die "$out: cannot create a file in $dir"
trap 'rm -f "$tmp"' EXIT

awk -F'\t' -v file="$in" -v title="$title" '
function bad(msg) { printf "%s: error: %s:%d: %s\n", "kldplot", file, FNR, msg >"/dev/stderr"; failed = 1; exit 1 }
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); gsub(/"/, "\\&quot;", s); return s }
function lg(v) { return log(v) / log(10) }
function fl(v) { return v < 0 && v != int(v) ? int(v) - 1 : int(v) }
function ce(v) { return v > 0 && v != int(v) ? int(v) + 1 : int(v) }
function nice(r,   e, f) {
    e = 10 ^ fl(lg(r) + 1e-9); f = r / e
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * e
}
function decade(e) { # 10^e as text: decimals near 1, else 1e-N
    if (e >= 0 && e <= 4) return sprintf("%d", 10 ^ e)
    if (e < 0 && e >= -4) return sprintf("%." (-e) "f", 10 ^ e)
    return "1e" e
}
function X(v) { # main panel [L, PR]; with a break, the sizes past it in the strip [SL, R]
    if (brk && v >= sx0) return sx1 > sx0 ? SL + 12 + (v - sx0) / (sx1 - sx0) * (R - SL - 24) : (SL + R) / 2
    return L + (v - x0) / (x1 - x0) * (PR - L)
}
function Y(v) { return B - (lg(v) - y0) / (y1 - y0) * (B - T) }
function box(x, w, top, bot) { nb++; bx0[nb] = x; bx1[nb] = x + w; by0[nb] = top; by1[nb] = bot }
function hits(x, w, top, bot,   j, c) { # how many placed boxes [x, x+w] × [top, bot] touches
    c = 0
    for (j = 1; j <= nb; j++)
        if (x < bx1[j] + 4 && bx0[j] < x + w + 4 && top < by1[j] && by0[j] < bot) c++
    return c
}
/^#/ || /^[ \t\r]*$/ { next }
{
    sub(/\r$/, "")
    if (NF != 4) bad("want 4 tab-separated fields (LABEL SERIES BYTES KLD), found " NF)
    if ($1 == "" || length($1) > 64) bad("the label must be 1 to 64 characters")
    if ($1 ~ /[\001-\037\177]/) bad("the label holds a control character")
    if ($2 != "stock" && $2 != "stock-plain" && $2 != "target") bad("series '\''" $2 "'\'' is none of stock, stock-plain, target")
    if ($3 !~ /^[0-9]+$/ || length($3) > 15 || $3 + 0 <= 0) bad("size '\''" $3 "'\'' is not a whole number of bytes from 1 to 999999999999999")
    if ($4 !~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/) bad("KLD '\''" $4 "'\'' is not a number")
    k = $4 + 0
    if (k > 1e30 || k < -1e30 || (k > 0 && k < 1e-300)) bad("KLD '\''" $4 "'\'' is out of range (|KLD| up to 1e30, positive ones from 1e-300)")
    if (++n > 10000) bad("more than 10000 rows")
    lab[n] = $1; ser[n] = $2; mib[n] = $3 / 1048576; kld[n] = k
}
END {
    if (failed) exit 1
    if (n == 0) { FNR = 0; bad("no rows to draw") }
    W = 960; H = 600
    if (n > 16) { W = 1280; H = 820 } # room for many labels
    L = 90; R = W - 130; T = 78; B = H - 64; PR = R
    # y: decades around the positive KLDs; KLD <= 0 drawn a decade below the least
    kmin = 0; kmax = 0
    for (i = 1; i <= n; i++) if (kld[i] > 0) {
        if (kmin == 0 || kld[i] < kmin) kmin = kld[i]
        if (kld[i] > kmax) kmax = kld[i]
    }
    nclamp = 0; clamped = ""
    if (kmax == 0) { floorv = 1e-6; y0 = -6; y1 = -5 }
    else {
        y0 = fl(lg(kmin) + 1e-9); y1 = ce(lg(kmax) - 1e-9)
        if (y1 <= y0) y1 = y0 + 1
        floorv = 10 ^ (y0 - 1)
    }
    for (i = 1; i <= n; i++) if (kld[i] <= 0) {
        nclamp++; clamped = clamped (nclamp > 1 ? ", " : "") lab[i]; kld[i] = floorv; lab[i] = lab[i] " (clamped)"
        if (fl(lg(floorv) + 1e-9) < y0) y0 = fl(lg(floorv) + 1e-9)
    }
    # x: the sizes, padded; one size alone gets ±10%
    xmin = mib[1]; xmax = mib[1]
    for (i = 2; i <= n; i++) { if (mib[i] < xmin) xmin = mib[i]; if (mib[i] > xmax) xmax = mib[i] }
    # a size far past the others (F16 beside the quantized files): the axis
    # breaks, those sizes drawn in a strip of their own at the right
    for (i = 1; i <= n; i++) sz[i] = mib[i]
    for (i = 2; i <= n; i++) { v = sz[i]; for (j = i - 1; j >= 1 && sz[j] > v; j--) sz[j + 1] = sz[j]; sz[j + 1] = v }
    brk = 0; g = 0
    for (j = 1; j < n; j++) if (sz[j + 1] - sz[j] > g) { g = sz[j + 1] - sz[j]; jg = j }
    if (n >= 4 && g > 0.45 * (xmax - xmin) && n - jg <= n / 4) {
        brk = 1; sx0 = sz[jg + 1]; sx1 = xmax; xmax = sz[jg]; SL = R - 90; PR = SL - 24
    }
    pad = (xmax - xmin) * 0.06
    if (pad <= xmax * 1e-9) pad = xmax * 0.1
    x0 = xmin - pad; x1 = xmax + pad
    if (x0 < 0) x0 = 0
    # as many x ticks as their labels leave room for, 8 at most
    for (nt = 8; ; nt--) {
        step = nice((x1 - x0) / nt)
        dec = step >= 1 ? 0 : -fl(lg(step) + 1e-9)
        if (dec > 12) dec = 12
        wide = length(sprintf("%." dec "f", x1)) * 7.5 + 14
        if (nt <= 2 || (PR - L) * step / (x1 - x0) >= wide) break
    }

    printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n", W, H, W, H
    printf "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H
    printf "<text x=\"%d\" y=\"28\" font-size=\"17\" text-anchor=\"middle\">%s</text>\n", (L + R) / 2, esc(title)
    note = n " point" (n == 1 ? "" : "s")
    if (nclamp) note = note "; KLD of 0 or below, drawn at the floor " decade(fl(lg(floorv) + 1e-9)) ": " clamped
    printf "<text class=\"note\" x=\"%d\" y=\"48\" font-size=\"12\" text-anchor=\"middle\" fill=\"#444444\">%s</text>\n", (L + R) / 2, esc(note)
    # grid and ticks
    printf "<g class=\"axes\" stroke=\"#000000\" stroke-width=\"1\">\n"
    printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\"/>\n", L, T, PR - L, B - T
    if (brk) {
        printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\"/>\n", SL, T, R - SL, B - T
        for (j = 0; j < 2; j++) printf "<line class=\"break\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", PR - 4, B + 5, PR + 4, B - 5, SL - 4, B + 5, SL + 4, B - 5
    }
    printf "</g>\n<g class=\"xticks\" font-size=\"12\" text-anchor=\"middle\">\n"
    for (t = ce(x0 / step - 1e-9) * step + 0; t <= x1 + step * 1e-9; t += step) {
        x = X(t)
        printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#dddddd\"/>", x, T, x, B
        printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000000\"/>", x, B, x, B + 5
        printf "<text x=\"%.1f\" y=\"%d\">%s</text>\n", x, B + 19, sprintf("%." dec "f", t)
    }
    if (brk) for (j = 0; j < 2; j++) {
        t = j ? sx1 : sx0
        if (j && sx1 == sx0) break
        x = X(t)
        printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#dddddd\"/>", x, T, x, B
        printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000000\"/>", x, B, x, B + 5
        printf "<text x=\"%.1f\" y=\"%d\">%s</text>\n", x, B + 19 + 13 * j, sprintf("%." (dec + 1) "f", t)
    }
    printf "</g>\n<g class=\"yticks\" font-size=\"12\" text-anchor=\"end\">\n"
    nd = y1 - y0; every = ce(nd / 10) # a decade a tick, or fewer: 11 at most
    for (e = y0; e <= y1; e += every) {
        y = Y(10 ^ e)
        printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>", L, y, PR, y
        if (brk) printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>", SL, y, R, y
        printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000000\"/>", L - 6, y, L, y
        printf "<text x=\"%d\" y=\"%.1f\">%s</text>\n", L - 9, y + 4, decade(e)
        if (nd <= 8 && e < y1) for (m = 2; m <= 9; m++) {
            y = Y(m * 10 ^ e)
            printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000000\"/>\n", L - 3, y, L, y
        }
    }
    printf "</g>\n"
    printf "<text class=\"xlabel\" x=\"%d\" y=\"%d\" font-size=\"14\" text-anchor=\"middle\">file size (MiB)</text>\n", (L + R) / 2, H - 18
    printf "<text class=\"ylabel\" transform=\"translate(24 %d) rotate(-90)\" font-size=\"14\" text-anchor=\"middle\">mean KL divergence against F32 (log scale)</text>\n", (T + B) / 2
    # the markers take their places first; the legend goes to the corner
    # of the plot with the fewest of them (top right, bottom left, top
    # left, bottom right: the first with none)
    for (i = 1; i <= n; i++) { cx[i] = X(mib[i]); cy[i] = Y(kld[i]); box(cx[i] - 5, 10, cy[i] - 5, cy[i] + 5) }
    plain = 0
    for (i = 1; i <= n; i++) if (ser[i] == "stock-plain") plain = 1
    lh = plain ? 64 : 46
    split(PR - 250 " " L + 10 " " L + 10 " " PR - 250, cxs, " "); split(T + 10 " " B - 10 - lh " " T + 10 " " B - 10 - lh, cys, " ")
    best = 0
    for (c = 1; c <= 4; c++) {
        h = hits(cxs[c], 240, cys[c], cys[c] + lh)
        if (best == 0 || h < bh) { best = c; bh = h }
        if (h == 0) break
    }
    lx = cxs[best]; ly = cys[best]
    box(lx, 240, ly, ly + lh)
    printf "<g class=\"legend\" font-size=\"12\">\n<rect x=\"%d\" y=\"%d\" width=\"240\" height=\"%d\" fill=\"#ffffff\" stroke=\"#999999\"/>\n", lx, ly, lh
    printf "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"#1f5fa8\"/><text x=\"%d\" y=\"%d\">stock preset, with the imatrix</text>\n", lx + 14, ly + 16, lx + 26, ly + 20
    if (plain) { ly += 18; printf "<circle cx=\"%d\" cy=\"%d\" r=\"4.5\" fill=\"#ffffff\" stroke=\"#1f5fa8\" stroke-width=\"1.5\"/><text x=\"%d\" y=\"%d\">stock preset, no imatrix</text>\n", lx + 14, ly + 16, lx + 26, ly + 20 }
    ly += 18
    printf "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#d0421b\"/><text x=\"%d\" y=\"%d\">target-size mix (--sensitivity)</text>\n</g>\n", lx + 9, ly + 11, lx + 26, ly + 20
    # markers
    printf "<g class=\"points\">\n"
    for (i = 1; i <= n; i++) {
        x = cx[i]; y = cy[i]
        tip = sprintf("%s: %.2f MiB, mean KLD %.6g", lab[i], mib[i], kld[i])
        if (ser[i] == "target")
            printf "<rect class=\"pt target\" x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"#d0421b\"><title>%s</title></rect>\n", x - 5, y - 5, esc(tip)
        else if (ser[i] == "stock")
            printf "<circle class=\"pt stock\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#1f5fa8\"><title>%s</title></circle>\n", x, y, esc(tip)
        else
            printf "<circle class=\"pt stock-plain\" cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"#ffffff\" stroke=\"#1f5fa8\" stroke-width=\"1.5\"><title>%s</title></circle>\n", x, y, esc(tip)
    }
    printf "</g>\n"
    # labels: by height, each on its side (flipped when it would leave the
    # plot), moved in 12-pixel steps to the nearest free place
    for (i = 1; i <= n; i++) ord[i] = i
    for (i = 2; i <= n; i++) { v = ord[i]; for (j = i - 1; j >= 1 && cy[ord[j]] > cy[v]; j--) ord[j + 1] = ord[j]; ord[j + 1] = v }
    printf "<g class=\"labels\" font-size=\"11\">\n"
    for (k = 1; k <= n; k++) {
        i = ord[k]; w = length(lab[i]) * 6.6
        right = ser[i] == "target"
        if (!right && cx[i] - 9 - w < L + 2) right = 1
        if (right && cx[i] + 9 + w > W - 4) right = 0
        bx = right ? cx[i] + 9 : cx[i] - 9 - w
        by = cy[i] + 4
        for (s = 0; s <= 40; s++) {
            dy = (s % 2 ? 1 : -1) * int((s + 1) / 2) * 12
            if (by + dy > T + 12 && by + dy < B - 2 && !hits(bx, w, by + dy - 11, by + dy + 2)) break
        }
        if (s > 40) dy = 0
        box(bx, w, by + dy - 11, by + dy + 2)
        col = ser[i] == "target" ? "#a8300f" : "#174a85"
        if (dy != 0)
            printf "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999999\" stroke-width=\"0.8\"/>", cx[i] + (right ? 5 : -5), cy[i], right ? bx - 1 : bx + w + 1, by + dy - 4
        printf "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>\n", bx, by + dy, col, esc(lab[i])
    }
    printf "</g>\n</svg>\n"
}' "$in" >"$tmp"
chmod 644 "$tmp"
mv -f "$tmp" "$out"
trap - EXIT
