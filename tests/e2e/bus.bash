# bus.bash - a JetStream cluster, engine shards and worker pipelines on
# loopback, for the tests that spread a ring over hosts (agentrt-bus(1))
#
# Every part is a real process: three nats-server nodes clustered on free
# ports, `agentrt-session serve` shards fed and drained by agentrt-bus, and
# worker pipelines `agentrt-bus sub | agentrt-decide | agentrt-llm |
# agentrt-tool | agentrt-bus pub`.  Each pipeline runs in a process group
# of its own (setsid), so a test can kill a "host" whole.
load ../cli/lib

# fail MESSAGE: as lib's, and kept for bus_report to say again last,
# after the hosts' and nodes' logs that CI may keep only the end of.
fail() {
	printf '%s\n' "$*" >>"$BATS_TEST_TMPDIR/failed"
	printf '%s\n' "$*" >&2
	return 1
}

BUS_AGENTS="$top_srcdir/tests/fixtures/agents"
# The hosts' --ack-wait.  A sub in-progress-acks what its pipeline holds
# every third of it; a node killed under a sub stalls those acks while it
# reconnects, and the message lapsing then would run a live worker's call
# twice.  Ten seconds outlasts a reconnect on a machine loaded with a
# sanitizer build and a parallel make check.
BUS_ACK_WAIT=${BUS_ACK_WAIT:-10}
export BUS_AGENTS BUS_ACK_WAIT

# need_nats: skips, saying so, when nats-server is not installed.
need_nats() {
	command -v nats-server >/dev/null ||
	    skip "nats-server is not installed (CI installs Debian's package)"
}

# free_ports N: N free loopback TCP ports, one a line.
free_ports() {
	python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])
PY
}

# cluster_start DIR: three JetStream nodes n1..n3 clustered on loopback,
# their files under DIR; sets NATS_URLS (all three client URLs, as
# agentrt-bus --server takes them) and exports it as NATS_URL.  Waits
# until every node reports JetStream ready and a meta leader is elected.
cluster_start() {
	local dir=$1 i p ports routes=""
	mkdir -p "$dir"
	mapfile -t ports < <(free_ports 9)
	for i in 1 2 3; do
		routes="$routes${routes:+, }nats://127.0.0.1:${ports[$((i + 2))]}"
	done
	NATS_URLS=""
	for i in 1 2 3; do
		cat >"$dir/n$i.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:${ports[$((i - 1))]}
http: 127.0.0.1:${ports[$((i + 5))]}
jetstream { store_dir: "$dir/s$i" }
cluster {
  name: agentrt
  listen: 127.0.0.1:${ports[$((i + 2))]}
  routes: [$routes]
}
CONF
		echo "${ports[$((i + 5))]}" >"$dir/n$i.http"
		nats-server -c "$dir/n$i.conf" >"$dir/n$i.log" 2>&1 &
		echo $! >"$dir/n$i.pid"
		NATS_URLS="$NATS_URLS${NATS_URLS:+,}nats://127.0.0.1:${ports[$((i - 1))]}"
	done
	export NATS_URLS NATS_URL="$NATS_URLS" BUS_DIR="$dir"
	for i in $(seq 1 200); do
		p=0
		for n in 1 2 3; do
			curl -sf "http://127.0.0.1:$(cat "$dir/n$n.http")/jsz" |
			    jq -e '.meta_cluster.leader != null' >/dev/null 2>&1 &&
			    p=$((p + 1))
		done
		[ "$p" -eq 3 ] && return 0
		sleep 0.1
	done
	fail "the JetStream cluster did not elect a leader in 20 s"
}

# cluster_stop: ends every node still running.
cluster_stop() {
	local f
	for f in "$BUS_DIR"/n*.pid; do
		[ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	return 0
}

# node_kill N: kill -9 node nN (a host lost), as a test's fault.
node_kill() {
	kill -9 "$(cat "$BUS_DIR/n$1.pid")"
}

# jsz N: node N's JetStream report, streams and consumers included.
jsz() {
	curl -sf "http://127.0.0.1:$(cat "$BUS_DIR/n$1.http")/jsz?streams=true&consumers=true"
}

# stream_msgs NODE STREAM: the messages STREAM holds, as node NODE says.
stream_msgs() {
	jsz "$1" | jq --arg s "$2" '[.account_details[]?.stream_detail[]? |
	    select(.name == $s) | .state.messages] | first // -1'
}

# engine_start SHARD: the engine host for SHARD: its store
# $BUS_DIR/SHARD/db, events SHARD/events.ndjson, stderr SHARD/err; pgid
# in SHARD/pgid.
engine_start() {
	local d="$BUS_DIR/$1"
	mkdir -p "$d"
	rm -f "$d/acks"
	mkfifo "$d/acks"
	setsid bash -c '
		d=$1 shard=$2
		agentrt-bus sub "agentrt.engine.$shard" --queue "engine-$shard" \
		    --acks "$d/acks" --ack-wait "$BUS_ACK_WAIT" 2>>"$d/err" |
		agentrt-session -d "$d/db" serve --acks "$d/acks" \
		    --agents "$BUS_AGENTS" --events "$d/events.ndjson" 2>>"$d/err" |
		agentrt-bus pub agentrt.work --owner "$shard" -d "$d/db" 2>>"$d/err"
	' engine "$d" "$1" </dev/null &
	echo $! >"$d/pgid"
}

# worker_start NAME: a worker host: its own scratch store and tools
# directory (so its effects are told apart: EFFECT_DIR NAME/fx); pgid in
# NAME/pgid.
worker_start() {
	local d="$BUS_DIR/$1"
	mkdir -p "$d/fx" "$d/tools"
	: >>"$d/fx/started"
	: >>"$d/fx/effects"
	cp "$top_srcdir/tests/fixtures/tools/effect" "$d/tools/"
	rm -f "$d/acks"
	mkfifo "$d/acks"
	setsid bash -c '
		d=$1
		export AGENTRT_DB="$d/db" EFFECT_DIR="$d/fx" EFFECT_SLEEP="${EFFECT_SLEEP:-0.3}"
		agentrt-bus sub agentrt.work --queue workers --acks "$d/acks" \
		    --ack-wait "$BUS_ACK_WAIT" 2>>"$d/err" |
		agentrt-decide 2>>"$d/err" |
		agentrt-llm 2>>"$d/err" |
		agentrt-tool --env EFFECT_DIR --tools "$d/tools" 2>>"$d/err" |
		agentrt-bus pub "agentrt.engine.{owner}" --acks "$d/acks" 2>>"$d/err"
	' worker "$d" </dev/null &
	echo $! >"$d/pgid"
}

# host_kill NAME: kill -9 every process of host NAME's pipeline.
host_kill() {
	kill -9 -- "-$(cat "$BUS_DIR/$1/pgid")" 2>/dev/null
	return 0
}

# bus_report: what the hosts and the nodes said, on stderr, for a test
# that failed (bats shows it; CI keeps nothing else): each host's stderr,
# sanitizer reports whole, and the nodes' warnings and errors.
bus_report() {
	local f
	for f in "$BUS_DIR"/*/err; do
		[ -s "$f" ] || continue
		echo "--- ${f#"$BUS_DIR"/}:"
		if grep -q '^==[0-9]*==' "$f"; then
			grep -A30 '^==[0-9]*==' "$f" | head -80
		else
			tail -15 "$f"
		fi
	done >&2
	# A killed node's peers retry its route once a second, for as long
	# as the file runs: those lines say nothing new, and would push
	# what does out of what CI keeps.
	for f in "$BUS_DIR"/n*.log; do
		echo "--- ${f#"$BUS_DIR"/}:"
		grep -E '\[(ERR|WRN|FTL)\]' "$f" |
		    grep -v 'Error trying to connect to route' | tail -10
	done >&2
	[ ! -s "$BATS_TEST_TMPDIR/failed" ] ||
	    sed 's/^/--- failed: /' "$BATS_TEST_TMPDIR/failed" >&2
	return 0
}

# hosts_stop: ends every engine and worker pipeline started.
hosts_stop() {
	local f
	for f in "$BUS_DIR"/*/pgid; do
		[ -f "$f" ] && kill -9 -- "-$(cat "$f")" 2>/dev/null
	done
	return 0
}

# messages N TAG: N client.message lines for new sessions of the bus-loop
# agent, ids in $BUS_DIR/TAG.ids (one a line).
messages() {
	local i id
	: >"$BUS_DIR/$2.ids"
	for i in $(seq 1 "$1"); do
		id=$(cat /proc/sys/kernel/random/uuid)
		echo "$id" >>"$BUS_DIR/$2.ids"
		jq -nc --arg id "$id" --arg n "$i" '{type: "client.message",
		    session_id: $id, agent_id: "bus-loop", turn_id: ($id + "-t1"),
		    message: {role: "user", content: ("go " + $n)}}'
	done
}

# completed TAG: the ids of TAG's sessions whose turn completed, as the
# shards' --events say, one a line (the stores are checked once at the
# end: reading them every half second would slow the run it watches).
completed() {
	cat "$BUS_DIR"/s*/events.ndjson 2>/dev/null |
	    grep '"type":"completion"' | jq -r .session_id | sort -u |
	    grep -Fxf "$BUS_DIR/$1.ids"
}

# wait_completed TAG SECS: waits until every session of TAG completed.
wait_completed() {
	local n i got=0
	n=$(wc -l <"$BUS_DIR/$1.ids")
	for i in $(seq 1 $(($2 * 2))); do
		got=$(completed "$1" | wc -l)
		[ "$got" -ge "$n" ] && return 0
		sleep 0.5
	done
	fail "$got of $n sessions completed in $2 s"
}
