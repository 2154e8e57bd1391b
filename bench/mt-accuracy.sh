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
# all per line access, cold misses excluded ((accesses - cold) below).
# Each row gives prediction / simulation; the last columns the mean
# absolute error over the sizes in points (0.01 = 1 point). Then the false
# sharing table of mt-counters: packed_counters and its increment, never
# padded_counters.
#
# usage: bench/mt-accuracy.sh [BUILD_DIR] [RATE]
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
list=$(IFS=,; echo "${sizes[*]}")

echo "rate $rate; each cell: prediction/simulation"
printf '| kernel | samples |'
for s in "${sizes[@]}"; do printf ' %s shared | %s private | %s coh |' "$s" "$s" "$s"; done
echo ' error shared | error private | error coh |'
for r in "${runs[@]}"; do
	set -- $r
	name=$1
	shift
	OMP_NUM_THREADS=4 OMP_WAIT_POLICY=passive "$locprof" record --mode trace -o "$w/$name.lpt" -- \
		"$ex/$name-lp" "$@" >/dev/null 2>"$w/$name.err"
	"$locprof" sample "$w/$name.lpt" -o "$w/$name.lpp" --rate "$rate" --seed 1 2>"$w/$name.serr"
	"$locprof" report "$w/$name.lpp" --sizes "$list" --shared --top 0 --resamples 0 --format csv >"$w/$name.rep"
	"$locprof" simulate "$w/$name.lpt" --sizes "$list" --policy lru --format csv >"$w/$name.shared"
	: >"$w/$name.private"
	for s in "${sizes[@]}"; do
		"$locprof" simulate "$w/$name.lpt" --private "$s:full:64" --format csv |
			awk -F, -v s="$s" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
				$3 == "all" { w = $c["accesses"] - $c["cold"]
					printf "%s %.6f %.6f\n", s, ($c["replacement"] + $c["coherence"]) / w, $c["coherence"] / w }' \
			>>"$w/$name.private"
	done
	samples=$(awk '/samples of/ { print $2 }' "$w/$name.serr")
	awk -v name="$name $*" -v samples="$samples" -v list="$list" '
		BEGIN { n = split(list, sz, ",") }
		FILENAME ~ /rep$/ && /^placement,/ { on = 1; next }
		FILENAME ~ /rep$/ && on && /^$/ { on = 0 }
		FILENAME ~ /rep$/ && on { split($0, f, ","); if (f[1] == "shared") ps[f[3]] = f[4]
			if (f[1] == "private") { pp[f[3]] = f[4]; pc[f[3]] = f[5] } }
		FILENAME ~ /shared$/ && /^lru-nocold,/ { split($0, f, ","); es[f[2]] = f[3] }
		FILENAME ~ /private$/ { ep[$1] = $2; ec[$1] = $3 }
		END {
			printf "| %s | %s |", name, samples
			for (i = 1; i <= n; i++) {
				b = sz[i]; bytes = b + 0; if (b ~ /K$/) bytes *= 1024; if (b ~ /M$/) bytes *= 1048576
				if (!(bytes in pp)) pp[bytes] = ps[bytes]  # one thread: no private row
				if (!(bytes in pc)) pc[bytes] = 0
				printf " %.4f/%.4f | %.4f/%.4f | %.4f/%.4f |", ps[bytes], es[bytes], pp[bytes], ep[b], pc[bytes], ec[b]
				d1 += (ps[bytes] > es[bytes] ? ps[bytes] - es[bytes] : es[bytes] - ps[bytes])
				d2 += (pp[bytes] > ep[b] ? pp[bytes] - ep[b] : ep[b] - pp[bytes])
				d3 += (pc[bytes] > ec[b] ? pc[bytes] - ec[b] : ec[b] - pc[bytes])
			}
			printf " %.2f | %.2f | %.2f |\n", 100 * d1 / n, 100 * d2 / n, 100 * d3 / n
		}' "$w/$name.rep" "$w/$name.shared" "$w/$name.private"
done

echo
echo "false sharing found in mt-counters (report --shared, the trace's samples):"
"$locprof" report "$w/mt-counters.lpp" --sizes 32K --shared --top 1 --resamples 0 |
	awk '/^false sharing:/ { on = 1 } /^true sharing:/ { on = 0 } on' | head -8
