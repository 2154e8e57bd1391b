# locprof record --backend pmu --mode trace: the trace holds the
# allocation events among the references, each with its call stack
# (docs/pmu.md, "Allocations"; docs/formats.md, frame records), so that
# simulate --attribute names the points' vector of tests/data/stacks.cpp
# at the program's own function (geo::make_points), not at operator new;
# the frames show as S lines in text. A test of its own (the profile's is
# test-record-pmu-allocs.sh): each steps every instruction of a run.
. "$(dirname "$0")/lib.sh"
[ -x "$LOCPROF_BUILD/tests/pmu/pmu-check-samples" ] || { echo "SKIP: no pmu backend in this build" >&2; exit 0; }
[ -e "$LOCPROF_BUILD/src/rt/liblocprof-pmu-alloc.so" ] || fail "the allocation interposer was not built"
CXX=$(command -v clang++ || command -v g++ || true)
[ -n "$CXX" ] || { echo "SKIP: no C++ compiler" >&2; exit 0; }

"$CXX" -O2 -g0 -static-libstdc++ -static-libgcc -o "$T/prog" "$LOCPROF_SRC/tests/data/stacks.cpp" ||
	fail "cannot build stacks.cpp"
expect_status 0 "$LOCPROF" record --backend pmu --counter step --mode trace -o "$T/t.lpt" -- "$T/prog"
expect_status 0 "$LOCPROF" simulate "$T/t.lpt" --cache 2K:4:64 --attribute --top 0
expect_grep '^heap@geo::make_points +geo::sweep' "$T/out"
if grep -E '^heap@(operator|std::|__gnu_cxx|_Z|0x|libstdc)' "$T/out"; then
	fail "a heap object named by a wrapper or unnamed"
fi
expect_status 0 "$LOCPROF" convert "$T/t.lpt" "$T/t.txt"
expect_grep '^S 0x0 0 0x[0-9a-f]+' "$T/t.txt"
echo ok
