#!/usr/bin/env bash
# ring.sh - one agent turn of K tool steps through the whole ring, timed.
#
# usage: bench/ring.sh [-k K]... [-r RUNS] [-b BINDIR]
#
# For each K (default 10 100 1000) and each tool kind (a jq tool run in
# agentrt-tool's process, and an executable no-op tool), runs RUNS turns
# (default 5) of a mock/script agent that calls the tool K times and then
# answers, each in a fresh store, every stage under GNU time.  Prints the
# median wall time of the turn, the CPU time of the four processes
# together, the per-step cost past the smallest K, and each stage's peak
# RSS.  Needs GNU time (apt-get install time) and jq.
set -euo pipefail

ks=() runs=5 bin=
while getopts k:r:b: opt; do
	case $opt in
	k) ks+=("$OPTARG") ;;
	r) runs=$OPTARG ;;
	b) bin=$OPTARG ;;
	*) echo "usage: $0 [-k K]... [-r RUNS] [-b BINDIR]" >&2; exit 2 ;;
	esac
done
[ ${#ks[@]} -gt 0 ] || ks=(10 100 1000)
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${bin:-$here}
export PATH="$bin:$PATH"
[ -x /usr/bin/time ] || { echo "$0: needs GNU time: apt-get install time" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/agents" "$work/tools"
printf '#!/bin/sh\ncat >/dev/null\necho ok\n' >"$work/tools/noop"
chmod +x "$work/tools/noop"
printf '"ok"\n' >"$work/tools/noopjq.jq"

# agent KIND K: a script of K tool calls, then an answer.
agent() {
	local tool=$1 k=$2
	jq -n --argjson k "$k" --arg t "$tool" \
	    '[range($k) | {tool_calls: [{name: $t, arguments: {i: .}}]}]
	     + [{content: "done after \($k) steps"}]' >"$work/script-$tool-$k.json"
	jq -n --arg t "$tool" --arg f "$work/script-$tool-$k.json" \
	    '{model: "mock/script", tools: [{name: $t, description: "no-op"}],
	      mock: {script_file: $f}}' >"$work/agents/bench-$tool-$k.json"
}

# one TOOL K: a turn in a fresh store; prints "wall cpu rss_decide rss_llm
# rss_tool rss_session" (seconds, KiB).
one() {
	local tool=$1 k=$2 t="$work/t" fifo="$work/ring" start end
	rm -rf "$work/db" "$fifo" "$t".*
	mkfifo "$fifo"
	start=$(date +%s%N)
	AGENTRT_DB="$work/db" AGENTRT_AGENTS="$work/agents" bash -c '
	    T="/usr/bin/time -f %e:%U:%S:%M -o"
	    $T "$1.decide" agentrt-decide <"$2" |
	    $T "$1.llm" agentrt-llm |
	    $T "$1.tool" agentrt-tool --tools "$3/tools" |
	    $T "$1.session" agentrt-session run -a "$4" -m go >"$2"' \
	    one "$t" "$fifo" "$work" "bench-$tool-$k" 2>/dev/null
	end=$(date +%s%N)
	awk -v wall="$(( (end - start) / 1000 ))" -F: '
	    { cpu += $2 + $3; rss[FILENAME] = $4 }
	    END { printf "%.6f %.3f", wall / 1e6, cpu
		  n = split("decide llm tool session", s, " ")
		  for (i = 1; i <= n; i++) printf " %d", rss[T "." s[i]]
		  printf "\n" }' T="$t" "$t.decide" "$t.llm" "$t.tool" "$t.session"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

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
