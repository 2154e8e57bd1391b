#!/usr/bin/env bash
# Costs of the pmu backend (thesis Eq. 4.1, C = alpha*n_s + beta*n_f per
# sample) on the example programs, with the step counter (no PMU needed).
#
#  1. bench-pmu-costs: alpha (one single-step), beta (one false-positive
#     page fault: stop, open, step, close, resume), a true hit by page
#     protection and by debug register, one injected system call.
#  2. Each example under `locprof record --backend pmu --counter step`,
#     once without samples (T0: the exact clock alone, every instruction
#     stepped and decoded) and once sampling at RATE (T1); median of RUNS
#     of the CPU time (user + system, locprof and the program: the wall
#     time of ptrace round trips on a shared machine is mostly waiting).
#     The engine's counts of the T1 run give, per sample, the single-steps
#     a PMU run would make to reach the sample point (n_s = skid steps) and
#     the faults (n_f: false positives, true hits). T1 - T0 is what sampling
#     and watching cost on top of the clock; its share per mechanism is
#     counts x micro-costs, and beta and the hit cost are also fitted from
#     the runs (least squares over the examples, as the thesis did).
#  3. Projected to a real PMU (no clock stepping): per-sample cost C, the
#     share of the sampling mechanism (alpha*n_s) and of the watchpoints
#     (beta*n_f + hits), and the overhead at a period of 1e7 references on
#     a core retiring 1e9 references/s (the thesis's setting).
#
# usage: bench/overhead-pmu.sh [BUILD_DIR]   (default build/)
#        RUNS=5 RATE=0.01 MAXSKID=10 ITER=20000 bench/overhead-pmu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
RUNS=${RUNS:-5}
RATE=${RATE:-0.01}
MAXSKID=${MAXSKID:-10}
ITER=${ITER:-20000}
L=$B/locprof
E=$B/examples
T=$(mktemp -d /tmp/locprof-bench-pmu.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -x "$B/bench/bench-pmu-costs" ] && [ -x "$L" ] || { echo "build first: scripts/build" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 2; }

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# timeit OUT CMD...: median CPU seconds (user + system of locprof and the
# program: on a machine shared with other work, wall time mostly measures
# waiting for a CPU) of RUNS runs; the last run's stderr in OUT
timeit() {
	local out=$1; shift
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%U %S" -o "$T/time" "$@" >/dev/null 2>"$out" || true
		awk '{ printf "%.6f\n", $1 + $2 }' "$T/time"
	done | median
}
stat() { grep -o " $2 [0-9]*" "$1" | head -1 | awk '{ print $2 }'; }

# ---- 1. micro-costs ----------------------------------------------------
"$B/bench/bench-pmu-costs" "$ITER" >"$T/costs"
cost() { awk -v k="$1" 'index($0, k) == 1 { print $NF }' "$T/costs"; } # the CPU column
A=$(cost "step (alpha)")
BETA=$(cost "false-positive fault")
HP=$(cost "true hit, page protection")
HD=$(cost "true hit, debug register")
INJ=$(cost "injected system call")
echo "# micro-costs (bench-pmu-costs $ITER), CPU microseconds per event (tracer + target)"
printf '%-34s %8.2f\n' "single-step (alpha)" "$A" "false-positive fault (beta)" "$BETA" \
	"true hit, page protection" "$HP" "true hit, debug register" "$HD" "injected system call" "$INJ"
echo

# ---- 2. the examples under the step counter ---------------------------
EXAMPLES=${EXAMPLES:-"matmul naive 24|matmul blocked 32|layout aos 3000|layout soa 3000|listwalk list 3000|listwalk array 3000|stencil 48 2"}
echo "# examples: record --backend pmu --counter step, rate $RATE, max skid $MAXSKID, median of $RUNS"
printf '%-20s %7s %7s %7s %9s %7s %6s %6s %6s %6s | %6s %6s %6s %6s %6s\n' example T0/s T1/s dT/s steps samples \
	n_s n_f hits us/st "fp%" "hit%" "inj%" "rest%" "x_clk"
IFS='|' read -ra EX <<<"$EXAMPLES"
: >"$T/fit"
for ex in "${EX[@]}"; do
	set -- $ex
	prog=$1; shift
	t0=$(timeit "$T/e0" "$L" record -q --backend pmu --counter step --rate 1e-12 -X stats -o "$T/p.lpp" -- "$E/$prog" "$@")
	t1=$(timeit "$T/e1" "$L" record -q --backend pmu --counter step --rate "$RATE" --max-skid "$MAXSKID" \
		-X stats -o "$T/p.lpp" -- "$E/$prog" "$@")
	steps0=$(stat "$T/e0" steps); inj0=$(stat "$T/e0" injected)
	steps=$(stat "$T/e1" steps); samples=$(stat "$T/e1" samples); skid=$(stat "$T/e1" skid_steps)
	ff=$(stat "$T/e1" false_faults); ph=$(stat "$T/e1" page_hits); dh=$(stat "$T/e1" dr_hits)
	inj=$(stat "$T/e1" injected)
	echo "$t0 $t1 $steps0 $steps $samples $skid $ff $ph $dh $inj $inj0" >>"$T/fit"
	awk -v ex="$ex" -v t0="$t0" -v t1="$t1" -v s0="$steps0" -v st="$steps" -v n="$samples" -v sk="$skid" \
	    -v ff="$ff" -v ph="$ph" -v dh="$dh" -v inj="$inj" -v inj0="$inj0" -v A="$A" -v BETA="$BETA" \
	    -v HP="$HP" -v HD="$HD" -v INJ="$INJ" 'BEGIN {
		dt = t1 - t0
		us = t0 / s0 * 1e6
		# In T1 every fault of ours adds the fault handling to a step
		# that happens anyway: beta - alpha; a true hit likewise.
		fp = ff * (BETA - A) * 1e-6; hit = (ph * (HP - A) + dh * HD) * 1e-6
		# Injected mprotect calls besides the two of each false
		# positive and the one of each page hit: setting and removing
		# watches, opening pages around system calls.
		ij = (inj - inj0 - 2 * ff - ph); if (ij < 0) ij = 0
		ij = ij * INJ * 1e-6; rest = dt - fp - hit - ij
		printf "%-20s %7.2f %7.2f %7.2f %9d %7d %6.1f %6.1f %6.2f %6.1f | ", ex, t0, t1, dt, st, n, sk / n,
			(ff + ph) / n, (ph + dh) / n, us
		if (dt > 0.05 * t0)
			printf "%5.0f%% %5.0f%% %5.0f%% %5.0f%% %6.2f\n", 100 * fp / dt, 100 * hit / dt, 100 * ij / dt,
				100 * rest / dt, t1 / t0
		else # within the noise of a shared machine
			printf "%6s %6s %6s %6s %6.2f\n", "-", "-", "-", "-", t1 / t0
	}'
done
echo "(n_s: single-steps per sample to reach the sample point; n_f: page faults per sample;"
echo " us/st: clock cost per instruction, step + decode; fp/hit/inj/rest: shares of T1-T0 from the"
echo " micro-costs: false positives, true hits, injected mprotect calls of the watches, the rest;"
echo " x_clk: T1/T0)"
echo

# Fit the cost of one fault of ours from the runs (the thesis solved Eq.
# 4.1 the same way): dT_i = b * (false_i + page_hits_i), least squares
# through the origin; compare b with the micro-cost beta - alpha.
awk -v A="$A" -v BETA="$BETA" '$2 > $1 { dt = $2 - $1; f = $7 + $8; sxy += f * dt; sxx += f * f; n++ }
	END { if (n && sxx > 0) printf "# fitted over %d examples: T1 - T0 = b * (faults of ours), b = %.1f us per fault (micro-costs: beta - alpha = %.1f us; the difference is the watches set and removed, and the engine'"'"'s own work per sample)\n\n", n, sxy / sxx * 1e6, BETA - A }' "$T/fit"

# ---- 3. projection to a real PMU ---------------------------------------
echo "# projected to a PMU run (Eq. 4.1 with the micro-costs; period 1e7 at 1e9 references/s = 100 samples/s)"
printf '%-20s %8s %8s %8s %9s %9s %10s\n' example n_s n_f C/ms "sampling%" "watch%" overhead
i=0
for ex in "${EX[@]}"; do
	i=$((i + 1))
	sed -n "${i}p" "$T/fit" | awk -v ex="$ex" -v A="$A" -v BETA="$BETA" -v HP="$HP" -v HD="$HD" -v INJ="$INJ" '{
		n = $5; ns = $6 / n; nf = $7 / n; nh = ($8 + $9) / n
		ninj = ($10 - $11 - 2 * $7 - $8) / n; if (ninj < 0) ninj = 0
		samp = A * ns; watch = BETA * nf + ($8 * HP + $9 * HD) / n + INJ * ninj
		c = samp + watch
		printf "%-20s %8.1f %8.1f %8.3f %8.0f%% %8.0f%% %9.1f%%\n", ex, ns, nf, c / 1000, 100 * samp / c,
			100 * watch / c, 100 * c * 1e-6 * 100
	}'
done
echo "(C: cost per sample = alpha*n_s + beta*n_f + hits + the watch's mprotect calls; the PMU's own"
echo " O(log period) overflow stops are not included: about log2(period) signal stops per sample)"
