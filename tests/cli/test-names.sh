# Names a person recognises, end to end: a C++17 program (containers,
# std::sort, a thread, an exception; tests/data/names.cpp) built with
# `locprof c++` with and without -g, recorded and reported. Functions are
# demangled with their namespace (geo::sweep, std::__introsort_loop<...>),
# never mangled; with -g, code inlined into another function names that
# function and the line of the call. Heap objects are named by the first
# frame of their allocation's call stack outside operator new,
# std::allocator and the containers (geo::make_points), with the runtime of
# `locprof c++` and with the valgrind tool on a plain clang++ build.
. "$(dirname "$0")/lib.sh"
command -v clang++ >/dev/null || { echo "SKIP: no clang++" >&2; exit 0; }

src="$LOCPROF_SRC/tests/data/names.cpp"

# check_objects WHAT: the report in $T/out names the points' vector, the
# hottest object, at geo::make_points, and no object by a wrapper.
check_objects() {
	sed -n '/^top data objects/,/^$/p' "$T/out" >"$T/objects"
	expect_grep '^ *heap@geo::make_points( \(names\.cpp:2[0-9]\))? +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+%$' "$T/objects"
	[ "$(sed -n 3p "$T/objects" | awk '{ print $1 }')" = heap@geo::make_points ] ||
		fail "the hottest object is not the points' vector ($1)"
	if grep -E '^ *(heap@(operator|std::|__gnu_cxx|_Z|0x|libstdc)|_Z)' "$T/objects"; then
		fail "an object named by a wrapper, unnamed or mangled ($1)"
	fi
}
for g in -g0 -g; do
	"$LOCPROF" c++ -O2 $g -std=c++17 -o "$T/names$g" "$src" || fail "cannot build names.cpp $g"
	expect_status 0 "$LOCPROF" record -q -o "$T/n$g.lpp" --rate 0.01 -- "$T/names$g"
	expect_status 0 "$LOCPROF" report "$T/n$g.lpp" --at 32K --top 8 --policy lru
	# the sweep of the points is the hottest code, named with its namespace
	expect_grep '^ +0x[0-9a-f]+ +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+% +geo::sweep( \(names\.cpp:[0-9]+\))?$' "$T/out"
	# the sort: std:: code, demangled, template arguments elided
	expect_grep '% +(std::[A-Za-z_:]+(<\.\.\.>)?|main::.*operator\(\))( |$)' "$T/out"
	if grep -qE '% +_Z|% +0x' "$T/out"; then
		fail "a mangled or unnamed function in the report ($g)"
	fi
	check_objects "$g"
done
# the valgrind tool, on the program built without locprof
if [ -x "$LOCPROF_BUILD/src/vg/locprof-amd64-linux" ] && command -v valgrind >/dev/null; then
	for g in -g0 -g; do
		clang++ -O2 $g -gdwarf-4 -std=c++17 -pthread -o "$T/plain$g" "$src" || fail "cannot build names.cpp $g"
		expect_status 0 "$LOCPROF" record --backend valgrind -q -o "$T/v$g.lpp" --rate 0.01 -- "$T/plain$g"
		expect_status 0 "$LOCPROF" report "$T/v$g.lpp" --at 32K --top 8 --policy lru
		check_objects "valgrind $g"
	done
fi
# with -g: inlined std:: code and the user's function that called it
expect_grep '% +std::[^ ]+ \([a-z_]+\.h:[1-9][0-9]*\) in main \(names\.cpp:[0-9]+\)$' "$T/out"
if grep -qE '\.(h|cpp):0\)' "$T/out"; then
	fail "line 0 in the report"
fi
echo ok
