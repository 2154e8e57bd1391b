# Programs built by `locprof cc` run under valgrind: under
# `record --backend valgrind` and under plain valgrind (memcheck). Their
# debug information (the runtime's, and the program's with -g) is DWARF 4,
# which valgrind 3.19 reads; under valgrind the runtime maps a smaller watch
# shadow and stays inert (docs/valgrind.md, "Programs built by locprof cc").
source "$(dirname "$0")/lib.sh"

need_pass
command -v valgrind >/dev/null || fail "valgrind is not installed (scripts/install-deps)"
[ -x "$LOCPROF_BUILD/src/vg/locprof-amd64-linux" ] || fail "the valgrind tool was not built"

# The three instrumentations: the pass with and without LTO, SanitizerCoverage.
src="$LOCPROF_SRC/examples/matmul.c"
expect_status 0 "$LOCPROF" cc --lto -O2 -g -o "$T/lto" "$src"
expect_status 0 "$LOCPROF" cc --no-lto -O2 -g -o "$T/nolto" "$src"
expect_status 0 "$LOCPROF" cc --sancov --no-lto -O2 -g -o "$T/sancov" "$src"
"$T/nolto" naive 40 >"$T/want"

for prog in lto nolto sancov; do
	# Plain valgrind: memcheck finds no error (--error-exitcode) and reads
	# every debug information section without complaint.
	expect_status 0 valgrind -q --error-exitcode=9 "$T/$prog" naive 40
	cmp -s "$T/out" "$T/want" || fail "$prog under valgrind printed '$(cat "$T/out")'"
	if grep -v "Warning: set address range perms" "$T/err" | grep -q .; then
		cat "$T/err" >&2
		fail "valgrind complained about $prog (above)"
	fi

	# The valgrind backend: one recording process (the runtime inert), a
	# profile whose hot pcs are named from the program's DWARF.
	expect_status 0 "$LOCPROF" record --backend valgrind --rate 0.002 -o "$T/$prog.lpp" -- "$T/$prog" naive 40
	cmp -s "$T/out" "$T/want" || fail "$prog under record --backend valgrind printed '$(cat "$T/out")'"
	expect_grep "$prog.lpp: [0-9]+ samples .* 1 thread \(pid [0-9]+, exit 0\)" "$T/err"
	grep -q "Giving up\|unhandled dwarf\|could not read the DWARF" "$T/err" &&
		fail "valgrind could not read $prog's debug information"
	"$LOCPROF" dump "$T/$prog.lpp" >"$T/dump"
	expect_grep "^source: valgrind" "$T/dump"
	expect_status 0 "$LOCPROF" report "$T/$prog.lpp" --top 3 --at 4K
	expect_grep "main \(matmul\.c:[0-9]+" "$T/out"
done

# A plain `clang -g` build (DWARF 5, which valgrind 3.19 reads in part):
# valgrind's line per compile unit is kept back and counted in one note
# (none with -q); the program's own stderr and valgrind's other messages
# pass; report names the lines from the DWARF 5 itself.
cat >"$T/dw5.c" <<'EOF2'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	long n = 1 << 16, *a = calloc(n, sizeof(*a)), s = 0;
	for (int r = 0; r < 8; r++)
		for (long i = 0; i < n; i++)
			s += a[(i * 4099) % n] += i;
	fprintf(stderr, "program says %ld\n", s);
	return 0;
}
EOF2
clang -O1 -g -o "$T/dw5" "$T/dw5.c" || fail "cannot build with clang -g"
expect_status 0 "$LOCPROF" record --backend valgrind --rate 0.01 -o "$T/dw5.lpp" -- "$T/dw5"
grep -q "^###" "$T/err" && { cat "$T/err" >&2; fail "valgrind's DWARF 5 lines reached stderr"; }
expect_grep "^program says [0-9]+$" "$T/err"
[ "$(grep -cE "valgrind could not read the DWARF 5 debug information of [0-9]+ compile unit" "$T/err")" = 1 ] ||
	{ cat "$T/err" >&2; fail "not one note for valgrind's DWARF 5 lines"; }
expect_status 0 "$LOCPROF" record -q --backend valgrind --rate 0.01 -o "$T/dw5q.lpp" -- "$T/dw5"
[ "$(cat "$T/err")" = "program says $(sed -n 's/^program says //p' "$T/err")" ] ||
	{ cat "$T/err" >&2; fail "-q: more than the program's line on stderr"; }
expect_status 0 "$LOCPROF" report "$T/dw5.lpp" --top 3 --at 4K
expect_grep "main \(dw5\.c:[0-9]+" "$T/out"
# valgrind's own errors still reach the user
expect_status 1 "$LOCPROF" record --backend valgrind -o "$T/bad.lpp" -X --bogus-option -- "$T/dw5"
expect_grep "Unknown option: --bogus-option" "$T/err"
echo "ok: programs built by locprof cc run under valgrind and record --backend valgrind"
