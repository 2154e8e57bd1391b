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
