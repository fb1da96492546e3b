#!/bin/bash
# fsync-exec.sh - fsyncs of one K-step turn whose tool is an executable (a
# no-op), counted with strace over the whole ring: the shape the tool
# outbox changes (bench/README.md, issue 18).
#
# usage: bench/fsync-exec.sh BINDIR [K]
#        bench/fsync-exec.sh -h | --help
#
# BINDIR is where the agentrt-* binaries are, K the steps (default 10).
# Prints "K=K fsyncs=N per_step=N/K".  Needs strace, jq and bc.
set -u
usage() { sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"; }
case ${1:-} in
-h|--help) usage; exit 0 ;;
''|-*) usage >&2; exit 2 ;;
esac
[ $# -le 2 ] || { usage >&2; exit 2; }
B=$1 K=${2:-10} W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/agents" "$W/tools"
printf '#!/bin/sh\ncat >/dev/null\necho ok\n' >"$W/tools/noop"
chmod +x "$W/tools/noop"
jq -n --argjson k "$K" '{model: "mock/script", tools: [{name: "noop",
    description: "x"}], mock: {script: ([range($k) | {tool_calls: [{name:
    "noop", arguments: {i: .}}]}] + [{content: "done"}])}}' >"$W/agents/k.json"
export PATH=$B:$PATH AGENTRT_DB=$W/db AGENTRT_AGENTS=$W/agents
mkfifo "$W/ring"
strace -f -qq -e trace=fsync,fdatasync,msync -o "$W/st" bash -c '
	agentrt-decide <"$1/ring" | agentrt-llm | agentrt-tool --tools "$1/tools" |
	agentrt-session run -a k -m go >"$1/ring"' sh "$W" 2>/dev/null
n=$(grep -cE 'fsync|fdatasync|msync' "$W/st")
echo "K=$K fsyncs=$n per_step=$(echo "scale=2; $n / $K" | bc)"
