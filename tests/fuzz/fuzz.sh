#!/usr/bin/env bash
# fuzz.sh - builds the libFuzzer targets and runs each for a while
#
# usage: fuzz.sh SRCDIR TARGET...	(make fuzz runs it; README.md)
#
# From the environment: FUZZ_CC (clang), FUZZ_CPPFLAGS (the build's
# include paths), FUZZ_LIBS (what lib/ links), FUZZ_SECONDS per target,
# FUZZ_JOBS targets at a time.  lib/*.c are compiled once more, with
# clang, -fsanitize=fuzzer-no-link,address,undefined, into
# tests/fuzz/obj/ (again when a source or a header is newer than its
# object); each tests/fuzz/TARGET-fuzz.c is linked against them.  A run
# starts from tests/fuzz/corpus/TARGET (kept between runs, never in git)
# and the seeds seeds.sh makes from the fixtures; see run() for leaks.  Exits 1 when a target
# cannot be built or reports a finding: a crash, a leak, a UBSan report
# (which aborts: -fno-sanitize-recover=all), a timeout, running out of
# memory.  The crashing input is left in tests/fuzz/ as crash-*,
# leak-*, timeout-* or oom-*; each target's log is tests/fuzz/TARGET.log.
set -u
src=$1
shift
cc=${FUZZ_CC:-clang}
secs=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-2}
dir=tests/fuzz
obj=$dir/obj
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
cflags="-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fno-omit-frame-pointer \
-Wall -Wextra $san ${FUZZ_CPPFLAGS:-}"

mkdir -p "$obj" || exit 1
if ! "$cc" --version >/dev/null 2>&1; then
	echo "fuzz: no $cc: install clang (README.md)" >&2
	exit 1
fi

# The library, built the fuzzer's way.
newest=$(ls -t "$src"/lib/*.h | head -1)
for c in "$src"/lib/*.c; do
	o=$obj/$(basename "$c" .c).o
	if [ ! -f "$o" ] || [ "$c" -nt "$o" ] || [ "$newest" -nt "$o" ]; then
		echo "$c"
	fi
done >"$obj/stale"
if [ -s "$obj/stale" ]; then
	echo "fuzz: compiling $(wc -l <"$obj/stale") lib sources with $cc"
	# shellcheck disable=SC2086
	xargs -P "$jobs" -I{} sh -c 'b=$(basename "$1" .c); exec "$0" \
	    '"$cflags"' -fsanitize=fuzzer-no-link -c "$1" -o "$2/$b.o"' \
	    "$cc" {} "$obj" <"$obj/stale" || exit 1
	rm -f "$obj/libfuzz.a"
fi
if [ ! -f "$obj/libfuzz.a" ]; then
	ar rcs "$obj/libfuzz.a" "$obj"/*.o || exit 1
fi

for t in "$@"; do
	# shellcheck disable=SC2086
	"$cc" $cflags -fsanitize=fuzzer -I"$src/tests/fuzz" \
	    "$src/tests/fuzz/$t-fuzz.c" "$obj/libfuzz.a" ${FUZZ_LIBS:-} \
	    -o "$dir/$t-fuzz" || { echo "fuzz: $t: build failed" >&2; exit 1; }
done

sh "$src/tests/fuzz/seeds.sh" "$src" "$dir/seeds" || exit 1

# One target: fuzzed for secs with leak checks off (libjq has no frame
# pointers, so telling its own leak from ours needs the slow unwinder,
# five times slower), then every input of the corpus it grew run once
# more with them on and lsan.supp.  The log's last stats line is the
# summary.
run() {
	t=$1
	mkdir -p "$dir/corpus/$t"
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    "$dir/$t-fuzz" -max_total_time="$secs" -timeout=10 \
	    -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
	    -artifact_prefix="$dir/" \
	    "$dir/corpus/$t" "$dir/seeds/$t" >"$dir/$t.log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/$t.log")
	if [ "$rc" -eq 0 ]; then
		ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=1 \
		LSAN_OPTIONS=suppressions="$src/tests/fuzz/lsan.supp":print_suppressions=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		    "$dir/$t-fuzz" -runs=0 -timeout=10 -rss_limit_mb=2048 \
		    -max_len=16384 -artifact_prefix="$dir/" \
		    "$dir/corpus/$t" "$dir/seeds/$t" >"$dir/$t-leaks.log" 2>&1
		rc=$?
	fi
	if [ "$rc" -eq 0 ]; then
		echo "fuzz: $t: ok, ${execs:-?} executions in ${secs}s," \
		    "$(find "$dir/corpus/$t" "$dir/seeds/$t" -type f | wc -l) inputs checked for leaks"
	else
		echo "fuzz: $t: FAILED (exit $rc); see $dir/$t.log," \
		    "$dir/$t-leaks.log"
		grep -hE '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|Test unit written)' \
		    "$dir/$t.log" "$dir/$t-leaks.log" 2>/dev/null | head -8
	fi
	echo "$rc" >"$dir/$t.status"
}

status=0
running=0
for t in "$@"; do
	rm -f "$dir/$t.status"
	run "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
for t in "$@"; do
	[ "$(cat "$dir/$t.status" 2>/dev/null)" = 0 ] || status=1
done
[ "$status" -eq 0 ] || echo "fuzz: a target failed" >&2
exit "$status"
