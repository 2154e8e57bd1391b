# MPI ranks: locprof record names each rank's profile by the rank in the
# launcher's environment and records rank, world size and host in it;
# report over several profiles sums them (ratios weighted by line
# accesses, misses summed) or prints each with --per-rank. The naming runs
# everywhere (the variables set by hand); the 2-rank run of
# examples/halo.c needs Open MPI (scripts/install-deps).
. "$(dirname "$0")/lib.sh"

command -v clang >/dev/null || { echo "SKIP: no clang for locprof cc" >&2; exit 0; }
cat >"$T/walk.c" <<'EOF'
#include <stdlib.h>
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4096, s = 0;
	long *a = calloc(n, sizeof(*a));
	for (int r = 0; r < 20; r++)
		for (long i = 0; i < n; i += 8)
			s += a[i]++;
	return (int)(s & 1);
}
EOF
"$LOCPROF" cc -O1 -g -o "$T/walk" "$T/walk.c" || fail "cannot build walk.c with locprof cc"

# ---- the rank from the environment, without a launcher -------------------
expect_status 0 env OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 "$LOCPROF" record -q --rate 0.05 -o "$T/w.lpp" -- "$T/walk"
[ -s "$T/w.rank3.lpp" ] && [ ! -e "$T/w.lpp" ] || { ls "$T" >&2; fail "OMPI_COMM_WORLD_RANK=3: expected w.rank3.lpp only"; }
expect_status 0 "$LOCPROF" dump "$T/w.rank3.lpp"
expect_grep "^MPI rank: 3 of 4$" "$T/out"
expect_grep "^host: $(hostname)$" "$T/out"
expect_status 0 env PMI_RANK=1 PMI_SIZE=2 "$LOCPROF" record -q --rate 0.05 -o "$T/w.lpp" -- "$T/walk" 8192
expect_status 0 "$LOCPROF" dump "$T/w.rank1.lpp"
expect_grep "^MPI rank: 1 of 2$" "$T/out"
# each rank its own seed (rank 0 keeps --seed), so two ranks of one
# program sample different references
expect_status 0 env PMI_RANK=0 PMI_SIZE=2 "$LOCPROF" record -q --rate 0.05 --seed 7 -o "$T/s.lpp" -- "$T/walk"
expect_status 0 env PMI_RANK=1 PMI_SIZE=2 "$LOCPROF" record -q --rate 0.05 --seed 7 -o "$T/s.lpp" -- "$T/walk"
"$LOCPROF" dump "$T/s.rank0.lpp" >"$T/d0" && "$LOCPROF" dump "$T/s.rank1.lpp" >"$T/d1" || fail "dump s.rank*.lpp"
expect_grep "seed: 7 " "$T/d0"
expect_grep "seed: $(printf '%u' $(( 7 + 0x9e3779b97f4a7c15 ))) " "$T/d1"
cmp -s <(awk '!/^#/ && NF >= 8 && $1 ~ /^[0-9]+$/ { print $2 }' "$T/d0") \
	<(awk '!/^#/ && NF >= 8 && $1 ~ /^[0-9]+$/ { print $2 }' "$T/d1") &&
	fail "ranks 0 and 1 of one program sampled the same references (the same seed)"
# PMIx alone gives no world size
expect_status 0 env PMIX_RANK=5 "$LOCPROF" record -q --rate 0.05 -o "$T/x.samples" -- "$T/walk"
[ -s "$T/x.rank5.samples" ] || fail "PMIX_RANK=5: expected x.rank5.samples"
expect_status 0 env PMIX_RANK=5 "$LOCPROF" record -q --rate 0.05 -o "$T/x.lpp" -- "$T/walk"
expect_status 0 "$LOCPROF" dump "$T/x.rank5.lpp" --format json
expect_grep '"mpi_rank":5,"mpi_size":0' "$T/out"
# a trace on stdout from several ranks would interleave
expect_status 2 env PMI_RANK=0 PMI_SIZE=2 "$LOCPROF" record -q --mode trace -o - -- "$T/walk"
expect_grep "^locprof: error: -o - under MPI" "$T/err"
# not an MPI rank: no RANK chunk, the name as given
expect_status 0 "$LOCPROF" record -q --rate 0.05 -o "$T/plain.lpp" -- "$T/walk"
expect_status 0 "$LOCPROF" dump "$T/plain.lpp"
grep -q "^MPI rank" "$T/out" && fail "a profile of no MPI rank shows one"

# ---- several profiles in one report ----------------------------------------
# the same profile twice (a copy: one file named twice is refused): the
# same ratios, twice the references and misses
cp "$T/plain.lpp" "$T/copy.lpp"
opts=(--sizes 4K,64K --cache 16K:4:64 --resamples 0)
expect_status 0 "$LOCPROF" report "$T/plain.lpp" "${opts[@]}" --format json
cp "$T/out" "$T/one.json"
expect_status 0 "$LOCPROF" report "$T/plain.lpp" "$T/copy.lpp" "${opts[@]}" --format json
cp "$T/out" "$T/two.json"
python3 - "$T/one.json" "$T/two.json" <<'PY' || fail "a profile summed with itself"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert b["accesses"] == 2 * a["accesses"] and b["samples"] == 2 * a["samples"], (a["accesses"], b["accesses"])
for ca, cb in zip(a["curves"], b["curves"]):
    for (sa, ra), (sb, rb) in zip(ca["points"], cb["points"]):
        assert sa == sb and abs(ra - rb) < 2e-6, (ca["name"], sa, ra, rb)
assert abs(a["caches"][0]["lru"] - b["caches"][0]["lru"]) < 2e-6
pa = {p["function"]: p["misses"] for p in a["hot"]["pcs"]}
pb = {p["function"]: p["misses"] for p in b["hot"]["pcs"]}
assert pa and all(abs(pb[k] - 2 * v) <= 0.2 for k, v in pa.items()), (pa, pb)
assert [p["profile"] for p in b["profiles"]] == [sys.argv[1].replace("one.json", n) for n in ("copy.lpp", "plain.lpp")], b["profiles"]
PY

# annotate sums them the same way: each source line's misses and accesses
expect_status 0 "$LOCPROF" annotate "$T/plain.lpp" --format json
cp "$T/out" "$T/a1.json"
expect_status 0 "$LOCPROF" annotate "$T/plain.lpp" "$T/copy.lpp" walk.c --format json
python3 - "$T/a1.json" "$T/out" <<'PY' || fail "annotate of a profile summed with itself"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
la = {(l["file"], l["line"]): l for l in a["lines"]}
lb = {(l["file"], l["line"]): l for l in b["lines"]}
assert la and la.keys() == lb.keys(), (la.keys(), lb.keys())
for k in la:
    assert abs(lb[k]["misses"] - 2 * la[k]["misses"]) < 1 and abs(lb[k]["line_accesses"] - 2 * la[k]["line_accesses"]) < 1, k
assert b["profile"] == "2 profiles summed", b["profile"]
PY

# diff: run A the profile twice (before --), run B once: the same ratios,
# A's misses twice B's
expect_status 0 "$LOCPROF" diff --sizes 4K,64K --at 4K --format json "$T/plain.lpp" "$T/copy.lpp" -- "$T/plain.lpp"
python3 - "$T/out" <<'PY' || fail "diff of a profile summed with itself against it"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["a"]["profile"] == "2 profiles" and d["a"]["accesses"] == 2 * d["b"]["accesses"], (d["a"], d["b"])
assert all(abs(p["delta"]) < 2e-6 for c in d["curves"] for p in c["points"])
lines = d["hot"]["lines"]
assert lines and all(abs(l["misses_a"] - 2 * l["misses_b"]) < 1 for l in lines), lines
PY
expect_status 2 "$LOCPROF" diff "$T/plain.lpp" "$T/copy.lpp" --
expect_grep "no profile of run B after '--'" "$T/err"
expect_status 2 "$LOCPROF" report "$T/plain.lpp" "$T/plain.lpp"
expect_grep "is given twice" "$T/err"

# two ranks of different sizes: the whole job's ratio is the ranks' weighted
# by their line accesses, its references their sum
expect_status 0 "$LOCPROF" report "$T/w.rank3.lpp" "$T/w.rank1.lpp" "${opts[@]}" --per-rank --format json
python3 - "$T/out" <<'PY' || fail "report --per-rank over two ranks"
import json, sys
d = json.load(open(sys.argv[1]))
ranks = d["ranks"]
assert [r["rank"] for r in ranks] == [1, 3] and [r["world_size"] for r in ranks] == [2, 4], ranks
assert [p["rank"] for p in d["profiles"]] == [1, 3]
assert d["accesses"] == sum(r["accesses"] for r in ranks)
assert ranks[0]["accesses"] != ranks[1]["accesses"]
for k, c in enumerate(d["curves"]):
    for i, (size, ratio) in enumerate(c["points"]):
        want = sum(r["curves"][k]["points"][i][1] * r["accesses"] for r in ranks) / d["accesses"]
        assert abs(ratio - want) < 2e-6, (c["name"], size, ratio, want)
PY
expect_status 0 "$LOCPROF" report "$T/w.rank1.lpp" "$T/w.rank3.lpp" "${opts[@]}"
expect_grep "^2 profiles, summed" "$T/out"
expect_grep "^rank 1 of 2 +$(hostname) +[0-9]+ +[0-9]+ +[0-9]+ +.*w.rank1.lpp$" "$T/out"
expect_grep "^2 profiles summed: [0-9]+ samples" "$T/out"
expect_status 0 "$LOCPROF" report "$T/w.rank1.lpp" "$T/w.rank3.lpp" "${opts[@]}" --per-rank
expect_grep "^== .*w.rank1.lpp: rank 1 of 2, host " "$T/out"
expect_grep "^== .*w.rank3.lpp: rank 3 of 4, host " "$T/out"
expect_status 0 "$LOCPROF" report "$T/w.rank1.lpp" "$T/w.rank3.lpp" "${opts[@]}" --format csv
expect_grep "^profile,rank,world_size,host,references,line_accesses,samples$" "$T/out"
expect_grep "w.rank3.lpp,3,4," "$T/out"
expect_status 2 "$LOCPROF" report "$T/w.rank1.lpp" "$T/w.rank3.lpp" --window
expect_grep "^locprof: error: --window with several profiles needs --per-rank" "$T/err"
if python3 -c 'import jsonschema' 2>/dev/null; then
	expect_status 0 "$LOCPROF" report "$T/w.rank1.lpp" "$T/w.rank3.lpp" --per-rank --threads --format json
	python3 - "$LOCPROF_SRC/docs/report.schema.json" "$T/out" <<'PY' || fail "the ranks' JSON against docs/report.schema.json"
import json, sys
from jsonschema import Draft202012Validator
Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))
PY
fi
# different line sizes cannot be summed
expect_status 0 env PMI_RANK=0 PMI_SIZE=2 "$LOCPROF" record -q --rate 0.05 -l 128 -o "$T/w.lpp" -- "$T/walk"
expect_status 1 "$LOCPROF" report "$T/w.rank0.lpp" "$T/w.rank1.lpp"
expect_grep "different line sizes" "$T/err"

# ---- mpirun: examples/halo.c on 2 ranks ------------------------------------
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
	echo "SKIP: the 2-rank MPI run: no mpirun/mpicc (scripts/install-deps installs Open MPI)" >&2
	exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_plm_rsh_agent=false
mpicc -O2 -g -o "$T/halo" "$LOCPROF_SRC/examples/halo.c" || fail "mpicc examples/halo.c"
OMPI_CC="$LOCPROF cc" mpicc -O2 -g -o "$T/halo-lp" "$LOCPROF_SRC/examples/halo.c" ||
	fail "OMPI_CC='locprof cc' mpicc examples/halo.c"
args=(256 32 10)
mpirun --oversubscribe -np 2 "$T/halo" "${args[@]}" >"$T/native" || fail "mpirun of the plain build"
expect_status 0 mpirun --oversubscribe -np 2 "$LOCPROF" record --rate 0.01 -o "$T/halo.lpp" -- "$T/halo-lp" "${args[@]}"
cmp -s "$T/native" "$T/out" || { cat "$T/native" "$T/out" >&2; fail "the profiled run's output differs"; }
for r in 0 1; do
	[ -s "$T/halo.rank$r.lpp" ] || { ls "$T" >&2; fail "no profile of rank $r"; }
	expect_status 0 "$LOCPROF" dump "$T/halo.rank$r.lpp"
	expect_grep "^MPI rank: $r of 2$" "$T/out"
	awk '/^references:/ { print $2 }' "$T/out" >"$T/refs.$r"
done
[ "$(cat "$T/refs.0")" -gt "$(cat "$T/refs.1")" ] || fail "rank 0 (twice the rows) should make more references"
expect_status 0 "$LOCPROF" report "$T/halo.rank0.lpp" "$T/halo.rank1.lpp" --cache 32K:8:64 --format json
python3 - "$T/out" "$(cat "$T/refs.0")" "$(cat "$T/refs.1")" <<'PY' || fail "report over the 2 ranks of halo"
import json, sys
d = json.load(open(sys.argv[1]))
assert [p["rank"] for p in d["profiles"]] == [0, 1]
assert sum(p["references"] for p in d["profiles"]) == int(sys.argv[2]) + int(sys.argv[3])
assert any("sweep" in (p["function"] or "") for p in d["hot"]["pcs"]), d["hot"]["pcs"]
PY

# the valgrind backend under mpirun, on the plain build
if [ -x "$LOCPROF_BUILD/src/vg/locprof-amd64-linux" ] && command -v valgrind >/dev/null; then
	expect_status 0 mpirun --oversubscribe -np 2 "$LOCPROF" record --backend valgrind -o "$T/vg.lpp" -- "$T/halo" "${args[@]}"
	cmp -s "$T/native" "$T/out" || fail "the run under valgrind printed something else"
	for r in 0 1; do
		expect_status 0 "$LOCPROF" dump "$T/vg.rank$r.lpp"
		expect_grep "^MPI rank: $r of 2$" "$T/out"
		expect_grep "^source: valgrind$" "$T/out"
	done
fi
