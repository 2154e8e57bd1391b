# Traces across the three formats, pipes, damaged .lpt files, locprof synth.
. "$(dirname "$0")/lib.sh"

# A text trace with every kind, threads and extreme values (the largest
# reference, 1 MiB; an allocation of 2^64-1 bytes).
printf 'R 0x1000 8 0x401000\nW 0x1008 4 0x401004\nA 0x2000 18446744073709551615 0x401100 1\nF 0x2000 0 0x401100 1\nR 0xffffffffffffffff 1048576 0xfffffffffffffff0 4294967295\n' >"$T/a.txt"
expect_status 0 "$LOCPROF" convert "$T/a.txt" "$T/a.lpt"
expect_status 0 "$LOCPROF" convert "$T/a.lpt" "$T/b.txt"
cmp "$T/a.txt" "$T/b.txt" || fail "text -> lpt -> text changed the records"

# A real lackey excerpt: lackey -> lpt -> lackey -> text equals lackey -> text.
L="$LOCPROF_SRC/tests/data/true-excerpt.lackey"
expect_status 0 "$LOCPROF" convert "$L" "$T/l.lpt"
expect_status 0 "$LOCPROF" convert "$T/l.lpt" "$T/l.lackey"
expect_status 0 "$LOCPROF" convert "$T/l.lackey" "$T/l1.txt"
expect_status 0 "$LOCPROF" convert "$L" "$T/l2.txt"
cmp "$T/l1.txt" "$T/l2.txt" || fail "lackey -> lpt -> lackey changed the records"
want=$(awk '/^ [LS] /{n++} /^ M /{n+=2} END{print n}' "$L")
[ "$(wc -l <"$T/l2.txt")" -eq "$want" ] || fail "expected $want records from the lackey excerpt"

# Pipes: formats recognised from the content, --to for stdout.
expect_status 0 sh -c "cat '$T/a.lpt' | '$LOCPROF' convert - - >'$T/p.txt'"
cmp "$T/a.txt" "$T/p.txt" || fail "lpt on stdin -> text on stdout differs"
expect_status 0 sh -c "'$LOCPROF' convert --to lpt '$T/a.txt' - | '$LOCPROF' convert - '$T/p2.txt'"
cmp "$T/a.txt" "$T/p2.txt" || fail "lpt through a pipe differs"
expect_status 0 sh -c "cat '$L' | '$LOCPROF' convert - '$T/p3.txt'"
cmp "$T/l2.txt" "$T/p3.txt" || fail "lackey on stdin differs"

# A truncated .lpt: warning, exit 3, the complete blocks before the cut.
expect_status 0 "$LOCPROF" synth seq -n 200000 -o "$T/big.lpt"
expect_status 0 "$LOCPROF" convert "$T/big.lpt" "$T/big.txt"
size=$(stat -c %s "$T/big.lpt")
head -c $((size - 40)) "$T/big.lpt" >"$T/cut.lpt"
expect_status 3 "$LOCPROF" convert "$T/cut.lpt" "$T/cut.txt"
expect_grep "^locprof: warning: .*cut.lpt': trace truncated" "$T/err"
expect_one_line "$T/err"
n=$(wc -l <"$T/cut.txt")
[ "$n" -gt 0 ] && [ "$n" -lt 200000 ] || fail "truncated trace gave $n records"
expect_grep "results cover the first $n records" "$T/err"
cmp "$T/cut.txt" <(head -n "$n" "$T/big.txt") || fail "the readable prefix differs"

# Corrupt payload: the blocks before it, exit 3 (damage is a warning).
cp "$T/big.lpt" "$T/bad.lpt"
printf '\xff\xff\xff\xff' | dd of="$T/bad.lpt" bs=1 seek=$((size - 60)) conv=notrunc status=none
expect_status 3 "$LOCPROF" convert "$T/bad.lpt" "$T/bad.txt"
expect_grep "corrupt block" "$T/err"
expect_one_line "$T/err"

# Wrong magic, wrong version: one error line, exit 1, no output left.
printf 'not a trace at all\n' >"$T/junk.lpt"
expect_status 1 "$LOCPROF" convert "$T/junk.lpt" "$T/j.txt"
expect_grep "^locprof: error: '.*junk.lpt': not a locprof trace \(bad magic\)$" "$T/err"
expect_one_line "$T/err"
[ ! -e "$T/j.txt" ] || fail "a failed conversion left its output"
# Allocation events are not references: simulate's heading counts the
# memory references alone, with --sizes as with --cache.
printf 'R 0x1000 8 0x401000\nA 0x2000 64 0x401100 1\nW 0x2000 8 0x401004\nF 0x2000 0 0x401100 1\n' >"$T/ev.txt"
expect_status 0 "$LOCPROF" simulate "$T/ev.txt" --sizes 4K
expect_grep "^# locprof simulate .*ev.txt: 2 references, fully associative" "$T/out"
expect_status 0 "$LOCPROF" simulate "$T/ev.txt" --cache 4K:4:64
expect_grep "^# locprof simulate .*ev.txt: 2 references, " "$T/out"

# A trace given where a profile is read, and a profile where a trace is:
# one line that names the command that reads it.
expect_status 1 "$LOCPROF" report "$T/big.lpt"
expect_grep "^locprof: error: '.*big.lpt' is a locprof trace, not a profile: 'locprof simulate' and 'locprof stackdist' read it, 'locprof sample' makes a profile of it$" "$T/err"
expect_one_line "$T/err"
expect_status 0 "$LOCPROF" sample "$T/big.lpt" -o "$T/big.lpp" --rate 0.01
expect_status 1 "$LOCPROF" simulate "$T/big.lpp" --sizes 4K
expect_grep "^locprof: error: '.*big.lpp' is a locprof profile, not a trace: 'locprof report' reads it$" "$T/err"
expect_one_line "$T/err"
{ printf '\x89LPT\r\n\x1a\n\x09\x00\x00\x00\x00\x00\x00\x00'; } >"$T/v9.lpt"
expect_status 1 "$LOCPROF" convert "$T/v9.lpt" "$T/j.txt"
expect_grep "lpt version 9 is not supported \(this locprof reads versions 1 to 2\)" "$T/err"
expect_one_line "$T/err"

# locprof synth: formats by extension, same seed same trace, stdout.
expect_status 0 "$LOCPROF" synth zipf -n 5000 -L 1K --seed 3 -o "$T/z1.lpt"
expect_status 0 "$LOCPROF" synth zipf -n 5000 -L 1K --seed 3 -o "$T/z2.txt"
expect_status 0 "$LOCPROF" convert "$T/z1.lpt" "$T/z1.txt"
cmp "$T/z1.txt" "$T/z2.txt" || fail "same seed, different traces"
expect_status 0 "$LOCPROF" synth zipf -n 5000 -L 1K --seed 4 -o "$T/z3.txt"
! cmp -s "$T/z1.txt" "$T/z3.txt" || fail "different seeds, same trace"
expect_status 0 "$LOCPROF" synth cyclic -n 6 -L 3 -l 64 -b 0x1000 -w 0 -o -
printf 'R 0x1000 8 0x401010\nR 0x1040 8 0x401010\nR 0x1080 8 0x401010\nR 0x1000 8 0x401010\nR 0x1040 8 0x401010\nR 0x1080 8 0x401010\n' >"$T/want.txt"
cmp "$T/out" "$T/want.txt" || fail "cyclic over 3 lines is not 0x1000, 0x1040, 0x1080 repeated"
expect_status 0 "$LOCPROF" synth strided -n 4 -S 100 -f 250 -b 0 -w 1 -o "$T/s.lackey"
expect_grep "^ S 00000064,8$" "$T/s.lackey"
expect_status 0 "$LOCPROF" synth --help
for opt in --count --line-size --elem-size --base --footprint --lines --zipf-s --stride \
	--write-ratio --threads --pc --seed --phase --output --to; do
	expect_grep "$opt" "$T/out"
done

# synth errors: usage errors, exit 2, nothing written.
expect_status 2 "$LOCPROF" synth nosuch -o "$T/x.lpt"
expect_grep "unknown pattern 'nosuch'" "$T/err"
expect_status 2 "$LOCPROF" synth zipf -s 0 -o "$T/x.lpt"
expect_grep "zipf exponent must be a positive number" "$T/err"
expect_status 2 "$LOCPROF" synth seq -n lots -o "$T/x.lpt"
expect_grep "bad value 'lots' for --count" "$T/err"
expect_status 2 "$LOCPROF" synth uniform -l 48 -o "$T/x.lpt"
expect_grep "line size 48 is not a power of two" "$T/err"
expect_status 2 "$LOCPROF" synth uniform
expect_grep "needs an output" "$T/err"
expect_status 2 "$LOCPROF" synth uniform -w 2 -o "$T/x.lpt"
[ ! -e "$T/x.lpt" ] || fail "a failed synth left its output"
