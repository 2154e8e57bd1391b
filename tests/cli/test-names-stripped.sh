# Heap objects of a stripped program (every distribution's): its frames
# have no function's name, so a block is named by its allocation's call
# site as the program's pcs are, module and address in the file
# (`heap@prog-s+0x11f2`), one object per call site, not one object for
# the whole heap named by libc's outermost frame. The site is the frame
# the unstripped build names (tests/data/names-stripped.c: make_a's malloc
# and make_b's calloc): addr2line on the unstripped file gives it back.
# With the valgrind tool on a gcc build, and with the runtime of
# `locprof cc`.
. "$(dirname "$0")/lib.sh"

src="$LOCPROF_SRC/tests/data/names-stripped.c"

# check NAME: the report in $T/out of $T/NAME-s (a stripped copy of
# $T/NAME) names two heap objects by NAME-s and an address, which are
# make_a's and make_b's in $T/NAME
check() {
	sed -n '/^top data objects/,/^$/p' "$T/out" | awk '$1 ~ /^heap@/ { print $1 }' >"$T/heap"
	if grep -Ev "^heap@$1-s\+0x[0-9a-f]+$" "$T/heap"; then
		cat "$T/out" >&2
		fail "$1: a heap object not named by the stripped program and an address"
	fi
	[ "$(sort -u "$T/heap" | wc -l)" -eq 2 ] || { cat "$T/out" >&2; fail "$1: not two heap objects"; }
	sed "s/^heap@$1-s+//" "$T/heap" | xargs addr2line -f -e "$T/$1" | awk 'NR % 2' | sort >"$T/functions"
	[ "$(tr '\n' ' ' <"$T/functions")" = "make_a make_b " ] ||
		fail "$1: the objects' sites are not make_a's and make_b's: $(cat "$T/functions")"
}

if [ -x "$LOCPROF_BUILD/src/vg/locprof-amd64-linux" ] && command -v valgrind >/dev/null; then
	gcc -O2 -g -o "$T/vg" "$src"
	cp "$T/vg" "$T/vg-s" && strip "$T/vg-s"
	expect_status 0 "$LOCPROF" record -q --backend valgrind --rate 0.01 -o "$T/vg.lpp" -- "$T/vg-s"
	expect_status 0 "$LOCPROF" report "$T/vg.lpp" --sizes 32K --top 4
	check vg
	# the unstripped build: the same two sites, by their functions
	expect_status 0 "$LOCPROF" record -q --backend valgrind --rate 0.01 -o "$T/vgu.lpp" -- "$T/vg"
	expect_status 0 "$LOCPROF" report "$T/vgu.lpp" --sizes 32K --top 4
	expect_grep '^ *heap@make_a \(names-stripped\.c:[0-9]+\) ' "$T/out"
	expect_grep '^ *heap@make_b \(names-stripped\.c:[0-9]+\) ' "$T/out"
fi
if command -v clang >/dev/null; then
	"$LOCPROF" cc -O2 -g -o "$T/cc" "$src" || fail "locprof cc failed"
	cp "$T/cc" "$T/cc-s" && strip "$T/cc-s"
	expect_status 0 "$LOCPROF" record -q --rate 0.01 -o "$T/cc.lpp" -- "$T/cc-s"
	expect_status 0 "$LOCPROF" report "$T/cc.lpp" --sizes 32K --top 4
	check cc
fi
echo ok
