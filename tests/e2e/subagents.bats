#!/usr/bin/env bats
# Sub-agents on real rings: a parent delegates to child sessions that the
# same ring drives, reads their answers as tool results, and cancels
# them when the delegation is voided.

load lib

POLICIES="$top_srcdir/tests/fixtures/policies"

# sid_of AGENT: the session of that agent (the store holds one).
sid_of() {
	agentrt-session ls | jq -r --arg a "$1" 'select(.agent_id == $a) | .id'
}

# show_of AGENT FILTER
show_of() {
	agentrt-session show "$(sid_of "$1")" | jq -c "$2"
}

# log_for AGENT FILTER: the jq filter over that session's log, slurped.
log_for() {
	agentrt-session log "$(sid_of "$1")" | jq -s -c -r "$2"
}

@test "a parent delegates to two children at once and combines their answers" {
	ring -a boss -m go
	[ "$status" -eq 0 ] || fail "$output"
	root=$(sid_of boss)
	# The answers fold in as they come; the model reads both.
	text=$(events "select(.type==\"completion\" and .session_id==\"$root\") | .text")
	[[ $text == '"combined: alpha got first; beta got second"' ||
	   $text == '"combined: beta got second; alpha got first"' ]] || fail "$text"
	assert_eq "$(agentrt-session ls | jq -s -c 'map(.agent_id) | sort')" '["alpha","beta","boss"]'
	# ls is oldest first: the parent, then the children it made.
	assert_eq "$(agentrt-session ls -q | head -n 1)" "$root"
	assert_eq "$(agentrt-session ls | jq -s -c 'map(.created) | . == sort')" true
	# Each child is its own session, the parent its ancestry, the
	# parent's owner its owner; the call's id is the child's id.
	assert_eq "$(show_of alpha .ancestry)" "[\"$root\"]"
	assert_eq "$(show_of beta .ancestry)" "[\"$root\"]"
	assert_eq "$(show_of boss .ancestry)" '[]'
	assert_eq "$(log_for boss '[.[].payload | select(.type=="sub_agent.requested") | .id] | sort')" \
		"$(agentrt-session ls | jq -s -c '[.[] | select(.agent_id != "boss") | .id] | sort')"
	# Both were opened before either answered: they ran side by side.
	assert_eq "$(log_for boss '[.[].payload.type | select(startswith("sub_agent."))] | .[0:6]')" \
		'["sub_agent.requested","sub_agent.messaged","sub_agent.requested","sub_agent.messaged","sub_agent.dispatched","sub_agent.dispatched"]'
	# The model saw them as tools: the description from the child's file
	# (alpha) or from the entry (beta), one message argument.
	assert_eq "$(log_for boss '[.[].payload | select(.type=="llm.call.requested")][0].request.tools | map([.name, .description, .input.required])')" \
		'[["alpha","Answers first questions",["message"]],["beta","The second opinion",["message"]]]'
	# The answers fold in as tool messages named by the agent.
	assert_eq "$(agentrt-tree path "$root" | jq -s -c 'map(select(.role=="tool") | [.name, .content]) | sort')" \
		'[["alpha","alpha got first"],["beta","beta got second"]]'
	# The children's usage adds into the parent's turn.
	own=$(log_for boss '[.[].payload | select(.type=="llm.call.completed") | .response.usage.total] | add')
	kids=$(log_for boss '[.[].payload | select(.type=="sub_agent.completed") | .usage.total] | add')
	total=$(log_for boss '[.[].payload | select(.type=="turn.completed")][0].usage.total')
	[ "$kids" -gt 0 ] && [ "$total" -eq $((own + kids)) ] || fail "own $own kids $kids total $total"
	assert_eq "$(log_for alpha '[.[].payload | select(.type=="turn.completed")][0].usage')" \
		"$(log_for boss "[.[].payload | select(.type==\"sub_agent.completed\" and .id==\"$(sid_of alpha)\")][0].usage")"
}

@test "a child that cannot start and a child whose turn fails are errors the model reads" {
	DECIDE="-f $POLICIES/grumpy.jq"
	ring -a boss-bad -m go
	[ "$status" -eq 0 ] || fail "$output"
	text=$(events "select(.type==\"completion\" and .session_id==\"$(sid_of boss-bad)\") | .text")
	[[ $text == *"cannot start sub-agent nosuch: no agent 'nosuch'"* ]] || fail "$text"
	[[ $text == *"sub-agent grumpy failed: unsupported action 'bogus'"* ]] || fail "$text"
	assert_eq "$(show_of grumpy .turn_status)" '"failed"'
	# No session was made for the agent that does not exist.
	assert_eq "$(agentrt-session ls | jq -s -c 'map(.agent_id) | sort')" '["boss-bad","grumpy"]'
	assert_eq "$(log_for boss-bad '[.[].payload | select(.type=="sub_agent.errored") | .retryable]')" '[false,false]'
}

@test "the depth limit stops a runaway delegation with an error the model reads" {
	ring -a deep -m go
	[ "$status" -eq 0 ] || fail "$output"
	# max_subagent_depth 2: the root (depth 0) and two children; the
	# second child's spawn is refused.
	assert_eq "$(for s in $(agentrt-session ls -q); do agentrt-session show "$s"; done | jq -s -c 'map(.ancestry | length) | sort')" '[0,1,2]'
	root=$(for s in $(agentrt-session ls -q); do agentrt-session show "$s" | jq -r 'select(.ancestry == []) | .id'; done)
	assert_eq "$(events "select(.type==\"completion\" and .session_id==\"$root\") | .text")" \
		'"level done <level done <level done <sub-agent depth limit reached: this session is 2 deep and max_subagent_depth is 2, so deep cannot be started>>>"'
	assert_eq "$(events 'select(.type=="error")' | wc -l)" 0
	# Every event of a child names its parent and the tree's root; the
	# root's own name neither.
	mid=$(for s in $(agentrt-session ls -q); do agentrt-session show "$s" | jq -r 'select(.ancestry | length == 1) | .id'; done)
	leaf=$(for s in $(agentrt-session ls -q); do agentrt-session show "$s" | jq -r 'select(.ancestry | length == 2) | .id'; done)
	assert_eq "$(jq -c -s --arg r "$root" --arg m "$mid" --arg l "$leaf" '
	    [(map(select(.session_id == $r) | has("parent_session_id") or has("root_session_id")) | any),
	     (map(select(.session_id == $m)) | length > 0 and all(.parent_session_id == $r and .root_session_id == $r)),
	     (map(select(.session_id == $l)) | length > 0 and all(.parent_session_id == $m and .root_session_id == $r))]' "$EVENTS")" \
	    '[false,true,true]'
}

@test "a sub-agent that asks the user parks the whole chain; resuming through the root finishes it" {
	ring -a manager -m go
	[ "$status" -eq 3 ] || fail "status $status: $output"
	assert_eq "$(show_of manager '[.turn_status, [.calls[] | [.kind, .status]]]')" '["running",[["sub_agent","pending"]]]'
	assert_eq "$(show_of lead '[.turn_status, [.calls[] | [.kind, .status]]]')" '["running",[["sub_agent","pending"]]]'
	assert_eq "$(show_of asker '[.turn_status, [.calls[] | [.name, .status]], [.interrupts[] | .reason]]')" \
		'["running",[["ask_user","held"]],["Which colour?"]]'
	iid=$(show_of asker '.interrupts | keys[0]' | tr -d '"')
	ring -s "$(sid_of manager)" --resume "$iid" --payload '{"answer":"blue"}'
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events "select(.type==\"completion\" and .session_id==\"$(sid_of manager)\") | .text")" \
		'"manager heard: lead heard: colour: {\"choice\":\"blue\"}"'
	assert_eq "$(show_of asker '.interrupts')" '{}'
}

@test "a fork that voids a delegation cancels the running child and its grandchild" {
	ring -a manager -m go
	[ "$status" -eq 3 ]
	root=$(sid_of manager)
	first=$(agentrt-tree path "$root" | jq -r 'select(.role=="user") | .id')
	run agentrt-tree checkout "$root" "$first"
	[ "$status" -eq 0 ] || fail "$output"
	[[ $output == *'"type":"call.voided","kind":"sub_agent"'* ]] || fail "$output"
	for a in lead asker; do
		assert_eq "$(show_of $a '[.status, .turn_status, (.calls | length), (.interrupts | length)]')" '["idle","failed",0,0]'
		assert_eq "$(log_for $a '[.[].payload | select(.type=="turn.completed")][0].error')" \
			'cancelled: the delegation that started this session was voided'
	done
	assert_eq "$(log_for lead '[.[].payload | select(.type=="call.voided") | .kind]')" '["sub_agent"]'
	assert_eq "$(log_for asker '[.[].payload | select(.type=="call.voided") | .kind]')" '["tool_call"]'
	assert_eq "$(log_for asker '[.[].payload.type | select(. == "session.interrupt_cancelled")] | length')" 1
	# The parent goes on from the fork point.
	ring -s "$root" -m 'never mind'
	[ "$status" -eq 3 ]	# it delegates again, to a new child that asks again
	assert_eq "$(agentrt-session ls | jq -s -c '[.[] | select(.agent_id=="lead")] | length')" 2
}

@test "removing a parent cancels its running children, recursively" {
	ring -a manager -m go
	[ "$status" -eq 3 ]
	run agentrt-session rm "$(sid_of manager)"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-session ls | jq -s -c 'map(.agent_id) | sort')" '["asker","lead"]'
	assert_eq "$(show_of lead '[.turn_status, (.calls | length)]')" '["failed",0]'
	assert_eq "$(show_of asker '[.turn_status, (.calls | length), (.interrupts | length)]')" '["failed",0,0]'
}

@test "message.send reaches another session, which the ring then drives" {
	ring -a alpha -m hi
	[ "$status" -eq 0 ]
	target=$(sid_of alpha)
	DECIDE="-f $POLICIES/send-to.jq --arg target $target"
	ring -a echo -m hello
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(log_for alpha '[.[].payload | select(.type=="turn.completed") | .data]')" \
		'["alpha got hi","alpha got note from hello"]'
	assert_eq "$(log_for echo '[.[].payload | select(.type=="session.message_requested") | .session_id]')" "[\"$target\"]"
	# To a session that does not exist: an error in the sender's log.
	DECIDE="-f $POLICIES/send-to.jq --arg target 01900000-0000-7000-8000-000000000000"
	ring -a echo -m again
	[ "$status" -eq 0 ] || fail "$output"
	events 'select(.type=="error") | .message' | grep -q 'message.send: no session with that id'
}

@test "malformed sub_agent.spawn and message.send actions fail the turn with the reason" {
	for which in spawn:'sub_agent.spawn: session_id must be a session id' \
	    spawn_agent:'sub_agent.spawn needs agent_id and tool_call_id' \
	    spawn_self:'sub_agent.spawn: a session cannot be its own child' \
	    send:'message.send needs session_id and a message' \
	    send_role:'message.send needs session_id and a message'; do
		DECIDE="-f $POLICIES/bad-action.jq --arg which ${which%%:*}"
		ring -a echo -m hi
		[ "$status" -eq 1 ] || fail "${which%%:*}: status $status: $output"
		events "select(.type==\"error\" and .session_id==\"$(the_session)\") | .message" |
			grep -qF "${which#*:}" || fail "${which%%:*}: $(cat "$EVENTS")"
		assert_eq "$(agentrt-session show "$(the_session)" | jq -c '[.turn_status, (.calls | length)]')" '["failed",0]'
		rm -f "$EVENTS"
	done
}

@test "a child out of time is cancelled and the parent reads why" {
	DECIDE="-f $POLICIES/spawn-timeout.jq --arg secs 0.3"
	ring -a impatient -m go
	[ "$status" -eq 0 ] || fail "status $status: $output"
	assert_eq "$(events "select(.type==\"completion\" and .session_id==\"$(sid_of impatient)\") | .text")" \
		'"gave up: sub-agent slow: deadline exceeded"'
	assert_eq "$(show_of slow '[.turn_status, (.calls | length)]')" '["failed",0]'
	assert_eq "$(log_for slow '[.[].payload | select(.type=="turn.completed")][0].error')" \
		'cancelled: the delegation that started this session ran out of time'
}
