#!/usr/bin/env bash
# bench/serve.sh - what agentrt-serve adds to a run, and what it holds
#
# usage: bench/serve.sh [-n RUNS] [-k K]... [-b BINDIR]
#
# 1. Cost: the wall time of one K-step tool loop (K = 1 and 10 by default;
#    the mock model, no latency) run RUNS (20) times, as a shell pipeline
#    (agentrt-session run on a fifo ring, --events-format ag-ui to a file)
#    and through agentrt-serve with curl, on one store; the medians, their
#    ratio, the events and bytes a run streams.
# 2. Shape: agentrt-serve's resident memory after 10 runs and after
#    10 * RUNS more (VmRSS, kB, from /proc), and its peak (VmHWM), so a
#    server that kept something per run would show it; and its threads
#    (one, by design).
#
# Needs jq, curl and the built binaries (BINDIR, default the checkout).
# Progress on stderr, figures on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bindir=$here
runs=20 ks=()
usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
case ${1:-} in -h|--help) usage; exit 0 ;; esac
while getopts 'n:k:b:h' o; do
	case $o in
	n) runs=$OPTARG ;;
	k) ks+=("$OPTARG") ;;
	b) bindir=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[ "${#ks[@]}" -gt 0 ] || ks=(1 10)
export PATH="$bindir:$PATH"
tmp=$(mktemp -d)
trap 'kill "${spid:-}" 2>/dev/null; rm -rf "$tmp"' EXIT
export AGENTRT_DB=$tmp/db AGENTRT_AGENTS=$tmp/agents AGENTRT_TOOLS=$here/examples/tools
mkdir -p "$tmp/agents"

# loopK: K calc calls, then the answer.
for k in "${ks[@]}"; do
	jq -n --argjson k "$k" '{model: "mock/script",
	    tools: [{name: "calc", description: "Evaluate an integer expression",
	             input: {type: "object", properties: {expr: {type: "string"}}}}],
	    mock: {script: (([range($k)] | map({tool_calls: [{name: "calc",
	        arguments: {expr: "1+1"}}]})) + [{content: "done"}])}}' \
	    >"$tmp/agents/loop$k.json"
done

ms() { date +%s%N | cut -c1-13; }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

agentrt-serve --port 0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
spid=$!
until url=$(jq -r '.url // empty' "$tmp/serve.out" 2>/dev/null) && [ -n "$url" ]; do sleep 0.05; done
rss() { awk -v k="$1" '$1 == k":" { print $2 }' "/proc/$spid/status"; }

body() {
	jq -nc --arg t "$1" --arg m "go" '{threadId: $t, runId: ($t + "-r"),
	    messages: [{id: ($t + "-u"), role: "user", content: $m}]}'
}

echo "# 1. cost of a run, ms (median of $runs), pipeline vs agentrt-serve"
printf '%-6s %10s %10s %7s %8s %9s\n' K pipeline serve ratio events bytes
mkfifo "$tmp/ring"
for k in "${ks[@]}"; do
	: >"$tmp/pipe.ms"; : >"$tmp/serve.ms"
	for i in $(seq 1 "$runs"); do
		t0=$(ms)
		agentrt-decide <"$tmp/ring" | agentrt-llm | agentrt-tool |
		    agentrt-session run -a "loop$k" -m go --events "$tmp/ev.$k.$i" \
		    --events-format ag-ui >"$tmp/ring" 2>/dev/null
		echo $(( $(ms) - t0 )) >>"$tmp/pipe.ms"
		b=$(body "b$k-$i")
		t0=$(ms)
		curl -sN "${url}agents/loop$k" -d "$b" >"$tmp/sse.$k.$i"
		echo $(( $(ms) - t0 )) >>"$tmp/serve.ms"
		echo "K=$k run $i" >&2
	done
	p=$(median <"$tmp/pipe.ms"); s=$(median <"$tmp/serve.ms")
	printf '%-6s %10s %10s %7s %8s %9s\n' "$k" "$p" "$s" \
	    "$(awk -v a="$s" -v b="$p" 'BEGIN { printf "%.2f", a / b }')" \
	    "$(grep -c '^data: ' "$tmp/sse.$k.1")" "$(wc -c <"$tmp/sse.$k.1")"
done

echo "# 2. agentrt-serve's memory (kB) and threads"
for i in $(seq 1 10); do curl -sN "${url}agents/loop1" -d "$(body "w$i")" >/dev/null; done
after10=$(rss VmRSS)
for i in $(seq 1 $((10 * runs))); do curl -sN "${url}agents/loop1" -d "$(body "m$i")" >/dev/null; done
printf 'VmRSS after 10 runs %s, after %d more %s; VmHWM %s; threads %s\n' \
    "$after10" $((10 * runs)) "$(rss VmRSS)" "$(rss VmHWM)" "$(rss Threads)"
