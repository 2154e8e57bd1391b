#!/usr/bin/env bash
# Larger real C programs for bench/overhead.sh and bench/rt-accuracy.sh:
# Lua 5.4, SQLite 3.40 and zstd 1.5.4 from Debian 12's source packages
# (apt-get source, after enabling deb-src for bookworm), each built four
# ways with the same clang:
#   NAME-native       clang -O2                 NAME-lp-nolto  locprof cc --no-lto -O2
#   NAME-native-lto   clang -O2 -flto (lld)     NAME-lp        locprof cc --lto -O2
# and with SANCOV=1 also NAME-sc-nolto and NAME-sc (locprof cc --sancov).
# usage: bench/realprog.sh BUILD_DIR [OUT_DIR]   (default OUT_DIR: BUILD_DIR/realprog)
# Prints nothing but errors; builds only what is missing. Needs root for
# the deb-src line and tclsh (package tcl) to make SQLite's amalgamation.
# Sourced by the other scripts for realprog_workloads.
set -euo pipefail

# REALPROG="lua sqlite3 zstd" (the default) chooses the programs.
REALPROG=${REALPROG:-lua sqlite3 zstd}
realprog_has() { [[ " $REALPROG " == *" $1 "* ]]; }

# "name binary args..." lines; @W@ is bench/workloads, @D@ the data dir.
realprog_workloads() {
	realprog_has lua && echo "lua lua @W@/bench.lua 2"
	realprog_has sqlite3 && echo "sqlite sqlite3 -init @W@/bench.sql :memory: .quit"
	# -c: the output goes to the scripts' stdout, which they send to
	# /dev/null. Not `-f -o /dev/null`: with -f, zstd running as root may
	# remove or replace its output file, and during a session that ran
	# these workloads /dev/null turned into a regular file.
	realprog_has zstd && echo "zstd-c zstd -q -3 -c @D@/zstd-input" &&
		echo "zstd-d zstd -q -d -c @D@/zstd-input.zst"
	return 0
}

realprog_build() {
	local B=$1 O=$2 L=$1/locprof src=$2/src
	mkdir -p "$O/bin" "$src"
	B=$(cd "$B" && pwd); L=$B/locprof
	if [ ! -e "$src/.fetched" ]; then
		if ! apt-get source --help >/dev/null 2>&1; then
			echo "realprog: apt-get is needed to fetch sources" >&2; return 1
		fi
		if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
			cat >/etc/apt/sources.list.d/locprof-bench-src.sources <<-'SRC'
			Types: deb-src
			URIs: http://deb.debian.org/debian
			Suites: bookworm
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
			SRC
			apt-get update -qq
		fi
		(cd "$src" && apt-get source -qq --download-only lua5.4 sqlite3 zstd 2>/dev/null) || {
			echo "realprog: apt-get source lua5.4 sqlite3 zstd failed" >&2; return 1; }
		(cd "$src" && tar xzf lua5.4_*.orig.tar.gz && tar xJf libzstd_*.orig.tar.xz &&
			tar xJf sqlite3_*.orig.tar.xz --exclude='*/test/*')
		touch "$src/.fetched"
	fi
	local lua=$(ls -d "$src"/lua-5.4*/src) zstd=$(ls -d "$src"/zstd-1.5*) sq=$(ls -d "$src"/sqlite3-3*)
	if realprog_has sqlite3 && [ ! -e "$sq/sqlite3.c" ]; then
		command -v tclsh >/dev/null || { echo "realprog: SQLite's amalgamation needs tclsh (apt-get install tcl)" >&2; return 1; }
		(cd "$sq" && ./configure -q >/dev/null && make -s sqlite3.c shell.c >/dev/null 2>&1) ||
			{ echo "realprog: cannot make sqlite3.c" >&2; return 1; }
	fi
	local zsrc=("$zstd"/lib/common/*.c "$zstd"/lib/compress/*.c "$zstd"/lib/decompress/*.c
		"$zstd"/lib/dictBuilder/*.c "$zstd"/programs/*.c)
	local luasrc=()
	for f in "$lua"/*.c; do case $f in */luac.c|*/onelua.c) ;; *) luasrc+=("$f") ;; esac; done
	local v cc rt=$B/src/rt/liblocprof-rt.a pass=$B/src/rt/locprof-pass.so
	local vs=(native native-lto lp lp-nolto)
	[ -n "${SANCOV:-}" ] && vs+=(sc sc-nolto)
	# Instrumented builds are redone when the runtime (or the pass) is newer.
	for v in lp lp-nolto sc sc-nolto; do
		for f in "$O"/bin/*-$v; do
			[ -e "$f" ] && { [ "$f" -ot "$rt" ] || { [ $v = lp -o $v = lp-nolto ] && [ "$f" -ot "$pass" ]; }; } && rm -f "$f"
		done
	done
	for v in "${vs[@]}"; do
		case $v in
		native) cc=(clang -O2) ;;
		native-lto) cc=(clang -O2 -flto -fuse-ld=lld) ;;
		lp) cc=("$L" cc --lto -O2) ;;
		lp-nolto) cc=("$L" cc --no-lto -O2) ;;
		sc) cc=("$L" cc --sancov --lto -O2) ;;
		sc-nolto) cc=("$L" cc --sancov --no-lto -O2) ;;
		esac
		realprog_has lua && { [ -e "$O/bin/lua-$v" ] || "${cc[@]}" -w -DLUA_USE_LINUX -o "$O/bin/lua-$v" "${luasrc[@]}" -lm -ldl; }
		realprog_has sqlite3 && { [ -e "$O/bin/sqlite3-$v" ] || "${cc[@]}" -w -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION \
			-o "$O/bin/sqlite3-$v" "$sq/shell.c" "$sq/sqlite3.c" -lm; }
		realprog_has zstd && { [ -e "$O/bin/zstd-$v" ] || "${cc[@]}" -w -DZSTD_DISABLE_ASM -DZSTD_LEGACY_SUPPORT=0 \
			-I"$zstd/lib" -I"$zstd/lib/common" -o "$O/bin/zstd-$v" "${zsrc[@]}"; }
	done
	# zstd's input: 75 MB of deterministic, compressible text.
	if realprog_has zstd && [ ! -e "$O/zstd-input.zst" ]; then
		awk 'BEGIN { x = 1; for (i = 0; i < 1500000; i++) { x = (x * 1103515245 + 12345) % 2147483648;
			printf "%08d line %d of the zstd input, word %x %s\n", i, x % 977, x % 65536, (x % 5 ? "plain" : "rare") } }' \
			>"$O/zstd-input"
		"$O/bin/zstd-native" -q -3 -f -o "$O/zstd-input.zst" "$O/zstd-input"
	fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	[ $# -ge 1 ] || { echo "usage: bench/realprog.sh BUILD_DIR [OUT_DIR]" >&2; exit 2; }
	realprog_build "$1" "${2:-$1/realprog}"
fi
