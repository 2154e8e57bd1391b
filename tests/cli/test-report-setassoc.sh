# report --cache on real layouts (docs/models.md, "Set-associative LRU:
# the placement model"): kernels of bench/setassoc/sa-kernels.c built with
# locprof cc, recorded with the inst backend and in trace mode; the named
# caches' LRU ratio is within 2 points of `locprof simulate` on the trace
# (cold misses left out of both), where random placement is far off:
# - a column walk whose rows are 50 lines: each column on half the sets
#   of 32K:8:64 (simulated 98.8%, binomial model 21%);
# - three contiguous arrays at 95% of 32K:8:64 (simulated 0, binomial 12%).
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }
"$LOCPROF" cc -O2 -o "$T/k" "$LOCPROF_SRC/bench/setassoc/sa-kernels.c" >/dev/null 2>&1 ||
	fail "cannot build sa-kernels"

# check NAME CACHE KERNEL ARGS...: the prediction within 2 points
check() {
	local name=$1 cache=$2
	shift 2
	expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/$name.lpt" -- "$T/k" "$@"
	expect_status 0 "$LOCPROF" record -q -r 1e-3 -o "$T/$name.lpp" -- "$T/k" "$@"
	expect_status 0 "$LOCPROF" simulate "$T/$name.lpt" --cache "$cache" --format csv
	sim=$(awk -F, 'NR == 2 { printf "%.4f", ($4 - $6) / ($3 - $6) }' "$T/out")
	expect_status 0 "$LOCPROF" report "$T/$name.lpp" --cache "$cache" --policy lru --top 0 --format csv
	pred=$(awk -F, -v c="$cache" '$1 == c { print $5 }' "$T/out")
	[ -n "$pred" ] || fail "$name: no $cache row in report's csv"
	echo "$name $cache: simulated $sim, predicted $pred" >&2
	awk -v a="$sim" -v b="$pred" 'BEGIN { d = a - b; exit !(d < 0.02 && d > -0.02) }' ||
		fail "$name $cache: predicted $pred, simulated $sim"
}

check colwalk 32K:8:64 colwalk 300 400 80
check arrays 32K:8:64 arrays 31130 3000

# A reuse a little longer than the cache, its lines spread evenly over the
# sets: 1088 lines (17 per set of 64K:16:64) read in one scattered order
# each round, every reuse 1087 lines. Simulation: every reuse misses, as
# in a fully associative cache; lines placed at random would let a third
# of them hit in sets that hold fewer. The fully associative curve drops
# within 15% of the size, so the interval reaches both, and a line says
# why.
awk 'BEGIN { srand(7); for (i = 0; i < 1088; i++) p[i] = i
	for (i = 1087; i > 0; i--) { j = int(rand() * (i + 1)); t = p[i]; p[i] = p[j]; p[j] = t }
	for (r = 0; r < 40; r++) for (i = 0; i < 1088; i++) printf "R %x 8 0x401000\n", 1048576 + 64 * p[i] }' >"$T/even.txt"
expect_status 0 "$LOCPROF" simulate "$T/even.txt" --cache 64K:16:64 --format csv
sim=$(awk -F, 'NR == 2 { printf "%.4f", ($4 - $6) / ($3 - $6) }' "$T/out")
expect_status 0 "$LOCPROF" sample "$T/even.txt" -o "$T/even.lpp" --rate 0.05
expect_status 0 "$LOCPROF" report "$T/even.lpp" --cache 64K:16:64 --policy lru --top 0 --format csv
awk -F, -v s="$sim" '$1 == "64K:16:64" { found = 1; ok = $7 <= s && s <= $8 && $11 == 1 } END { exit !(found && ok) }' "$T/out" ||
	fail "even spread: simulated $sim outside $(grep '^64K:16:64' "$T/out")"
expect_status 0 "$LOCPROF" report "$T/even.lpp" --cache 64K:16:64 --policy lru --top 0
expect_grep '^64K:16:64 lru: cliff within sampling error: between [0-9.]+% and [0-9.]+% \(the fully associative curve drops steeply within 15% of this size: how each reuse' "$T/out"
