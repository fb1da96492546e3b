#!/usr/bin/env bash
# llm.sh - agentrt-llm against an OpenAI-compatible mock server, timed.
#
# usage: bench/llm.sh [-m MOCKLLM] [-r RUNS] [-b BINDIR] [-l LATENCY_MS]
#                     [-n N]... [-s CALLS] [-c BATCH]
#        bench/llm.sh -h | --help
#
# Starts MOCKLLM (default bench/mockllm.py, the benchmarks' OpenAI-compatible
# mock server) on a free port with K = 0, so that every answer is
# the same text, "done after 0 steps": the answer does not depend on the
# request, every call of a run gets the same bytes back, and a streamed
# answer is text token deltas (4 words, then the finish), which is what a
# per-token cost means.
#
# 1. Concurrency: with the server sleeping LATENCY_MS (default 200) before
#    each answer, for each N (default 0 1 8 32; 0 is start and exit on an
#    empty input) N non-streaming llm.request lines go into one agentrt-llm
#    at once, RUNS times (default 5).  Prints the median wall time of the
#    whole process, start to exit at the end of the input, wall/latency, and
#    agentrt-llm's CPU (user+sys) and peak RSS under GNU time.
# 2. CPU per streamed delta: with no latency, CALLS calls (default 1000)
#    streaming, then the same calls not streaming, RUNS times each.  They go
#    in BATCH lines at a time (default 50; 0 sends them all at once), 0.2 s
#    apart, so that the mock server's listen queue (64) never overflows: an
#    overflowed SYN waits a second to be sent again.  Prints agentrt-llm's median CPU, per call and
#    per llm.token.delta line it printed, and the difference of the two runs
#    per delta line, the streaming cost with the per-call cost taken out.
#
# GNU time reports CPU in 10 ms steps; the figures of part 2 are large
# enough for that, the CPU of part 1 is not (read it as an upper bound).
# Needs GNU time (apt-get install time), curl and python3.
#
#   -m MOCKLLM     the mock server (default bench/mockllm.py)
#   -r RUNS        runs of each measurement (default 5)
#   -b BINDIR      where agentrt-llm is (default: the checkout)
#   -l LATENCY_MS  the server's latency in part 1 (default 200)
#   -n N           concurrent calls in part 1, repeatable (default 0 1 8 32)
#   -s CALLS       calls in part 2 (default 1000)
#   -c BATCH       lines sent at a time in part 2 (default 50; 0: all)
#   -h, --help     print this help and exit
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

runs=5 bin= mockllm= latency=200 ns=() calls=1000 batch=50
[ "${1:-}" != --help ] || { usage; exit 0; }
while getopts r:b:m:l:n:s:c:h opt; do
	case $opt in
	r) runs=$OPTARG ;;
	b) bin=$OPTARG ;;
	m) mockllm=$OPTARG ;;
	l) latency=$OPTARG ;;
	n) ns+=("$OPTARG") ;;
	s) calls=$OPTARG ;;
	c) batch=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { usage >&2; exit 2; }
[ ${#ns[@]} -gt 0 ] || ns=(0 1 8 32)
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${bin:-$here}
mockllm=${mockllm:-$here/bench/mockllm.py}
[ -n "$mockllm" ] && [ -f "$mockllm" ] ||
    { echo "$0: needs the mock server: -m PATH/TO/mockllm.py${mockllm:+ ($mockllm: no such file)}" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "$0: needs GNU time: apt-get install time" >&2; exit 2; }
for c in curl python3; do
	command -v $c >/dev/null || { echo "$0: needs $c" >&2; exit 2; }
done
llm=$bin/agentrt-llm
[ -x "$llm" ] || { echo "$0: no $llm" >&2; exit 2; }

work=$(mktemp -d)
srv_pid=
cleanup() {
	[ -z "$srv_pid" ] || kill "$srv_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# serve LATENCY_MS: start the server with K = 0 on a free port and wait
# until it answers GET /v1/models; sets srv_pid and OPENAI_BASE_URL.
serve() {
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	MOCKLLM_HOST=127.0.0.1 MOCKLLM_LATENCY_MS=$1 MOCKLLM_LOG= MOCKLLM_DUMP= \
	    python3 "$mockllm" "$port" 0 2>>"$work/mockllm.err" &
	srv_pid=$!
	export OPENAI_BASE_URL=http://127.0.0.1:$port/v1
	for _ in $(seq 100); do
		curl -sf -o /dev/null "$OPENAI_BASE_URL/models" && return 0
		kill -0 "$srv_pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "$0: $mockllm did not answer GET $OPENAI_BASE_URL/models:" >&2
	cat "$work/mockllm.err" >&2
	exit 1
}
unserve() { kill "$srv_pid" 2>/dev/null || true; wait "$srv_pid" 2>/dev/null || true; srv_pid=; }

# requests N STREAM: N llm.request lines.
requests() {
	local i
	for ((i = 1; i <= $1; i++)); do
		printf '{"type":"llm.request","id":"r%d","request":{"model":"openai/mock-model","messages":[{"role":"user","content":"hi"}]},"stream":%s}\n' \
		    "$i" "$2"
	done
}

# run N [BATCH]: agentrt-llm on $work/in (N calls), fed at once or BATCH
# lines at a time; prints "wall cpu rss deltas" (seconds, KiB, lines).
run() {
	local n=$1 b=${2:-0} start end results
	start=$(date +%s%N)
	if [ "$b" -gt 0 ]; then
		awk -v b="$b" '{ print; fflush() } NR % b == 0 { system("sleep 0.2") }' "$work/in"
	else
		cat "$work/in"
	fi | /usr/bin/time -f %e:%U:%S:%M -o "$work/time" "$llm" >"$work/out" 2>"$work/err"
	end=$(date +%s%N)
	results=$(grep -c '^{"type":"llm.result"' "$work/out" || true)
	if [ "$results" -ne "$n" ]; then
		echo "$0: agentrt-llm answered $results of $n calls with llm.result; other lines:" >&2
		grep -v '^{"type":"llm.\(result\|token.delta\)"' "$work/out" | head -3 >&2
		cat "$work/err" >&2
	fi
	awk -v wall="$(( (end - start) / 1000 ))" -v d="$(grep -c '^{"type":"llm.token.delta"' "$work/out" || true)" \
	    -F: '{ printf "%.6f %.3f %d %d\n", wall / 1e6, $2 + $3, $4, d }' "$work/time"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$1" -v m="$2" '{ print $c * m }' "$work/res" | median; }

# overflows: the kernel's count of connections dropped from full listen queues.
overflows() {
	awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) f[$i] = i; h = 1 }
	                  else print $f["ListenOverflows"] }' /proc/net/netstat
}
ovf0=$(overflows)

echo "agentrt-llm against mockllm.py (K = 0: every answer is text); medians of $runs runs"
echo
echo "concurrent non-streaming calls, server latency $latency ms"
printf '%5s %9s %13s %7s %13s\n' N wall_ms wall/latency cpu_ms peak_RSS_KiB
serve "$latency"
for n in "${ns[@]}"; do
	requests "$n" false >"$work/in"
	: >"$work/res"
	for _ in $(seq 1 "$runs"); do run "$n" >>"$work/res"; done
	w=$(col 1 1000)
	ratio=-
	[ "$n" -eq 0 ] || ratio=$(awk -v w="$w" -v l="$latency" 'BEGIN { printf "%.2f", w / l }')
	printf '%5d %9.1f %13s %7.0f %13d\n' "$n" "$w" "$ratio" "$(col 2 1000)" "$(col 3 1)"
done
unserve

echo
echo "$calls calls, server latency 0, sent $batch at a time 0.2 s apart"
printf '%-7s %7s %7s %12s %13s\n' mode deltas cpu_ms cpu/call_us cpu/delta_us
serve 0
for mode in stream plain; do
	requests "$calls" "$([ $mode = stream ] && echo true || echo false)" >"$work/in"
	: >"$work/res"
	for _ in $(seq 1 "$runs"); do run "$calls" "$batch" >>"$work/res"; done
	c=$(col 2 1000) d=$(col 4 1)
	if [ $mode = stream ]; then cpu_stream=$c deltas_stream=$d; else cpu_plain=$c; fi
	printf '%-7s %7d %7.0f %12.1f %13s\n' "$mode" "$d" "$c" \
	    "$(awk -v c="$c" -v n="$calls" 'BEGIN { print c * 1000 / n }')" \
	    "$(awk -v c="$c" -v d="$d" 'BEGIN { if (d > 0) printf "%.1f", c * 1000 / d; else print "-" }')"
done
unserve
awk -v s="$cpu_stream" -v p="$cpu_plain" -v d="$deltas_stream" -v n="$calls" 'BEGIN {
	if (d > 0) printf "stream - plain: %.1f us of CPU per delta line (%.1f delta lines a call)\n",
	    (s - p) * 1000 / d, d / n }'

ovf1=$(overflows)
if [ "$ovf1" -gt "$ovf0" ]; then
	echo "$0: $((ovf1 - ovf0)) connections overflowed a listen queue during the run:" \
	    "their calls waited a second or more" >&2
fi
