#!/usr/bin/env bash
# bench/bus.sh - what spreading a ring over NATS JetStream buys and costs
#
# usage: bench/bus.sh [-w W]... [-s SESSIONS] [-l LATENCY_MS] [-k K]...
#                     [-r RUNS] [-b BINDIR]
#
# 1. Capacity: turns a second against the number of worker pipelines (W =
#    1, 2, 4, 8 by default), each worker taking one request at a time
#    (agentrt-bus sub --max-inflight 1), the mock model answering after
#    LATENCY_MS (200) so that worker capacity, not CPU, is what the run
#    spends.  SESSIONS (32) one-step tool-loop turns are published at once
#    to one engine shard; the time is from the first publish to the last
#    completion event.
# 2. Cost: the wall time a step takes in one K-step tool loop (K = 10 and
#    100 by default) on a local ring, and through the bus (one engine, one
#    worker, no model latency), so what the bus adds per step; and the
#    messages and bytes the server took in a step (its /varz).
#
# One nats-server (JetStream, R1) on loopback; RUNS (3) runs of each, the
# median printed.  Needs nats-server, jq, python3, curl and the built
# binaries (BINDIR, default the checkout).  Progress on stderr, figures on
# stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bindir=$here
usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }
case ${1:-} in -h|--help) usage; exit 0 ;; esac
workers=()
sessions=32 latency=200 runs=3 ks=()
while getopts 'w:s:l:k:r:b:h' o; do
	case $o in
	w) workers+=("$OPTARG") ;;
	s) sessions=$OPTARG ;;
	l) latency=$OPTARG ;;
	k) ks+=("$OPTARG") ;;
	r) runs=$OPTARG ;;
	b) bindir=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[ ${#workers[@]} -gt 0 ] || workers=(1 2 4 8)
[ ${#ks[@]} -gt 0 ] || ks=(10 100)
for c in nats-server jq python3 curl; do
	command -v "$c" >/dev/null || { echo "$0: needs $c" >&2; exit 2; }
done
export PATH="$bindir:$PATH"
work=$(mktemp -d)
trap 'for f in "$work"/*.pgid; do [ -f "$f" ] && kill -9 -- "-$(cat "$f")" 2>/dev/null; done; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# A K = 1000 turn's whole decision request is over the default max_payload
# of 1 MiB; 8 MiB is the most the server's documentation advises.
echo 'max_payload: 8388608' >"$work/nats.conf"
setsid nats-server -c "$work/nats.conf" -js -a 127.0.0.1 -p "$port" -m "$mport" -sd "$work/nats" >"$work/nats.log" 2>&1 &
echo $! >"$work/nats.pgid"
disown
export NATS_URL=nats://127.0.0.1:$port
for _ in $(seq 100); do agentrt-bus init >/dev/null 2>&1 && break; sleep 0.1; done

mkdir -p "$work/agents" "$work/tools"
printf '#!/bin/sh\ncat >/dev/null\necho ok\n' >"$work/tools/noop"
chmod +x "$work/tools/noop"
step='{"name": "noop", "arguments": {}}'
jq -n --argjson ms "$latency" --argjson t "$step" '{model: "mock/script",
    tools: [{name: "noop", description: "answers ok"}],
    mock: {script: [{delay_ms: $ms, tool_calls: [$t]}, {delay_ms: $ms, content: "done"}]}}' \
    >"$work/agents/one-step.json"
export AGENTRT_AGENTS="$work/agents"
# agent NAME JSON: writes an agent file.
agent() { printf '%s\n' "$2" >"$work/agents/$1.json"; }

now_ms() { date +%s%3N; }
# varz: the messages and bytes the server has taken in so far.
varz() { curl -sf "http://127.0.0.1:$mport/varz" | jq -r '"\(.in_msgs) \(.in_bytes)"'; }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# engine TAG: an engine host (shard TAG) in the background.
engine() {
	local d="$work/$1"
	mkdir -p "$d"
	rm -f "$d/acks"; mkfifo "$d/acks"; : >"$d/events"
	setsid bash -c '
		d=$1
		agentrt-bus sub agentrt.engine.s1 --queue engine-s1 --acks "$d/acks" |
		agentrt-session -d "$d/db" serve --acks "$d/acks" --events "$d/events" |
		agentrt-bus pub agentrt.work --owner s1 -d "$d/db"' engine "$d" \
	    2>>"$work/stderr" </dev/null &
	echo $! >"$work/$1.pgid"
	disown
}

# worker TAG [SUB-ARGS...]: a worker pipeline in the background.
worker() {
	local name=$1 d="$work/$1"
	shift
	mkdir -p "$d"
	rm -f "$d/acks"; mkfifo "$d/acks"
	setsid bash -c '
		d=$1 tools=$2; shift 2
		export AGENTRT_DB="$d/db"
		agentrt-bus sub agentrt.work --queue workers --acks "$d/acks" "$@" |
		agentrt-decide | agentrt-llm | agentrt-tool --tools "$tools" |
		agentrt-bus pub "agentrt.engine.{owner}" --acks "$d/acks"' worker \
	    "$d" "$work/tools" "$@" 2>>"$work/stderr" </dev/null &
	echo $! >"$work/$name.pgid"
	disown
}

stop_all() {
	local f
	for f in "$work"/*.pgid; do
		case $f in */nats.pgid) continue ;; esac
		kill -9 -- "-$(cat "$f")" 2>/dev/null || true
		rm -f "$f"
	done
	sleep 0.2
}

# turns AGENT N: publishes N first messages for AGENT at once to shard s1.
turns() {
	local i
	for i in $(seq 1 "$2"); do
		jq -nc --arg id "$(cat /proc/sys/kernel/random/uuid)" --arg a "$1" \
		    '{type: "client.message", session_id: $id, agent_id: $a,
		      message: {role: "user", content: "go"}}'
	done | agentrt-bus pub 'agentrt.engine.{owner}' --shards s1
}

# wait_events FILE N [SECS]: until FILE holds N completion events (SECS,
# 60 by default, at most).
wait_events() {
	local i
	for i in $(seq 1 $((${3:-60} * 100))); do
		[ "$(grep -c '"type":"completion"' "$1" || true)" -ge "$2" ] && return 0
		sleep 0.01
	done
	echo "$0: only $(grep -c '"type":"completion"' "$1") of $2 turns completed; stderr:" >&2
	tail -20 "$work/stderr" >&2
	exit 1
}

echo "machine: $(nproc) cores, $(uname -sr); nats-server $(nats-server --version | awk '{ print $2 }'); runs: $runs, median"
echo
echo "1. capacity: $sessions one-step turns (2 model calls of $latency ms each), one engine shard, W workers of one request at a time"
printf '%-8s %-12s %-12s %s\n' workers wall_ms turns/s "x of W=1"
base=
for w in "${workers[@]}"; do
	walls=()
	for r in $(seq 1 "$runs"); do
		engine e
		for i in $(seq 1 "$w"); do worker "w$i" --max-inflight 1; done
		sleep 0.5
		t0=$(now_ms)
		turns one-step "$sessions"
		wait_events "$work/e/events" "$sessions"
		walls+=($(( $(now_ms) - t0 )))
		echo "W=$w run $r: ${walls[-1]} ms" >&2
		stop_all
		rm -rf "$work/e" "$work"/w*
	done
	m=$(printf '%s\n' "${walls[@]}" | median)
	tps=$(awk -v n="$sessions" -v m="$m" 'BEGIN { printf "%.2f", n / (m / 1000) }')
	[ -n "$base" ] || base=$tps
	printf '%-8s %-12s %-12s %s\n' "$w" "$m" "$tps" "$(awk -v a="$tps" -v b="$base" 'BEGIN { printf "%.2fx", a / b }')"
done

echo
echo "2. cost: one turn of K tool steps, no model latency; the bus's messages and bytes from the server's /varz"
printf '%-6s %-10s %-10s %-10s %-10s %-10s %-10s %s\n' K local_ms bus_ms local/step bus/step adds/step msgs/step bytes/step
for k in "${ks[@]}"; do
	agent "k$k" "$(jq -n --argjson k "$k" --argjson t "$step" \
	    '{model: "mock/script", tools: [{name: "noop", description: "answers ok"}],
	      mock: {script: (([range($k)] | map({tool_calls: [$t]})) + [{content: "done"}])}}')"
	local_walls=() bus_walls=() msgs=() bytes=()
	for r in $(seq 1 "$runs"); do
		rm -rf "$work/local" && mkdir -p "$work/local" && mkfifo "$work/local/ring"
		t0=$(now_ms)
		( cd "$work/local" && AGENTRT_DB="$work/local/db" bash -c '
		    agentrt-decide <ring | agentrt-llm | agentrt-tool --tools "$1" |
		    agentrt-session run -a "$2" -m go >ring' ring "$work/tools" "k$k" 2>>"$work/stderr" )
		local_walls+=($(( $(now_ms) - t0 )))
		engine e
		worker w1
		sleep 0.5
		read -r m0 b0 < <(varz)
		t0=$(now_ms)
		turns "k$k" 1
		wait_events "$work/e/events" 1 $((60 + k / 2))
		bus_walls+=($(( $(now_ms) - t0 )))
		read -r m1 b1 < <(varz)
		msgs+=($(( m1 - m0 ))) bytes+=($(( b1 - b0 )))
		echo "K=$k run $r: local ${local_walls[-1]} ms, bus ${bus_walls[-1]} ms, ${msgs[-1]} messages, ${bytes[-1]} bytes" >&2
		stop_all
		rm -rf "$work/e" "$work"/w*
	done
	lm=$(printf '%s\n' "${local_walls[@]}" | median)
	bm=$(printf '%s\n' "${bus_walls[@]}" | median)
	mm=$(printf '%s\n' "${msgs[@]}" | median)
	by=$(printf '%s\n' "${bytes[@]}" | median)
	awk -v l="$lm" -v b="$bm" -v k="$k" -v m="$mm" -v y="$by" 'BEGIN {
		printf "%-6d %-10.0f %-10.0f %-10.1f %-10.1f %-10.1f %-10.1f %.0f\n",
		    k, l, b, l / k, b / k, (b - l) / k, m / k, y / k }'
done
