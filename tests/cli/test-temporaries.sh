# Every command that writes a file (sample -o, convert; record has its own
# test) leaves no temporary file behind: a signal that ends locprof removes
# OUT.tmp.PID, and the next command writing OUT clears those of killed
# (SIGKILL) processes, never a live process's or another output's.
. "$(dirname "$0")/lib.sh"

printf 'R 0x%x 8\n' $(seq 4096 64 200000) >"$T/t.txt"

# wait_for GLOB: until a file matches (the command has opened its output).
wait_for() {
	for _ in $(seq 100); do
		compgen -G "$1" >/dev/null && return 0
		sleep 0.1
	done
	fail "no file matching $1"
}

# interrupted SIG OUT CMD...: CMD reads a fifo that is never closed, so it
# is still writing OUT when SIG arrives; no OUT.tmp.* may remain. (SIGINT
# is ignored by a background job of a script; record's test sends it.
# sample opens its output only when the trace has been read.)
interrupted() {
	local sig=$1 out=$2 pid
	shift 2
	rm -f "$T/fifo" && mkfifo "$T/fifo"
	"$@" 2>"$T/err" &
	pid=$!
	exec 3>"$T/fifo"
	head -c 20000 "$T/t.txt" >&3
	wait_for "$out.tmp.*"
	kill -"$sig" "$pid"
	wait "$pid" && fail "'$*' ignored SIG$sig"
	exec 3>&-
	if compgen -G "$out.tmp.*" >/dev/null; then fail "SIG$sig left $(ls "$out".tmp.*)"; fi
	[ ! -e "$out" ] || fail "SIG$sig left a half-written $out"
}
interrupted TERM "$T/c.lpt" "$LOCPROF" convert --from text "$T/fifo" "$T/c.lpt"
interrupted HUP "$T/c.txt" "$LOCPROF" convert --from text --to text "$T/fifo" "$T/c.txt"

# A SIGKILLed writer's temporary file is cleared by the next writer of the
# same output; a live process's (this shell's) and another name's are kept.
sleep 60 &
dead=$!
kill -9 "$dead"
wait "$dead" 2>/dev/null || true
for out in s.lpp c.lpt; do
	touch "$T/$out.tmp.$dead" "$T/$out.tmp.$$" "$T/x$out.tmp.$dead"
done
expect_status 0 "$LOCPROF" sample -r 0.5 -o "$T/s.lpp" "$T/t.txt"
expect_status 0 "$LOCPROF" convert "$T/t.txt" "$T/c.lpt"
for out in s.lpp c.lpt; do
	[ -s "$T/$out" ] || fail "$out not written"
	[ ! -e "$T/$out.tmp.$dead" ] || fail "a killed writer's $out.tmp.$dead was kept"
	[ -e "$T/$out.tmp.$$" ] || fail "a live process's $out.tmp.$$ was removed"
	[ -e "$T/x$out.tmp.$dead" ] || fail "another output's temporary file was removed"
done
echo PASS
