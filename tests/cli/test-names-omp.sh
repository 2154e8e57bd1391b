# Names in an OpenMP program (tests/data/names-omp.c), built with
# `locprof cc -fopenmp` (clang, libomp) with and without -g, and with
# `locprof cc --gcc -fopenmp` (gcc, libgomp) without -g, and recorded
# with two threads; and a plain `clang -fopenmp -g0` build under the
# valgrind tool. The threadprivate array and the _Thread_local buffer are
# named by their symbols (the runtime, and the valgrind tool, send each
# thread's TLS segments), the heap grid by the program's function that
# allocated it (make_grid, past calloc), never `(other)` or an address;
# the hot code is named after the function enclosing the outlined region:
# gcc names its outlined functions after it; with clang, the debug
# information says where the region lies, and without it the code does
# (the function whose code takes the outlined function's address).
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }
echo '#include <omp.h>' | clang -fopenmp -E -x c - -o /dev/null 2>/dev/null ||
	{ echo "SKIP: no OpenMP for clang (libomp-dev)" >&2; exit 0; }

src="$LOCPROF_SRC/tests/data/names-omp.c"
# check_report WHAT: the report of a two-thread run in $T/o.lpp names the
# three objects, and nearly every miss falls on them
check_report() {
	expect_status 0 "$LOCPROF" report "$T/o.lpp" --at 32K --top 8 --policy lru
	sed -n '/^top data objects/,/^$/p' "$T/out" >"$T/objects"
	for name in scratch hist 'heap@make_grid( \(names-omp\.c:[0-9]+\))?'; do
		expect_grep "^ *$name +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+%$" "$T/objects"
	done
	# the three hold nearly every miss: (other) at most a trace
	awk '$1 == "(other)" && $3 + 0 > 1 { exit 1 }' "$T/objects" ||
		fail "(other) holds more than 1% of the misses ($1)"
	# no object with a share of the misses is unnamed or named inside the
	# OpenMP runtime; a block whose whole stack lies in the runtime (its
	# team structures) is named by library and symbol, and may show with
	# 0.0% when a miss happens to fall on it
	if awk '$NF + 0 >= 0.1' "$T/objects" | grep -E '^ *heap@(0x|libomp|libgomp|__kmp|gomp_|calloc)'; then
		fail "a heap object named by the runtime or unnamed ($1)"
	fi
	# the outlined region is named after relax, the function around it
	expect_grep '% +relax \[omp region\]( |$)' "$T/out"
	if grep -E '% +\.omp_outlined' "$T/out"; then
		fail "an outlined region without its enclosing function ($1)"
	fi
	# a region is not named as inlined into itself (clang's body of a
	# region is inlined into its outlined function, both "relax [omp region]")
	if grep -E '\[omp region\]( \([^)]*\))? in [a-z_]+ \[omp region\]' "$T/out"; then
		fail "a region named as inlined into itself ($1)"
	fi
}
# check BUILD-ARGS...: build with locprof cc, record with two threads, check
check() {
	"$LOCPROF" cc "$@" -O2 -fopenmp -o "$T/omp" "$src" || fail "cannot build names-omp.c $*"
	OMP_NUM_THREADS=2 expect_status 0 "$LOCPROF" record -q -o "$T/o.lpp" --rate 0.01 -- "$T/omp"
	check_report "$*"
}
check -g0
check -g
if command -v gcc >/dev/null && echo '#include <omp.h>' | gcc -fopenmp -E -x c - -o /dev/null 2>/dev/null; then
	check --gcc -g0
	expect_grep '% +relax \[omp region\]$' "$T/out"
fi
# the valgrind tool, on the program built without locprof and without -g
if [ -x "$LOCPROF_BUILD/src/vg/locprof-amd64-linux" ] && command -v valgrind >/dev/null; then
	clang -O2 -g0 -fopenmp -o "$T/plain" "$src" || fail "cannot build names-omp.c with clang -g0"
	OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive expect_status 0 "$LOCPROF" record --backend valgrind -q \
		-o "$T/o.lpp" --rate 0.01 -- "$T/plain"
	check_report "valgrind"
fi
echo ok
