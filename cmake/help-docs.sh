#!/usr/bin/env bash
# Generate the manual pages and the bash completion of locprof from its own
# help texts, so that they say what `locprof help CMD` says.
# Usage: cmake/help-docs.sh LOCPROF OUTDIR
#   OUTDIR/man1/locprof.1, OUTDIR/man1/locprof-CMD.1 (one per command)
#   OUTDIR/completion/locprof (for bash-completion)
# Run by the build (cmake/install.cmake); the help texts are in
# src/cli/cmd-*.c and src/cli/main.c.
set -euo pipefail
locprof=$1 out=$2
mkdir -p "$out/man1" "$out/completion"
version=$("$locprof" --version | awk '{ print $NF }')

# The command table of `locprof help`: "  NAME   DESCRIPTION" lines after
# "commands:".
"$locprof" help >"$out/help.txt"
awk '/^commands:/ { on = 1; next } on && /^$/ { exit }
     on && /^  [^ ]/ && $1 != "help" { name = $1; sub(/^  [^ ]+ +/, ""); print name "\t" $0 }' \
	"$out/help.txt" >"$out/commands.tsv"
[ -s "$out/commands.tsv" ] || { echo "help-docs: no commands in '$locprof help'" >&2; exit 1; }

# help text (stdin) -> roff body of a man page (stdout). The first lines
# ("usage: ..." and their indented continuations) are the synopsis; then
# paragraphs are text, and indented "TERM  DESCRIPTION" lines (options,
# subcommands, list items) become tagged paragraphs whose indented
# continuation lines are folded into them.
help_to_roff='
# a hyphen starting a word (an option) is a minus, not a hyphen
function fixminus(s,   r, i, c, prev) {
	r = ""; prev = " "
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "-" && (prev == "-" || index(" ([,`'"'"'|/=", prev))) r = r "\\-"
		else r = r c
		prev = c
	}
	return r
}
function text(s) {
	gsub(/\\/, "\\e", s)
	s = fixminus(s)
	if (s ~ /^[.'"'"']/) s = "\\&" s
	return s
}
function bold(s) { return "\\fB" text(s) "\\fR" }
BEGIN { state = "usage"; if (!subcommand) print ".SH SYNOPSIS"; print ".nf" }
state == "usage" {
	if ($0 ~ /^$/) {
		print ".fi"; print subcommand ? ".PP" : ".SH DESCRIPTION"
		state = "body"; next
	}
	line = $0; sub(/^usage: /, "", line); sub(/^ +/, "", line)
	if (line !~ /^locprof/) line = "    " line
	print text(line); next
}
/^$/ { need_pp = 1; entry = 0; next }
/^[^ ]/ {
	if (need_pp || entry) print ".PP"
	need_pp = 0; entry = 0; print text($0); next
}
{
	match($0, /^ +/); indent = RLENGTH
	line = substr($0, indent + 1)
	gap = match(line, /  +/)
	if (entry && indent > term_indent && indent >= desc_col - 2) {
		# continuation of the current entry, or a list nested in it
		if (gap) print ".br"
		print text(line); next
	}
	if (gap) {
		term = substr(line, 1, RSTART - 1); desc = substr(line, RSTART + RLENGTH)
	} else if (line ~ /^-/) {
		term = line; desc = ""
	} else {
		if (need_pp) print ".PP"
		need_pp = 0; print ".br"; print text(line); next
	}
	need_pp = 0
	print ".TP"; print bold(term)
	if (desc != "") print text(desc)
	entry = 1; term_indent = indent
	desc_col = desc != "" ? indent + length(line) - length(desc) : indent + 4
}
END { if (state == "usage") print ".fi" }'

page() { # name, description, help text file -> man page on stdout
	local name=$1 desc=$2 help=$3 upper
	upper=$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')
	printf '.TH "%s" 1 "" "locprof %s" "locprof manual"\n' "$upper" "$version"
	printf '.SH NAME\n%s \\- %s\n' "$name" "$desc"
	awk -v subcommand=0 "$help_to_roff" "$help"
}

# Subcommands: the third word of usage lines "locprof CMD SUB ...".
subcommands_of() {
	awk '/^$/ { exit } { sub(/^usage: /, ""); sub(/^ +/, "") }
	     $1 == "locprof" && $3 ~ /^[a-z][a-z-]*$/ { print $3 }' | sort -u | tr '\n' ' '
}

# One page per command, each subcommand's help a section of its command's
# page; and locprof(1) with the command table.
see_also=()
while IFS=$'\t' read -r cmd desc; do
	"$locprof" help "$cmd" >"$out/help-$cmd.txt"
	page "locprof-$cmd" "$desc" "$out/help-$cmd.txt" >"$out/man1/locprof-$cmd.1"
	for sub in $(subcommands_of <"$out/help-$cmd.txt"); do
		"$locprof" "$cmd" "$sub" --help >"$out/help-$cmd-$sub.txt"
		printf '.SH "%s"\n' "$(printf 'locprof %s %s' "$cmd" "$sub" | tr '[:lower:]' '[:upper:]')"
		awk -v subcommand=1 "$help_to_roff" "$out/help-$cmd-$sub.txt"
	done >>"$out/man1/locprof-$cmd.1"
	printf '.SH SEE ALSO\n\\fBlocprof\\fR(1)\n' >>"$out/man1/locprof-$cmd.1"
	see_also+=("\\fBlocprof\\-$cmd\\fR(1)")
done <"$out/commands.tsv"
{
	page locprof "a data-locality profiler for Linux x86-64 programs" "$out/help.txt"
	printf '.SH OPTIONS\n.TP\n\\fB\\-\\-version\\fR\nprint the version\n'
	printf '.SH SEE ALSO\n'
	(IFS=,; printf '%s\n' "${see_also[*]}" | sed 's/,/, /g')
} >"$out/man1/locprof.1"

# Options of a help text (stdin): the words starting with "-" in the
# TERM part of its "TERM  DESCRIPTION" lines (indented at most 8: deeper
# ones continue a description). "--opt=N" keeps
# its "=", "--opt[=N]" and "--opt ARG" give "--opt".
options_of() {
	awk '/^ +-/ && match($0, /^ +/) && RLENGTH <= 8 { line = $0; sub(/^ +/, "", line)
		if (match(line, /  +/)) line = substr(line, 1, RSTART - 1)
		n = split(line, w, /[ ,]+/)
		for (i = 1; i <= n; i++) if (w[i] ~ /^-/) {
			o = w[i]; sub(/\[.*/, "", o); sub(/=.*/, "=", o); print o } }' | sort -u | tr '\n' ' '
}
{
	echo "# bash completion for locprof, generated from its help texts by"
	echo "# cmake/help-docs.sh."
	echo "_locprof_options() {"
	echo "	case \$1 in"
	subs_case=""
	while IFS=$'\t' read -r cmd _; do
		printf '\t"%s") echo "%s" ;;\n' "$cmd" "$(options_of <"$out/help-$cmd.txt")"
		subs=$(subcommands_of <"$out/help-$cmd.txt")
		[ -n "$subs" ] || continue
		subs_case+=$(printf '\t"%s") echo "%s" ;;' "$cmd" "${subs% }")$'\n'
		for sub in $subs; do
			printf '\t"%s %s") echo "%s" ;;\n' "$cmd" "$sub" "$(options_of <"$out/help-$cmd-$sub.txt")"
		done
	done <"$out/commands.tsv"
	echo "	esac"
	echo "}"
	echo "_locprof_subcommands() {"
	echo "	case \$1 in"
	printf '%s' "$subs_case"
	echo "	esac"
	echo "}"
	printf '_locprof_commands="%s"\n' "$(cut -f1 "$out/commands.tsv" | tr '\n' ' ' | sed 's/ $//')"
	cat <<'EOF'
_locprof() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmd="" sub="" subs="" i w
	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		# after "--" come the program and its arguments: files
		[ "$w" = "--" ] && [ -n "$cmd" ] && return 0
		if [ -z "$cmd" ]; then
			case $w in -*) ;; *) cmd=$w; subs=$(_locprof_subcommands "$cmd") ;; esac
		elif [ -z "$sub" ] && [[ " $subs " == *" $w "* ]]; then
			sub=$w
		fi
	done
	if [ -z "$cmd" ]; then
		COMPREPLY=($(compgen -W "$_locprof_commands --help --version" -- "$cur"))
	elif [ "$cmd" = help ]; then
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "$_locprof_commands" -- "$cur"))
	elif [ -n "$subs" ] && [ -z "$sub" ] && [[ $cur != -* ]]; then
		COMPREPLY=($(compgen -W "$subs" -- "$cur"))
	elif [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_locprof_options "$cmd${sub:+ $sub}")" -- "$cur"))
		[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
	fi
	return 0
}
complete -o default -F _locprof locprof
EOF
} >"$out/completion/locprof"
rm -f "$out"/help*.txt "$out/commands.tsv"
