#!/usr/bin/env bash
# The hardware counter (--counter pmu) against the exact step counter, on a
# machine whose PMU counts retired loads and stores. Each target runs twice
# with the same seed and mean period, once per counter, through the engine's
# test driver; both counters draw the same sample points, so where the
# hardware clock equals the decoded one (docs/pmu.md, "What is counted"),
# the two runs take the same samples. Prints per target:
#   refs      the clock at the end under each counter (user-mode references)
#   same      the share of the pmu run's samples that the step run also took
#             (same time, pc and address)
#   same dist the share that also ended at the same time (same reuse distance)
#   cpu s     CPU seconds of the step run, the pmu run and the program alone
# then the cost of the pmu counter on a longer run (program alone, and
# sampling at two periods), and the threaded targets' health (exit status,
# samples, decoding misses) under the hardware counter.
# On a machine without counters it prints the engine's one-line error and
# exits 1.
#
# Usage: bench/pmu-hardware.sh [PERIOD]   (default 300)
#   BUILD=dir (default build): locprof-pmu-probe and the pmu-target-* programs
#   KERNELS=dir: static builds of bench/kernels (made here with cc -O2
#   -static when the directory does not exist)
set -uo pipefail
cd "$(dirname "$0")/.."
PERIOD=${1:-300}
COUNTER=${COUNTER:-pmu} # pmu-sw tries the script where there is no PMU (its distances mean nothing)
BUILD=${BUILD:-build}
PROBE=$(ls "$BUILD"/src/pmu/locprof-pmu-probe "$BUILD"/locprof-pmu-probe 2>/dev/null | head -n 1)
T=$(dirname "$(ls "$BUILD"/src/pmu/pmu-target-loop "$BUILD"/pmu-target-loop 2>/dev/null | head -n 1)")
KERNELS=${KERNELS:-$BUILD/kernels-static}
[ -x "$PROBE" ] || { echo "pmu-hardware: no locprof-pmu-probe under $BUILD" >&2; exit 2; }
tmp=$(mktemp -d /tmp/locprof-pmuhw-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$PROBE" --counter $COUNTER --period 1000000 --stats --out /dev/null -- "$T/pmu-target-loop" >/dev/null 2>"$tmp/err"
if ! grep -q '^refs ' "$tmp/err"; then
	echo "pmu-hardware: the hardware counter does not run here: $(tail -n 1 "$tmp/err")"
	exit 1
fi
if [ ! -d "$KERNELS" ]; then
	mkdir -p "$KERNELS"
	for k in gemm jacobi2d mv-col chain histogram lu; do
		cc -O2 -static -w -Ibench/kernels bench/kernels/$k.c -o "$KERNELS/$k" -lm || exit 2
	done
fi

cpu() { # CPU seconds (user + system, children included) of a command
	local TIMEFORMAT='%U %S'
	{ time "$@" >/dev/null 2>&1; } 2>&1 | awk '{ printf "%.2f", $1 + $2 }'
}

stat_of() { grep -m 1 '^refs ' "$1" | tr ' ' '\n' | awk -v k="$2" 'prev == k { print; exit } { prev = $0 }'; }

compare() { # name, program and arguments
	local name=$1; shift
	local s=$tmp/$name.step p=$tmp/$name.pmu
	local cs cp cn
	cs=$(cpu "$PROBE" --counter step --seed 1 --period "$PERIOD" --stats --out "$s.out" -- "$@")
	"$PROBE" --counter step --seed 1 --period "$PERIOD" --stats --out "$s.out" -- "$@" >/dev/null 2>"$s.err"
	cp=$(cpu "$PROBE" --counter $COUNTER --seed 1 --period "$PERIOD" --stats --out "$p.out" -- "$@")
	"$PROBE" --counter $COUNTER --seed 1 --period "$PERIOD" --stats --out "$p.out" -- "$@" >/dev/null 2>"$p.err"
	cn=$(cpu "$@")
	awk -v name="$name" -v rs="$(stat_of "$s.err" refs)" -v rp="$(stat_of "$p.err" refs)" \
		-v cs="$cs" -v cp="$cp" -v cn="$cn" -v dm="$(stat_of "$p.err" decode_misses)" '
		FNR == NR { at[$1] = $3 " " $4; end[$1] = $2; ns++; next }
		{ np++; if (($1 in at) && at[$1] == $3 " " $4) { same++; if (end[$1] == $2) dist++ } }
		END {
			printf "%-16s %10s %10s %+8.4f%% %6d %6d %6.1f%% %6.1f%% %3s %7s %7s %6s\n", name, rs, rp,
				rs ? 100 * (rp - rs) / rs : 0, ns, np, np ? 100 * same / np : 0,
				np ? 100 * dist / np : 0, dm, cs, cp, cn
		}' "$s.out" "$p.out"
}

uname -r
grep -m 1 'model name' /proc/cpuinfo
echo "perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
echo "period $PERIOD"
printf '%-16s %10s %10s %9s %6s %6s %7s %7s %3s %7s %7s %6s\n' target "refs step" "refs pmu" "diff" \
	"n step" "n pmu" same "same d" dm "cpu stp" "cpu pmu" native
compare loop "$T/pmu-target-loop"
compare stride "$T/pmu-target-stride" 2 65536
compare patterns "$T/pmu-target-patterns"
compare gather "$T/pmu-target-gather" 2
compare gemm-24 "$KERNELS/gemm" 24
compare jacobi2d-40 "$KERNELS/jacobi2d" 40
compare mv-col-96 "$KERNELS/mv-col" 96
compare chain-24 "$KERNELS/chain" 24
compare histogram-20k "$KERNELS/histogram" 20000
compare lu-32 "$KERNELS/lu" 32

echo "cost of the hardware counter (CPU s): gemm 300"
for period in 1000000 100000; do
	n=$(cpu "$KERNELS/gemm" 300)
	c=$(cpu "$PROBE" --counter $COUNTER --seed 1 --period $period --stats --out "$tmp/cost.out" -- "$KERNELS/gemm" 300)
	"$PROBE" --counter $COUNTER --seed 1 --period $period --stats --out "$tmp/cost.out" -- "$KERNELS/gemm" 300 >/dev/null 2>"$tmp/cost.err"
	echo "period $period: native $n, sampled $c, refs $(stat_of "$tmp/cost.err" refs), samples $(wc -l <"$tmp/cost.out"), false_faults $(stat_of "$tmp/cost.err" false_faults), skid_steps $(stat_of "$tmp/cost.err" skid_steps)"
done

echo "threads under the hardware counter:"
for t in threads busy samepc; do
	"$T/pmu-target-$t" >"$tmp/$t.native" 2>&1
	rn=$?
	"$PROBE" --counter $COUNTER --seed 1 --period 50 --stats --out "$tmp/$t.out" -- "$T/pmu-target-$t" >"$tmp/$t.run" 2>"$tmp/$t.err"
	rc=$?
	same=no
	cmp -s "$tmp/$t.native" "$tmp/$t.run" && same=yes
	echo "$t: status $rc (native $rn), output same: $same, samples $(wc -l <"$tmp/$t.out"), decode_misses $(stat_of "$tmp/$t.err" decode_misses), world_stops $(stat_of "$tmp/$t.err" world_stops), exposed $(stat_of "$tmp/$t.err" exposed)"
done
