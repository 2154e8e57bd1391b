# The instrumentation pass alone on hand-written IR (tests/pass/*.ll):
# `opt -load-pass-plugin=locprof-pass.so -passes=locprof` must produce a
# module that opt's verifier accepts, and every load and store must get
# its shadow check. Each file is a shape that once broke the pass.
. "$(dirname "$0")/lib.sh"
PLUGIN=$LOCPROF_BUILD/src/rt/locprof-pass.so
OPT=$(command -v opt-14 || command -v opt || true)
[ -e "$PLUGIN" ] || { echo "SKIP: the pass was not built" >&2; exit 0; }
[ -n "$OPT" ] || { echo "SKIP: no opt" >&2; exit 0; }
for ll in "$LOCPROF_SRC"/tests/pass/*.ll; do
	name=$(basename "$ll" .ll)
	expect_status 0 "$OPT" -load-pass-plugin="$PLUGIN" -passes=locprof -S -o "$T/$name.out.ll" "$ll"
	accesses=$(grep -cE '^\s+%\S+ = load |^\s+store ' "$ll")
	checks=$(grep -c 'add i64 %[^,]*, 2147450880' "$T/$name.out.ll")
	# each access is checked at least once (fast block), its clone too
	[ "$checks" -ge "$accesses" ] || fail "$name: $checks shadow checks for $accesses accesses"
done
# A loop that holds a slow path is marked for the vectorizer to leave
# alone (it cannot vectorize the call anyway; under LTO its legality
# checks on the cloned blocks' loads scale with the square of a
# pointer's uses).
if command -v clang >/dev/null; then
	cat >"$T/loop.c" <<'C'
double sum(const double *a, const int *idx, long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		if (idx[i] > 0)
			s += a[idx[i]];
	return s;
}
C
	expect_status 0 "$LOCPROF" cc --no-lto -O2 -S -emit-llvm -o "$T/loop.ll" "$T/loop.c"
	md=$(awk '/!"llvm.loop.vectorize.enable", i32 0/ { sub(/ =.*/, ""); print; exit }' "$T/loop.ll")
	[ -n "$md" ] || fail "no llvm.loop.vectorize.enable false in the instrumented loop"
	grep -q ", $md[,}]" "$T/loop.ll" || fail "the vectorize.enable metadata is on no loop"
fi
echo ok
