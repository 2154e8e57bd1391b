# locprof record --mode trace -o -: the trace as a stream on stdout, read by
# another command through a pipe, gives the same results as through a file;
# the program's own stdout goes to stderr, out of the stream.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

cat >"$T/walk.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	double *a = malloc(sizeof(double) * n * n), s = 0;
	for (int i = 0; i < n * n; i++)
		a[i] = i % 7;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++)
			s += a[i * n + j];
	printf("sum %g\n", s);
	return 0;
}
C
"$LOCPROF" cc --no-lto -O1 -o "$T/walk" "$T/walk.c" || fail "cannot build the test program"

sim() { "$LOCPROF" simulate "$1" --level 4K:2:64 --level 64K:8:64 --level 16K:full:4K --format csv; }

expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/file.lpt" -- "$T/walk" 300
sim "$T/file.lpt" >"$T/via-file.csv"
"$LOCPROF" record --mode trace -o - -- "$T/walk" 300 2>"$T/rec.err" | sim - >"$T/via-pipe.csv" ||
	fail "record -o - | simulate - failed: $(cat "$T/rec.err")"
[ "$(wc -l <"$T/via-file.csv")" -eq 4 ] || fail "simulate printed: $(cat "$T/via-file.csv")"
cmp -s "$T/via-file.csv" "$T/via-pipe.csv" || { diff "$T/via-file.csv" "$T/via-pipe.csv" >&2; fail "the pipe and the file give different simulations"; }
# the program's output went to stderr, the summary names stdout
expect_grep '^sum ' "$T/rec.err"
expect_grep '^locprof: <stdout>: [0-9]+ references' "$T/rec.err"
# the stream is an .lpt trace holding the references of the run
"$LOCPROF" record -q --mode trace -o - -- "$T/walk" 40 2>/dev/null >"$T/stream"
[ "$(head -c 8 "$T/stream" | od -An -tx1)" = "$(head -c 8 "$T/file.lpt" | od -An -tx1)" ] ||
	fail "the stream does not start as an .lpt file"
expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/small.lpt" -- "$T/walk" 40
expect_status 0 "$LOCPROF" convert --from lpt "$T/stream" "$T/a.txt"
expect_status 0 "$LOCPROF" convert "$T/small.lpt" "$T/b.txt"
[ "$(grep -vc '^#' "$T/a.txt")" -eq "$(grep -vc '^#' "$T/b.txt")" ] && [ "$(grep -vc '^#' "$T/a.txt")" -gt 3200 ] ||
	fail "the stream and the file hold different numbers of references"
# a reader that stops early (head) does not hang the recording
timeout 60 bash -c "'$LOCPROF' record -q --mode trace -o - -- '$T/walk' 300 2>/dev/null | head -c 1000 >/dev/null" ||
	[ $? -ne 124 ] || fail "record -o - hung when its reader went away"
# refusals: sample mode cannot stream
expect_status 2 "$LOCPROF" record -o - -- "$T/walk" 4
expect_grep 'is for --mode trace' "$T/err"
echo ok
