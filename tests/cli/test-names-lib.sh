# Names of code and heap blocks in a shared library built without -g
# (tests/data/names-lib.c, whose file is libnameslib.so.1.2.3 and whose
# soname is libnameslib.so.1, as a packaged library's): the hot loop is
# `libnameslib.so.1:lib_sum` and the table it allocated
# `heap@libnameslib.so.1:lib_table` (in the per-pc, per-function and
# object tables), by the library's soname and the symbol, never by the
# file's name or an address. With the runtime of
# `locprof cc`, and with the valgrind tool on a plain clang build.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

lib="$LOCPROF_SRC/tests/data/names-lib.c"
main="$LOCPROF_SRC/tests/data/names-lib-main.c"

# check WHAT: the report of $T/l.lpp names the loop and the table by soname
check() {
	expect_status 0 "$LOCPROF" report "$T/l.lpp" --at 32K --top 8 --policy lru
	expect_grep '^ +0x[0-9a-f]+ +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+% +libnameslib\.so\.1:lib_sum$' "$T/out"
	sed -n '/^top data objects/,/^$/p' "$T/out" >"$T/objects"
	expect_grep '^ *heap@libnameslib\.so\.1:lib_table +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+%$' "$T/objects"
	if grep -E 'libnameslib\.so\.1\.2\.3|heap@0x' "$T/out"; then
		fail "a name by the library's file name or an address ($1)"
	fi
}
# build CC...: the library as $T/lib/libnameslib.so.1.2.3 with its soname
# link, and the program linked against it
build() {
	rm -rf "$T/lib" && mkdir "$T/lib"
	"$@" -O2 -g0 -fPIC -shared -Wl,-soname,libnameslib.so.1 -o "$T/lib/libnameslib.so.1.2.3" "$lib" ||
		fail "cannot build the library ($*)"
	ln -s libnameslib.so.1.2.3 "$T/lib/libnameslib.so.1"
	"$@" -O2 -g0 -o "$T/prog" "$main" "$T/lib/libnameslib.so.1.2.3" -Wl,-rpath,"$T/lib" ||
		fail "cannot build the program ($*)"
}
build "$LOCPROF" cc
expect_status 0 "$LOCPROF" record -q -o "$T/l.lpp" --rate 0.01 -- "$T/prog"
check "locprof cc"
if [ -x "$LOCPROF_BUILD/src/vg/locprof-amd64-linux" ] && command -v valgrind >/dev/null; then
	build clang
	expect_status 0 "$LOCPROF" record --backend valgrind -q -o "$T/l.lpp" --rate 0.01 -- "$T/prog"
	check valgrind
	# the per-function table too, where there is one (it needs some code
	# with lines: the loader's, where the system has its debug information)
	if grep -c '^top functions' "$T/out" >/dev/null; then
		expect_grep '^ +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+% +[0-9]+ +libnameslib\.so\.1:lib_sum$' "$T/out"
	fi
fi
echo ok
