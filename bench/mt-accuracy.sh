#!/usr/bin/env bash
# The thread and shared-cache models (docs/models.md, "Threads and shared
# caches") against the multi-threaded functional simulation, on the five
# kernels of examples/mt/. Each instrumented build is recorded once with
# `locprof record --mode trace` (one faithful order for all threads); the
# trace is sampled (`locprof sample --rate RATE`) and `report --shared`
# predicts, at each size, fully associative LRU:
#   shared    one cache for all threads   vs simulate --sizes (lru-nocold)
#   private   a cache per thread, with    vs simulate --private SIZE:full:64
#             coherence misses               (replacement + coherence)
#   coh       of which coherence misses   vs the same, coherence alone
#   2c        two caches, threads split   vs simulate --private SIZE:full:64
#             in halves (report's         --core-map (threads 0 .. n/2-1 on
#             "2 caches")                 core 0, the others on core 1)
# all per line access, cold misses excluded ((accesses - cold) below).
# Each row gives prediction / simulation; then the mean absolute error
# over the sizes in points (0.01 = 1 point); then how many of the LRU
# ratios (shared, private and two caches at each size) have the simulated
# one inside their 95% interval, and how many the report calls a cliff
# within sampling error. Then the false
# sharing table of mt-counters: packed_counters and its increment, never
# padded_counters.
#
# usage: bench/mt-accuracy.sh [BUILD_DIR] [RATE]
# Environment: THREADS (OMP_NUM_THREADS, default 4); SEEDS (sampler
# seeds, default 1: a row each); RUNS (';'-separated "PROGRAM ARGS"
# runs instead of the five kernels: PROGRAM is a kernel of examples/mt/
# or one of bench/openmp/*.c, built here with `locprof cc -fopenmp`), e.g.
#   RUNS='omp-stencils box9 512 6; omp-kernels triad 400000 8' THREADS=2 \
#     SEEDS='1 2 3' bench/mt-accuracy.sh build 1e-3
# TRACES=DIR keeps the recorded traces there and reuses them on the next
# run (so that two builds are compared on the same interleavings).
# INTERLEAVE=N checks the models on the interleaving they assume, threads
# on cores of their own: each recorded trace is rewritten by
# bench-trace-interleave with its threads taking turns in bursts of 1 to
# 2N - 1 accesses (each thread's own records unchanged), and that trace is
# sampled and simulated instead. A recording on a machine with fewer cores
# than threads runs them one at a time (report --shared says so).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rate=${2:-1e-3}
locprof=$build/locprof
ex=$build/examples
[ -x "$ex/mt-counters-lp" ] || { echo "no $ex/mt-counters-lp: build with clang (scripts/build)" >&2; exit 1; }
w=$(mktemp -d /tmp/locprof-mtacc.XXXXXX)
trap 'rm -rf "$w"' EXIT
sizes=(4K 16K 64K 256K 1M)
# about 10-25 M references each, so that rate 1e-3 gives 10-25 thousand
# samples (mt-sim.sh's smaller runs give a few hundred)
runs=("mt-disjoint 4 16384 64" "mt-readonly 4 65536 1000000" "mt-queue 1000000 256"
	"mt-counters 4 2000000" "mt-stencil 512 8")
[ -z "${RUNS:-}" ] || IFS=';' read -r -a runs <<<"$RUNS"
threads=${THREADS:-4}
seeds=${SEEDS:-1}
list=$(IFS=,; echo "${sizes[*]}")

# The instrumented program of a run: examples/mt's, or bench/openmp's
# built once.
program() {
	if [ -x "$ex/$1-lp" ]; then
		echo "$ex/$1-lp"
	elif [ -f "bench/openmp/$1.c" ]; then
		[ -x "$w/$1" ] || "$locprof" cc -O2 -g -fopenmp -o "$w/$1" "bench/openmp/$1.c" -lm >&2
		echo "$w/$1"
	else
		echo "no kernel '$1' in $ex or bench/openmp" >&2
		exit 1
	fi
}

echo "rate $rate, $threads threads${INTERLEAVE:+, interleaved in bursts of 1 to $((2 * INTERLEAVE - 1)) accesses}; each cell: prediction/simulation"
printf '| kernel | seed | samples |'
for s in "${sizes[@]}"; do printf ' %s shared | %s private | %s coh | %s 2c |' "$s" "$s" "$s" "$s"; done
echo ' error shared | error private | error coh | error 2c | error 2c coh | inside 95% | cliffs |'
for r in "${runs[@]}"; do
	set -- $r
	name=$1
	shift
	trace=$w/$name.lpt
	[ -z "${TRACES:-}" ] || trace=$TRACES/$(echo "$name $* t$threads" | tr ' ' '-').lpt
	if [ ! -f "$trace" ]; then
		prog=$(program "$name")
		OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=passive "$locprof" record --mode trace -o "$trace" -- \
			"$prog" "$@" >/dev/null 2>"$w/$name.err"
	fi
	if [ -n "${INTERLEAVE:-}" ]; then
		fine=${trace%.lpt}-i$INTERLEAVE.lpt
		[ -f "$fine" ] || "$build/bench/bench-trace-interleave" "$trace" "$fine" "$INTERLEAVE" 2>"$w/$name.ierr"
		trace=$fine
	fi
	"$locprof" simulate "$trace" --sizes "$list" --policy lru --format csv >"$w/$name.shared"
	# the trace's threads (numbered 0 ..) in halves, as the model's placement
	nt=$("$locprof" simulate "$trace" --private 4K:full:64 --format csv | awk -F, '$3 ~ /^[0-9]+$/ { n++ } END { print n }')
	map=$(awk -v n="$nt" 'BEGIN { for (t = 0; t < n; t++) printf "%s%d=%d", t ? "," : "", t, int(t * 2 / n) }')
	: >"$w/$name.private"
	: >"$w/$name.two"
	for s in "${sizes[@]}"; do
		for how in private two; do
			extra=()
			[ "$how" = private ] || extra=(--core-map "$map")
			"$locprof" simulate "$trace" --private "$s:full:64" "${extra[@]}" --format csv |
				awk -F, -v s="$s" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
					$3 == "all" { w = $c["accesses"] - $c["cold"]
						printf "%s %.6f %.6f\n", s, ($c["replacement"] + $c["coherence"]) / w, $c["coherence"] / w }' \
				>>"$w/$name.$how"
		done
	done
	for seed in $seeds; do
	"$locprof" sample "$trace" -o "$w/$name.lpp" --rate "$rate" --seed "$seed" 2>"$w/$name.serr"
	"$locprof" report "$w/$name.lpp" --sizes "$list" --shared --top 0 --format csv >"$w/$name.rep"
	samples=$(awk '/samples of/ { print $2 }' "$w/$name.serr")
	awk -v name="$name $*" -v seed="$seed" -v samples="$samples" -v list="$list" '
		BEGIN { n = split(list, sz, ",") }
		FILENAME ~ /rep$/ && /^placement,/ { on = 1; next }
		FILENAME ~ /rep$/ && on && /^$/ { on = 0 }
		FILENAME ~ /rep$/ && on { split($0, f, ",")
			if (f[1] == "shared") { ps[f[3]] = f[4]; sl[f[3]] = f[8]; sh[f[3]] = f[9]; sc[f[3]] = f[12] }
			if (f[1] == "private") { pp[f[3]] = f[4]; pc[f[3]] = f[5]; pl[f[3]] = f[8]; ph[f[3]] = f[9]; pf[f[3]] = f[12] }
			if (f[1] == "2 caches") { p2[f[3]] = f[4]; c2[f[3]] = f[5]; ql[f[3]] = f[8]; qh[f[3]] = f[9]; qf[f[3]] = f[12] } }
		FILENAME ~ /shared$/ && /^lru-nocold,/ { split($0, f, ","); es[f[2]] = f[3] }
		FILENAME ~ /private$/ { ep[$1] = $2; ec[$1] = $3 }
		FILENAME ~ /two$/ { e2[$1] = $2; ee2[$1] = $3 }
		END {
			printf "| %s | %s | %s |", name, seed, samples
			for (i = 1; i <= n; i++) {
				b = sz[i]; bytes = b + 0; if (b ~ /K$/) bytes *= 1024; if (b ~ /M$/) bytes *= 1048576
				if (!(bytes in pp)) { pp[bytes] = ps[bytes]; pl[bytes] = sl[bytes]; ph[bytes] = sh[bytes]; pf[bytes] = sc[bytes] }  # one thread: no private row
				if (!(bytes in pc)) pc[bytes] = 0
				if (!(bytes in p2)) { p2[bytes] = pp[bytes]; c2[bytes] = pc[bytes]; ql[bytes] = pl[bytes]; qh[bytes] = ph[bytes]; qf[bytes] = pf[bytes] }  # two threads
				# the 95% intervals: shared, private and two caches hold the simulation?
				cells += 3
				inside += (sl[bytes] - 1e-9 <= es[bytes] && es[bytes] <= sh[bytes] + 1e-9)
				inside += (pl[bytes] - 1e-9 <= ep[b] && ep[b] <= ph[bytes] + 1e-9)
				inside += (ql[bytes] - 1e-9 <= e2[b] && e2[b] <= qh[bytes] + 1e-9)
				cliffs += sc[bytes] + pf[bytes] + qf[bytes]
				printf " %.4f/%.4f | %.4f/%.4f | %.4f/%.4f | %.4f/%.4f |", ps[bytes], es[bytes], pp[bytes], ep[b],
					pc[bytes], ec[b], p2[bytes], e2[b]
				d1 += (ps[bytes] > es[bytes] ? ps[bytes] - es[bytes] : es[bytes] - ps[bytes])
				d2 += (pp[bytes] > ep[b] ? pp[bytes] - ep[b] : ep[b] - pp[bytes])
				d3 += (pc[bytes] > ec[b] ? pc[bytes] - ec[b] : ec[b] - pc[bytes])
				d4 += (p2[bytes] > e2[b] ? p2[bytes] - e2[b] : e2[b] - p2[bytes])
				d5 += (c2[bytes] > ee2[b] ? c2[bytes] - ee2[b] : ee2[b] - c2[bytes])
			}
			printf " %.2f | %.2f | %.2f | %.2f | %.2f | %d/%d | %d |\n", 100 * d1 / n, 100 * d2 / n, 100 * d3 / n,
				100 * d4 / n, 100 * d5 / n, inside, cells, cliffs
		}' "$w/$name.rep" "$w/$name.shared" "$w/$name.private" "$w/$name.two"
	done
done

[ -f "$w/mt-counters.lpp" ] || exit 0
echo
echo "false sharing found in mt-counters (report --shared, the trace's samples):"
"$locprof" report "$w/mt-counters.lpp" --sizes 32K --shared --top 1 --resamples 0 |
	awk '/^false sharing:/ { on = 1 } /^true sharing:/ { on = 0 } on' | head -8
