# Traces carry the allocations' call stacks (docs/formats.md: LP_EV_FRAME
# records, `S` lines): `record --mode trace` of a small C++ program
# (tests/data/stacks.cpp), with the runtime of `locprof c++`
# and with the valgrind tool, names its points' vector at the program's
# own function (heap@geo::make_points) in `simulate --attribute`, and so
# does `report` on the profile `sample` makes of the trace; the stacks
# survive `convert` to text and back. (Without its stack, the vector's
# call site is in operator new.)
. "$(dirname "$0")/lib.sh"
command -v clang++ >/dev/null || { echo "SKIP: no clang++" >&2; exit 0; }

src="$LOCPROF_SRC/tests/data/stacks.cpp"

# check_attrib WHAT: simulate --attribute's objects ($T/out) have the
# points' vector named at geo::make_points, none at a wrapper.
check_attrib() {
	expect_grep '^heap@geo::make_points +geo::sweep' "$T/out"
	if grep -E '^heap@(operator|std::|__gnu_cxx|_Z|0x|libstdc)' "$T/out"; then
		fail "a heap object named by a wrapper or unnamed ($1)"
	fi
}

check_trace() {
	local t=$1 what=$2
	expect_status 0 "$LOCPROF" simulate "$t" --cache 2K:4:64:lru --attribute --top 0
	check_attrib "$what"
	# text and back: the S lines keep the stacks, record for record
	expect_status 0 "$LOCPROF" convert "$t" "$T/s.txt"
	grep -E '^A ' -A1 "$T/s.txt" | grep -cE '^S 0x0 0 0x[0-9a-f]+' >/dev/null ||
		fail "no frame after an allocation in the text trace ($what)"
	expect_status 0 "$LOCPROF" convert "$T/s.txt" "$T/back.lpt"
	expect_status 0 "$LOCPROF" convert "$T/back.lpt" "$T/back.txt"
	cmp -s "$T/s.txt" "$T/back.txt" || fail "text -> lpt -> text changed the trace ($what)"
	# a profile sampled from the trace keeps them for report
	expect_status 0 "$LOCPROF" sample "$t" -o "$T/s.lpp" --rate 0.1
	expect_status 0 "$LOCPROF" report "$T/s.lpp" --at 2K --top 20 --policy lru
	sed -n '/^top data objects/,/^$/p' "$T/out" | awk '$1 ~ /^heap@/ { print $1 }' >"$T/heap"
	[ "$(head -1 "$T/heap")" = heap@geo::make_points ] ||
		{ cat "$T/out" >&2; fail "the hottest heap object of the sampled trace is not the vector ($what)"; }
}

"$LOCPROF" c++ -O2 -g0 -o "$T/names" "$src" || fail "cannot build stacks.cpp"
expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/n.lpt" -- "$T/names"
check_trace "$T/n.lpt" inst

# the valgrind tool, on the program built without locprof
if [ -x "$LOCPROF_BUILD/src/vg/locprof-amd64-linux" ] && command -v valgrind >/dev/null; then
	clang++ -O2 -g0 -pthread -o "$T/plain" "$src" || fail "cannot build stacks.cpp"
	expect_status 0 "$LOCPROF" record --backend valgrind -q --mode trace -o "$T/v.lpt" -- "$T/plain"
	check_trace "$T/v.lpt" valgrind
fi
echo ok
