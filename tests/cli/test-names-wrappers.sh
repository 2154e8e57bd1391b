# Heap blocks behind the program's own allocation wrappers
# (tests/data/names-wrappers.c): xmalloc, called from several sites, is
# looked through, so the grid and the index are two objects named by
# their lines in main, not one named by xmalloc; alloc_pair(), which
# allocates two arrays and is called once, keeps its two lines; a wrapper
# by no name (pool_take) is looked through when --alloc-fn names it, in
# report, diff and simulate --attribute; in a stripped copy the frame
# that calls malloc from several call sites gives way to its callers.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

"$LOCPROF" cc -O2 -g -o "$T/w" "$LOCPROF_SRC/tests/data/names-wrappers.c" || fail "cannot build names-wrappers.c"
expect_status 0 "$LOCPROF" record -q -o "$T/w.lpp" --rate 0.001 -- "$T/w" 200000

objects() {
	sed -n '/^top data objects/,/^$/p' "$T/out" | awk 'NR > 2 && NF { print $1, $2 }' >"$T/objects"
}
expect_status 0 "$LOCPROF" report "$T/w.lpp" --at 32K --top 10
objects
if grep -q 'xmalloc' "$T/objects"; then
	cat "$T/objects" >&2
	fail "an object named by the program's wrapper xmalloc"
fi
[ "$(grep -c '^heap@main (names-wrappers\.c:[0-9]*)$' "$T/objects")" = 2 ] ||
	{ cat "$T/objects" >&2; fail "the grid and the index are not two objects of main"; }
[ "$(grep -c '^heap@alloc_pair (names-wrappers\.c:[0-9]*)$' "$T/objects")" = 2 ] ||
	{ cat "$T/objects" >&2; fail "alloc_pair's two arrays are not two objects"; }
expect_grep '^heap@pool_take ' "$T/objects"
# alloc_pair, kept (one caller, two frames), looks like a wrapper by its
# name: a line under the table says how to look through it
expect_grep "^heap@alloc_pair: named by a function that looks like an allocation wrapper; --alloc-fn 'alloc_pair' names its blocks by its callers$" "$T/out"
grep -q '^heap@main: named by' "$T/out" && fail "a hint for main, which looks like no wrapper"

# named by the user: its caller names the nodes
expect_status 0 "$LOCPROF" report "$T/w.lpp" --at 32K --top 10 --alloc-fn 'pool_*'
objects
expect_grep '^heap@make_nodes ' "$T/objects"
if grep -q 'pool_take' "$T/objects"; then
	fail "--alloc-fn pool_* left an object named by pool_take"
fi
cp "$T/w.lpp" "$T/w2.lpp"
expect_status 0 "$LOCPROF" diff --top 10 --alloc-fn pool_take "$T/w.lpp" -- "$T/w2.lpp"
expect_grep 'make_nodes' "$T/out"
if grep -q 'pool_take\|xmalloc' "$T/out"; then
	fail "diff named an object by a wrapper"
fi

# a stripped copy: no names, but the frame that calls malloc from several
# call sites (xmalloc) gives way to its callers, so the grid, the index,
# the nodes and the two arrays are five objects, not three
cp "$T/w" "$T/w-s"
strip "$T/w-s"
expect_status 0 "$LOCPROF" record -q -o "$T/ws.lpp" --rate 0.001 -- "$T/w-s" 200000
expect_status 0 "$LOCPROF" report "$T/ws.lpp" --at 32K --top 10
objects
[ "$(grep -c '^heap@w-s+0x[0-9a-f]* ' "$T/objects")" = 5 ] ||
	{ cat "$T/objects" >&2; fail "the stripped copy's blocks are not five objects"; }

# the exact attribution of a trace of the same program names them alike
expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/w.lpt" -- "$T/w" 20000
expect_status 0 "$LOCPROF" simulate "$T/w.lpt" --cache 32K:8:64 --attribute --top 0
sed -n '/^## data objects/,/^$/p' "$T/out" >"$T/objects"
if grep -q 'xmalloc' "$T/objects"; then
	fail "simulate --attribute named an object by xmalloc"
fi
[ "$(grep -c '^heap@main (names-wrappers\.c:' "$T/objects")" = 2 ] ||
	{ cat "$T/objects" >&2; fail "simulate: the grid and the index are not two objects of main"; }
expect_status 0 "$LOCPROF" simulate "$T/w.lpt" --cache 32K:8:64 --attribute --top 0 --alloc-fn pool_take
expect_grep '^heap@make_nodes ' "$T/out"
expect_status 2 "$LOCPROF" report "$T/w.lpp" --alloc-fn ''
expect_grep 'alloc-fn' "$T/err"
echo ok
