#!/usr/bin/env bash
# Compile time of the instrumentation (docs/runtime.md, "Compile time"):
# CPU seconds (user, system) and wall seconds of the one command of
# bench/realprog.sh that compiles and links Lua or zstd, natively, with the
# pass (default --clone-max, and 0 / no limit) and with --sancov, with and
# without LTO; and of Lua's lvm.c alone (-c). One line per build on stdout:
# "what variant user sys wall". Run bench/realprog.sh first (sources).
# usage: bench/compile-time.sh [BUILD_DIR] [SRC_DIR]
#   (defaults build/ and BUILD_DIR/realprog/src)
#   WHAT="lvm lua zstd"  which measurements;  LUAV=, ZV=  which variants
#   OLDPASS=plugin.so    also lvm.c with another pass plugin
#   variants lpnv-nolto, lpnv: the pass without loop versioning
set -u
B=$(cd "${1:-build}" && pwd); S=${2:-$B/realprog/src}
L=$B/locprof; O=$(mktemp -d /tmp/locprof-ctime.XXXXXX)
trap 'rm -rf "$O"' EXIT
lua=$(ls -d "$S"/lua-5.4*/src | head -1); zstd=$(ls -d "$S"/zstd-1.5* | head -1)
[ -d "$lua" ] && [ -d "$zstd" ] || { echo "compile-time: no Lua/zstd sources in $S (run bench/realprog.sh)" >&2; exit 1; }
luasrc=(); for f in "$lua"/*.c; do case $f in */luac.c|*/onelua.c) ;; *) luasrc+=("$f") ;; esac; done
zsrc=("$zstd"/lib/common/*.c "$zstd"/lib/compress/*.c "$zstd"/lib/decompress/*.c "$zstd"/lib/dictBuilder/*.c "$zstd"/programs/*.c)
t() {
	local name=$1; shift
	/usr/bin/time -o "$O/time" -f "$name %U %S %e" "$@" >/dev/null 2>"$O/err" && cat "$O/time" ||
		{ echo "$name FAILED"; head -5 "$O/err" >&2; }
}
cc_of() {
	case $1 in
	native) echo clang -O2 ;;
	native-lto) echo clang -O2 -flto -fuse-ld=lld ;;
	sc) echo "$L" cc --sancov --lto -O2 ;;
	sc-nolto) echo "$L" cc --sancov --no-lto -O2 ;;
	lp) echo "$L" cc --lto -O2 ;;
	lp-nolto) echo "$L" cc --no-lto -O2 ;;
	lp0) echo "$L" cc --clone-max=0 --lto -O2 ;;
	lp0-nolto) echo "$L" cc --clone-max=0 --no-lto -O2 ;;
	lpinf-nolto) echo "$L" cc --clone-max=100000000 --no-lto -O2 ;;
	lpnv-nolto) echo env LOCPROF_PASS_LOOP_VERSION=0 "$L" cc --no-lto -O2 ;; # no loop versioning
	lpnv) echo env LOCPROF_PASS_LOOP_VERSION=0 "$L" cc --lto -O2 ;;
	esac
}
for what in ${WHAT:-lvm lua zstd}; do
	case $what in
	lvm)
		for v in native sc-nolto lp-nolto lp0-nolto lpinf-nolto; do
			t "lvm.c $v" $(cc_of $v) -w -DLUA_USE_LINUX -c -o "$O/lvm.o" "$lua/lvm.c"
		done
		[ -n "${OLDPASS:-}" ] && t "lvm.c oldpass-nolto" clang -O2 -fpass-plugin="$OLDPASS" -w -DLUA_USE_LINUX -c -o "$O/lvm.o" "$lua/lvm.c"
		;;
	lua)
		for v in ${LUAV:-native lp-nolto sc-nolto lp0-nolto lpinf-nolto native-lto sc lp}; do
			t "lua $v" $(cc_of $v) -w -DLUA_USE_LINUX -o "$O/lua-$v" "${luasrc[@]}" -lm -ldl
		done
		;;
	zstd)
		for v in ${ZV:-native lp-nolto sc-nolto native-lto sc lp}; do
			t "zstd $v" $(cc_of $v) -w -DZSTD_DISABLE_ASM -DZSTD_LEGACY_SUPPORT=0 -I"$zstd/lib" -I"$zstd/lib/common" \
				-o "$O/zstd-$v" "${zsrc[@]}"
		done
		;;
	esac
done
