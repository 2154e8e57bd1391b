# locprof record --backend pmu records allocations with their call stacks
# (docs/pmu.md, "Allocations"): a C++ program (tests/data/stacks.cpp),
# built without locprof, recorded with the step counter (no PMU needed),
# names its hottest heap
# object at the program's own function (geo::make_points), not at
# operator new or std::allocator (report); a forked child's allocations
# are in its own profile, named at its own function. The same in a trace:
# test-record-pmu-trace-stacks.sh. Every instruction is stepped:
# libstdc++ is linked statically, so that the dynamic loader's work (most
# of a small C++ program's instructions) stays small.
. "$(dirname "$0")/lib.sh"
[ -x "$LOCPROF_BUILD/tests/pmu/pmu-check-samples" ] || { echo "SKIP: no pmu backend in this build" >&2; exit 0; }
[ -e "$LOCPROF_BUILD/src/rt/liblocprof-pmu-alloc.so" ] || fail "the allocation interposer was not built"
CXX=$(command -v clang++ || command -v g++ || true)
[ -n "$CXX" ] || { echo "SKIP: no C++ compiler" >&2; exit 0; }

"$CXX" -O2 -g0 -static-libstdc++ -static-libgcc -o "$T/prog" "$LOCPROF_SRC/tests/data/stacks.cpp" ||
	fail "cannot build stacks.cpp"

rec() { "$LOCPROF" record --backend pmu --counter step --rate 0.05 "$@"; }

# check_heap NAME WHAT: the report in $T/out has NAME as its hottest heap
# object, and no heap object named by a wrapper or unnamed. (The stack and
# the dynamic loader's data come first in so small a program.)
check_heap() {
	sed -n '/^top data objects/,/^$/p' "$T/out" | awk '$1 ~ /^heap@/ { print $1 }' >"$T/heap"
	[ "$(head -1 "$T/heap")" = "$1" ] || { cat "$T/out" >&2; fail "the hottest heap object is not $1 ($2)"; }
	if grep -E '^heap@(operator|std::|__gnu_cxx|_Z|0x|libstdc)' "$T/heap"; then
		fail "a heap object named by a wrapper or unnamed ($2)"
	fi
}

# The parent's profile and the child's.
expect_status 0 rec -o "$T/p.lpp" -- "$T/prog"
expect_grep '^parent [0-9]+$' "$T/out"
expect_grep '^child [0-9]+$' "$T/out"
ls "$T"/p.*.lpp >"$T/children" || fail "no profile of the forked child"
[ "$(wc -l <"$T/children")" = 1 ] || fail "expected one child profile"
child=$(cat "$T/children")
expect_status 0 "$LOCPROF" report "$T/p.lpp" --at 2K --top 20 --policy lru
check_heap heap@geo::make_points parent
expect_status 0 "$LOCPROF" report "$child" --at 2K --top 20 --policy lru
check_heap heap@geo::child_table child
# the events are in the profiles, with their callers (without them the
# vector would be named at operator new, its call site)
expect_status 0 "$LOCPROF" dump "$T/p.lpp"
expect_grep '^allocation events: [1-9][0-9]* \([1-9][0-9]* allocs, [1-9][0-9]* frees\)' "$T/out"
expect_grep '^  callers 0x[0-9a-f]+ 0x[0-9a-f]+' "$T/out"

echo ok
