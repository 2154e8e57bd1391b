# record --phases under the valgrind backend, on examples/phases.c built
# natively: the tool detects the solver's phases online with the
# runtime's classifier and policy (collect/phase-sampler.h), so the
# profile has phase intervals, at least two phases whose top functions
# are the two kernels, at least twice fewer samples than a constant-rate
# run at the same rate and seed, and working-set graphs within half a
# point of the constant-rate run's; report --timeline reads it as it reads the inst
# backend's. The pmu backend refuses --phases in one line. About 15
# seconds (two valgrind runs).
. "$(dirname "$0")/lib.sh"
TOOL="$LOCPROF_BUILD/src/vg/locprof-amd64-linux"
[ -x "$TOOL" ] || fail "the valgrind tool was not built ($TOOL): is valgrind installed (scripts/install-deps)?"
command -v valgrind >/dev/null || fail "valgrind is not installed (scripts/install-deps)"
# built here with gcc, as test-valgrind.sh's programs: the build's own
# examples carry the sanitizers in the asan build, which cannot run
# under valgrind
P=$T/phases
gcc -O2 -g -o "$P" "$LOCPROF_SRC/examples/phases.c"

expect_status 2 "$LOCPROF" record -q -b pmu -o "$T/bad.lpp" --phases -- "$P" solver 1
[ "$(grep -c '^locprof: error: ' "$T/err")" = 1 ] || fail "not one error line for --phases -b pmu"
expect_grep 'phases is for the inst and valgrind backends, not pmu' "$T/err"
[ ! -e "$T/bad.lpp" ] || fail "a refused run left a profile"

expect_status 0 "$LOCPROF" record -q -b valgrind -o "$T/c.lpp" --rate 1e-3 -- "$P" solver 40
# --phase-samples 20000: at the default 4000 the few intervals of a
# phase sampled at the full rate may stand for all of it badly enough
# that the LRU graph is points away, depending on where the intervals
# fall, which moves with the environment's size (docs/valgrind.md,
# "Phases")
expect_status 0 "$LOCPROF" record -q -b valgrind -o "$T/p.lpp" --rate 1e-3 --phases --phase-samples 20000 \
	-- "$P" solver 40
"$LOCPROF" dump "$T/p.lpp" >"$T/dump"
expect_grep '^phase intervals: [0-9]+ of 1048576 references, [0-9]+ phases$' "$T/dump"
"$LOCPROF" dump "$T/c.lpp" >"$T/dump"
grep -c '^phase intervals' "$T/dump" >/dev/null && fail "a constant-rate profile has phase intervals"

expect_status 0 "$LOCPROF" report "$T/p.lpp" --cache 32K:8:64 --top 3 --resamples 0 --timeline -F json
cp "$T/out" "$T/p.json"
expect_status 0 "$LOCPROF" report "$T/c.lpp" --cache 32K:8:64 --top 0 --resamples 0 -F json
cp "$T/out" "$T/c.json"
python3 - "$T/p.json" "$T/c.json" <<'PY' || fail "the valgrind --phases profile is wrong"
import json, sys
p, c = (json.load(open(f)) for f in sys.argv[1:])
t = p["timeline"]
assert p["phases"] == len(t["phases"]) >= 2, p["phases"]
print("samples: %d with --phases, %d at a constant rate" % (p["recorded_samples"], c["recorded_samples"]),
      file=sys.stderr)
assert p["recorded_samples"] * 2 < c["recorded_samples"], (p["recorded_samples"], c["recorded_samples"])
# some intervals sampled at the low rate, the first ones at the full rate
rates = sorted({r["rate"] for r in t["rows"]})
assert len(rates) == 2 and abs(rates[1] - 1e-3) < 1e-12 and abs(rates[0] - 1e-3 / 32) < 1e-12, rates
# each kernel leads a phase's misses, or has a quarter of them (twice
# dense's share of the whole run's at 32K, 13%): which
# intervals the classifier puts together moves with where the 2^20-reference
# intervals fall against the kernels' switches (docs/valgrind.md, "Phases")
def leads(name):
    return any(f["function"].split()[0] == name and (i == 0 or f["share"] >= 0.25)
               for ph in t["phases"] for i, f in enumerate(ph["functions"][:2]))
assert leads("sweep") and leads("dense"), [ph["functions"][:2] for ph in t["phases"]]
# both graphs within half a point on average
for cp, cc in zip(p["curves"], c["curves"]):
    assert cp["name"] == cc["name"], (cp["name"], cc["name"])
    diffs = [abs(a[1] - b[1]) for a, b in zip(cp["points"], cc["points"])]
    mean = sum(diffs) / len(diffs)
    print("%s: %.2f points apart on average" % (cp["name"], 100 * mean), file=sys.stderr)
    assert mean < 0.005, (cp["name"], diffs)
PY
