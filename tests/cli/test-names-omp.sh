# Names in an OpenMP program (tests/data/names-omp.c), built with
# `locprof cc -fopenmp` (clang, libomp) with and without -g, and with
# `locprof cc --gcc -fopenmp` (gcc, libgomp) without -g, and recorded
# with two threads: the threadprivate array and the _Thread_local buffer
# are named by their symbols (the runtime sends each thread's TLS
# segments), the heap grid by the program's function that allocated it
# (make_grid, past calloc), never `(other)` or an address; with -g the hot
# code is named after the function enclosing the outlined region (gcc
# names its outlined functions after it, so there even without -g).
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }
echo '#include <omp.h>' | clang -fopenmp -E -x c - -o /dev/null 2>/dev/null ||
	{ echo "SKIP: no OpenMP for clang (libomp-dev)" >&2; exit 0; }

src="$LOCPROF_SRC/tests/data/names-omp.c"
# check BUILD-ARGS...: build, record with two threads, check the objects
check() {
	"$LOCPROF" cc "$@" -O2 -fopenmp -o "$T/omp" "$src" || fail "cannot build names-omp.c $*"
	OMP_NUM_THREADS=2 expect_status 0 "$LOCPROF" record -q -o "$T/o.lpp" --rate 0.01 -- "$T/omp"
	expect_status 0 "$LOCPROF" report "$T/o.lpp" --at 32K --top 8 --policy lru
	sed -n '/^top data objects/,/^$/p' "$T/out" >"$T/objects"
	for name in scratch hist 'heap@make_grid( \(names-omp\.c:[0-9]+\))?'; do
		expect_grep "^ *$name +[0-9]+ +[0-9.]+%$" "$T/objects"
	done
	# the three hold nearly every miss: (other) at most a trace
	awk '$1 == "(other)" && $3 + 0 > 1 { exit 1 }' "$T/objects" ||
		fail "(other) holds more than 1% of the misses ($*)"
	if grep -E '^ *heap@(0x|libomp|libgomp|__kmp|gomp_|calloc)' "$T/objects"; then
		fail "a heap object named by the runtime or unnamed ($*)"
	fi
}
check -g0
check -g
# the outlined region is named after relax, the function around it
expect_grep '% +relax \[omp region\]( |$)' "$T/out"
if grep -E '% +\.omp_outlined' "$T/out"; then
	fail "an outlined region without its enclosing function (-g)"
fi
if command -v gcc >/dev/null && echo '#include <omp.h>' | gcc -fopenmp -E -x c - -o /dev/null 2>/dev/null; then
	check --gcc -g0
	expect_grep '% +relax \[omp region\]$' "$T/out"
fi
echo ok
