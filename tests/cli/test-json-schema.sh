# The JSON of locprof report and locprof simulate validates against
# docs/report.schema.json and docs/simulate.schema.json (JSON Schema
# 2020-12, checked with python3-jsonschema). report: for a trace with heap
# blocks and every table, for the fewest tables, for a file name that needs
# escaping, and for a recorded run of examples/matmul.c; simulate: each of
# its four kinds of output. The report schema in docs/formats.md is the
# file's, and the schemas reject broken documents.
. "$(dirname "$0")/lib.sh"
python3 -c 'import jsonschema' 2>/dev/null || { echo "SKIP: no python3-jsonschema (scripts/install-deps)" >&2; exit 0; }
SCHEMA=$LOCPROF_SRC/docs/report.schema.json SIM_SCHEMA=$LOCPROF_SRC/docs/simulate.schema.json

# the schema embedded in docs/formats.md is the file's, byte for byte
# (LOCPROF_DOCS_UPDATE=1 copies the file into docs/formats.md instead)
FORMATS=$LOCPROF_SRC/docs/formats.md
awk '/^<!-- schema: docs\/report.schema.json -->$/ { armed = 1; next }
     armed && /^```/ { if (inblock) exit; inblock = 1; next }
     inblock { print }' "$FORMATS" >"$T/doc-schema.json"
if ! cmp -s "$T/doc-schema.json" "$SCHEMA"; then
	[ "${LOCPROF_DOCS_UPDATE:-0}" = 1 ] || fail "docs/formats.md does not hold docs/report.schema.json as it is"
	awk -v schema="$SCHEMA" '
	/^<!-- schema: docs\/report.schema.json -->$/ { armed = 1; print; next }
	armed == 1 && /^```/ { print; while ((getline l < schema) > 0) print l; armed = 2; next }
	armed == 2 && /^```/ { armed = 0; print; next }
	armed == 2 { next }
	{ print }' "$FORMATS" >"$T/formats.md"
	cat "$T/formats.md" >"$FORMATS"
	echo "updated: docs/formats.md holds docs/report.schema.json" >&2
fi

# validate SCHEMA FILE...: every FILE is one JSON document SCHEMA accepts
validate() {
	python3 - "$@" <<'PY' || fail "JSON does not validate against $1: ${*:2}"
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
v = Draft202012Validator(schema)
bad = 0
for path in sys.argv[2:]:
    for e in v.iter_errors(json.load(open(path))):
        print("%s: %s: %s" % (path, "/".join(map(str, e.absolute_path)), e.message), file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
PY
}

# a swept heap block and a small one (as in test-report-formats.sh)
{
	printf 'A 0x100000 6400 0x400100\nA 0x200000 128 0x400200\n'
	for r in $(seq 20); do
		for i in $(seq 0 99); do
			printf 'R %x 8 0x401000\nR %x 8 0x401010\n' $((0x100000 + 64 * i)) $((0x200000 + 64 * (i % 2)))
		done
	done
} >"$T/alloc.txt"
expect_status 0 "$LOCPROF" sample "$T/alloc.txt" -o "$T/a.lpp" --rate 0.05
expect_status 0 "$LOCPROF" report "$T/a.lpp" --sizes 4K,16K --cache 4K:4:64 --cache 8K:0:64 --window --at 4K --format json
cp "$T/out" "$T/full.json"
expect_status 0 "$LOCPROF" report "$T/a.lpp" --sizes 4K --policy random --top 0 --format json
cp "$T/out" "$T/least.json"
cp "$T/a.lpp" "$T/q\"x,y.lpp"
expect_status 0 "$LOCPROF" report "$T/q\"x,y.lpp" --sizes 4K --cold --format json
cp "$T/out" "$T/quoted.json"
validate "$SCHEMA" "$T/full.json" "$T/least.json" "$T/quoted.json"
python3 - "$T/full.json" "$T/least.json" <<'PY' || fail "the documents lack what the schema leaves optional"
import json, sys
full, least = (json.load(open(p)) for p in sys.argv[1:])
assert full["version"] == 1 and "windows" in full and "hot" in full and len(full["caches"]) == 2, full
assert full["hot"]["heap_blocks"] == 2 and full["hot"]["run_allocs"] == 2, full["hot"]
assert "hot" not in least and "windows" not in least and [c["name"] for c in least["curves"]] == ["statcache"]
PY

# report --shared: two threads writing their own 8 bytes of shared lines
# (false sharing) and a third reading them (true sharing), over a trace
awk 'BEGIN {
	for (r = 0; r < 300; r++)
		for (k = 0; k < 4; k++) {
			printf "W 0x%x 8 0x401000 1\n", 1048576 + k * 64
			printf "W 0x%x 8 0x402000 2\n", 1048576 + k * 64 + 8
			printf "R 0x%x 8 0x403000 3\n", 1048576 + k * 64 + 8
			printf "R 0x%x 8 0x404000 1\n", 2097152 + (r * 4 + k) % 64 * 64
		}
}' >"$T/mt.txt"
expect_status 0 "$LOCPROF" sample "$T/mt.txt" -o "$T/mt.lpp" --rate 0.05
# (the text first: --top 1 keeps one row of the false sharing table's
# two and sums the other in a line; --top 0 shows both)
expect_status 0 "$LOCPROF" report "$T/mt.lpp" --sizes 1K,4K --shared --top 1
awk '/^false sharing:/ { on = 1; next } /^$/ { on = 0 } on && /0x40[0-9]000 +0x40/ { n++ }
     on && /\(1 rows more: --top 2 shows them; --format csv lists all\)$/ { more++ } END { exit !(n == 1 && more == 1) }' "$T/out" ||
	{ cat "$T/out" >&2; fail "report --shared --top 1: one false sharing row and a line for the other"; }
expect_status 0 "$LOCPROF" report "$T/mt.lpp" --sizes 1K,4K --shared --top 0
[ "$(awk '/^false sharing:/ { on = 1; next } /^$/ { on = 0 } on && /0x40[0-9]000 +0x40/' "$T/out" | wc -l)" = 2 ] ||
	{ cat "$T/out" >&2; fail "report --shared --top 0: two false sharing rows"; }
expect_status 0 "$LOCPROF" report "$T/mt.lpp" --sizes 1K,4K --shared --format json
cp "$T/out" "$T/share.json"
validate "$SCHEMA" "$T/share.json"
python3 - "$SCHEMA" "$T/share.json" <<'PY' || fail "report --shared JSON"
import copy, json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
doc = json.load(open(sys.argv[2]))
sh = doc["share"]
assert sh["threads"] == 3 and sh["shared_time"], sh
assert [p["placement"] for p in sh["placements"]] == ["shared"] * 2 + ["2 caches"] * 2 + ["private"] * 2
assert {s["sharing"] for s in sh["sharing"]} == {"true", "false"}, sh["sharing"]
# every placement and thread ratio has its 95% interval around it
for row in sh["placements"] + sh["per_thread"]:
    for pol in ("lru", "random"):
        iv = row[pol + "_interval"]
        assert iv["miss_ratio_lo"] - 1e-9 <= row[pol] <= iv["miss_ratio_hi"] + 1e-9, row
for edit in (lambda d: d["share"].pop("sharing"),
             lambda d: d["share"]["placements"][0]["lru_interval"].pop("cliff"),
             lambda d: d["share"]["placements"][0].__setitem__("lru", 1.5),
             lambda d: d["share"]["sharing"][0].__setitem__("threads", "a"),
             lambda d: d["share"]["per_thread"][0].pop("thread")):
    d = copy.deepcopy(doc)
    edit(d)
    assert not v.is_valid(d)
PY

# a recorded program: symbolised functions and heap blocks named by call site
MM=$LOCPROF_BUILD/examples/matmul-lp
if [ -x "$MM" ]; then
	expect_status 0 "$LOCPROF" record -q -o "$T/m.lpp" -- "$MM" naive 100
	expect_status 0 "$LOCPROF" report "$T/m.lpp" --sizes 4K..1M --cache 32K:8:64 --window --format json
	cp "$T/out" "$T/matmul.json"
	validate "$SCHEMA" "$T/matmul.json"
	grep -q '"function":"main (matmul.c:' "$T/matmul.json" || fail "matmul's hot pcs are not named"
else
	echo "note: no $MM (built with clang), the recorded run is not checked" >&2
fi

# simulate: named caches, a hierarchy, a curve, time sampling, attribution,
# several threads
sim() { # NAME OPTIONS...: simulate the allocation trace, keep its JSON
	local name=$1
	shift
	expect_status 0 "$LOCPROF" simulate "$T/alloc.txt" "$@" --format json
	cp "$T/out" "$T/sim-$name.json"
}
sim caches --cache 4K:4:64 --cache 8K:2:64
sim levels --level 4K:4:64 --level 8K:8:64
sim curve --sizes 4K,8K --policy lru,random
sim sampling --cache 4K:4:64 --sample-length 100 --sample-ratio 0.5
sim attribution --cache 4K:4:64 --attribute
sim threads --private 4K:4:64 --private 8K:4:64 --shared 16K:4:64 --attribute
validate "$SIM_SCHEMA" "$T"/sim-*.json
python3 - "$SIM_SCHEMA" "$T"/sim-*.json <<'PY' || fail "the simulate schema accepts a broken document"
import copy, json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
for path in sys.argv[2:]:
    doc = json.load(open(path))
    assert doc["version"] == 1, path
    for key in ("version", "trace"):
        d = copy.deepcopy(doc)
        d.pop(key)
        assert not v.is_valid(d), (path, key)
    for key in ("caches", "levels", "points", "pairs", "mt_levels"):
        if key in doc and doc[key]:
            d = copy.deepcopy(doc)
            d[key][0].pop(next(iter(d[key][0])))
            assert not v.is_valid(d), (path, key)
PY

# the schema rejects what it should: each broken copy of a valid document
python3 - "$SCHEMA" "$T/full.json" <<'PY' || fail "the schema accepts a broken document"
import copy, json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
doc = json.load(open(sys.argv[2]))
assert v.is_valid(doc)
def broken(edit):
    d = copy.deepcopy(doc)
    edit(d)
    return not v.is_valid(d)
assert broken(lambda d: d.pop("version"))
assert broken(lambda d: d.update(version=2))
assert broken(lambda d: d["curves"][0]["points"][0].__setitem__(1, 1.5))
assert broken(lambda d: d["caches"][0].pop("line"))
assert broken(lambda d: d["hot"]["pcs"][0].__setitem__("pc", 4198400))
assert broken(lambda d: d["hot"]["objects"][0].__setitem__("share", -0.1))
# fields other versions add (intervals, per-reference ratios) are allowed
d = copy.deepcopy(doc)
d["caches"][0]["miss_ratio_lo"] = 0.1
d["per_reference"] = {"caches": []}
assert v.is_valid(d)
PY
exit 0
