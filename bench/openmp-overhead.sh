#!/usr/bin/env bash
# Overhead of locprof record on OpenMP programs (docs/commands/record.md,
# "MPI and OpenMP"), as ratios to the native run of the same program:
#   inst          built with locprof cc -fopenmp, locprof record (rate 1e-4)
#   vg-passive    native build, locprof record --backend valgrind,
#                 OMP_WAIT_POLICY=passive (the remedy the backend suggests)
#   vg-default    the same with OMP_WAIT_POLICY unset (idle threads spin)
#   gomp-passive, gomp-default   the same two with a gcc -fopenmp build
#                 (libgomp, whose default is to spin; clang's builds use
#                 LLVM's libomp), each ratio to the gcc build's native run
# on the kernels of bench/openmp/omp-kernels.c with 2 and 4 threads
# (OMP_NUM_THREADS; the native and inst runs use the default wait policy).
# The configurations of one kernel and thread count run REPEAT times
# (default 5) in rounds, alternating (the order rotated every round), and
# each ratio is the median of the per-round ratios to that round's native
# run: on a shared machine two runs a few seconds apart see the same load.
# Wall time is what a user waits; CPU time (user + system of every process)
# includes spinning threads. The references each run recorded are printed
# too: spin-waiting under valgrind shows there.
#
# usage: bench/openmp-overhead.sh [BUILD_DIR] [KERNEL...]
#   KERNEL: triad, jacobi, reduce (default: all three). REPEAT=N, THREADS
#   ("2 4"), N (elements, default 1000000) and ITERS (default 20) in the
#   environment. CONFIGS picks configurations (default: all; "native inst"
#   where valgrind is not installed). PREBUILT=DIR takes the programs
#   native, gomp and inst from DIR instead of building them (for a machine
#   without compilers: build them elsewhere with the three commands below).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(triad jacobi reduce)
repeat=${REPEAT:-5} threads=${THREADS:-2 4} n=${N:-1000000} iters=${ITERS:-20}
locprof=$(cd "$build" && pwd)/locprof
[ -x "$locprof" ] || { echo "no $locprof: build first (scripts/build)" >&2; exit 2; }

w=$(mktemp -d /tmp/locprof-ompover.XXXXXX)
trap 'rm -rf "$w"' EXIT
if [ -n "${PREBUILT:-}" ]; then
	cp "$PREBUILT"/native "$PREBUILT"/gomp "$PREBUILT"/inst "$w"/
else
	clang -O2 -g -fopenmp -o "$w/native" bench/openmp/omp-kernels.c -lm
	gcc -O2 -g -fopenmp -o "$w/gomp" bench/openmp/omp-kernels.c -lm
	"$locprof" cc -O2 -g -fopenmp -o "$w/inst" bench/openmp/omp-kernels.c -lm
fi
read -r -a configs <<<"${CONFIGS:-native inst vg-passive vg-default gomp-native gomp-passive gomp-default}"
nconf=${#configs[@]}

# run NAME CMD...: one timed run; appends "NAME wall cpu references" to $w/times
run() {
	local name=$1 refs=0
	shift
	TIMEFORMAT='%R %U %S'
	{ time "$@" >"$w/out" 2>"$w/err"; } 2>"$w/time" || { cat "$w/err" >&2; echo "failed: $*" >&2; exit 1; }
	read -r wall user sys <"$w/time"
	refs=$(awk '{ for (i = 1; i < NF; i++) if ($i == "of" && $(i + 2) == "references") s += $(i + 1) } END { print s + 0 }' "$w/err")
	echo "$name $wall $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') $refs" >>"$w/times"
}

printf '%-8s %3s  %-11s %10s %10s %12s %14s\n' kernel thr config wall-ratio cpu-ratio "native wall s" references
for k in "${kernels[@]}"; do
	for t in $threads; do
		: >"$w/times"
		for r in $(seq "$repeat"); do
			# rotate the order every round
			for i in $(seq 0 $((nconf - 1))); do
				c=${configs[$(((i + r) % nconf))]}
				case $c in
				native) run "$r:native" env OMP_NUM_THREADS="$t" "$w/native" "$k" "$n" "$iters" ;;
				gomp-native) run "$r:gomp-native" env OMP_NUM_THREADS="$t" "$w/gomp" "$k" "$n" "$iters" ;;
				gomp-passive) run "$r:gomp-passive" env OMP_NUM_THREADS="$t" OMP_WAIT_POLICY=passive \
					"$locprof" record --backend valgrind -o "$w/p.lpp" -- "$w/gomp" "$k" "$n" "$iters" ;;
				gomp-default) run "$r:gomp-default" env -u OMP_WAIT_POLICY OMP_NUM_THREADS="$t" \
					"$locprof" record --backend valgrind -o "$w/p.lpp" -- "$w/gomp" "$k" "$n" "$iters" ;;
				inst) run "$r:inst" env OMP_NUM_THREADS="$t" "$locprof" record -o "$w/p.lpp" -- "$w/inst" "$k" "$n" "$iters" ;;
				vg-passive) run "$r:vg-passive" env OMP_NUM_THREADS="$t" OMP_WAIT_POLICY=passive \
					"$locprof" record --backend valgrind -o "$w/p.lpp" -- "$w/native" "$k" "$n" "$iters" ;;
				vg-default) run "$r:vg-default" env -u OMP_WAIT_POLICY OMP_NUM_THREADS="$t" \
					"$locprof" record --backend valgrind -o "$w/p.lpp" -- "$w/native" "$k" "$n" "$iters" ;;
				esac
			done
		done
		awk -v k="$k" -v t="$t" '
			{ split($1, f, ":"); r = f[1]; c = f[2]; wall[r, c] = $2; cpu[r, c] = $3; refs[r, c] = $4; rounds[r] = 1
			  if (!(c in seen)) { seen[c] = 1; order[++nc] = c } }
			function median(v, n,   i, j, x) {
				for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
				return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
			END {
				for (ci = 1; ci <= nc; ci++) {
					c = order[ci]; if (c ~ /native$/) continue; m = 0
					base = c ~ /^gomp-/ ? "gomp-native" : "native"
					for (r in rounds) { m++; wr[m] = wall[r, c] / wall[r, base]; cr[m] = cpu[r, c] / (cpu[r, base] > 0 ? cpu[r, base] : 0.001); nw[m] = wall[r, base]; rf[m] = refs[r, c] }
					printf "%-8s %3d  %-11s %9.1fx %9.1fx %12.3f %14.0f\n", k, t, c, median(wr, m), median(cr, m), median(nw, m), median(rf, m)
				}
			}' "$w/times"
	done
done
