# Hostile inputs (tests/data/fuzz-findings/README.md): every one gets a
# clear message and an exit status below 128, quickly; in the
# AddressSanitizer build a sanitizer report aborts the command (status
# 134), so it fails here too.
. "$(dirname "$0")/lib.sh"
D=$LOCPROF_SRC/tests/data/fuzz-findings
printf 'R 0x1000 8 0x401000\nR 0x1040 8 0x401000\nR 0x1000 8 0x401000\n' >"$T/tiny.txt"

# check CMD...: status below 128 within 20 s (the inputs take well under a
# second; the margin is for a loaded machine), one locprof: line on stderr
check() {
	local got=0
	timeout 20 "$@" >"$T/out" 2>"$T/err" || got=$?
	[ "$got" -lt 128 ] || { head -5 "$T/err" >&2; fail "'$*' died with status $got"; }
	[ "$got" != 124 ] || fail "'$*' took more than 20 s"
	grep -q '^locprof: ' "$T/err" || { head -5 "$T/err" >&2; fail "'$*' (status $got) said nothing"; }
	! grep -q 'Sanitizer\|runtime error' "$T/err" || { head -5 "$T/err" >&2; fail "'$*': sanitizer report"; }
}

for f in win-overflow win-overflow-far time-max phases-overflow phases-overflow-fuzz1 \
	phases-overflow-fuzz2 phases-overflow-fuzz3 win-huge nosamples cat; do
	check "$LOCPROF" dump "$D/$f.lpp"
	check "$LOCPROF" report "$D/$f.lpp"
done
check "$LOCPROF" report --cache 32K:8:64 "$D/line0.lpp"
expect_grep "malformed chunk 'META'" "$T/err"
expect_one_line "$T/err"

for cmd in stackdist reusedist; do
	check "$LOCPROF" $cmd "$D/hugesize.txt"
	expect_grep "hugesize.txt: line 1: a reference of 18446744073709551615 bytes \(at most 1048576\)$" "$T/err"
done
check "$LOCPROF" simulate "$D/hugesize.txt" --cache 32K:8:64
check "$LOCPROF" sample "$D/hugesize.txt" -o "$T/h.lpp"
expect_status 1 "$LOCPROF" sample "$D/hugesize.txt" -o "$T/h.lpp"
[ ! -e "$T/h.lpp" ] || fail "a refused trace left a profile"

# sparse thread ids: numbered densely, one line of summary
for f in tid4M tid200M bigtid; do
	check "$LOCPROF" sample "$D/$f.txt" -o "$T/t.lpp"
	"$LOCPROF" dump "$T/t.lpp" 2>/dev/null | grep -c '^references: 1  threads: 1$' >/dev/null || fail "$f: threads not numbered densely"
done
check "$LOCPROF" sample "$D/bigtid-mutant.txt" -o "$T/t.lpp"

for f in 1e30 machine-floatcast; do
	check "$LOCPROF" model collect -q --size 1 -o "$T/m" --trace "$T/tiny.txt" --machine "$D/$f.machine"
done
expect_one_line "$T/err"

check "$LOCPROF" dump "$D/cat.lpp"
expect_grep "data after the end chunk at byte [0-9]+ ignored" "$T/err"
check "$LOCPROF" convert "$D/cat.lpt" "$T/c.txt"
expect_grep "data after the end-of-trace block at byte [0-9]+ \([0-9]+ records read\)" "$T/err"
check "$LOCPROF" stackdist "$D/cat.lpt"
