# Names a person recognises, end to end: a C++17 program (containers,
# std::sort, a thread, an exception; tests/data/names.cpp) built with
# `locprof c++` with and without -g, recorded and reported. Functions are
# demangled with their namespace (geo::sweep, std::__introsort_loop<...>),
# never mangled; with -g, code inlined into another function names that
# function and the line of the call.
. "$(dirname "$0")/lib.sh"
command -v clang++ >/dev/null || { echo "SKIP: no clang++" >&2; exit 0; }

src="$LOCPROF_SRC/tests/data/names.cpp"
for g in -g0 -g; do
	"$LOCPROF" c++ -O2 $g -std=c++17 -o "$T/names$g" "$src" || fail "cannot build names.cpp $g"
	expect_status 0 "$LOCPROF" record -q -o "$T/n$g.lpp" --rate 0.01 -- "$T/names$g"
	expect_status 0 "$LOCPROF" report "$T/n$g.lpp" --at 32K --top 8 --policy lru
	# the sweep of the points is the hottest code, named with its namespace
	expect_grep '^ +0x[0-9a-f]+ +[0-9]+ +[0-9.]+% +geo::sweep( \(names\.cpp:[0-9]+\))?$' "$T/out"
	# the sort: std:: code, demangled, template arguments elided
	expect_grep '% +(std::[A-Za-z_:]+(<\.\.\.>)?|main::.*operator\(\))( |$)' "$T/out"
	if grep -qE '% +_Z|% +0x' "$T/out"; then
		fail "a mangled or unnamed function in the report ($g)"
	fi
done
# with -g: inlined std:: code and the user's function that called it
expect_grep '% +std::[^ ]+ \([a-z_]+\.h:[1-9][0-9]*\) in main \(names\.cpp:[0-9]+\)$' "$T/out"
if grep -qE '\.(h|cpp):0\)' "$T/out"; then
	fail "line 0 in the report"
fi
echo ok
