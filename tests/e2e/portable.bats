#!/usr/bin/env bats
# portable.bats - a session as a file: export and import, checkpoint and
# restore, on sessions with branches, sub-agents, interrupts and failed
# calls, and every refusal

load lib

# canon SID...: the export of the first, with --children, every id of the
# sessions named replaced by its position ("S0", "S1", ...), so that two
# families of sessions compare equal when they differ only in ids.
canon() {
	local root=$1
	agentrt-session export --children "$root" | jq -c --args '
	    def ren: if type == "string" then (. as $s | ($ARGS.positional |
	        index($s)) as $i | if $i == null then $s else "S\($i)" end)
	        elif type == "array" then map(ren)
	        elif type == "object" then with_entries(.key |= ren | .value |= ren)
	        else . end;
	    ren' "$@"
}

# The sessions whose parent is $1, sorted, as a JSON array.
children_of() {
	local id
	for id in $(agentrt-session ls -q); do
		agentrt-session show "$id" | jq -c --arg p "$1" 'select(.ancestry[-1:] == [$p]) | .id'
	done | jq -sc sort
}

# round_trip SID: export | import --as copy, then the copy's export equals
# the original's but for the ids; the views agree too.
round_trip() {
	local sid=$1 ids
	agentrt-session export --children "$sid" >"$BATS_TEST_TMPDIR/a.ndjson"
	run agentrt-session import --as copy "$BATS_TEST_TMPDIR/a.ndjson"
	[ "$status" -eq 0 ] || fail "import: $output"
	[ "${lines[0]}" = copy ] || fail "import printed: $output"
	mapfile -t ids < <(printf '%s\n' "$output")
	mapfile -t old < <(jq -r 'select(.type == "agentrt.export") | .sessions[]' "$BATS_TEST_TMPDIR/a.ndjson")
	[ "${#ids[@]}" -eq "${#old[@]}" ] || fail "ids: ${ids[*]} vs ${old[*]}"
	assert_eq "$(canon copy "${ids[@]}")" "$(canon "$sid" "${old[@]}")"
	# What the store makes of the events is the same too.
	for i in "${!ids[@]}"; do
		assert_eq "$(agentrt-session show "${ids[$i]}" | jq -c 'del(.id, .created, .ancestry)')" \
		    "$(agentrt-session show "${old[$i]}" | jq -c 'del(.id, .created, .ancestry)')"
		assert_eq "$(agentrt-tree show "${ids[$i]}")" "$(agentrt-tree show "${old[$i]}")"
	done
}

@test "export: a header line, then the log as agentrt-session log prints it" {
	ring -a calc -m 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	sid=$(the_session)
	run agentrt-session export "$sid"
	[ "$status" -eq 0 ]
	assert_eq "$(head -1 <<<"$output" | jq -c .)" \
	    "{\"type\":\"agentrt.export\",\"version\":1,\"session\":\"$sid\",\"sessions\":[\"$sid\"],\"loop_iteration\":2}"
	assert_eq "$(tail -n +2 <<<"$output")" "$(agentrt-session log "$sid")"
}

@test "round trip: branches (an edit and a regenerate)" {
	ring -a echo -m 'to Paris'
	s=$(the_session)
	ring -s "$s" -m 'book it'
	read -r U1 A1 U2 < <(agentrt-tree path "$s" | jq -rs 'map(.id) | .[0:3] | join(" ")')
	ring -s "$s" --input "$(agentrt-tree path "$s" | jq -sc '{type: "client.messages", messages: (.[0:2] + [{role: "user", content: "LA instead"}])}')"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-tree branches "$s" | jq -s length)" 2
	round_trip "$s"
	assert_eq "$(agentrt-tree branches copy | jq -sc 'map(.text) | sort')" '["LA instead","book it"]'
}

@test "round trip: sub-agents come along with --children, under new ids" {
	ring -a boss -m 'split the work'
	[ "$status" -eq 0 ] || fail "$output"
	root=$(root_session)
	assert_eq "$(agentrt-session export --children "$root" | head -1 | jq '.sessions | length')" 3
	# Without --children, only the root.
	assert_eq "$(agentrt-session export "$root" | jq -s 'map(.session_id // empty) | unique | length')" 1
	round_trip "$root"
	# The copies' ancestry names the copy, and the copy's calls its children.
	children=$(children_of copy)
	assert_eq "$(jq length <<<"$children")" 2
	assert_eq "$(agentrt-session log copy | jq -sc '[.[].payload | select(.type == "sub_agent.requested") | .id] | sort')" "$children"
}

@test "round trip: a parked session resumes after import" {
	ring -a guarded -m go
	[ "$status" -eq 3 ] || fail "$output"
	s=$(the_session)
	round_trip "$s"
	iid=$(agentrt-session show copy | jq -r '.interrupts | keys[0]')
	ring -s copy --resume "$iid" --payload '{"approved":true}'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(events 'select(.type == "completion" and .session_id == "copy") | .text')" '"calc said: 42"'
	# The original is still parked: the copy is its own session.
	assert_eq "$(agentrt-session show "$s" | jq '.interrupts | length')" 1
}

@test "round trip: a failed tool call" {
	ring -a badtool -m go
	s=$(the_session)
	assert_eq "$(log_of '[.[].payload | select(.type == "tool.call.errored")] | length')" 1
	round_trip "$s"
}

@test "import refuses a bad file with its line number, and writes nothing" {
	ring -a calc -m 'What is 17*23?'
	s=$(the_session)
	agentrt-session export "$s" >"$BATS_TEST_TMPDIR/good"
	n=$(agentrt-session ls -q | wc -l)
	bad() {	# bad NAME JQ-ON-LINES: a broken copy of good
		jq -c -s "$2 | .[]" "$BATS_TEST_TMPDIR/good" >"$BATS_TEST_TMPDIR/$1"
	}
	bad version '.[0].version = 2'
	bad notype '.[0].type = "something"'
	bad gap 'del(.[5])'
	bad order '.[3] as $x | .[3] = .[4] | .[4] = $x'
	bad payload '.[7].payload = 5'
	bad stranger '.[9].session_id = "someone-else"'
	bad first '.[1].payload.type = "message.new"'
	bad noevents '.[0:1]'
	check() {	# check FILE MESSAGE
		run agentrt-session import --as fresh "$BATS_TEST_TMPDIR/$1"
		[ "$status" -eq 1 ] || fail "$1: status $status: $output"
		[[ "$output" == *"$2"*"nothing imported" ]] || fail "$1: $output"
		assert_eq "$(agentrt-session ls -q | wc -l)" "$n"
	}
	check version "line 1: export version 2, but this agentrt reads version 1"
	check notype "line 1: not an agentrt export"
	check gap "line 6: seq 6 of session '$s' where 5 was due"
	check order "line 4: seq 4 of session '$s' where 3 was due"
	check payload "line 8: the event's \"payload\" is not an object"
	check stranger "line 10: session 'someone-else' is not one the header lists"
	check first "line 2: a session's first event is not session.created"
	check noevents "the header lists session '$s' but no event of it follows"
	printf '%s\n{"oops"\n' "$(head -1 "$BATS_TEST_TMPDIR/good")" >"$BATS_TEST_TMPDIR/json"
	run agentrt-session import "$BATS_TEST_TMPDIR/json"
	[ "$status" -eq 1 ]
	[[ "$output" == *"json: line 2: not valid JSON"* ]] || fail "$output"
	# An id that exists, unless --as; a bad --as.
	run agentrt-session import "$BATS_TEST_TMPDIR/good"
	[ "$status" -eq 1 ]
	[[ "$output" == *"session '$s' exists: give --as NEW_ID"* ]] || fail "$output"
	run agentrt-session import --as '-x' "$BATS_TEST_TMPDIR/good"
	[ "$status" -eq 2 ]
	# From stdin, too.
	run agentrt-session import --as from-stdin <"$BATS_TEST_TMPDIR/good"
	[ "$status" -eq 0 ]
	assert_eq "$output" from-stdin
}

@test "an export holds no key: a sentinel API key never reaches the file" {
	start_server
	export OPENAI_API_KEY=sk-sentinel-export-0123456789 OPENAI_BASE_URL="$srv/loop/1/v1"
	AGENTS="$top_srcdir/tests/fixtures/agents" ring -a http-openai -m 'add one'
	sid=$(the_session)
	[ -n "$sid" ]
	agentrt-session export --children "$sid" >"$BATS_TEST_TMPDIR/x"
	agentrt-session checkpoint -o "$BATS_TEST_TMPDIR/cp" "$sid"
	# The key was sent (the server saw it), and is in neither file.
	grep -q sk-sentinel-export "$srv_log"
	run grep -l -e sk-sentinel-export -e Authorization -e Bearer "$BATS_TEST_TMPDIR/x" "$BATS_TEST_TMPDIR/cp"
	[ "$status" -eq 1 ] || fail "found in: $output"
	stop_server
}

@test "checkpoint: a 4-byte version, the same bytes for the same state, --hash" {
	ring -a boss -m 'split the work'
	root=$(root_session)
	agentrt-session checkpoint -o "$BATS_TEST_TMPDIR/c1" "$root"
	agentrt-session checkpoint "$root" >"$BATS_TEST_TMPDIR/c2"
	cmp "$BATS_TEST_TMPDIR/c1" "$BATS_TEST_TMPDIR/c2"
	assert_eq "$(head -c 4 "$BATS_TEST_TMPDIR/c1" | od -An -tx1 | tr -d ' ')" 00000001
	assert_eq "$(agentrt-session checkpoint --hash "$root")" "$(sha256sum <"$BATS_TEST_TMPDIR/c1" | cut -d' ' -f1)"
	# -o and --hash: the file, and its hash printed.
	assert_eq "$(agentrt-session checkpoint -o "$BATS_TEST_TMPDIR/c3" --hash "$root")" "$(sha256sum <"$BATS_TEST_TMPDIR/c1" | cut -d' ' -f1)"
	cmp "$BATS_TEST_TMPDIR/c1" "$BATS_TEST_TMPDIR/c3"
	# The body is the export's lines, keys sorted, sub-agents included.
	assert_eq "$(tail -c +5 "$BATS_TEST_TMPDIR/c1" | jq -c 'select(.type == "agentrt.export") | [.loop_iteration, (.sessions | length)]')" '[2,3]'
	# Not on a terminal.
	run script -qec "agentrt-session checkpoint $root" /dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"refusing to write a binary checkpoint to a terminal"* ]] || fail "$output"
}

@test "restore: recreates the sessions; again is a no-op; a changed session is a conflict" {
	ring -a guarded -m go
	s=$(the_session)
	agentrt-session checkpoint -o "$BATS_TEST_TMPDIR/cp" "$s"
	h=$(agentrt-session checkpoint --hash "$s")
	agentrt-session rm "$s"
	run agentrt-session restore "$BATS_TEST_TMPDIR/cp"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$output" "$s"
	assert_eq "$(agentrt-session checkpoint --hash "$s")" "$h"
	# The same checkpoint again: nothing to do, nothing written.
	seq=$(agentrt-session show "$s" | jq .last_seq)
	run agentrt-session restore <"$BATS_TEST_TMPDIR/cp"
	[ "$status" -eq 0 ]
	[[ "$output" == *"already as checkpointed; nothing to do"* ]] || fail "$output"
	assert_eq "$(agentrt-session show "$s" | jq .last_seq)" "$seq"
	# The restored session goes on; then the old checkpoint conflicts.
	ring -s "$s" --resume "$(agentrt-session show "$s" | jq -r '.interrupts | keys[0]')" --payload '{"approved":true}'
	[ "$status" -eq 0 ] || fail "$output"
	run agentrt-session restore "$BATS_TEST_TMPDIR/cp"
	[ "$status" -eq 1 ]
	[[ "$output" == *"session '$s' exists and differs from the checkpoint (loop iteration 1, sha256 ${h:0:12}..."* ]] || fail "$output"
	# --as makes a new one of it.
	run agentrt-session restore --as again "$BATS_TEST_TMPDIR/cp"
	[ "$status" -eq 0 ]
	assert_eq "$output" again
	assert_eq "$(agentrt-session show again | jq '.interrupts | length')" 1
}

@test "restore refuses another schema version and a broken blob" {
	ring -a calc -m 'What is 17*23?'
	s=$(the_session)
	agentrt-session checkpoint -o "$BATS_TEST_TMPDIR/cp" "$s"
	n=$(agentrt-session ls -q | wc -l)
	{ printf '\0\0\0\2'; tail -c +5 "$BATS_TEST_TMPDIR/cp"; } >"$BATS_TEST_TMPDIR/v2"
	run agentrt-session restore --as x "$BATS_TEST_TMPDIR/v2"
	[ "$status" -eq 1 ]
	[[ "$output" == *"v2: checkpoint schema version 2, but this agentrt reads version 1; nothing restored"* ]] || fail "$output"
	printf '\0\0' >"$BATS_TEST_TMPDIR/short"
	run agentrt-session restore --as x "$BATS_TEST_TMPDIR/short"
	[ "$status" -eq 1 ]
	[[ "$output" == *"shorter than its version prefix"* ]] || fail "$output"
	head -c 300 "$BATS_TEST_TMPDIR/cp" >"$BATS_TEST_TMPDIR/cut"
	run agentrt-session restore --as x "$BATS_TEST_TMPDIR/cut"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad checkpoint: line 2"* ]] || fail "$output"
	run agentrt-session restore --as x "$BATS_TEST_TMPDIR/nonexistent"
	[ "$status" -eq 1 ]
	[[ "$output" == *"read '$BATS_TEST_TMPDIR/nonexistent': No such file or directory"* ]] || fail "$output"
	assert_eq "$(agentrt-session ls -q | wc -l)" "$n"
}

@test "round trip: checkpoint and restore --as, with sub-agents and a branch" {
	ring -a boss -m 'split the work'
	root=$(root_session)
	# A branch too: the same view again without the reply regenerates it.
	ring -s "$root" --input "$(agentrt-tree path "$root" | jq -sc '{type: "client.messages", messages: .[0:1]}')"
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(agentrt-tree branches "$root" | jq -s length)" 2
	agentrt-session checkpoint -o "$BATS_TEST_TMPDIR/cp" "$root"
	run agentrt-session restore --as again "$BATS_TEST_TMPDIR/cp"
	[ "$status" -eq 0 ] || fail "$output"
	mapfile -t ids <<<"$output"
	mapfile -t old < <(agentrt-session export --children "$root" | head -1 | jq -r '.sessions[]')
	[ "${#ids[@]}" -eq "${#old[@]}" ] && [ "${#ids[@]}" -ge 3 ] || fail "${ids[*]} / ${old[*]}"
	# A checkpoint keeps keys sorted, so compare the events as JSON.
	assert_eq "$(canon again "${ids[@]}" | jq -cS .)" "$(canon "$root" "${old[@]}" | jq -cS .)"
	assert_eq "$(agentrt-tree show again)" "$(agentrt-tree show "$root")"
	# The copy's checkpoint is the original's, renamed: restoring the
	# renamed blob again is the no-op.
	run agentrt-session restore --as again "$BATS_TEST_TMPDIR/cp"
	[ "$status" -eq 0 ]
	[[ "$output" == *"nothing to do"* ]] || fail "$output"
}
