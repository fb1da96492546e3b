#!/usr/bin/env bats
# bus-cluster.bats - a ring spread over hosts on a 3-node JetStream
# cluster (agentrt(7), BEYOND ONE MACHINE; DESIGN.md §10): two engine
# shards, three worker pipelines, fifty sessions of a tool loop on the
# offline mock, and hosts killed mid-run.
load bus

setup_file() {
	command -v nats-server >/dev/null || return 0
	export BATS_FILE_BUS="$BATS_FILE_TMPDIR/bus"
	BATS_TEST_TMPDIR=$BATS_FILE_TMPDIR cluster_start "$BATS_FILE_BUS" ||
	    return 1
	agentrt-bus init --replicas 3 >"$BATS_FILE_BUS/init.out"
}

teardown_file() {
	[ -n "${BATS_FILE_BUS:-}" ] || return 0
	BUS_DIR=$BATS_FILE_BUS hosts_stop
	BUS_DIR=$BATS_FILE_BUS cluster_stop
}

setup() {
	need_nats
	BUS_DIR=$BATS_FILE_BUS
	NATS_URL=$(cd "$BUS_DIR" && for i in 1 2 3; do
		sed -n 's/^listen: /nats:\/\//p' "n$i.conf"; done | paste -sd,)
	export BUS_DIR NATS_URL NATS_URLS=$NATS_URL
}

teardown() {
	[ -n "${BATS_TEST_COMPLETED:-}" ] || bus_report
	hosts_stop
}

# check_sessions TAG SHARD...: every session of TAG completed, once, in
# the shard its id hashes to, its path exactly user, one tool call, the
# tool's answer, the model's text; no session recorded twice.
check_sessions() {
	local tag=$1 id s owner path n=0
	shift
	while read -r id; do
		owner=$(agentrt-bus owner "$id" --shards s1,s2 | jq -r .owner)
		for s in "$@"; do
			if [ "$s" = "$owner" ]; then
				agentrt-session -d "$BUS_DIR/$s/db" show "$id" |
				    jq -e '.turn_status == "completed"' >/dev/null ||
				    fail "session $id did not complete in $s"
			else
				! agentrt-session -d "$BUS_DIR/$s/db" show "$id" \
				    >/dev/null 2>&1 || fail "session $id is in $s too"
			fi
		done
		path=$(agentrt-tree -d "$BUS_DIR/$owner/db" path "$id" |
		    jq -sc 'map([.role, (.tool_calls // [] | length),
		    (.content // "" | tostring | startswith("effect said: done"))])')
		assert_eq "$path" '[["user",0,false],["assistant",1,false],["tool",0,false],["assistant",0,true]]' ||
		    return 1
		n=$((n + 1))
	done <"$BUS_DIR/$tag.ids"
	echo "$n sessions checked"
}

# check_effects KILLED...: each call had its effect once, but a call one
# of the KILLED workers had started (a kill during the tool's own run
# may leave it done and unanswered, and it runs again).
check_effects() {
	local w twice
	twice=$(cat "$BUS_DIR"/w*/fx/effects | awk '{ print $1 }' | sort |
	    uniq -d)
	for id in $twice; do
		for w in "$@"; do
			grep -q "^$id " "$BUS_DIR/$w/fx/started" && continue 2
		done
		fail "call $id had its effect twice, and no killed worker ran it"
	done
}

# busy_worker SECS NAME...: a worker of NAME... seen running a tool (a
# call started, its effect not had yet), or, when none is seen running
# one for 5 s after the first started, the first that ran one; fails
# when none started a tool in SECS seconds.
busy_worker() {
	local secs=$1 i w ran="" since=0
	shift
	for i in $(seq 1 $((secs * 4))); do
		for w in "$@"; do
			[ "$(wc -l <"$BUS_DIR/$w/fx/started")" -gt \
			    "$(wc -l <"$BUS_DIR/$w/fx/effects")" ] &&
			    echo "$w" && return 0
			[ -n "$ran" ] || ! [ -s "$BUS_DIR/$w/fx/started" ] ||
			    { ran=$w; since=$i; }
		done
		[ -n "$ran" ] && [ $((i - since)) -ge 20 ] && echo "$ran" &&
		    return 0
		sleep 0.25
	done
	[ -n "$ran" ] && echo "$ran"
}

# check_drained: the work and engine streams hold nothing (every message
# was taken and acked), as a live node reports them.
check_drained() {
	local node=$1 i w e
	for i in $(seq 1 120); do
		w=$(stream_msgs "$node" AGENTRT_WORK)
		e=$(stream_msgs "$node" AGENTRT_ENGINE)
		[ "$w" = 0 ] && [ "$e" = 0 ] && return 0
		sleep 0.25
	done
	fail "left in the streams: AGENTRT_WORK $w, AGENTRT_ENGINE $e"
}

@test "init made the streams and the bucket, replicated three ways" {
	run jq -sc 'map({stream, replicas})' "$BUS_DIR/init.out"
	[[ $output == *'"AGENTRT_WORK","replicas":3'* ]] || fail "$output"
	[[ $output == *'"AGENTRT_ENGINE","replicas":3'* ]] || fail "$output"
	run agentrt-bus init --replicas 3
	[ "$status" -eq 0 ]
	[ "$(jq -s 'map(select(.created)) | length' <<<"$output")" -eq 0 ]
}

@test "50 sessions over 2 shards and 3 workers; a worker and a NATS node killed mid-run" {
	engine_start s1
	engine_start s2
	worker_start w1
	worker_start w2
	worker_start w3
	local victim=""
	messages 50 run1 >"$BUS_DIR/run1.ndjson"
	# Ten sessions a second, so the kills land mid-run.
	split -l 10 "$BUS_DIR/run1.ndjson" "$BUS_DIR/run1.part."
	for part in "$BUS_DIR"/run1.part.*; do
		agentrt-bus pub 'agentrt.engine.{owner}' --shards s1,s2 <"$part"
		sleep 1
		case $part in
		*.ab)	# A worker seen running a tool, so the kill lands on
			# work.  Which one is up to the cluster: a pull takes
			# up to 64 messages, so one worker may take a whole
			# part of ten, and another none.
			victim=$(busy_worker 60 w1 w2 w3) ||
			    fail "no worker started a tool in 60 s"
			host_kill "$victim" ;;
		*.ac) node_kill 2 ;;
		esac
	done
	wait_completed run1 240
	check_sessions run1 s1 s2
	check_effects "$victim"
	check_drained 1
	# Both shards took part.
	[ "$(agentrt-session -d "$BUS_DIR/s1/db" ls -q | wc -l)" -gt 0 ]
	[ "$(agentrt-session -d "$BUS_DIR/s2/db" ls -q | wc -l)" -gt 0 ]
}

@test "an engine host killed mid-run and started again on its store: every turn completes, once" {
	local id may="" counts n
	engine_start s1
	engine_start s2
	worker_start w4
	worker_start w5
	messages 20 run2 >"$BUS_DIR/run2.ndjson"
	head -10 "$BUS_DIR/run2.ndjson" |
	    agentrt-bus pub 'agentrt.engine.{owner}' --shards s1,s2
	sleep 0.5
	host_kill s1
	tail -10 "$BUS_DIR/run2.ndjson" |
	    agentrt-bus pub 'agentrt.engine.{owner}' --shards s1,s2
	sleep 1
	engine_start s1
	wait_completed run2 240
	check_sessions run2 s1 s2
	# A restarted engine sends again what it had out (agentrt(7),
	# BEYOND ONE MACHINE): its live decision as a new attempt, its
	# calls as the same attempt, which a worker host (no store of the
	# engine's to claim them in) runs again.  So a call of one of s1's
	# first ten sessions may run twice, whether or not it had started
	# when the engine died; every other call (s2's, and those of the
	# sessions sent while s1 was down) runs once.
	while read -r id; do
		[ "$(agentrt-bus owner "$id" --shards s1,s2 | jq -r .owner)" = s1 ] ||
		    continue
		may+=$(agentrt-tree -d "$BUS_DIR/s1/db" path "$id" |
		    jq -r '.tool_calls[]?.id')$'\n'
	done < <(head -10 "$BUS_DIR/run2.ids")
	# Drained first: then every run has acked, and had its effect.
	check_drained 1
	counts=$(cat "$BUS_DIR"/w4/fx/effects "$BUS_DIR"/w5/fx/effects |
	    awk '{ print $1 }' | sort | uniq -c)
	[ "$(grep -c . <<<"$counts")" -eq 20 ] ||
	    fail "effects of $(grep -c . <<<"$counts") calls, not 20: $counts"
	while read -r n id; do
		[ "$n" -eq 1 ] && continue
		[ "$n" -eq 2 ] && grep -qxF "$id" <<<"$may" && continue
		fail "call $id had its effect $n times"
	done <<<"$counts"
}
