# The multi-threaded kernels of examples/mt/, recorded with --mode trace
# (compiler instrumentation) and simulated with private caches, a shared
# one and coherence: false sharing is found on the packed counter array
# and its increment, and not on the padded one; disjoint arrays and a
# read-only table have none (only their results, read by main, are
# shared); a producer-consumer queue and an OpenMP stencil have true
# sharing. How many coherence misses a run has depends on how the threads
# overlapped on this machine's cores (the trace is the order they ran in),
# so the counts are only bounded from below.
. "$(dirname "$0")/lib.sh"
EX=$LOCPROF_BUILD/examples
[ -x "$EX/mt-counters-lp" ] || { echo "SKIP: the instrumented examples were not built (no clang)" >&2; exit 0; }
SIM=(--private 32K:8:64 --private 256K:8:64 --shared 8M:16:64)

trace() { # NAME ARGS...: record examples/mt/NAME.c's instrumented build
	local name=$1
	shift
	expect_status 0 "$LOCPROF" record --mode trace -o "$T/$name.lpt" -- "$EX/$name-lp" "$@"
}

# the L1 total row's COLUMN (CSV): coherence, false_sharing, true_sharing
l1_total() {
	awk -F, -v col="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == "L1" && $3 == "all" { print $c[col] }' "$1"
}

# 1. Counters: every coherence miss of packed_counters is false sharing,
#    charged to bump_packed's increment; padded_counters has none.
trace mt-counters 4 50000
expect_status 0 "$LOCPROF" simulate "$T/mt-counters.lpt" "${SIM[@]}" --attribute --top 0
cp "$T/out" "$T/counters.txt"
expect_grep '^## false sharing and true sharing per data object' "$T/counters.txt"
awk '/^## false sharing and true sharing per data object/ { on = 1; next } /^## / { on = 0 }
	on && $1 == "packed_counters" { found = 1; if ($2 < 3 || $3 != $2 || $4 != 0) bad = 1 }
	on && $1 == "padded_counters" { bad = 1 }
	END { exit !(found && !bad) }' "$T/counters.txt" ||
	{ cat "$T/counters.txt" >&2; fail "false sharing not found on packed_counters alone"; }
awk '/^## false sharing and true sharing per instruction/ { on = 1; next }
	on && $1 ~ /^0x/ { n++; if ($2 !~ /^mt-counters\.c:/ || $3 != "packed_counters" || $NF !~ /^\(mt-counters\.c:/) bad = 1 }
	END { exit !(n > 0 && !bad) }' "$T/counters.txt" ||
	{ cat "$T/counters.txt" >&2; fail "the false-sharing pcs are not the packed increment's"; }
grep -q 'bump_packed (mt-counters.c' "$T/counters.txt" || fail "the invalidating write is not bump_packed's"

# 2. Disjoint arrays and a read-only table: no coherence miss on them;
#    only main's reads of the results the threads wrote (one line each).
for k in "mt-disjoint 4 2048 2 main.sums" "mt-readonly 4 4096 5000 main.jobs"; do
	set -- $k
	trace "$1" "$2" "$3" "$4"
	expect_status 0 "$LOCPROF" simulate "$T/$1.lpt" "${SIM[@]}" --attribute --top 0
	awk -v results="$5" '/^## false sharing and true sharing per data object/ { on = 1; next } /^## / { on = 0 }
		on && $1 != "data" && NF > 3 { if ($1 != results || $2 > 4) bad = 1 }
		END { exit bad }' "$T/out" || { cat "$T/out" >&2; fail "$1: coherence misses beyond the results"; }
done

# 3. Producer and consumer, and the stencil's block edges: true sharing.
trace mt-queue 5000 64
expect_status 0 "$LOCPROF" simulate "$T/mt-queue.lpt" "${SIM[@]}" --format csv
[ "$(l1_total "$T/out" true_sharing)" -gt 100 ] || { cat "$T/out" >&2; fail "mt-queue: no true sharing"; }
OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive trace mt-stencil 64 3
expect_status 0 "$LOCPROF" simulate "$T/mt-stencil.lpt" "${SIM[@]}" --format csv
[ "$(l1_total "$T/out" true_sharing)" -gt 0 ] || { cat "$T/out" >&2; fail "mt-stencil: no true sharing"; }
