# OpenMP programs: under the valgrind backend the tool warns about
# spin-waiting when libgomp is loaded and OMP_WAIT_POLICY is not passive
# (once, with the remedy), and not when it is passive or the program has
# no OpenMP; under the inst backend (locprof cc -fopenmp) every OpenMP
# thread is sampled.
. "$(dirname "$0")/lib.sh"

cat >"$T/omp.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	long n = 20000;
	double *a = calloc(n, sizeof(*a)), s = 0;
	for (int r = 0; r < 20; r++) {
#pragma omp parallel for schedule(static)
		for (long i = 0; i < n; i++)
			a[i] += i * 0.5;
	}
	for (long i = 0; i < n; i++)
		s += a[i];
	printf("%.1f\n", s);
	return 0;
}
C
want=$(awk 'BEGIN { printf "%.1f\n", 20 * 0.5 * 19999 * 20000 / 2 }')
warning='locprof: warning: the program runs OpenMP \(.*libgomp[^)]*\) with OMP_WAIT_POLICY unset: .*run it with OMP_WAIT_POLICY=passive$'

if [ -x "$LOCPROF_BUILD/src/vg/locprof-amd64-linux" ] && command -v valgrind >/dev/null; then
	gcc -O1 -g -fopenmp -o "$T/omp-gomp" "$T/omp.c" || fail "gcc -fopenmp"
	gcc -O1 -g -o "$T/serial" "$T/omp.c" 2>/dev/null || fail "gcc without OpenMP"
	expect_status 0 env -u OMP_WAIT_POLICY OMP_NUM_THREADS=2 "$LOCPROF" record --backend valgrind -o "$T/v.lpp" -- "$T/omp-gomp"
	[ "$(cat "$T/out")" = "$want" ] || fail "wrong result under valgrind: $(cat "$T/out")"
	expect_grep "$warning" "$T/err"
	[ "$(grep -c 'OMP_WAIT_POLICY' "$T/err")" = 1 ] || { cat "$T/err" >&2; fail "the warning is said once"; }
	expect_grep "v.lpp: .* 2 threads" "$T/err"
	expect_status 0 env OMP_WAIT_POLICY=active OMP_NUM_THREADS=2 "$LOCPROF" record --backend valgrind -o "$T/v.lpp" -- "$T/omp-gomp"
	expect_grep "with OMP_WAIT_POLICY 'active': " "$T/err"
	expect_status 0 env OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=2 "$LOCPROF" record --backend valgrind -o "$T/v.lpp" -- "$T/omp-gomp"
	grep -q "OMP_WAIT_POLICY" "$T/err" && { cat "$T/err" >&2; fail "a warning with OMP_WAIT_POLICY=passive"; }
	expect_status 0 env -u OMP_WAIT_POLICY "$LOCPROF" record --backend valgrind -o "$T/s.lpp" -- "$T/serial"
	grep -q "OMP_WAIT_POLICY" "$T/err" && { cat "$T/err" >&2; fail "a warning for a program without OpenMP"; }
else
	echo "SKIP: the valgrind part: no valgrind tool in this build" >&2
fi

if command -v clang >/dev/null && echo 'int main(void){return 0;}' | clang -fopenmp -x c - -o "$T/probe" 2>/dev/null; then
	"$LOCPROF" cc -O1 -g -fopenmp -o "$T/omp-lp" "$T/omp.c" || fail "locprof cc -fopenmp"
	expect_status 0 env OMP_NUM_THREADS=2 "$LOCPROF" record --rate 0.01 -o "$T/i.lpp" -- "$T/omp-lp"
	[ "$(cat "$T/out")" = "$want" ] || fail "wrong result under inst: $(cat "$T/out")"
	expect_status 0 "$LOCPROF" report "$T/i.lpp" --threads --top 0 --resamples 0 --format csv
	# two OpenMP threads, each with the references of its half of the loop
	# (20 x 10000 read-modify-writes: 400000 references), the first also
	# with the serial sum (20000), give or take the loop's bounds
	awk -F, '/^thread,/ { on = 1; next } on && /^$/ { exit }
		on && $1 == 0 && $2 >= 415000 && $2 <= 425000 { n++ }
		on && $1 == 1 && $2 >= 395000 && $2 <= 405000 { n++ } END { exit n != 2 }' "$T/out" ||
		{ cat "$T/out" >&2; fail "expected threads 0 and 1 with about 420000 and 400000 references"; }
else
	echo "SKIP: the inst part: clang -fopenmp cannot build (libomp-14-dev)" >&2
fi
