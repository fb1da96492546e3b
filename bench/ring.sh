#!/usr/bin/env bash
# ring.sh - one agent turn of K tool steps through the whole ring, timed.
#
# usage: bench/ring.sh [-k K]... [-r RUNS] [-b BINDIR] [--security]
#        bench/ring.sh --http [-m MOCKLLM] [-k K]... [-r RUNS] [-b BINDIR]
#                      [--security]
#        bench/ring.sh -h | --help
#
# For each K (default 10 100 1000) and each tool kind (a jq tool run in
# agentrt-tool's process, and an executable no-op tool), runs RUNS turns
# (default 5) of a mock/script agent that calls the tool K times and then
# answers, each in a fresh store, every stage under GNU time.  Prints the
# median wall time of the turn, the CPU time of the four processes
# together, the per-step cost past the smallest K, and each stage's peak
# RSS.  Needs GNU time (apt-get install time) and jq.
#
# With --http (-H) the model is real HTTP: an openai/mock-model agent with
# one jq tool, add.jq (.a + .b), against MOCKLLM (default bench/mockllm.py,
# the benchmarks' OpenAI-compatible mock server), started with K steps and
# no latency on a free port, once per K (default 10 100), without and with
# streaming.  Besides the columns above it prints the mock server's own CPU
# during the turn (utime+stime from /proc, in clock ticks, so the mean over
# the runs), the ring's median wall minus that, the floor (the wall time
# of one curl process that sends the same K+1 request bodies, captured
# from an untimed turn, over one kept-alive connection), and the per-step
# cost of the ring's wall minus the floor.  Needs curl and python3.
#
# With --security every agent it writes gets "security": {} (issue 17's
# pipeline, every detector on with its defaults); nothing else changes.
#
#   -k K         a step count, repeatable, in increasing order
#   -r RUNS      timed turns per K and tool kind (default 5)
#   -b BINDIR    where the agentrt-* binaries are (default: the checkout)
#   -H, --http   the model over HTTP, from MOCKLLM
#   -m MOCKLLM   the mock server for --http (default bench/mockllm.py)
#   --security   every agent with the security pipeline on
#   -h, --help   print this help and exit
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

ks=() runs=5 bin= http= mockllm= security=
args=()
for a in "$@"; do
	case $a in
	--security) security=1 ;;
	--http) http=1 ;;
	--help) usage; exit 0 ;;
	*) args+=("$a") ;;
	esac
done
set -- ${args[@]+"${args[@]}"}
while getopts k:r:b:Hhm: opt; do
	case $opt in
	k) ks+=("$OPTARG") ;;
	r) runs=$OPTARG ;;
	b) bin=$OPTARG ;;
	H) http=1 ;;
	m) mockllm=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { usage >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "$http" ]; then
	[ ${#ks[@]} -gt 0 ] || ks=(10 100)
else
	[ ${#ks[@]} -gt 0 ] || ks=(10 100 1000)
fi
bin=${bin:-$here}
export PATH="$bin:$PATH"
[ -x /usr/bin/time ] || { echo "$0: needs GNU time: apt-get install time" >&2; exit 2; }
if [ -n "$http" ]; then
	mockllm=${mockllm:-$here/bench/mockllm.py}
	[ -n "$mockllm" ] && [ -f "$mockllm" ] ||
	    { echo "$0: --http needs the mock server: -m PATH/TO/mockllm.py${mockllm:+ ($mockllm: no such file)}" >&2; exit 2; }
	for c in curl python3; do
		command -v $c >/dev/null || { echo "$0: --http needs $c" >&2; exit 2; }
	done
fi

work=$(mktemp -d)
srv_pids=()
cleanup() {
	local p
	for p in "${srv_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/agents" "$work/tools"
printf '#!/bin/sh\ncat >/dev/null\necho ok\n' >"$work/tools/noop"
chmod +x "$work/tools/noop"
printf '"ok"\n' >"$work/tools/noopjq.jq"
# secure FILE: the agent in FILE, with the pipeline when --security asks.
secure() {
	[ -n "$security" ] || return 0
	jq '. + {security: {}}' "$1" >"$1.tmp" && mv "$1.tmp" "$1"
}

# agent KIND K: a script of K tool calls, then an answer.
agent() {
	local tool=$1 k=$2
	jq -n --argjson k "$k" --arg t "$tool" \
	    '[range($k) | {tool_calls: [{name: $t, arguments: {i: .}}]}]
	     + [{content: "done after \($k) steps"}]' >"$work/script-$tool-$k.json"
	jq -n --arg t "$tool" --arg f "$work/script-$tool-$k.json" \
	    '{model: "mock/script", tools: [{name: $t, description: "no-op"}],
	      mock: {script_file: $f}}' >"$work/agents/bench-$tool-$k.json"
	secure "$work/agents/bench-$tool-$k.json"
}

# turn AGENT TOOLS: a turn in a fresh store; prints "wall cpu rss_decide
# rss_llm rss_tool rss_session cpu_decide cpu_llm cpu_tool cpu_session"
# (seconds, KiB).
turn() {
	local name=$1 tools=$2 t="$work/t" fifo="$work/ring" start end
	rm -rf "$work/db" "$fifo" "$t".*
	mkfifo "$fifo"
	start=$(date +%s%N)
	AGENTRT_DB="$work/db" AGENTRT_AGENTS="$work/agents" bash -c '
	    T="/usr/bin/time -f %e:%U:%S:%M -o"
	    $T "$1.decide" agentrt-decide <"$2" |
	    $T "$1.llm" agentrt-llm |
	    $T "$1.tool" agentrt-tool --tools "$3" |
	    $T "$1.session" agentrt-session run -a "$4" -m go >"$2"' \
	    one "$t" "$fifo" "$tools" "$name" 2>"$work/stderr"
	end=$(date +%s%N)
	awk -v wall="$(( (end - start) / 1000 ))" -F: '
	    { cpu += $2 + $3; rss[FILENAME] = $4; c[FILENAME] = $2 + $3 }
	    END { printf "%.6f %.3f", wall / 1e6, cpu
		  n = split("decide llm tool session", s, " ")
		  for (i = 1; i <= n; i++) printf " %d", rss[T "." s[i]]
		  for (i = 1; i <= n; i++) printf " %.2f", c[T "." s[i]]
		  printf "\n" }' T="$t" "$t.decide" "$t.llm" "$t.tool" "$t.session"
}

# one TOOL K: a turn of the mock/script agent.
one() { turn "bench-$1-$2" "$work/tools"; }

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# serve K [DUMP]: start mockllm.py with K steps and no latency on a free
# port, appending request bodies to DUMP if given; sets srv_pid and srv_url.
serve() {
	local k=$1 dump=${2:-} port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	MOCKLLM_HOST=127.0.0.1 MOCKLLM_LATENCY_MS=0 MOCKLLM_LOG= MOCKLLM_DUMP=$dump \
	    python3 "$mockllm" "$port" "$k" 2>>"$work/mockllm.err" &
	srv_pid=$! srv_url=http://127.0.0.1:$port
	srv_pids+=("$srv_pid")
	for _ in $(seq 100); do
		curl -sf -o /dev/null "$srv_url/v1/models" && return 0
		kill -0 "$srv_pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "$0: $mockllm did not answer GET $srv_url/v1/models:" >&2
	cat "$work/mockllm.err" >&2
	exit 1
}
unserve() { kill "$srv_pid" 2>/dev/null || true; wait "$srv_pid" 2>/dev/null || true; }

# srv_cpu: the server's utime + stime so far, in clock ticks.
srv_cpu() { awk '{ print $14 + $15 }' "/proc/$srv_pid/stat"; }

# check K: the server saw one whole turn of K tool calls and an answer.
check() {
	local s
	s=$(curl -sf "$srv_url/mock/stats")
	if [ "$(jq -c '[.chat_requests, .finals]' <<<"$s")" != "[$(($1 + 1)),1]" ]; then
		echo "$0: turn did not finish: server stats $s; agentrt stderr:" >&2
		cat "$work/stderr" >&2
		exit 1
	fi
}

# floor: the wall time, in seconds, of one curl process that POSTs the
# bodies in $work/body.* one after the other over a kept-alive connection.
floor() {
	local args=() f start end
	for f in "$work"/body.*; do
		[ ${#args[@]} -eq 0 ] || args+=(--next)
		args+=(-sSf -o /dev/null -H 'Content-Type: application/json'
		       --data-binary "@$f" "$srv_url/v1/chat/completions")
	done
	start=$(date +%s%N)
	curl "${args[@]}"
	end=$(date +%s%N)
	awk -v ns=$((end - start)) 'BEGIN { printf "%.6f\n", ns / 1e9 }'
}

if [ -n "$http" ]; then
	hz=$(getconf CLK_TCK)
	mkdir -p "$work/htools"
	printf '.a + .b\n' >"$work/htools/add.jq"
	jq -n '{model: "openai/mock-model", tools: [{name: "add", description: "a+b",
	        input: {type: "object", properties: {a: {type: "number"}, b: {type: "number"}}}}]}' \
	    >"$work/agents/http-plain.json"
	secure "$work/agents/http-plain.json"
	jq '. + {stream: true}' "$work/agents/http-plain.json" >"$work/agents/http-stream.json"
	for mode in plain stream; do
		for k in "${ks[@]}"; do
			# The request bodies of one untimed turn, for the floor.
			rm -f "$work/dump" "$work"/body.*
			serve "$k" "$work/dump"
			OPENAI_BASE_URL=$srv_url/v1 turn "http-$mode" "$work/htools" >/dev/null
			check "$k"
			unserve
			split -l 1 -d -a 5 "$work/dump" "$work/body."
			serve "$k"
			: >"$work/res-$mode-$k" && : >"$work/floor-$mode-$k"
			for _ in $(seq 1 "$runs"); do
				curl -sf -o /dev/null -X POST "$srv_url/mock/reset"
				c0=$(srv_cpu)
				r=$(OPENAI_BASE_URL=$srv_url/v1 turn "http-$mode" "$work/htools")
				c1=$(srv_cpu)
				check "$k"
				echo "$r $(awk -v t=$((c1 - c0)) -v hz="$hz" 'BEGIN { print t / hz }')" >>"$work/res-$mode-$k"
				floor >>"$work/floor-$mode-$k"
			done
			unserve
		done
	done
	printf '%-6s %5s %8s %7s %9s %9s %7s %8s %9s %8s  %-31s  %s\n' mode K wall_ms cpu_ms \
	    wall/step cpu/step srv_ms wall-srv floor_ms net/step 'cpu ms: decide llm tool session' \
	    'peak RSS KiB: decide llm tool session'
	for mode in plain stream; do
		base_k=
		for k in "${ks[@]}"; do
			res=$work/res-$mode-$k
			w=$(awk '{ print $1 * 1000 }' "$res" | median)
			c=$(awk '{ print $2 * 1000 }' "$res" | median)
			# The server's CPU comes in clock ticks (10 ms), so take its mean.
			s=$(awk '{ t += $11 } END { print t * 1000 / NR }' "$res")
			n=$(awk -v w="$w" -v s="$s" 'BEGIN { print w - s }')
			f=$(awk '{ print $1 * 1000 }' "$work/floor-$mode-$k" | median)
			rss=$(for col in 3 4 5 6; do awk -v c=$col '{ print $c }' "$res" | median; done | tr '\n' ' ')
			cpus=$(for col in 7 8 9 10; do awk -v c=$col '{ print $c * 1000 }' "$res" | median; done | tr '\n' ' ')
			if [ -z "$base_k" ]; then
				base_w=$w base_c=$c base_f=$f base_k=$k ws=- cs=- ns=-
			else
				ws=$(awk -v a="$w" -v b="$base_w" -v n=$((k - base_k)) 'BEGIN { printf "%.3f", (a - b) / n }')
				cs=$(awk -v a="$c" -v b="$base_c" -v n=$((k - base_k)) 'BEGIN { printf "%.3f", (a - b) / n }')
				ns=$(awk -v a="$w" -v b="$base_w" -v fa="$f" -v fb="$base_f" -v n=$((k - base_k)) \
				    'BEGIN { printf "%.3f", ((a - fa) - (b - fb)) / n }')
			fi
			printf '%-6s %5d %8.1f %7.1f %9s %9s %7.1f %8.1f %9.1f %8s  %-31s  %s\n' \
			    "$mode" "$k" "$w" "$c" "$ws" "$cs" "$s" "$n" "$f" "$ns" "$cpus" "$rss"
		done
	done
	exit 0
fi

printf '%-5s %6s %10s %10s %12s %12s  %s\n' tool K wall_ms cpu_ms wall/step_ms cpu/step_ms \
    'peak RSS KiB: decide llm tool session'
for tool in noopjq noop; do
	base_w= base_c= base_k=
	for k in "${ks[@]}"; do
		agent "$tool" "$k"
		: >"$work/res"
		for _ in $(seq 1 "$runs"); do one "$tool" "$k" >>"$work/res"; done
		w=$(awk '{ print $1 * 1000 }' "$work/res" | median)
		c=$(awk '{ print $2 * 1000 }' "$work/res" | median)
		rss=$(for col in 3 4 5 6; do awk -v c=$col '{ print $c }' "$work/res" | median; done | tr '\n' ' ')
		if [ -z "$base_k" ]; then
			base_w=$w base_c=$c base_k=$k ws=- cs=-
		else
			ws=$(awk -v a="$w" -v b="$base_w" -v n=$((k - base_k)) 'BEGIN { printf "%.3f", (a - b) / n }')
			cs=$(awk -v a="$c" -v b="$base_c" -v n=$((k - base_k)) 'BEGIN { printf "%.3f", (a - b) / n }')
		fi
		printf '%-5s %6d %10.1f %10.1f %12s %12s  %s\n' "${tool/noopjq/jq}" "$k" "$w" "$c" "$ws" "$cs" "$rss"
	done
done
