# locprof convert and the command-line conventions around it.
. "$(dirname "$0")/lib.sh"

printf '# hand-made\nR 0x1000 8 0x401000\nW 0x1008 4\nA 0x2000 64 0x401100 1\n' >"$T/a.txt"
expect_status 0 "$LOCPROF" convert "$T/a.txt" "$T/b.trace"
cmp <(grep -v '^#' "$T/a.txt" | sed 's/ 0x401000$/ 0x401000/') "$T/b.trace" || fail "text round trip changed the records"

# stdin to stdout, format recognised from the content
expect_status 0 sh -c "cat '$T/a.txt' | '$LOCPROF' convert - -"
[ "$(wc -l <"$T/out")" -eq 3 ] || fail "expected 3 records on stdout"

# errors: one line, non-zero, no output file left behind
expect_status 1 "$LOCPROF" convert "$T/missing.txt" "$T/c.txt"
expect_grep "^locprof: error: cannot open '.*missing.txt': No such file or directory$" "$T/err"
expect_one_line "$T/err"
printf 'R 0x10 8\nR zz 8\n' >"$T/bad.txt"
expect_status 1 "$LOCPROF" convert "$T/bad.txt" "$T/c.txt"
expect_grep "line 2: bad address 'zz'" "$T/err"
[ ! -e "$T/c.txt" ] || fail "a failed conversion left its output file"
expect_status 2 "$LOCPROF" convert --bogus "$T/a.txt" "$T/c.txt"
expect_grep "unknown option '--bogus'" "$T/err"
expect_status 2 "$LOCPROF" convert "$T/a.txt"
expect_status 2 "$LOCPROF" convert --to nosuch "$T/a.txt" "$T/c.txt"
expect_status 0 "$LOCPROF" convert --help
expect_grep "^usage: locprof convert" "$T/out"
expect_status 0 "$LOCPROF" help convert
expect_status 2 "$LOCPROF" nosuchcommand
expect_grep "no such command 'nosuchcommand'" "$T/err"
