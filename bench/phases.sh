#!/usr/bin/env bash
# Phase-guided sampling (record --phases) against constant-rate sampling
# on the programs of examples/phases.c: the iterative solver alternating
# two kernels, and the set-up followed by a long steady state. Each round
# records each program twice, once at a constant rate and once with
# --phases at the same rate and seed, in alternating order, and compares:
#   diff     mean |difference| of the working-set graphs (both models,
#            sizes 4K..64M), in points of miss ratio (max: the largest)
#   samples  samples of the constant-rate profile / samples with --phases
#   cpu      the program's CPU time with --phases / at a constant rate
#   total    the same for the whole `locprof record` (collector included)
# The table gives the median over RUNS rounds (default 5).
# usage: bench/phases.sh [BUILD_DIR]   (default build/)
#   RUNS=N rounds;  RATE=R sampling rate (default 1e-3);  ONLY=solver|steady
#   PHASEOPTS='...' more options for the --phases runs
#   BACKEND=inst (default: examples/phases built with locprof cc) or
#   valgrind (the native examples/phases under --backend valgrind; there
#   cpu is the whole run's, valgrind's and the collector's, as total)
#   SOLVER=N STEADY=N the workloads' sizes (default 80 and 300)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
RUNS=${RUNS:-5}
RATE=${RATE:-1e-3}
BACKEND=${BACKEND:-inst}
L=$B/locprof
CPU=$B/bench/bench-cputime
case "$BACKEND" in
inst) P=$B/examples/phases-lp ;;
valgrind) P=$B/examples/phases ;;
*) echo "phases: BACKEND is inst or valgrind" >&2; exit 2 ;;
esac
[ -x "$CPU" ] && [ -x "$P" ] || { echo "phases: build first (no $CPU or $P)" >&2; exit 1; }
T=$(mktemp -d /tmp/locprof-phases.XXXXXX)
trap 'rm -rf "$T"' EXIT

curve() { "$L" report -F csv --resamples 0 --top 0 "$1" | awk -F, '$1 == "statstack" || $1 == "statcache" { print $1 "," $2 "," $3 }'; }
samples() { "$L" report -F json --resamples 0 --top 0 "$1" | sed 's/.*"recorded_samples":\([0-9]*\).*/\1/'; }
cpu() { awk '{ print $1 }' "$1"; }

# record KIND WORKLOAD SEED: the profile in $T/KIND.lpp, the program's
# CPU time in $T/KIND.cpu (bench-cputime, from a script, since record runs
# only instrumented programs or scripts), the whole command's in $T/KIND.all
record() {
	local extra=()
	[ "$1" = phases ] && extra=(--phases ${PHASEOPTS:-})
	if [ "$BACKEND" = valgrind ]; then
		# one process: valgrind's CPU time is the program's under it
		"$CPU" "$T/$1.all" "$L" record -q -b valgrind -o "$T/$1.lpp" --rate "$RATE" --seed "$3" \
			"${extra[@]}" -- "$P" $2 >/dev/null
		cp "$T/$1.all" "$T/$1.cpu"
		return
	fi
	printf '#!/bin/sh\nexec "%s" "%s" "%s" %s\n' "$CPU" "$T/$1.cpu" "$P" "$2" >"$T/run-$1"
	chmod +x "$T/run-$1"
	rm -f "$T/$1".*.lpp
	"$CPU" "$T/$1.all" "$L" record -q -o "$T/$1.lpp" --rate "$RATE" --seed "$3" "${extra[@]}" \
		-- "$T/run-$1" >/dev/null
	# the program is a child of bench-cputime: its profile has its pid
	mv "$(ls "$T/$1".*.lpp | head -1)" "$T/$1.lpp"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf "%-10s %8s %8s %9s %7s %7s  (%s backend, rate %s, %s rounds, medians)\n" workload diff max samples cpu \
	total "$BACKEND" "$RATE" "$RUNS"
for w in "solver ${SOLVER:-80}" "steady ${STEADY:-300}"; do
	[ -n "${ONLY:-}" ] && [ "$ONLY" != "${w%% *}" ] && continue
	: >"$T/rows"
	for i in $(seq "$RUNS"); do
		if [ $((i % 2)) = 1 ]; then record const "$w" "$i"; record phases "$w" "$i"
		else record phases "$w" "$i"; record const "$w" "$i"; fi
		curve "$T/const.lpp" >"$T/c.csv"
		curve "$T/phases.lpp" >"$T/p.csv"
		d=$(paste -d, "$T/c.csv" "$T/p.csv" | awk -F, '{ d = $3 - $6; d = d < 0 ? -d : d; s += d; if (d > m) m = d }
			END { printf "%.3f %.3f", 100 * s / NR, 100 * m }')
		echo "$d $(samples "$T/const.lpp") $(samples "$T/phases.lpp") $(cpu "$T/const.cpu") $(cpu "$T/phases.cpu")" \
			"$(cpu "$T/const.all") $(cpu "$T/phases.all")" >>"$T/rows"
	done
	printf "%-10s %8.3f %8.3f %9.2f %7.3f %7.3f\n" "$w" \
		"$(awk '{ print $1 }' "$T/rows" | median)" "$(awk '{ print $2 }' "$T/rows" | median)" \
		"$(awk '{ print $3 / $4 }' "$T/rows" | median)" "$(awk '{ print $6 / $5 }' "$T/rows" | median)" \
		"$(awk '{ print $8 / $7 }' "$T/rows" | median)"
done
