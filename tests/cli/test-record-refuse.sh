# locprof record's front door: a run that cannot give a profile is refused
# before the program starts (the program's side effect is absent), signals
# sent to locprof reach the program and the profile is kept, output names,
# OUT.old, and temporary files removed on signals or cleared after a kill.
. "$(dirname "$0")/lib.sh"
RT=$LOCPROF_SRC/tests/rt
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

# cyclic K R spin FILE writes its pid to FILE, then sweeps until killed;
# touch FILE creates FILE (the side effect a refused run must not have).
"$LOCPROF" cc -O1 -o "$T/cyclic" "$RT/cyclic.c" || fail "cannot build cyclic"
cat >"$T/touch.c" <<'EOF2'
#include <stdio.h>
static int sum[64];
int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;
	for (int i = 0; i < 4096; i++)
		sum[i % 64] += i;
	if (f)
		fprintf(f, "%d\n", sum[3]);
	return !f || fclose(f) != 0;
}
EOF2
"$LOCPROF" cc -O1 -o "$T/touch" "$T/touch.c" || fail "cannot build touch"
cc -O1 -o "$T/plain" "$T/touch.c" || fail "cannot build plain touch"

# refused CMD...: exits 1 with one error line, and the program never ran.
refused() {
	rm -f "$T/side"
	expect_status 1 "$@"
	expect_one_line "$T/err"
	[ ! -e "$T/side" ] || fail "'$*' ran the program before refusing"
}

# 1. An output that cannot be created: a missing directory, a path through
#    a regular file, a directory as OUT.
refused "$LOCPROF" record -o "$T/missing/p.lpp" -- "$T/touch" "$T/side"
expect_grep "error: cannot create '.*/missing/p.lpp': No such file or directory" "$T/err"
touch "$T/file"
refused "$LOCPROF" record -o "$T/file/p.lpp" -- "$T/touch" "$T/side"
mkdir "$T/dir.lpp"
refused "$LOCPROF" record -o "$T/dir.lpp" -- "$T/touch" "$T/side"
expect_grep "is a directory" "$T/err"
if [ "$(id -u)" != 0 ]; then # root writes anywhere
	mkdir "$T/ro" && chmod 555 "$T/ro"
	refused "$LOCPROF" record -o "$T/ro/p.lpp" -- "$T/touch" "$T/side"
	expect_grep "Permission denied" "$T/err"
fi

# 2. A program not built with locprof cc, named by path or found in PATH;
#    the valgrind backend takes it.
refused "$LOCPROF" record -o "$T/p.lpp" -- "$T/plain" "$T/side"
expect_grep "error: '.*/plain' is not instrumented: rebuild it with 'locprof cc'" "$T/err"
refused env PATH="$T:$PATH" "$LOCPROF" record -o "$T/p.lpp" -- plain "$T/side"
[ ! -e "$T/p.lpp" ] || fail "a refused run wrote a profile"

# 3. A stripped instrumented program keeps the runtime's section; a shell
#    script is followed to its interpreter, said to be uninstrumented, and
#    run (it may start instrumented programs; this one does); so is a
#    launcher (env) to the program it runs, and a shell with -c.
strip -o "$T/stripped" "$T/cyclic"
expect_status 0 "$LOCPROF" record -o "$T/s.lpp" --rate 0.01 -- "$T/stripped" 97 20
printf '#!/bin/sh\nexec "$@"\n' >"$T/wrap"
chmod +x "$T/wrap"
expect_status 0 "$LOCPROF" record -o "$T/w.lpp" --rate 0.01 -- "$T/wrap" "$T/cyclic" 97 20
expect_grep "'.*/wrap' is a script for '/bin/sh', which is not instrumented: cannot tell" "$T/err"
expect_grep "w.lpp: [0-9]+ samples" "$T/err"
expect_status 1 "$LOCPROF" record -o "$T/w2.lpp" -- "$T/wrap" "$T/plain" "$T/side"
expect_grep "error: no profile: '.*/wrap' ran no instrumented code" "$T/err"
# a launcher (env, time, taskset...) is followed to the instrumented
# program among its arguments, silently; one that names none is refused;
# a shell is run with a note, as a script is
expect_status 0 "$LOCPROF" record -o "$T/e.lpp" --rate 0.01 -- env LP_TEST_VAR=1 "$T/cyclic" 97 20
expect_grep "e.lpp: [0-9]+ samples" "$T/err"
if grep -q "not instrumented" "$T/err"; then
	fail "env followed by an instrumented program was said not instrumented"
fi
refused "$LOCPROF" record -o "$T/e2.lpp" -- env LP_TEST_VAR=1 "$T/plain" "$T/side"
expect_grep "error: 'env' is not instrumented" "$T/err"
expect_status 0 "$LOCPROF" record -o "$T/sh.lpp" --rate 0.01 -- sh -c "\"$T/cyclic\" 97 20"
expect_grep "'sh' is a shell, which is not instrumented: cannot tell" "$T/err"
expect_grep "sh(\.[0-9]+)?\.lpp: [0-9]+ samples" "$T/err"

# 4. The output's name must say its format; usage errors also come first.
refused_usage() {
	rm -f "$T/side"
	expect_status 2 "$@"
	[ ! -e "$T/side" ] || fail "'$*' ran the program before refusing"
}
refused_usage "$LOCPROF" record -o "$T/prof" -- "$T/touch" "$T/side"
expect_grep "cannot tell the output format of '.*/prof': name it NAME.lpp" "$T/err"
refused_usage "$LOCPROF" record --mode trace -o "$T/prof.xyz" -- "$T/touch" "$T/side"
expect_status 0 "$LOCPROF" record -o "$T/p.samples" --rate 0.01 -- "$T/cyclic" 97 20
expect_grep '^# locprof samples' "$T/p.samples"

# 5. An existing output is kept as OUT.old (the last one only).
expect_status 0 "$LOCPROF" record -o "$T/k.lpp" --rate 0.01 --seed 1 -- "$T/cyclic" 97 20
cp "$T/k.lpp" "$T/first"
expect_status 0 "$LOCPROF" record -o "$T/k.lpp" --rate 0.01 --seed 2 -- "$T/cyclic" 97 20
cmp -s "$T/first" "$T/k.lpp.old" || fail "the previous output is not k.lpp.old"
cmp -s "$T/first" "$T/k.lpp" && fail "k.lpp was not rewritten"
expect_status 0 "$LOCPROF" dump "$T/k.lpp"

# wait_pidfile FILE: until the program has written its pid.
wait_pidfile() {
	for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.05; done
	fail "the program did not start"
}
# ended PID WHAT: wait up to 10 s for locprof (PID) to end, else stop the
# program (its pid is in $T/side) and fail.
ended() {
	for _ in $(seq 200); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
	kill -KILL "$(cat "$T/side")" 2>/dev/null || true
	fail "$2"
}

# 6. INT, TERM and HUP sent to locprof's pid reach the program, which dies
#    of it; the profile is kept and report reads it. (env --default-signal:
#    a background job of a script starts with SIGINT ignored, and the
#    program would inherit that.)
for sig in INT:2 TERM:15 HUP:1; do
	rm -f "$T/side" "$T/sig.lpp"
	env --default-signal=INT "$LOCPROF" record -o "$T/sig.lpp" --rate 0.001 -- \
		"$T/cyclic" 97 1000 spin "$T/side" >"$T/out" 2>"$T/err" &
	rec=$!
	wait_pidfile "$T/side"
	sleep 0.3
	kill -"${sig%:*}" $rec
	ended $rec "SIG${sig%:*} sent to locprof did not end the program"
	st=0; wait $rec || st=$?
	[ $st = $((128 + ${sig#*:})) ] || { cat "$T/err" >&2; fail "SIG${sig%:*}: locprof exited $st"; }
	expect_grep "sig.lpp: [0-9]+ samples .*killed by signal ${sig#*:}" "$T/err"
	expect_status 0 "$LOCPROF" report "$T/sig.lpp" --sizes 4K,8K --top 0
	expect_grep '^ +8K ' "$T/out"
done

# 7. A signal that ends locprof itself removes the temporary file of the
#    output being written, and the collector's socket and its directory
#    (made in $TMPDIR).
rm -f "$T/side"
mkdir "$T/tmpdir"
TMPDIR=$T/tmpdir "$LOCPROF" record --mode trace -o "$T/tr.lpt" -- "$T/cyclic" 97 1000 spin "$T/side" >"$T/out" 2>"$T/err" &
rec=$!
wait_pidfile "$T/side"
sleep 0.3
ls "$T"/tr.lpt.tmp.* >/dev/null 2>&1 || fail "no temporary trace while recording"
ls "$T"/tmpdir/locprof-rec.*/sock >/dev/null 2>&1 || fail "no collector socket in \$TMPDIR"
kill -USR1 $rec
ended $rec "SIGUSR1 did not end locprof"
st=0; wait $rec || st=$?
[ $st = 138 ] || fail "SIGUSR1: locprof exited $st"
kill "$(cat "$T/side")" 2>/dev/null || true
if ls "$T"/tr.lpt.tmp.* >/dev/null 2>&1; then fail "SIGUSR1 left a temporary trace"; fi
[ -z "$(ls -A "$T/tmpdir")" ] || fail "SIGUSR1 left $(ls "$T/tmpdir")"

# 8. After a SIGKILL the temporary file stays; the next recording to that
#    output removes it (and not one of a live process).
rm -f "$T/side"
"$LOCPROF" record --mode trace -o "$T/tr.lpt" -- "$T/cyclic" 97 1000 spin "$T/side" >"$T/out" 2>"$T/err" &
rec=$!
wait_pidfile "$T/side"
sleep 0.3
kill -KILL $rec
wait $rec || true
kill "$(cat "$T/side")" 2>/dev/null || true
ls "$T"/tr.lpt.tmp.$rec >/dev/null || fail "no temporary trace after SIGKILL"
touch "$T/tr.lpt.tmp.$$" "$T/tr.77.lpt.tmp.$rec" "$T/other.lpt.tmp.$rec"
expect_status 0 "$LOCPROF" record --mode trace -o "$T/tr.lpt" -- "$T/cyclic" 97 5
expect_grep "removed 2 temporary files of killed recordings to '.*/tr.lpt'" "$T/err"
[ ! -e "$T/tr.lpt.tmp.$rec" ] && [ ! -e "$T/tr.77.lpt.tmp.$rec" ] || fail "stale files left"
[ -e "$T/tr.lpt.tmp.$$" ] && [ -e "$T/other.lpt.tmp.$rec" ] || fail "removed a live or foreign file"
echo PASS
