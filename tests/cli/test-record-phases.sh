# record --phases and report --timeline on examples/phases.c: the solver
# alternating a sweep of 8 MiB and dense updates of a 32 KiB block gives
# at least two phases whose top functions are the two kernels, the dense
# phase misses a 32K cache far less than the sweep, the profile holds
# fewer samples than a constant-rate one at the same rate and gives the
# same working-set graph within a point on average; the timeline comes in
# text, CSV, JSON (valid against docs/report.schema.json) and SVG, which
# headless chromium renders with the phase bands and the lines in their
# colours. Bad combinations of options are refused before the program
# runs. report --html shows the same plot and the phases' top functions
# in chromium; both name the phases' functions also with --top 0. About
# 20 seconds.
. "$(dirname "$0")/lib.sh"
P=$LOCPROF_BUILD/examples/phases-lp
[ -x "$P" ] || { echo "SKIP: no $P (examples are instrumented when clang is there)" >&2; exit 0; }

# refused before the program starts: exit 2, one error line
for bad in "--phases --samples 1000" "--phases --mode trace" "--phases --backend pmu" \
	"--phase-rate 1e-5" "--phases --rate 1e-4 --phase-rate 1e-3" "--phases=100"; do
	# shellcheck disable=SC2086
	expect_status 2 "$LOCPROF" record -q -o "$T/bad.lpp" $bad -- "$P" solver 1
	[ "$(grep -c '^locprof: error: ' "$T/err")" = 1 ] || fail "not one error line for $bad"
done
[ ! -e "$T/bad.lpp" ] || fail "a refused run left a profile"

expect_status 0 "$LOCPROF" record -q -o "$T/c.lpp" --rate 1e-3 -- "$P" solver 40
expect_status 0 "$LOCPROF" record -q -o "$T/p.lpp" --rate 1e-3 --phases -- "$P" solver 40
# a profile is version 4 (a reader of versions 1 to 2 refuses phase
# intervals rather than weigh them wrongly); only the first has intervals
[ "$(od -An -tu4 -j8 -N4 "$T/p.lpp" | tr -d ' ')" = 4 ] || fail "the --phases profile is not version 4"
"$LOCPROF" dump "$T/c.lpp" | grep -q '^phase intervals' && fail "a constant-rate profile has phase intervals"

expect_status 0 "$LOCPROF" report "$T/p.lpp" --cache 32K:8:64 --cache 1M:16:64 --top 3 --resamples 0 --timeline \
	--timeline-svg "$T/t.svg"
cp "$T/out" "$T/p.txt"
expect_grep '^profile .*: [0-9]+ samples in [0-9]+ phases \(standing for [0-9]+ at the full rate\)' "$T/p.txt"
expect_grep '^time view: miss ratio per line access' "$T/p.txt"
expect_grep '^whole run' "$T/p.txt"

expect_status 0 "$LOCPROF" report "$T/p.lpp" --cache 32K:8:64 --cache 1M:16:64 --top 3 --resamples 0 --timeline -F json
cp "$T/out" "$T/p.json"
expect_status 0 "$LOCPROF" report "$T/c.lpp" --cache 32K:8:64 --top 0 --resamples 0 --timeline -F json
cp "$T/out" "$T/c.json"
python3 - "$LOCPROF_SRC/docs/report.schema.json" "$T/p.json" "$T/c.json" <<'PY' || fail "the timeline JSON is wrong"
import json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
p, c = (json.load(open(f)) for f in sys.argv[2:])
for doc in (p, c):
    errors = list(v.iter_errors(doc))
    assert not errors, [e.message for e in errors[:3]]
t = p["timeline"]
assert p["phases"] == len(t["phases"]) >= 2, p["phases"]
assert p["recorded_samples"] * 2 < c["recorded_samples"], (p["recorded_samples"], c["recorded_samples"])
# each share is printed to 6 decimals: up to 5e-7 off
assert abs(sum(ph["share"] for ph in t["phases"]) - 1) <= 5e-7 * len(t["phases"]) + 1e-12
ids = {ph["phase"] for ph in t["phases"]}
assert len(t["rows"]) >= 20 and all(r["phase"] in ids for r in t["rows"])
# the sweep's phase misses the 32K cache, the dense one mostly hits it
top = {ph["functions"][0]["function"].split()[0]: ph["miss_ratio"][0] for ph in t["phases"] if ph["functions"]}
assert "sweep" in top and "dense" in top, top
big = max(t["phases"], key=lambda ph: ph["share"])
# (phases led by one kernel: an interval that spans a switch between the
# kernels mixes both)
pure = [ph for ph in t["phases"] if ph["functions"] and ph["functions"][0]["share"] >= 0.8]
dense = [ph for ph in pure if ph["functions"][0]["function"].startswith("dense")]
sweep = [ph for ph in pure if ph["functions"][0]["function"].startswith("sweep")]
assert dense and sweep, t["phases"]
assert min(s["miss_ratio"][0] for s in sweep) > 2 * max(d["miss_ratio"][0] for d in dense), (sweep, dense)
# the same working-set graph as the constant-rate run
diffs = [abs(a[1] - b[1]) for cp, cc in zip(p["curves"], c["curves"]) for a, b in zip(cp["points"], cc["points"])]
assert sum(diffs) / len(diffs) < 0.01, diffs
# a constant-rate profile: windows, no phases
assert c["phases"] == 0 and c["timeline"]["phases"] == [] and all(r["phase"] is None for r in c["timeline"]["rows"])
PY

# the intervals resample the recorded samples, each with its copies in
# the recurrences: at least the binomial spread of the recorded samples
# (resampling the copies as independent samples gave half of it)
expect_status 0 "$LOCPROF" report "$T/p.lpp" --sizes 64K,1M --top 0 -F json
python3 - "$T/out" <<'PY' || fail "the intervals of a --phases profile are too narrow"
import json, math, sys
d = json.load(open(sys.argv[1]))
n = d["recorded_samples"]
assert n * 2 < d["samples"], (n, d["samples"])
for c in d["curves"]:
    for (size, e), iv in zip(c["points"], c["intervals"]):
        half = (iv["miss_ratio_hi"] - iv["miss_ratio_lo"]) / 2
        floor = 1.645 * math.sqrt(e * (1 - e) / n)
        assert half >= 0.99 * floor, (c["name"], size, e, half, floor)
PY

expect_status 0 "$LOCPROF" report "$T/p.lpp" --cache 32K:8:64 --top 2 --resamples 0 --timeline -F csv
expect_grep '^timeline_thread,start,line_accesses,phase,rate,cache,miss_ratio$' "$T/out"
expect_grep '^phase,share,line_accesses,intervals,samples,cache,miss_ratio$' "$T/out"
expect_grep '^[0-9]+,(sweep|dense) in main,' "$T/out"

# each phase's top functions by name whatever --top is: with --top 0 (no
# other table names pcs) in the text and in the HTML page's time view
expect_status 0 "$LOCPROF" report "$T/p.lpp" --cache 32K:8:64 --top 0 --resamples 0 --timeline
sed -n '/^phase /,/^whole run/p' "$T/out" >"$T/top0.txt"
expect_grep '^ +[0-9]+ .*  (sweep|dense) in main [0-9]+%' "$T/top0.txt"
if grep -E '0x[0-9a-f]+ [0-9]+%' "$T/top0.txt"; then
	fail "--top 0: the time view names functions by address"
fi
expect_status 0 "$LOCPROF" report "$T/p.lpp" --cache 32K:8:64 --top 0 --resamples 0 --html "$T/page0"
sed -n '/id="timeline"/,/<\/table>/p' "$T/page0/index.html" >"$T/top0.html"
expect_grep '<td class="name">[^<]*(sweep|dense) in main' "$T/top0.html"
if grep -E '<td class="name">0x' "$T/top0.html"; then
	fail "--top 0: the page's time view names functions by address"
fi

# the plot, seen by a browser: phase bands (light blue, light red) behind
# the lines of the two caches (blue, red), and the legend's text
grep -q '<rect class="phase"' "$T/t.svg" || fail "no phase bands in the SVG"
[ "$(grep -c '<path class="ratio"' "$T/t.svg")" = 2 ] || fail "not one line per cache in the SVG"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	echo "note: no chromium, the plot is not rendered" >&2
	exit 0
fi
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-dev-shm-usage --disable-gpu --hide-scrollbars \
	--no-first-run --user-data-dir="$T/chromium" --window-size=960,560 --screenshot="$T/t.png" \
	"file://$T/t.svg" >/dev/null 2>"$T/chromium.err" || { tail -5 "$T/chromium.err" >&2; fail "chromium failed"; }
python3 - "$T/t.png" "$LOCPROF_SRC/tests/cli" <<'PY' || fail "the rendered timeline lacks its bands or lines"
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
import png
w, h, bpp, rows = png.load(sys.argv[1])
stride = w * bpp
def count(rgb, tol):
    return sum(1 for line in rows for x in range(0, stride, bpp)
               if all(abs(line[x + k] - rgb[k]) <= tol for k in range(3)))
bands = count((0xcf, 0xe2, 0xf3), 6) + count((0xf4, 0xcc, 0xcc), 6) + count((0xd9, 0xea, 0xd3), 6)
blue, red = count((0x1f, 0x77, 0xb4), 30), count((0xd6, 0x27, 0x28), 30)
print("%dx%d: %d band, %d blue, %d red pixels" % (w, h, bands, blue, red), file=sys.stderr)
assert bands > 0.05 * w * h, "the phase bands are not drawn"
assert blue > 50 and red > 50, "the lines of the caches are not drawn"
PY

# report --html: the page has the time view, its plot inline (the same
# SVG as --timeline-svg: bands and lines) and each phase's top functions,
# and loads nothing; chromium shows the kernels' names and the bands
expect_status 0 "$LOCPROF" report "$T/p.lpp" --cache 32K:8:64 --cache 1M:16:64 --top 3 --resamples 0 --html "$T/page"
grep -Eiq '<(link|img|iframe|object|embed)\b|src=|url\(|@import' "$T/page/index.html" && fail "the page loads something"
grep -o 'href="[^"]*"' "$T/page/index.html" | grep -v '^href="#' && fail "the page links outside itself"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-dev-shm-usage --disable-gpu --hide-scrollbars \
	--no-first-run --user-data-dir="$T/chromium" --window-size=1000,4000 --force-device-scale-factor=0.5 \
	--screenshot="$T/page.png" --dump-dom "file://$T/page/index.html" >"$T/dom.html" 2>"$T/chromium.err" ||
	{ tail -5 "$T/chromium.err" >&2; fail "chromium failed on the page"; }
sed -n '/id="timeline"/,/<\/table>/p' "$T/dom.html" >"$T/timeline.html"
expect_grep '<rect class="phase"' "$T/timeline.html"
[ "$(grep -c '<path class="ratio"' "$T/timeline.html")" = 2 ] || fail "not one line per cache in the page's plot"
expect_grep '<td class="name">[^<]*sweep in main' "$T/timeline.html"
expect_grep '<td class="name">[^<]*dense in main' "$T/timeline.html"
python3 - "$T/page.png" "$LOCPROF_SRC/tests/cli" <<'PY' || fail "the page's time view is not drawn"
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
import png
w, h, bpp, rows = png.load(sys.argv[1])
stride = w * bpp
bands = sum(1 for line in rows for x in range(0, stride, bpp)
            if any(all(abs(line[x + k] - c[k]) <= 6 for k in range(3))
                   for c in ((0xcf, 0xe2, 0xf3), (0xf4, 0xcc, 0xcc), (0xd9, 0xea, 0xd3))))
print("page %dx%d: %d band pixels" % (w, h, bands), file=sys.stderr)
assert bands > 3000, "the phase bands are not on the page"
PY
