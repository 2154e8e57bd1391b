# locprof cc + locprof record: the runtime's samples and traces on programs
# with known reuse distances, and its behaviour across threads, fork,
# crashes, SIGKILL, stdin/stdout, the gcc/tsan path and uninstrumented
# binaries. Targets are in tests/rt/, compiled here with $LOCPROF cc.
. "$(dirname "$0")/lib.sh"
RT=$LOCPROF_SRC/tests/rt
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

build() { # build NAME [cc options...]
	local name=$1; shift
	"$LOCPROF" cc "$@" -O1 -o "$T/$name" "$RT/${name%%-*}.c" -lpthread || fail "cannot build $name"
}

# Reuse distances of the 1-byte (sweep) samples that completed: "begin end" -> end-begin-1.
distances() { awk '!/^#/ && $3 != "dangling" && $6 == 1 { print $3 - $2 - 1 }' "$1" | sort -u; }
count_samples() { grep -vc '^#' "$1" || true; }

build cyclic
build cyclic-nolto --no-lto
build lockstep
build filter
K=97 R=200

# 0. The default output is an .lpp profile: the same distances through
#    locprof dump, each completed sample naming the pc that reused the line,
#    and locprof report predicting a miss ratio of 1 below K lines, 0 above.
expect_status 0 "$LOCPROF" record -o "$T/cyc.lpp" --rate 0.01 -- "$T/cyclic" $K $R
expect_status 0 "$LOCPROF" dump "$T/cyc.lpp"
expect_grep '^references: [1-9][0-9]*  threads: 1$' "$T/out"
expect_grep '^  thread 0: [1-9][0-9]* references$' "$T/out"
[ "$(awk '!/^#/ && NF >= 8 && $7 != "dangling" && $5 == "R" { print $7 }' "$T/out" | sort -u)" = $((K - 1)) ] ||
	fail "lpp: reuse distances are not all $((K - 1))"
awk '!/^#/ && NF >= 8 && $7 != "dangling" && $8 == "0"' "$T/out" | grep -q . &&
	fail "lpp: a completed sample without its reuse pc"
expect_status 0 "$LOCPROF" report "$T/cyc.lpp" --sizes 4K,8K --policy lru --top 0
expect_grep '^ +4K +1\.0000' "$T/out"   # 64 lines < K = 97
expect_grep '^ +8K +0\.0000' "$T/out"   # 128 lines >= K

# 1. Cyclic sweep over K lines: every completed sample has distance K-1,
#    with and without LTO.
for bin in cyclic cyclic-nolto; do
	expect_status 0 "$LOCPROF" record -o "$T/$bin.samples" --rate 0.01 -- "$T/$bin" $K $R
	expect_grep "^$((K * R * 1)) *\$|^[0-9]+\$" "$T/out"
	expect_grep "$bin.samples: [0-9]+ samples" "$T/err"
	expect_grep '^# locprof samples v0$' "$T/$bin.samples"
	expect_grep '^# end exit 0$' "$T/$bin.samples"
	[ "$(distances "$T/$bin.samples")" = $((K - 1)) ] || fail "$bin: distances $(distances "$T/$bin.samples" | tr '\n' ' '), expected $((K - 1))"
	n=$(awk '!/^#/ && $6 == 1' "$T/$bin.samples" | wc -l)
	# About rate * K * R = 194 samples of the sweep.
	[ "$n" -gt 120 ] && [ "$n" -lt 280 ] || fail "$bin: $n sweep samples, expected about 194"
done

# Same seed, same samples; another seed, other samples.
"$LOCPROF" record -q -o "$T/a.samples" --rate 0.01 --seed 7 -- "$T/cyclic" $K $R >/dev/null
"$LOCPROF" record -q -o "$T/b.samples" --rate 0.01 --seed 7 -- "$T/cyclic" $K $R >/dev/null
"$LOCPROF" record -q -o "$T/c.samples" --rate 0.01 --seed 8 -- "$T/cyclic" $K $R >/dev/null
cmp -s <(awk '!/^#/ { print $1, $2, $3 }' "$T/a.samples" | sort) <(awk '!/^#/ { print $1, $2, $3 }' "$T/b.samples" | sort) ||
	fail "same seed gave different samples"
cmp -s <(awk '!/^#/ { print $2 }' "$T/a.samples") <(awk '!/^#/ { print $2 }' "$T/c.samples") &&
	fail "different seeds gave the same samples"

# Two line sizes: 128-byte samples see the next 64-byte line of the pair.
expect_status 0 "$LOCPROF" record -o "$T/two.samples" --rate 0.01 --line 64,128 -- "$T/cyclic" $K $R
expect_grep '^# line_sizes 64,128$' "$T/two.samples"
[ "$(awk '!/^#/ && $3 != "dangling" && $6 == 1 && $8 == 64 { print $3 - $2 - 1 }' "$T/two.samples" | sort -u)" = $((K - 1)) ] ||
	fail "64-byte distances wrong with two line sizes"
awk '!/^#/ && $3 != "dangling" && $6 == 1 && $8 == 128 { d = $3 - $2 - 1; if (d != 0 && d != '$((K - 2))' && d != '$((K - 1))') bad = 1; n++ }
     END { exit !(n > 0 && !bad) }' "$T/two.samples" || fail "128-byte distances are not 0, K-2 or (for the odd last line) K-1"

# 2. Two arrays in lock-step: distance 2N-1.
N=50
expect_status 0 "$LOCPROF" record -o "$T/ls.samples" --rate 0.02 -- "$T/lockstep" $N 300
[ "$(distances "$T/ls.samples")" = $((2 * N - 1)) ] || fail "lockstep: distances $(distances "$T/ls.samples" | tr '\n' ' ')"

# 3. Trace mode: exactly K*R one-byte loads; allocation events are there.
expect_status 0 "$LOCPROF" record --mode trace -o "$T/cyc.txt" -- "$T/cyclic" $K 20
[ "$(awk '$1 == "R" && $3 == 1' "$T/cyc.txt" | wc -l)" = $((K * 20)) ] || fail "trace: wrong number of 1-byte loads"
expect_grep 'cyc.txt: [0-9]+ references, [1-9][0-9]* allocations' "$T/err"

# 4. Threads: every thread's sweep is sampled; distances are per thread.
build cyclic-t
expect_status 0 "$LOCPROF" record -o "$T/thr.samples" --rate 0.01 -- "$T/cyclic-t" $K $R threads
expect_grep 'thr.samples: .* 5 threads' "$T/err"
[ "$(awk '!/^#/ && $6 == 1 { print $1 }' "$T/thr.samples" | sort -u | wc -l)" = 4 ] || fail "not 4 sampled threads"
[ "$(distances "$T/thr.samples")" = $((K - 1)) ] || fail "threads: distances $(distances "$T/thr.samples" | tr '\n' ' ')"

# 4b. Threads sweeping the same lines at once: the watch shadow is shared,
#     so each thread's watches are false positives for the others, which
#     must not complete them: distances are still per thread, exactly K-1.
expect_status 0 "$LOCPROF" record -o "$T/shr.samples" --rate 0.01 -- "$T/cyclic-t" $K $R shared
expect_grep 'shr.samples: .* 5 threads' "$T/err"
[ "$(awk '!/^#/ && $6 == 1 { print $1 }' "$T/shr.samples" | sort -u | wc -l)" = 4 ] || fail "shared: not 4 sampled threads"
[ "$(distances "$T/shr.samples")" = $((K - 1)) ] || fail "shared: distances $(distances "$T/shr.samples" | tr '\n' ' ')"

# 5. Fork: the child gets its own profile, named by pid, with its own samples.
expect_status 0 "$LOCPROF" record -o "$T/fork.samples" --rate 0.01 -- "$T/cyclic" $K $R fork
ls "$T"/fork.*.samples >/dev/null 2>&1 || fail "no child profile"
child=$(ls "$T"/fork.*.samples | head -1)
for f in "$T/fork.samples" "$child"; do
	[ "$(distances "$f")" = $((K - 1)) ] || fail "fork: distances in $f"
	n=$(awk '!/^#/ && $6 == 1' "$f" | wc -l)
	[ "$n" -gt 100 ] || fail "fork: only $n samples in $f"
done
expect_grep "ppid $(awk '/^# pid/ { print $3 }' "$T/fork.samples")" "$child"

# 6. Crashes keep their samples; locprof exits 128+signal.
for sig in segv:11 abort:6; do
	expect_status $((128 + ${sig#*:})) "$LOCPROF" record -o "$T/crash.samples" --rate 0.01 -- "$T/cyclic" $K $R ${sig%:*}
	expect_grep "^# end signal ${sig#*:}\$" "$T/crash.samples"
	[ "$(distances "$T/crash.samples")" = $((K - 1)) ] || fail "crash ${sig%:*}: distances"
	expect_grep "killed by signal ${sig#*:}" "$T/err"
done

# 7. SIGKILL after a flush interval keeps the samples sent before it.
rm -f "$T/pid"
"$LOCPROF" record -o "$T/kill.samples" --rate 0.001 --flush-ms 20 -- "$T/cyclic" $K 1000 spin "$T/pid" >"$T/out" 2>"$T/err" &
rec=$!
for _ in $(seq 100); do [ -s "$T/pid" ] && break; sleep 0.05; done
sleep 0.5
kill -KILL "$(cat "$T/pid")"
st=0; wait $rec || st=$?
[ $st = 137 ] || fail "SIGKILL: locprof exited $st, expected 137"
expect_grep '^# end unknown$' "$T/kill.samples"
[ "$(distances "$T/kill.samples")" = $((K - 1)) ] || fail "SIGKILL: distances"
[ "$(count_samples "$T/kill.samples")" -gt 20 ] || fail "SIGKILL: too few samples kept"

# 7b. SIGKILL before the first instrumented reference (the runtime connects
#     then): no output, status 137, one line that says so.
printf '#include <signal.h>\n#include <unistd.h>\nint main(void) { kill(getpid(), SIGKILL); return 0; }\n' >"$T/k0.c"
"$LOCPROF" cc -O1 -o "$T/k0" "$T/k0.c" || fail "cannot build k0"
expect_status 137 "$LOCPROF" record -o "$T/k0.lpp" -- "$T/k0"
expect_one_line "$T/err"
expect_grep "^locprof: error: no profile: '$T/k0' was killed by signal 9 before its first instrumented memory reference$" "$T/err"

# 8. stdin and stdout are the program's own; so is the exit status.
seq 1 5000 >"$T/in"
st1=0; "$T/filter" <"$T/in" >"$T/native.out" 2>"$T/native.err" || st1=$?
st2=0; "$LOCPROF" record -q -o "$T/f.samples" -- "$T/filter" <"$T/in" >"$T/rec.out" 2>"$T/rec.err" || st2=$?
[ $st1 = 3 ] && [ $st2 = 3 ] || fail "exit status: native $st1, recorded $st2"
cmp "$T/native.out" "$T/rec.out" || fail "stdout differs under locprof record"
[ ! -s "$T/rec.err" ] || fail "record -q wrote to stderr"
st2=0; cat "$T/in" | "$LOCPROF" record -q -o "$T/f.samples" -- "$T/filter" | cat >"$T/rec2.out" || st2=$?
cmp "$T/native.out" "$T/rec2.out" || fail "stdout through pipes differs"

# 9. The gcc/tsan path counts every access of a known loop exactly.
if command -v gcc >/dev/null; then
	"$LOCPROF" cc --gcc -O2 -o "$T/count" "$RT/count.c" || fail "gcc build"
	nm "$T/count" >"$T/nm"
	grep -q 'U __tsan\| T __tsan_write4' "$T/nm" || fail "gcc path: no tsan callbacks"
	! grep -q 'U __tsan' "$T/nm" || fail "gcc path: undefined tsan symbols"
	ldd "$T/count" >"$T/ldd"
	! grep -q tsan "$T/ldd" || fail "gcc path linked libtsan"
	expect_status 0 "$LOCPROF" record --mode trace -o "$T/count.txt" -- "$T/count" 1000
	[ "$(awk '$1 == "W" && $3 == 4' "$T/count.txt" | wc -l)" = 1000 ] || fail "gcc: not 1000 4-byte stores"
	[ "$(awk '$1 == "R" && $3 == 4' "$T/count.txt" | wc -l)" = 1000 ] || fail "gcc: not 1000 4-byte loads"
	expect_status 0 "$LOCPROF" record -o "$T/g.samples" --rate 0.05 -- "$T/count" 100000
	expect_grep 'g.samples: [1-9][0-9]* samples' "$T/err"
fi

# 10. An uninstrumented binary: one clear line.
cc -O1 -o "$T/plain" "$RT/lockstep.c"
expect_status 1 "$LOCPROF" record -o "$T/p.samples" -- "$T/plain" 10 10
expect_one_line "$T/err"
expect_grep 'not instrumented.*locprof cc.*--backend valgrind' "$T/err"
[ ! -e "$T/p.samples" ] || fail "a profile for an uninstrumented binary"

# 12. exec: the image that execs keeps its samples even with no flush
#     before it (the runtime finishes it in execve); the new image gets
#     its own output. Also through execlp's PATH and variadic path.
for m in exec execlp; do
	rm -f "$T"/ex.*
	expect_status 0 "$LOCPROF" record -o "$T/ex.samples" --rate 0.01 --flush-ms 100000 -- "$T/cyclic" $K $R $m
	expect_grep '^# end exec$' "$T/ex.samples"
	expect_grep 'ex.samples: .*exec\)' "$T/err"
	second=$(ls "$T"/ex.*.samples | head -1)
	[ -n "$second" ] || fail "$m: no output for the exec'd image"
	expect_grep '^# end exit 0$' "$second"
	for f in "$T/ex.samples" "$second"; do
		[ "$(distances "$f")" = $((K - 1)) ] || fail "$m: distances in $f"
		n=$(awk '!/^#/ && $6 == 1' "$f" | wc -l)
		[ "$n" -gt 120 ] || fail "$m: only $n samples in $f"
	done
done

# 12b. Three images (an exec, then another): a closing line names the
#      profile that holds the most references, and the count of profiles.
rm -f "$T"/ex.*
expect_status 0 "$LOCPROF" record -o "$T/ex.samples" --rate 0.01 -- "$T/cyclic" $K $R exec2
most=$(awk '/ samples \(.*\) of [0-9]+ references/ { for (i = 1; i <= NF; i++) if ($i == "of") r = $(i + 1) + 0
	p = $2; sub(/:$/, "", p); if (r > best) { best = r; bp = p } } END { print bp }' "$T/err")
grep -q "^locprof: 3 profiles, [0-9]* references in all; the most in $most: [0-9]* ([0-9]*%)$" "$T/err" ||
	fail "exec2: no closing line naming $most: $(grep 'profiles' "$T/err")"
[ "$(ls "$T"/ex.*samples | wc -l)" = 3 ] || fail "exec2: not 3 profiles"

# 13. A vfork child that _exits does not end its parent's recording.
rm -f "$T"/vf.*
expect_status 0 "$LOCPROF" record -o "$T/vf.samples" --rate 0.01 -- "$T/cyclic" $K $R vfork
[ "$(ls "$T"/vf.* | wc -l)" = 1 ] || fail "vfork: more than one output"
n=$(awk '!/^#/ && $6 == 1' "$T/vf.samples" | wc -l)
[ "$n" -gt 120 ] || fail "vfork: parent kept only $n samples"

# 14. --samples N: about N sampled references per process (between N/sqrt2
#     and N*sqrt2, with room for chance), distances unchanged, the final
#     rate reported; threads share the budget, a forked child has its own.
for N in 150 1500; do
	expect_status 0 "$LOCPROF" record -o "$T/n.samples" --samples $N -- "$T/cyclic" $K 3000
	n=$(count_samples "$T/n.samples")
	[ "$n" -gt $((N * 6 / 10)) ] && [ "$n" -lt $((N * 17 / 10)) ] || fail "--samples $N: kept $n"
	[ "$(distances "$T/n.samples")" = $((K - 1)) ] || fail "--samples $N: distances"
	rate=$(awk '/^# rate/ { print $3 }' "$T/n.samples")
	# rate * references must match the count kept (a sample at that rate).
	awk -v r="$rate" -v n="$n" -v refs=$((K * 3000)) 'BEGIN { e = r * refs; exit !(n > e - 4 * sqrt(e) && n < e + 4 * sqrt(e)) }' ||
		fail "--samples $N: $n samples at rate $rate of $((K * 3000)) references"
	expect_grep "n.samples: $n samples .* at rate " "$T/err"
done
expect_status 0 "$LOCPROF" record -o "$T/nt.samples" --samples 400 -- "$T/cyclic-t" $K 3000 threads
n=$(count_samples "$T/nt.samples")
[ "$n" -gt 240 ] && [ "$n" -lt 680 ] || fail "--samples with threads: kept $n"
[ "$(awk '!/^#/ && $6 == 1 { print $1 }' "$T/nt.samples" | sort -u | wc -l)" = 4 ] || fail "--samples: not 4 sampled threads"
rm -f "$T"/nf.*
expect_status 0 "$LOCPROF" record -o "$T/nf.samples" --samples 300 -- "$T/cyclic" $K 3000 fork
for f in "$T"/nf.*samples; do
	n=$(count_samples "$f")
	[ "$n" -gt 180 ] && [ "$n" -lt 510 ] || fail "--samples with fork: kept $n in $f"
done
expect_status 2 "$LOCPROF" record --samples 10 --rate 0.1 -- "$T/cyclic" $K 10

# 14b. --max-samples N at a fixed rate: a run that would keep more keeps
#      about N/2 to N, a sample at the lowered rate (the count matches
#      rate * references), with its distances unchanged and a line that
#      says so; under the cap nothing changes; threads share it, a forked
#      child has its own; 0 means no cap; refused with --samples. A
#      halving keeps each sample with chance 1/2: a run that ends just
#      after one keeps N/2 +- sqrt(N)/2 (192 of a cap of 400, once), so
#      the lower bound is N/2 - 2 sqrt(N), four of those.
expect_status 0 "$LOCPROF" record -o "$T/c.samples" --rate 0.1 --max-samples 1000 -- "$T/cyclic" $K 3000
n=$(count_samples "$T/c.samples")
[ "$n" -ge 437 ] && [ "$n" -le 1000 ] || fail "--max-samples 1000: kept $n"
[ "$(distances "$T/c.samples")" = $((K - 1)) ] || fail "--max-samples: distances"
rate=$(awk '/^# rate/ { print $3 }' "$T/c.samples")
awk -v r="$rate" -v n="$n" -v refs=$((K * 3000)) 'BEGIN { e = r * refs; exit !(r < 0.1 && n > e - 4 * sqrt(e) && n < e + 4 * sqrt(e)) }' ||
	fail "--max-samples: $n samples at rate $rate of $((K * 3000)) references"
expect_grep "c\.samples: over 1000 samples at rate 0\.1, so the rate was halved as the run went on: what is kept is a sample at rate " "$T/err"
expect_status 0 "$LOCPROF" record -o "$T/c0.samples" --rate 0.01 --max-samples 100000 -- "$T/cyclic" $K 3000
awk '/^# rate/ { exit !($3 == 0.01) }' "$T/c0.samples" || fail "--max-samples above the count changed the rate"
grep -q 'halved' "$T/err" && fail "--max-samples above the count: a note"
expect_status 0 "$LOCPROF" record -o "$T/c1.samples" --rate 0.1 --max-samples 0 -- "$T/cyclic" $K 3000
awk '/^# rate/ { exit !($3 == 0.1) }' "$T/c1.samples" || fail "--max-samples 0 capped"
expect_status 0 "$LOCPROF" record -o "$T/ct.samples" --rate 0.1 --max-samples 400 -- "$T/cyclic-t" $K 3000 threads
n=$(count_samples "$T/ct.samples")
[ "$n" -ge 160 ] && [ "$n" -le 400 ] || fail "--max-samples with threads: kept $n"
rm -f "$T"/cf.*
expect_status 0 "$LOCPROF" record -o "$T/cf.samples" --rate 0.1 --max-samples 300 -- "$T/cyclic" $K 3000 fork
for f in "$T"/cf.*samples; do
	n=$(count_samples "$f")
	[ "$n" -ge 115 ] && [ "$n" -le 300 ] || fail "--max-samples with fork: kept $n in $f"
done
expect_status 2 "$LOCPROF" record --samples 10 --max-samples 5 -- "$T/cyclic" $K 10
expect_status 2 "$LOCPROF" record --max-samples x -- "$T/cyclic" $K 10

# 15. Sample mode and trace mode agree: the reuse distances of a sample-mode
#     run and those that `locprof sample` draws from a trace-mode run of the
#     same program have the same distribution (two-sample Kolmogorov-Smirnov
#     test at the 0.1% level; fixed seeds, so the verdict is reproducible).
build random
expect_status 0 "$LOCPROF" record -q -o "$T/rs.lpp" --rate 0.01 --seed 5 -- "$T/random" 4096 400000
expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/rt.lpt" -- "$T/random" 4096 400000
expect_status 0 "$LOCPROF" sample "$T/rt.lpt" -o "$T/rt.lpp" --rate 0.01 --seed 9
dists() { "$LOCPROF" dump "$1" | awk '!/^#/ && NF >= 8 && $1 == 64 && $7 != "dangling" { print $7 }' | sort -g; }
dists "$T/rs.lpp" >"$T/d1"
dists "$T/rt.lpp" >"$T/d2"
awk 'NR == FNR { a[++n] = $1; next } { b[++m] = $1 }
     END {
	if (n < 1000 || m < 1000) { print "too few samples: " n ", " m; exit 1 }
	i = j = 1; d = 0
	while (i <= n && j <= m) {
		v = a[i] < b[j] ? a[i] : b[j]
		while (i <= n && a[i] == v) i++
		while (j <= m && b[j] == v) j++
		x = (i - 1) / n - (j - 1) / m; if (x < 0) x = -x; if (x > d) d = x
	}
	crit = 1.95 * sqrt((n + m) / (n * m))
	if (d > crit) { print "KS D " d " > " crit; exit 1 }
     }' "$T/d1" "$T/d2" || fail "sample mode and trace mode + locprof sample differ"
# ... and a clearly different program fails the same test (the test can fail).
expect_status 0 "$LOCPROF" record -q -o "$T/rs2.lpp" --rate 0.01 --seed 5 -- "$T/random" 1024 400000
dists "$T/rs2.lpp" >"$T/d3"
awk 'NR == FNR { a[++n] = $1; next } { b[++m] = $1 }
     END { i = j = 1; d = 0
	while (i <= n && j <= m) { v = a[i] < b[j] ? a[i] : b[j]
		while (i <= n && a[i] == v) i++; while (j <= m && b[j] == v) j++
		x = (i - 1) / n - (j - 1) / m; if (x < 0) x = -x; if (x > d) d = x }
	exit !(d > 1.95 * sqrt((n + m) / (n * m))) }' "$T/d1" "$T/d3" || fail "the KS test does not tell M=4096 from M=1024"

# 11b. Without the 2 TiB of address space for the watch shadow an
#      instrumented program cannot run: one clear line, status 127.
expect_status 127 sh -c "ulimit -v 4000000; exec \"\$0\" 3 1" "$T/cyclic"
expect_grep 'cannot reserve the 2 TiB watch shadow' "$T/err"
expect_one_line "$T/err"

# 11. The runtime is inert without locprof record.
[ "$("$T/cyclic" $K $R)" = "$("$T/plain" 1 1 >/dev/null; "$T/cyclic-nolto" $K $R)" ] || fail "inert output differs"
echo ok
