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

# A profile without samples has no miss ratios: JSON says null (it has no
# NaN), text says n/a, and each stays one warning line; the files parse.
"$LOCPROF" sample "$T/$tr" -o "$T/empty.lpp" --rate 1e-12 2>/dev/null
for c in "report $T/empty.lpp --sizes 4K,64K --cache 32K:8:64 --threads" "diff $T/empty.lpp $T/p.lpp --sizes 4K --cache 32K:8:64" \
	"annotate $T/empty.lpp" "report $T/empty.lpp --shared --sizes 4K"; do
	# shellcheck disable=SC2086
	expect_status 0 "$LOCPROF" $c --format json
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/out" || fail "$c: not JSON: $(head -c 300 "$T/out")"
	grep -qiw 'nan' "$T/out" && fail "$c: nan in JSON"
done
expect_status 0 "$LOCPROF" report "$T/empty.lpp" --sizes 4K --cache 32K:8:64
expect_grep '^ +4K +n/a +n/a$' "$T/out"
grep -qiw 'nan' "$T/out" && fail "report: nan in text"
expect_status 0 "$LOCPROF" diff "$T/empty.lpp" "$T/p.lpp" --sizes 4K
expect_grep '^ +4K +n/a +[0-9.]+ +n/a ' "$T/out"
