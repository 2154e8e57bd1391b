# The documentation's examples that give the same output on every run,
# run and compared with what the docs show.
#
# A fenced block that follows the line
#     <!-- example: checked by tests/cli/test-docs.sh -->
# is checked: each `$ COMMAND` line in it is run with bash, `locprof` being
# the binary under test, in a scratch directory (one per Markdown file,
# commands in file order) that holds the traces examples/traces/
# make-traces.sh writes; its stdout and stderr together must equal the
# lines that follow it, up to the next `$ ` line or the block's end.
# Only deterministic commands belong in such blocks: no dates, hosts, pids,
# timings or recordings of live programs.
#
# With LOCPROF_DOCS_UPDATE=1 the docs' expected outputs are replaced by the
# actual ones instead (then review the diff).
. "$(dirname "$0")/lib.sh"
MARK='<!-- example: checked by tests/cli/test-docs.sh -->'

mkdir "$T/bin" "$T/traces"
ln -s "$LOCPROF" "$T/bin/locprof"
LOCPROF=$LOCPROF bash "$LOCPROF_SRC/examples/traces/make-traces.sh" "$T/traces" ||
	fail "examples/traces/make-traces.sh failed"

# split MD DIR: DIR/NNNN.cmd (the command) and DIR/NNNN.want (its output)
split() {
	awk -v dir="$2" -v mark="$MARK" '
	$0 == mark { armed = 1; next }
	armed && /^```/ { armed = 0; inblock = 1; out = ""; next }
	inblock && /^```/ { inblock = 0; next }
	inblock && /^\$ / {
		k++
		f = sprintf("%s/%04d", dir, k)
		print substr($0, 3) > (f ".cmd"); close(f ".cmd")
		printf "" > (f ".want")
		out = f ".want"
		next
	}
	inblock && out != "" { print >> out }
	inblock && out == "" { print FILENAME ": output before any $ line in a checked block" > "/dev/stderr"; exit 1 }
	' "$1"
}

# update MD DIR: rewrite MD's checked blocks with the outputs in DIR/NNNN.got
update() {
	awk -v dir="$2" -v mark="$MARK" '
	$0 == mark { armed = 1; print; next }
	armed && /^```/ { armed = 0; inblock = 1; print; next }
	inblock && /^```/ { inblock = 0; print; next }
	inblock && /^\$ / {
		print
		k++
		f = sprintf("%s/%04d.got", dir, k)
		while ((getline line < f) > 0)
			print line
		close(f)
		next
	}
	inblock { next }
	{ print }
	' "$1" >"$2/updated.md"
	cat "$2/updated.md" >"$1"
}

ncmds=0 failed=0
for md in "$LOCPROF_SRC"/README.md "$LOCPROF_SRC"/docs/*.md "$LOCPROF_SRC"/docs/commands/*.md; do
	grep -qxF -- "$MARK" "$md" || continue
	name=${md#"$LOCPROF_SRC"/}
	ex="$T/ex/$name" wd="$T/run/$name"
	mkdir -p "$ex" "$wd"
	ln -s "$T"/traces/* "$wd"/
	split "$md" "$ex" || fail "$name: cannot read its checked blocks"
	for cmd in "$ex"/*.cmd; do
		[ -e "$cmd" ] || fail "$name: a checked block without a \$ line"
		base=${cmd%.cmd}
		(cd "$wd" && PATH="$T/bin:$PATH" bash -c "$(cat "$cmd")") >"$base.got" 2>&1 || true
		ncmds=$((ncmds + 1))
		if ! cmp -s "$base.want" "$base.got"; then
			if [ "${LOCPROF_DOCS_UPDATE:-0}" = 1 ]; then
				echo "updated: $name: \$ $(cat "$cmd")" >&2
			else
				echo "--- $name: \$ $(cat "$cmd")" >&2
				diff -u "$base.want" "$base.got" | tail -n +3 | head -40 >&2
				failed=$((failed + 1))
			fi
		fi
	done
	[ "${LOCPROF_DOCS_UPDATE:-0}" = 1 ] && update "$md" "$ex"
done
# A test that finds nothing to check could not fail: the docs hold more.
[ $ncmds -ge 20 ] || fail "only $ncmds checked commands found in the docs"
[ $failed = 0 ] || fail "$failed of $ncmds documented commands give other output than the docs show"
echo "PASS: $ncmds documented commands"
