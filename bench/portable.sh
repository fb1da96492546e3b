#!/usr/bin/env bash
# bench/portable.sh - what a session costs as a file: export, import,
# checkpoint and replay of one K-step tool-loop turn
#
# usage: bench/portable.sh [-k K]... [-r RUNS]
#        bench/portable.sh -h | --help
#
#   make && bench/portable.sh          # K = 10 and 100, 5 runs each
#
# For each K (default 10 and 100) it runs one turn of a mock/script agent
# that calls a jq no-op tool K times, in a fresh store, then times RUNS
# (default 5) runs of: agentrt-session export, import --as (a new id each
# run), checkpoint --hash, and replay of the export.  Prints the median
# wall time and peak RSS of each, and the export's size.  Needs GNU time
# and jq; the binaries come from the build directory, else PATH.
#
#   -k K        a step count, repeatable (default 10 100)
#   -r RUNS     timed runs of each command (default 5)
#   -h, --help  print this help and exit
set -euo pipefail
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
here=$(cd "$(dirname "$0")/.." && pwd)
PATH="$here:$PATH"
ks=() runs=5
[ "${1:-}" != --help ] || { usage; exit 0; }
while getopts k:r:h opt; do
	case $opt in
	k) ks+=("$OPTARG") ;;
	r) runs=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { usage >&2; exit 2; }
[ ${#ks[@]} -gt 0 ] || ks=(10 100)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/agents" "$work/tools"
printf '"ok"\n' >"$work/tools/noopjq.jq"
export AGENTRT_AGENTS="$work/agents" AGENTRT_DB="$work/db" TMPDIR="$work"

# median: the middle of the numbers on stdin.
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# timed NAME CMD...: RUNS runs of CMD (stdout dropped); prints NAME, the
# median seconds and the median peak RSS in KiB.
timed() {
	local name=$1 i
	shift
	for i in $(seq "$runs"); do
		/usr/bin/time -f '%e %M' -o "$work/t.$i" "${@//@RUN@/$i}" >/dev/null 2>>"$work/err"
	done
	printf '%-12s %8s s %8s KiB\n' "$name" \
	    "$(cat "$work"/t.* | awk '{ print $1 }' | median)" \
	    "$(cat "$work"/t.* | awk '{ print $2 }' | median)"
	rm -f "$work"/t.*
}

for k in "${ks[@]}"; do
	rm -rf "$work/db" "$work/ring"
	jq -n --argjson k "$k" '[range($k) | {tool_calls: [{name: "noopjq",
	    arguments: {i: .}}]}] + [{content: "done"}]' >"$work/script.json"
	jq -n --arg f "$work/script.json" '{model: "mock/script", tools: [{name:
	    "noopjq", description: "no-op"}], mock: {script_file: $f}}' \
	    >"$work/agents/b.json"
	mkfifo "$work/ring"
	agentrt-decide <"$work/ring" | agentrt-llm |
	    agentrt-tool --tools "$work/tools" |
	    agentrt-session run -a b -m go >"$work/ring" 2>>"$work/err"
	sid=$(agentrt-session ls -q)
	agentrt-session export "$sid" >"$work/export.ndjson"
	echo "K = $k: $(wc -l <"$work/export.ndjson") events," \
	    "$(wc -c <"$work/export.ndjson") bytes exported"
	timed export agentrt-session export "$sid"
	timed import agentrt-session import --as "copy-$k-@RUN@" "$work/export.ndjson"
	timed checkpoint agentrt-session checkpoint --hash "$sid"
	timed replay agentrt-session replay "$work/export.ndjson"
	agentrt-session replay "$work/export.ndjson" 2>/dev/null | jq -r .type
done
