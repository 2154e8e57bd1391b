# bench/kernel-accuracy.sh and bench/prediction-suite.sh on one tiny case
# each, so that the suites keep working: a kernel built with locprof cc,
# recorded, simulated, compared, and the tables printed with numbers in
# them; the prediction suite's --update-docs rewrites only the text between
# its markers.
. "$(dirname "$0")/lib.sh"
need_pass
S=$LOCPROF_SRC

# accuracy: gemm at 24, one rate and seed, without Cachegrind (slow)
expect_status 0 env SIZES=24 RATES=1e-2 SEEDS=1 LOCPROF_BUILD="$LOCPROF_BUILD" \
	bash "$S/bench/kernel-accuracy.sh" --no-cachegrind gemm
expect_grep '^\| gemm \| 24 \| 1e-2 \| 1 \| [0-9]+ \| [0-9]+\.[0-9]+ \| [0-9.]+ @[0-9]+[KM] \| [0-9]+\.[0-9]+ ' "$T/out"
expect_grep '^\| 1e-2 \| 1 \| [0-9]+\.[0-9]+ \| ' "$T/out"
# the set-associative column compares at least the fixed geometries
expect_grep 'set-associative caches: 32K:8:64 256K:8:64 1M:16:64' "$T/out"
if awk -F'|' '$2 ~ /gemm/ && $11 ~ /n\/a/' "$T/out" | grep -q .; then
	fail "no set-associative errors: $(cat "$T/out")"
fi

# prediction: mv-col fitted at five sizes, predicted at 2x, both build
# styles, one machine; the docs table rewritten in a copy
doc=$T/prediction.md
printf 'before\n<!-- begin prediction-suite table (bench/prediction-suite.sh --update-docs) -->\nold\n<!-- end prediction-suite table -->\nafter\n' >"$doc"
expect_status 0 env DOC="$doc" LOCPROF_BUILD="$LOCPROF_BUILD" bash "$S/bench/prediction-suite.sh" \
	--sizes 8,10,12,14,16 --factors 2 --machines r12000 --update-docs mv-col
expect_grep '^\| mv-col \| runtime \| r12000 \| L1 \| [-+][0-9]+\.[0-9] \| [-+][0-9]+\.[0-9] \| [^|]* \|$' "$T/out"
expect_grep '^\| mv-col \| compile \| r12000 \| TLB \| ' "$T/out"
expect_grep '^\| r12000 \| runtime \| 3 \| [0-3] \| ' "$T/out"
[ "$(head -1 "$doc")" = before ] && [ "$(tail -1 "$doc")" = after ] || fail "text outside the markers changed: $(cat "$doc")"
grep -q '^old$' "$doc" && fail "the old table was not replaced"
grep -q '^| mv-col | runtime | r12000 | L2 |' "$doc" || fail "no table in the page: $(cat "$doc")"
# a kernel without sizes is refused before anything runs
expect_status 2 env LOCPROF_BUILD="$LOCPROF_BUILD" bash "$S/bench/prediction-suite.sh" no-such-kernel
