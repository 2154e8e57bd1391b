# locprof report --html DIR, seen in a real browser: Debian's chromium
# renders DIR/index.html of a recorded run of examples/matmul.c headless,
# with no network. The screenshot is not blank and shows the graph's
# curves, the page's text after its script ran names the hot function and
# shows the inner loop's source line, the page loads nothing from outside,
# and names from the profile are escaped (a profile named like markup shows
# as text). About 3 seconds a chromium run.
. "$(dirname "$0")/lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "SKIP: no chromium (scripts/install-deps)" >&2; exit 0; }
MM=$LOCPROF_BUILD/examples/matmul-lp
[ -x "$MM" ] || { echo "SKIP: no $MM (examples are instrumented when clang is there)" >&2; exit 0; }

# render HTML PNG DOM: a screenshot and the DOM after the page's script.
# The screenshot is at half scale (500 x 700 pixels): enough to see ink
# and colours, and quick to decode.
# --no-sandbox: chromium's sandbox cannot start as root or in most
# containers (CI runs both), and the page is our own local file;
# --disable-dev-shm-usage: a container's /dev/shm is often too small.
render() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-dev-shm-usage --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$T/chromium" --window-size=1000,1400 --force-device-scale-factor=0.5 \
		--screenshot="$2" --dump-dom \
		"file://$1" >"$3" 2>"$T/chromium.err" || { tail -5 "$T/chromium.err" >&2; fail "chromium failed on $1"; }
	[ -s "$2" ] && [ -s "$3" ] || { tail -5 "$T/chromium.err" >&2; fail "chromium wrote no screenshot or DOM"; }
}

expect_status 0 "$LOCPROF" record -q -o "$T/m.lpp" -- "$MM" naive 120
expect_status 0 "$LOCPROF" report "$T/m.lpp" --sizes 4K..1M --cache 32K:8:64 --top 5 --html "$T/page"
[ -s "$T/page/index.html" ] && [ -s "$T/page/working-set.svg" ] || fail "no index.html and working-set.svg"
# self-contained: no external script, style, image, font or link
grep -Eiq '<(link|img|iframe|object|embed)\b|src=|url\(|@import' "$T/page/index.html" &&
	fail "the page loads something: $(grep -Eio '<(link|img|iframe|object|embed)\b|src=|url\(|@import' "$T/page/index.html" | head -3)"
grep -o 'href="[^"]*"' "$T/page/index.html" | grep -v '^href="#' && fail "the page links outside itself"

render "$T/page/index.html" "$T/shot.png" "$T/dom.html"
# what a person reads: the hot function, the inner loop's line, the table
# sorted by misses (the arrow the script adds), the heap block by its site
expect_grep 'main \(matmul\.c:[0-9]+\)' "$T/dom.html"
grep -qF 's += a[i * n + k] * b[k * n + j];' "$T/dom.html" || fail "the inner loop's source line is not shown"
expect_grep 'class="[^"]*sorted-down' "$T/dom.html"
expect_grep 'heap@main \(matmul\.c:[0-9]+(:[0-9]+)?\)' "$T/dom.html"
# the code that misses on each object: the block matmul reads by column
sed -n '/id="object-pcs"/,$p' "$T/dom.html" >"$T/object-pcs.html"
expect_grep '<h3 class="object">heap@main \(matmul\.c:[0-9]+(:[0-9]+)?\)' "$T/object-pcs.html"
expect_grep '<td class="name">main \(matmul\.c:[0-9]+\)</td>' "$T/object-pcs.html"

# the per-function, per-source-line and per-thread tables, sortable, and
# the hot line in its source with its misses
for id in functions source threads; do
	sed -n "/id=\"$id\"/,/<\/table>/p" "$T/dom.html" >"$T/$id.html"
	expect_grep '<table class="sortable">' "$T/$id.html"
done
expect_grep '<td class="name">main</td>' "$T/functions.html"
expect_grep '<td class="name">matmul\.c:[0-9]+</td>' "$T/source.html"
expect_grep '<tr><td data-v="0">0</td>' "$T/threads.html"
expect_grep '<b> +[0-9]+ +[0-9]+  .*s \+= a\[i \* n \+ k\] \* b\[k \* n \+ j\];' "$T/dom.html"

# what a person sees: ink on the page, and the graph's curves in their colours
python3 - "$T/shot.png" "$LOCPROF_SRC/tests/cli" <<'PY' || fail "the screenshot looks blank"
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
import png
w, h, bpp, rows = png.load(sys.argv[1])
stride = w * bpp
ink = blue = red = 0
for line in rows:
    for x in range(0, stride, bpp):
        r, g, b = line[x], line[x + 1], line[x + 2]
        ink += r + g + b < 600
        blue += abs(r - 0x1f) < 30 and abs(g - 0x77) < 30 and abs(b - 0xb4) < 30
        red += abs(r - 0xd6) < 30 and abs(g - 0x27) < 30 and abs(b - 0x28) < 30
print("%dx%d: %.1f%% ink, %d blue and %d red pixels" % (w, h, 100.0 * ink / (w * h), blue, red), file=sys.stderr)
assert ink > 0.01 * w * h, "under 1% of the pixels are not white"
assert blue > 20 and red > 20, "the curves (blue and red) are not drawn"
PY

# a profile named like markup shows as text: the browser's title is the
# name itself, and no element comes from it. The page's own script sorts:
# a script added at its end clicks the heading of the hot pcs' addresses,
# which orders them by decreasing address.
name='m<b>&"x'"'"'y<img src=x onerror="document.title=1">.lpp'
cp "$T/m.lpp" "$T/$name"
expect_status 0 "$LOCPROF" report "$T/$name" --sizes 4K,1M --top 5 --html "$T/named"
sed 's|</body>|<script>document.querySelector("#pcs ~ table th").click();</script></body>|' \
	"$T/named/index.html" >"$T/named/clicked.html"
render "$T/named/clicked.html" "$T/named.png" "$T/named.html"
python3 - "$T/named/index.html" "$T/named.html" <<'PY' || fail "clicking the pc heading does not sort the hot pcs"
import re, sys
def pcs(path):
    page = open(path).read()
    table = page[page.index('id="pcs"'):]
    table = table[:table.index("</table>")]
    return [int(v) for v in re.findall(r'<tr><td class="name" data-v="(\d+)"', table)]
before, after = pcs(sys.argv[1]), pcs(sys.argv[2])
assert len(before) >= 2 and sorted(before) == sorted(after), (before, after)
assert after == sorted(before, reverse=True), (before, after)
assert 'class="name sorted-down"' in open(sys.argv[2]).read()
PY
grep -q '<title>locprof report: .*m&lt;b&gt;&amp;"x'"'"'y&lt;img src=x onerror="document.title=1"&gt;.lpp</title>' "$T/named.html" ||
	fail "the profile's name is not escaped: $(grep -o '<title>.*</title>' "$T/named.html")"
[ "$(grep -o '<b>' "$T/named.html" | wc -l)" -eq "$(grep -o '<b>' "$T/page/index.html" | wc -l)" ] ||
	fail "the profile's name made an element"

# a bad directory: one error line, status 1
expect_status 1 "$LOCPROF" report "$T/m.lpp" --sizes 4K --html "$T/no/such/dir"
expect_one_line "$T/err"
exit 0
