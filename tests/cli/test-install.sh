# `cmake --install` into a temporary prefix, then the installed locprof used
# as a user would, from a directory outside the source and build trees:
# cc, record (inst and valgrind backends), report; the man pages, the bash
# completion, and liblocprof through pkg-config.
source "$(dirname "$0")/lib.sh"

need_pass
prefix="$T/prefix"
cmake --install "$LOCPROF_BUILD" --prefix "$prefix" >"$T/install.log" ||
	{ cat "$T/install.log" >&2; fail "cmake --install failed"; }
mkdir "$T/work"
cd "$T/work"
cp "$LOCPROF_SRC/examples/matmul.c" .
export PATH="$prefix/bin:$PATH"
[ "$(command -v locprof)" = "$prefix/bin/locprof" ] || fail "locprof is not installed in $prefix/bin"

# ---- cc, record, report -----------------------------------------------------
# The runtime and the pass come from the prefix, not from the build tree.
expect_status 0 locprof cc --show -O2 -g -o matmul matmul.c
expect_grep "^clang .*-fpass-plugin=$prefix/lib/locprof/locprof-pass\.so .*$prefix/lib/locprof/liblocprof-rt" "$T/err"
grep -q "$LOCPROF_BUILD" "$T/err" && fail "the installed locprof cc uses the build tree: $(cat "$T/err")"
./matmul naive 100 >want
expect_status 0 locprof record -o inst.lpp -- ./matmul naive 100
cmp -s "$T/out" want || fail "matmul under record printed '$(cat "$T/out")'"
expect_grep "inst.lpp: [0-9]+ samples .* 1 thread \(pid [0-9]+, exit 0\)" "$T/err"
if command -v valgrind >/dev/null && [ -x "$LOCPROF_BUILD/src/vg/locprof-amd64-linux" ]; then
	[ -x "$prefix/lib/locprof/valgrind/locprof-amd64-linux" ] || fail "the valgrind tool is not installed"
	expect_status 0 locprof record --backend valgrind --rate 0.002 -o vg.lpp -- ./matmul naive 40
	expect_grep "vg.lpp: [0-9]+ samples .* 1 thread \(pid [0-9]+, exit 0\)" "$T/err"
	profiles="inst.lpp vg.lpp"
else
	echo "SKIP: the valgrind backend (valgrind or its tool not built)" >&2
	profiles="inst.lpp"
fi
for p in $profiles; do
	expect_status 0 locprof report "$p" --top 2 --at 4K
	expect_grep "main \(matmul\.c:[0-9]+" "$T/out"
done

# locprof/roi.h: installed with the public headers, and found by the
# installed locprof cc with no flag.
[ -f "$prefix/include/locprof/roi.h" ] || fail "locprof/roi.h is not installed"
cp "$LOCPROF_SRC/tests/cli/roi/roi.c" .
expect_status 0 locprof cc -O2 -DROI_MARKED -o roi roi.c
expect_status 0 locprof record -r 0.01 -o roi.lpp -- ./roi 10
expect_grep "roi.lpp: region \(locprof_start/locprof_stop\) entered 1 time" "$T/err"

# The installed tree can move: the runtime is found relative to locprof.
mv "$prefix" "$T/moved"
expect_status 0 "$T/moved/bin/locprof" cc --show -O2 -c -o /dev/null matmul.c
expect_status 0 "$T/moved/bin/locprof" cc --show -O2 -o moved matmul.c
expect_grep "$T/moved/lib/locprof/liblocprof-rt" "$T/err"
mv "$T/moved" "$prefix"

# ---- man pages: locprof(1) and one per command of `locprof help` -------------
man1="$prefix/share/man/man1"
[ -f "$man1/locprof.1" ] || fail "no locprof.1 in $man1"
commands=$(locprof help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on && $1 != "help" { print $1 }')
[ "$(echo "$commands" | wc -l)" -ge 10 ] || fail "too few commands in 'locprof help': $commands"
for c in $commands; do
	[ -f "$man1/locprof-$c.1" ] || fail "no man page for '$c' (locprof-$c.1)"
done
if command -v groff >/dev/null; then
	for page in "$man1"/*.1; do
		groff -man -Tutf8 -ww -z "$page" 2>"$T/groff" || fail "groff failed on $page"
		[ -s "$T/groff" ] && { cat "$T/groff" >&2; fail "groff warns about $page"; }
	done
	# every option of the help text is in the page, as an option
	groff -man -Tutf8 "$man1/locprof-record.1" 2>/dev/null | sed 's/\x08.//g' >record.txt
	for o in --output --backend --flush-ms --max-skid -X; do
		grep -qE "^ +(-., )?$o( |$)" record.txt || fail "locprof-record(1) lacks the option $o"
	done
fi

# ---- bash completion --------------------------------------------------------
comp="$prefix/share/bash-completion/completions/locprof"
[ -f "$comp" ] || fail "no bash completion in $comp"
complete_words() { # the completions of the words given
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _locprof; echo "${COMPREPLY[*]}"' \
		_ "$comp" "$@"
}
[ "$(complete_words locprof rec)" = "record" ] || fail "completion of 'locprof rec': $(complete_words locprof rec)"
[ "$(complete_words locprof record --back)" = "--backend" ] || fail "completion of 'locprof record --back'"
[ "$(complete_words locprof pred)" = "predict" ] || fail "completion of 'locprof pred'"
[ "$(complete_words locprof predict a)" = "at" ] || fail "completion of 'locprof predict a'"
[ "$(complete_words locprof predict at --mach)" = "--machine" ] || fail "completion of 'locprof predict at --mach'"
[ "$(complete_words locprof help stack)" = "stackdist" ] || fail "completion of 'locprof help stack'"

# ---- liblocprof: headers, archive, pkg-config ---------------------------------
if command -v pkg-config >/dev/null; then
	cat >uselib.c <<'C'
#include <locprof/locprof.h>
#include <stdio.h>
int main(void) { puts(lp_strerror(LP_EINVAL)); return 0; }
C
	flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs locprof) ||
		fail "pkg-config does not know locprof"
	# shellcheck disable=SC2086 # the flags are words
	cc -o uselib uselib.c $flags || fail "cannot build against the installed liblocprof ($flags)"
	[ "$(./uselib)" = "invalid argument" ] || fail "lp_strerror through the installed library: $(./uselib)"
fi
echo "ok: the installed locprof builds, records (inst, valgrind) and reports; man pages, completion, pkg-config"
