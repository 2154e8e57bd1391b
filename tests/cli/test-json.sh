# JSON output stays valid JSON when a file name needs escaping: every
# command prints names through cli_json_string().
. "$(dirname "$0")/lib.sh"

tr='a"b\c.lpt'
"$LOCPROF" synth cyclic -n 2000 -L 50 -o "$T/$tr"
"$LOCPROF" sample "$T/$tr" -o "$T/p.lpp" --rate 0.1 2>/dev/null
cp "$T/p.lpp" "$T/q\"x.lpp"
check() { # the escaped name appears, the raw one does not
	expect_grep "$1" "$T/out"
	! grep -qF "$2" "$T/out" || fail "unescaped name in: $(head -c 200 "$T/out")"
}
esc='a\\"b\\\\c\.lpt'
expect_status 0 "$LOCPROF" simulate "$T/$tr" --sizes 4K --format json
check "$esc" 'a"b'
expect_status 0 "$LOCPROF" simulate "$T/$tr" --cache 4K:4:64 --format json
check "$esc" 'a"b'
expect_status 0 "$LOCPROF" simulate "$T/$tr" --cache 4K:4:64 --sample-length 100 --sample-ratio 0.5 --format json
check "$esc" 'a"b'
expect_status 0 "$LOCPROF" stackdist "$T/$tr" --format json
check "$esc" 'a"b'
expect_status 0 "$LOCPROF" report "$T/q\"x.lpp" --format json
check 'q\\"x\.lpp' 'q"x'
