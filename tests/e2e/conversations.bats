#!/usr/bin/env bats
# conversations.bats - the message tree's rules through whole rings: the
# worked examples of PROTOCOL-NOTES.md §3, voiding by an edit, the
# normalisation of a client's tool messages, and state kept per branch

load lib

# A conversation of two turns on the echo agent: u1 a1 u2 a2, and their
# ids in U1 A1 U2 A2.
two_turns() {
	ring -a echo -m 'to Paris'
	[ "$status" -eq 0 ] || fail "turn 1: $output"
	ring -s "$(the_session)" -m 'book it'
	[ "$status" -eq 0 ] || fail "turn 2: $output"
	read -r U1 A1 U2 A2 < <(agentrt-tree path "$(the_session)" |
	    jq -rs 'map(.id) | join(" ")')
	[ -n "$A2" ] || fail "no path of four messages"
}

# msg ID: the recorded message ID, compact.
msg() {
	agentrt-tree path "$(the_session)" "$1" | tail -n 1
}

# send VIEW-JSON: a client.messages turn with that view.
send() {
	ring -s "$(the_session)" --input "$(jq -nc --argjson m "$1" \
	    '{type: "client.messages", messages: $m}')"
}

# The payload types recorded after seq $1, space-separated.
types_after() {
	log_of "map(select(.seq > $1) | .payload.type) | join(\" \")"
}

last_seq() {
	agentrt-session show "$(the_session)" | jq .last_seq
}

# The trigger of the last client.messages decision that went out.
last_view_trigger() {
	log_of '[.[].payload | select(.type == "decision.dispatched") |
	    .trigger | select(.type == "client.messages")] | last'
}

@test "an edit forks under the last known message; the model sees the new path" {
	two_turns
	send "[$(msg "$U1"), $(msg "$A1"), {\"role\": \"user\", \"content\": \"LA instead\"}]"
	[ "$status" -eq 0 ] || fail "$output"
	s=$(the_session)
	# The edit hangs under a1; the old u2 a2 stay where they were.
	assert_eq "$(agentrt-tree path "$s" | jq -sc 'map(.content)')" \
	    '["to Paris","to Paris","LA instead","LA instead"]'
	assert_eq "$(agentrt-tree path "$s" | jq -sc '.[1].id == "'"$A1"'"')" true
	assert_eq "$(agentrt-tree branches "$s" | jq -sc 'map(.text) | sort')" \
	    '["LA instead","book it"]'
	# new_from names exactly where the news starts.
	assert_eq "$(last_view_trigger | jq -c .new_from)" 2
	# The model was asked with the edited path, not the old one.
	assert_eq "$(events 'select(.type == "completion") | .text' | tail -n 1)" '"LA instead"'
}

@test "a regenerate (the view without the last reply) makes a sibling reply" {
	two_turns
	send "[$(msg "$U1"), $(msg "$A1"), $(msg "$U2")]"
	[ "$status" -eq 0 ] || fail "$output"
	s=$(the_session)
	# Nothing of the view was written: only the new reply, under u2.
	assert_eq "$(agentrt-tree path "$s" | jq -sc 'map(.id)[:3]')" \
	    "[\"$U1\",\"$A1\",\"$U2\"]"
	assert_eq "$(agentrt-tree path "$s" | jq -sc 'length')" 4
	assert_eq "$(agentrt-tree branches "$s" | jq -sc 'length')" 2
	assert_eq "$(log_of "[.[].payload | select(.type == \"message.new\" and
	    .parent_id == \"$U2\")] | length")" 2
	assert_eq "$(last_view_trigger | jq -c .new_from)" 3
}

@test "a view ending on an earlier node writes nothing and moves the head there" {
	two_turns
	seq=$(last_seq)
	send "[$(msg "$U1"), $(msg "$A1")]"
	[ "$status" -eq 0 ] || fail "$output"
	# head.moved comes before any message, and no message of the view is
	# written again: the only new one is the model's reply, under a1.
	types=$(types_after "$seq")
	[[ $types == *"head.moved"* ]] || fail "no head.moved: $types"
	assert_eq "$(log_of "[.[] | select(.seq > $seq) | .payload |
	    select(.type == \"message.new\") | .parent_id]")" "[\"$A1\"]"
	assert_eq "$(log_of "[.[] | select(.seq > $seq) | .payload |
	    select(.type == \"head.moved\") | .head_id]")" "[\"$A1\"]"
	assert_eq "$(agentrt-session show "$(the_session)" | jq .nodes)" 5
}

@test "a branch switch: a view of another branch's whole path moves the head to its leaf" {
	two_turns
	send "[$(msg "$U1"), $(msg "$A1"), {\"role\": \"user\", \"content\": \"LA instead\"}]"
	[ "$status" -eq 0 ] || fail "$output"
	seq=$(last_seq)
	send "[$(msg "$U1"), $(msg "$A1"), $(msg "$U2"), $(msg "$A2")]"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(log_of "[.[] | select(.seq > $seq) | .payload |
	    select(.type == \"head.moved\") | .head_id]")" "[\"$A2\"]"
	# The reply continues the old branch.
	assert_eq "$(agentrt-tree path "$(the_session)" | jq -sc '.[3].id, .[4].role')" \
	    "\"$A2\"
\"assistant\""
}

@test "a resend of the same ids is a no-op for the tree: no event before the reply" {
	two_turns
	seq=$(last_seq)
	send "[$(msg "$U1"), $(msg "$A1"), $(msg "$U2"), $(msg "$A2")]"
	[ "$status" -eq 0 ] || fail "$output"
	types=$(types_after "$seq")
	[[ $types != *"head.moved"* ]] || fail "the head moved: $types"
	# The one message written is the reply, after a2; nothing was re-recorded.
	assert_eq "$(log_of "[.[] | select(.seq > $seq) | .payload |
	    select(.type == \"message.new\") | [.parent_id, .message.role]]")" \
	    "[[\"$A2\",\"assistant\"]]"
	assert_eq "$(last_view_trigger | jq -c .new_from)" 4
}

@test "a view sharing no prefix with the tree starts a second root" {
	two_turns
	send '[{"role": "user", "content": "fresh start"}]'
	[ "$status" -eq 0 ] || fail "$output"
	s=$(the_session)
	assert_eq "$(agentrt-tree path "$s" | jq -sc 'map(.content)')" \
	    '["fresh start","fresh start"]'
	assert_eq "$(agentrt-tree path "$s" | head -n 1 | jq -r .id)" \
	    "$(log_of '[.[].payload | select(.type == "message.new" and
	    .parent_id == null) | .message.id] | last')"
	assert_eq "$(log_of '[.[].payload | select(.type == "message.new" and
	    .parent_id == null)] | length')" 2
	assert_eq "$(last_view_trigger | jq -c .new_from)" 0
}

# The ask agent parks on its client tool "confirm"; $call is the call.
park_on_client_tool() {
	ring -a ask -m go
	[ "$status" -eq 3 ] || fail "expected to park (3), got $status: $output"
	call=$(events 'select(.type == "tool_call") | .id' | jq -r .)
	[ -n "$call" ] || fail "no client tool call"
}

@test "an edit while a client tool waits voids the call; its late answer is refused" {
	park_on_client_tool
	s=$(the_session)
	u1=$(agentrt-tree path "$s" | head -n 1)
	send "[$u1, {\"role\": \"user\", \"content\": \"no, stop\"}]"
	# The edited branch asks again, and parks on its own call.
	[ "$status" -eq 3 ] || fail "$output"
	assert_eq "$(log_of "[.[].payload | select(.type == \"call.voided\") | .id]")" \
	    "[\"$call\"]"
	# Still the one turn: an escaping view joins it.
	assert_eq "$(log_of '[.[].payload | select(.type == "turn.started")] | length')" 1
	assert_eq "$(agentrt-session show "$s" | jq -c --arg id "$call" \
	    '[.open | has($id), length]')" '[false,1]'
	ring -s "$s" --input "$(jq -nc --arg id "$call" \
	    '{type: "tool.result", id: $id, result: "yes"}')"
	assert_eq "$(log_of '[.[].payload | select(.type == "error") | .code] | last')" \
	    stale_settle
	# The old branch is where it was, its call unanswered.
	assert_eq "$(agentrt-tree branches "$s" | jq -sc 'length')" 2
}

@test "a view that continues the parked branch is still refused" {
	park_on_client_tool
	s=$(the_session)
	send "$(agentrt-tree path "$s" | jq -sc '. + [{role: "user", content: "hurry"}]')"
	[ "$status" -eq 3 ]
	assert_eq "$(log_of '[.[].payload | select(.type == "error") | .code] | last')" \
	    turn_already_active
	assert_eq "$(log_of '[.[].payload | select(.type == "call.voided")] | length')" 0
}

@test "a client's echo of a tool answer without its id is a resend, not a fork" {
	park_on_client_tool
	s=$(the_session)
	ring -s "$s" --input "$(jq -nc --arg id "$call" \
	    '{type: "tool.result", id: $id, result: "yes"}')"
	[ "$status" -eq 0 ] || fail "$output"
	# The client kept the tool message as it sent it: no id, only the call's.
	view=$(agentrt-tree path "$s" | jq -sc --arg id "$call" \
	    'map(if .role == "tool" then {role, tool_call_id: $id, content}
	     else . end) + [{role: "user", content: "and now?"}]')
	assert_eq "$(jq -c '.[2] | has("id")' <<<"$view")" false
	send "$view"
	# One branch: the tool message was taken for its node.
	assert_eq "$(agentrt-tree branches "$s" | jq -sc 'length')" 1
	assert_eq "$(agentrt-tree path "$s" | jq -sc 'map(.role)')" \
	    '["user","assistant","tool","assistant","user","assistant"]'
	assert_eq "$(log_of '[.[].payload | select(.type == "message.new") |
	    .message | select(.role == "tool")] | length')" 1
}

# A policy that keeps, in state, the user messages this branch has seen,
# and names the last in the agent config's system prompt.
seen_policy() {
	cat >"$BATS_TEST_TMPDIR/seen.jq" <<'EOF'
if (.proposed // {}) == {} then empty
elif .trigger.type == "client.messages"
then .trigger.messages[-1].content as $m
    | .proposed + {state: {seen: ((.state.seen // []) + [$m])},
        agent: (.agent + {system: "last: \($m)"})}
else .proposed
end
EOF
	DECIDE="-f $BATS_TEST_TMPDIR/seen.jq"
}

# The state's list at the head.
state_of() {
	agentrt-session show "$(the_session)" | jq -c .state.seen
}

# config_of: the agent config's system prompt at the head.
config_of() {
	agentrt-session show "$(the_session)" | jq -r .config.system
}

@test "state and config follow the branch: a fork sees them as of the fork point" {
	seen_policy
	ring -a echo -m one
	[ "$status" -eq 0 ] || fail "$output"
	s=$(the_session)
	ring -s "$s" -m two
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(state_of)" '["one","two"]'
	a_two=$(agentrt-tree path "$s" | jq -sr 'last.id')
	a_one=$(agentrt-tree path "$s" | jq -sr '.[1].id')
	# Back to the end of turn one: the state written after it is off path.
	agentrt-tree checkout "$s" "$a_one" >/dev/null
	assert_eq "$(state_of)" '["one"]'
	assert_eq "$(config_of)" 'last: one'
	ring -s "$s" -m deux
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(state_of)" '["one","deux"]'
	a_deux=$(agentrt-tree path "$s" | jq -sr 'last.id')
	# The branches, extended in turn, each keep their own.
	agentrt-tree checkout "$s" "$a_two" >/dev/null
	assert_eq "$(state_of)" '["one","two"]'
	assert_eq "$(config_of)" 'last: two'
	ring -s "$s" -m three
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(state_of)" '["one","two","three"]'
	agentrt-tree checkout "$s" "$a_deux" >/dev/null
	assert_eq "$(state_of)" '["one","deux"]'
	ring -s "$s" -m trois
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(state_of)" '["one","deux","trois"]'
	assert_eq "$(config_of)" 'last: trois'
	assert_eq "$(log_of '[.[].payload | select(.type == "worker.state.updated")] | length')" 5
}
