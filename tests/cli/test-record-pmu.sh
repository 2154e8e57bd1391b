# locprof record --backend pmu: without a PMU the default counter fails in
# one line; with --counter step the samples of a native program agree with
# the full trace of the same program (same reuse distances for the same
# sampled references, fixed seed), for several line sizes; output and exit
# status pass through; threads, fork, exec, a crash and a SIGTERM to locprof
# each leave their profiles. The engine itself is tested in tests/pmu/.
. "$(dirname "$0")/lib.sh"
PMU=$LOCPROF_BUILD/tests/pmu
CHECK=$PMU/pmu-check-samples
[ -x "$CHECK" ] || { echo "SKIP: no pmu backend in this build" >&2; exit 0; }
command -v cc >/dev/null || { echo "SKIP: no C compiler" >&2; exit 0; }

cat >"$T/prog.c" <<'EOF'
/* prog N [crash|loop|exec]: sums over a list and an array, prints, exits 3. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
struct node { struct node *next; long v; };
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 16;
	const char *mode = argc > 2 ? argv[2] : "";
	struct node *head = NULL;
	long *a = calloc(n, sizeof(long)), s = 0;
	for (int i = 0; i < n; i++) {
		struct node *x = malloc(sizeof(*x));
		x->v = i; x->next = head; head = x;
	}
	for (int r = 0; r < 3; r++) {
		for (struct node *x = head; x; x = x->next)
			s += x->v;
		for (int i = 0; i < n; i += 3)
			a[i] += s;
	}
	printf("prog %d: %ld %ld\n", n, s, a[0]);
	fflush(stdout);
	if (!strcmp(mode, "crash"))
		*(volatile int *)16 = 1;
	if (!strcmp(mode, "loop"))
		for (volatile long k = 0;; k++)
			a[k % n]++;
	if (!strcmp(mode, "exec"))
		execl(argv[0], argv[0], "8", (char *)NULL);
	return 3;
}
EOF
cc -O1 -o "$T/prog" "$T/prog.c" || fail "cannot build prog"
cc -O1 -static -o "$T/prog-static" "$T/prog.c" 2>/dev/null || cp "$T/prog" "$T/prog-static"

rec() { "$LOCPROF" record --backend pmu "$@"; }

# 0. The default counter is the PMU: here (no PMU) one line naming the
#    cause and the alternatives, and the program never runs.
if rec -o "$T/x.lpp" -- "$T/prog" >/dev/null 2>&1; then
	echo "note: this machine has a PMU; the no-PMU message is not tested" >&2
else
	expect_status 1 "$LOCPROF" record --backend pmu -o "$T/x.lpp" -- sh -c "touch $T/ran"
	expect_one_line "$T/err"
	expect_grep "^locprof: error: no hardware performance counters \(.*\); use --counter step .*--backend inst.*--backend valgrind" "$T/err"
	[ ! -e "$T/ran" ] || fail "the program ran although the counter could not start"
	[ ! -e "$T/x.lpp" ] || fail "an output was written although nothing ran"
fi

# 1. Requests this backend cannot do: one clear usage error each.
for args in "--samples 100" "--mode trace -o $T/x.lpt" "--counter nope" "-X frob" "-o $T/x.txt" \
	"--line 8192" "-X emulate-skid=3"; do
	# shellcheck disable=SC2086
	expect_status 2 "$LOCPROF" record --backend pmu $args -- "$T/prog"
	expect_grep "^locprof: error: " "$T/err"
done

# 2. Exact: the full trace of the program (step counter), then its samples
#    at two line sizes with a fixed seed; every sample is checked against
#    the trace: same reference (time, pc, address, kind) and the reuse
#    distance at which the trace next touches its line, and the pc there.
"$T/prog" 40 >"$T/native.out" && fail "prog exited 0" || true
expect_status 3 "$LOCPROF" record --backend pmu --counter step --mode trace -o "$T/t.lpt" -- "$T/prog" 40
cmp -s "$T/out" "$T/native.out" || fail "trace mode changed the program's output"
expect_grep "t.lpt: [0-9]+ references, [1-9][0-9]* allocations, 1 thread \(pid [0-9]+, exit 3\)" "$T/err"
expect_status 3 "$LOCPROF" record --backend pmu --counter step --rate 0.02 --seed 5 --line 64,16 \
	-o "$T/s.lpp" -- "$T/prog" 40
cmp -s "$T/out" "$T/native.out" || fail "sample mode changed the program's output"
expect_grep "s.lpp: [0-9]+ samples \([0-9]+ dangling\) of [0-9]+ references at rate [^,]*, 1 thread \(pid [0-9]+, exit 3\)" "$T/err"
expect_status 0 "$LOCPROF" convert "$T/t.lpt" "$T/t.txt"
expect_status 0 "$LOCPROF" dump "$T/s.lpp"
cp "$T/out" "$T/s.dump"
expect_grep "^source: pmu$" "$T/s.dump"
expect_grep "^mapping .*/prog$" "$T/s.dump"
expect_grep "^mapping .*/libc\.so" "$T/s.dump"
refs=$(grep -c '^[RW] ' "$T/t.txt")
expect_grep "^references: $refs  threads: 1$" "$T/s.dump"
for line in 64 16; do
	n=$("$CHECK" --dump "$T/t.txt" "$T/s.dump" $line 2>"$T/check") ||
		fail "line $line: samples disagree with the trace: $(cat "$T/check")"
	[ "$n" -ge 300 ] || fail "line $line: only $n samples checked"
done
# The same seed gives the same samples.
expect_status 3 "$LOCPROF" record -q --backend pmu --counter step --rate 0.02 --seed 5 --line 64,16 \
	-o "$T/s2.lpp" -- "$T/prog" 40
expect_status 0 "$LOCPROF" dump "$T/s2.lpp"
cmp -s <(grep -v '^date:' "$T/s.dump") <(grep -v '^date:' "$T/out") || fail "same seed, different profile"

# 3. Threads and a forked child: one profile per process, the child's named
#    by its pid; output and exit status unchanged.
expect_status 4 "$LOCPROF" record --backend pmu --counter step --rate 0.05 -o "$T/th.lpp" -- "$PMU/pmu-target-threads"
expect_grep "^threads 60 60 child 5$" "$T/out"
expect_grep "th.lpp: [0-9]+ samples .* 2 threads \(pid [0-9]+, exit 4\)" "$T/err"
expect_grep "th\.[0-9]+\.lpp: [0-9]+ samples .* 1 thread \(pid [0-9]+, exit 5\)" "$T/err"
child=$(ls "$T"/th.*.lpp)
expect_status 0 "$LOCPROF" dump "$T/th.lpp"
expect_grep "^references: [0-9]+  threads: 2$" "$T/out"
awk '!/^#/ && NF == 9 && $6 == 1' "$T/out" | grep -c . >/dev/null || fail "no sample from the second thread"
expect_status 0 "$LOCPROF" dump "$child"
expect_grep "^references: [0-9]+  threads: 1$" "$T/out"

# 4. A crash keeps the samples; locprof exits as the program died.
expect_status 139 "$LOCPROF" record --backend pmu --counter step --rate 0.05 -o "$T/crash.lpp" -- "$T/prog-static" 20 crash
expect_grep "crash.lpp: [1-9][0-9]* samples .*killed by signal 11" "$T/err"
expect_status 0 "$LOCPROF" dump "$T/crash.lpp"

# 5. SIGTERM to locprof reaches the program; its samples are kept.
"$LOCPROF" record --backend pmu --counter step --rate 0.01 -o "$T/term.lpp" -- "$T/prog-static" 20 loop \
	>"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 100); do grep -q '^prog 20' "$T/out" && break; sleep 0.1; done
sleep 0.5
kill -TERM $pid
st=0
wait $pid || st=$?
[ "$st" = 143 ] || { cat "$T/err" >&2; fail "SIGTERM: locprof exited $st, expected 143"; }
expect_grep "term.lpp: [1-9][0-9]* samples .*killed by signal 15" "$T/err"
expect_status 0 "$LOCPROF" dump "$T/term.lpp"

# 6. exec: the image before and the one after get one profile each.
expect_status 3 "$LOCPROF" record --backend pmu --counter step --rate 0.05 -o "$T/ex.lpp" -- "$T/prog-static" 20 exec
expect_grep "^prog 8: " "$T/out"
expect_grep "ex.lpp: [0-9]+ samples .*\(pid [0-9]+, exec\)" "$T/err"
expect_grep "ex\.[0-9]+\.lpp: [0-9]+ samples .*exit 3\)" "$T/err"
echo "ok"
