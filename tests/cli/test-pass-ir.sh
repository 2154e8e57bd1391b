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
echo ok
