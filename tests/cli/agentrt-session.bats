#!/usr/bin/env bats
# agentrt-session: new, ls, show, log, rm, and the store's failure modes

load lib

uuidv7='^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'

# An agent file NAME.json where every command looks by default.
an_agent() {
	mkdir -p "$XDG_CONFIG_HOME/agentrt/agents"
	echo '{"model":"mock/echo"}' >"$XDG_CONFIG_HOME/agentrt/agents/$1.json"
}

@test "--help prints the usage on stdout and exits 0" {
	run agentrt-session --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Usage: agentrt-session [-d DIR] COMMAND [ARGS]" ]]
	[[ "$output" == *"log [--after SEQ] [-f] SESSION"* ]]
	run agentrt-session show --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == Usage:* ]]
}

@test "--version names the program, the version and the libraries' versions" {
	run agentrt-session --version
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" =~ ^agentrt-session\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	# The libraries it links, as curl names them, at their versions.
	v='[0-9]+\.[0-9]+(\.[0-9]+)?'
	[[ "${lines[1]}" =~ ^libjq/$v\ LMDB/$v$ ]] || fail "${lines[1]}"
}

@test "no command is a usage error" {
	run agentrt-session
	[ "$status" -eq 2 ]
	[[ "$output" == *"usage: agentrt-session"* ]]
}

@test "an unknown command is named and is a usage error" {
	run agentrt-session frobnicate
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "agentrt-session: unknown command 'frobnicate'" ]]
	[ ! -e "$AGENTRT_DB" ]
}

@test "an unknown option, or one another command owns, is a usage error" {
	run agentrt-session ls --bogus
	[ "$status" -eq 2 ]
	run agentrt-session ls --follow
	[ "$status" -eq 2 ]
	[[ "$output" == *"usage: agentrt-session ls [-q]"* ]]
	run agentrt-session show
	[ "$status" -eq 2 ]
	run agentrt-session show a b
	[ "$status" -eq 2 ]
}

@test "new prints a fresh UUIDv7 and records session.created" {
	an_agent calc
	run agentrt-session new -a calc
	[ "$status" -eq 0 ]
	[[ "$output" =~ $uuidv7 ]]
	id=$output
	run agentrt-session log "$id"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	assert_eq "$(jq -c '[.session_id, .seq, .payload.type, .payload.agent_id, .payload.ancestry]' <<<"$output")" \
		"[\"$id\",1,\"session.created\",\"calc\",[]]"
}

@test "new ids are time-ordered, and ls lists sessions in that order" {
	a=$(agentrt-session new)
	b=$(agentrt-session new)
	c=$(agentrt-session new)
	[[ "$a" < "$b" && "$b" < "$c" ]]
	run agentrt-session ls -q
	[ "$status" -eq 0 ]
	assert_eq "$output" "$a"$'\n'"$b"$'\n'"$c"
}

@test "ls lists sessions oldest first, whatever their ids; ids break ties" {
	AGENTRT_CLOCK=2026-01-02T03:04:05.000Z agentrt-session new --id zz-first >/dev/null
	AGENTRT_CLOCK=2026-01-02T03:04:06.000Z agentrt-session new --id aa-second >/dev/null
	AGENTRT_CLOCK=2026-01-02T03:04:05.000Z agentrt-session new --id mm-tied >/dev/null
	new=$(AGENTRT_CLOCK=2026-01-02T03:04:07.000Z agentrt-session new)
	AGENTRT_CLOCK=2026-01-02T03:04:08.000Z agentrt-session new --id 00-newest >/dev/null
	assert_eq "$(agentrt-session ls -q | paste -sd' ')" "mm-tied zz-first aa-second $new 00-newest"
	assert_eq "$(agentrt-session ls | jq -r .created | paste -sd' ')" \
	    "2026-01-02T03:04:05.000Z 2026-01-02T03:04:05.000Z 2026-01-02T03:04:06.000Z 2026-01-02T03:04:07.000Z 2026-01-02T03:04:08.000Z"
	# A copy keeps its original's creation, so it sorts beside it, not
	# last for its name, and tail -n 1 is still the newest session.
	agentrt-session export aa-second >"$BATS_TEST_TMPDIR/x.ndjson"
	agentrt-session import --as zzz-copy "$BATS_TEST_TMPDIR/x.ndjson" >/dev/null
	assert_eq "$(agentrt-session ls -q | paste -sd' ')" "mm-tied zz-first aa-second zzz-copy $new 00-newest"
	assert_eq "$(agentrt-session ls -q | tail -n 1)" 00-newest
}

@test "new --id names the session; a taken id is refused" {
	an_agent calc
	run agentrt-session new --id demo -a calc
	[ "$status" -eq 0 ]
	assert_eq "$output" demo
	run agentrt-session new --id demo
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: session 'demo' exists"
	run agentrt-session log demo
	[ "${#lines[@]}" -eq 1 ]
}

@test "new refuses ids and agent names outside the safe set" {
	for bad in '' '../x' 'a b' '-x' "$(printf 'x%.0s' $(seq 129))"; do
		run agentrt-session new --id "$bad"
		[ "$status" -eq 2 ] || fail "id '$bad' accepted"
		[[ "$output" == *"bad --id"* ]]
	done
	run agentrt-session new -a 'calc/../../etc'
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad agent 'calc/../../etc'"* ]]
	run agentrt-session ls
	assert_eq "$output" ""
}

@test "new -a refuses an agent with no file, as run does, and writes nothing" {
	run agentrt-session new --agents "$BATS_TEST_TMPDIR/none" -a cacl
	[ "$status" -eq 2 ]
	[[ "$output" == "agentrt-session: no agent 'cacl' (looked in $BATS_TEST_TMPDIR/none, "* ]]
	[ "${#lines[@]}" -eq 1 ]
	[ ! -e "$AGENTRT_DB" ]
	run agentrt-session new -a cacl
	[ "$status" -eq 2 ]
	[[ "$output" == "agentrt-session: no agent 'cacl' (looked in $XDG_CONFIG_HOME/agentrt/agents, agents)" ]]
	[ ! -e "$AGENTRT_DB" ]
	run agentrt-session run -a cacl -m hi </dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == "agentrt-session: no agent 'cacl' (looked in $XDG_CONFIG_HOME/agentrt/agents, agents)" ]]
	# A file that is no AgentConfig is a failure, not a usage error.
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '[1]' >"$BATS_TEST_TMPDIR/agents/bad.json"
	run agentrt-session new --agents "$BATS_TEST_TMPDIR/agents" -a bad
	[ "$status" -eq 1 ]
	[[ "$output" == "agentrt-session: "*bad.json* ]]
	# Found by --agents or by the environment, it is made.
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/calc.json"
	run agentrt-session new --agents "$BATS_TEST_TMPDIR/agents" --id one -a calc
	[ "$status" -eq 0 ]
	run env AGENTRT_AGENTS="$BATS_TEST_TMPDIR/agents" agentrt-session new --id two -a calc
	[ "$status" -eq 0 ]
	assert_eq "$(agentrt-session ls -q | paste -sd' ')" "one two"
}

@test "new --identity @FILE and @- read the identity from a file or stdin" {
	printf '{"id":"from-file"}' >"$BATS_TEST_TMPDIR/who.json"
	agentrt-session new --id f --identity "@$BATS_TEST_TMPDIR/who.json" >/dev/null
	assert_eq "$(agentrt-session show f | jq -r .identity.id)" from-file
	echo '{"id":"from-stdin"}' | agentrt-session new --id g --identity @- >/dev/null
	assert_eq "$(agentrt-session show g | jq -r .identity.id)" from-stdin
	run agentrt-session new --identity "@$BATS_TEST_TMPDIR/missing.json"
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-session: read --identity '$BATS_TEST_TMPDIR/missing.json': No such file or directory"
}

@test "read-only commands on a missing store make no store" {
	run agentrt-session -d "$BATS_TEST_TMPDIR/none" ls
	[ "$status" -eq 0 ]
	assert_eq "$output" ""
	run agentrt-session -d "$BATS_TEST_TMPDIR/none" show s
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: no session 's'"
	run agentrt-session -d "$BATS_TEST_TMPDIR/none" log -f s
	[ "$status" -eq 1 ]
	run agentrt-session -d "$BATS_TEST_TMPDIR/none" rm s
	[ "$status" -eq 1 ]
	[ ! -e "$BATS_TEST_TMPDIR/none" ]
}

@test "new --identity records the owner; bad identities are refused" {
	run agentrt-session new --id s --identity '{"id":"u1","metadata":{"team":"x"}}'
	[ "$status" -eq 0 ]
	assert_eq "$(agentrt-session show s | jq -c .identity)" '{"id":"u1","metadata":{"team":"x"}}'
	run agentrt-session new --identity '{"id":'
	[ "$status" -eq 2 ]
	[[ "$output" == "agentrt-session: bad --identity: not valid JSON"* ]]
	run agentrt-session new --identity '[1]'
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-session: bad --identity: expected an object"
	run agentrt-session new --identity '{"id":7}'
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-session: bad --identity: field 'id': expected string, got number"
	run agentrt-session new --identity '{"metadata":{"k":1}}'
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-session: bad --identity: metadata 'k': expected string"
	run agentrt-session new --identity '{"id":"u2","tenant":"acme"}'
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-session: bad --identity: unknown member 'tenant' (an identity has id and metadata; put more in metadata)"
	assert_eq "$(agentrt-session ls -q)" s
}

@test "ls prints one object per session with exactly the summary fields" {
	an_agent calc
	agentrt-session new --id one -a calc >/dev/null
	agentrt-session new --id two >/dev/null
	run agentrt-session ls
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	assert_eq "$(jq -c 'keys' <<<"${lines[0]}")" '["agent_id","created","head","id","status","title","turn","updated"]'
	assert_eq "$(jq -c '[.id, .agent_id, .status, .head, .turn, .title]' <<<"${lines[0]}")" '["one","calc","idle",null,null,null]'
	# Made, not run: its one event is when it was made.
	assert_eq "$(jq -r '.updated == .created' <<<"${lines[0]}")" true
	assert_eq "$(jq -r .id <<<"${lines[1]}")" two
}

@test "ls: a title from the first user message, when it was last used, parked, and --search" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model": "mock/echo"}' >"$BATS_TEST_TMPDIR/agents/echo.json"
	cp "$top_srcdir/tests/fixtures/agents/asker.json" "$BATS_TEST_TMPDIR/agents/"
	ring_run() {
		agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" "$@" \
		    <"$BATS_TEST_TMPDIR/r" | agentrt-decide | agentrt-llm |
		    agentrt-tool >"$BATS_TEST_TMPDIR/r"
	}
	mkfifo "$BATS_TEST_TMPDIR/r"
	ring_run -a echo -m "$(printf 'Plan a trip to Paris\nin May, please')" 2>/dev/null
	long=$(printf 'é%.0s' $(seq 1 40))
	ring_run -a echo -m "$long" 2>/dev/null
	ring_run -a asker -m 'pick a colour' 2>/dev/null || true
	run agentrt-session ls
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -sc 'map(.title)' <<<"$output")" \
	    "[\"Plan a trip to Paris\",\"$(printf 'é%.0s' $(seq 1 30))…\",\"pick a colour\"]"
	# Parked on the question: not "running".
	assert_eq "$(jq -sc 'map(.status)' <<<"$output")" '["idle","idle","parked"]'
	first=$(jq -rs '.[0].id' <<<"$output")
	assert_eq "$(jq -rs '.[0].updated' <<<"$output")" \
	    "$(agentrt-session log "$first" | jq -rs 'last | .occurred_at')"
	# --search reads every message, the replies too, case aside.
	assert_eq "$(agentrt-session ls -q --search PARIS)" "$first"
	assert_eq "$(agentrt-session ls -q --search 'in may')" "$first"
	assert_eq "$(agentrt-session ls --search colour | jq -r .status)" parked
	run agentrt-session ls --search 'no such words'
	[ "$status" -eq 0 ] && [ -z "$output" ] || fail "$output"
}

@test "ls on an empty store prints nothing and succeeds" {
	run agentrt-session ls
	[ "$status" -eq 0 ]
	assert_eq "$output" ""
}

@test "show prints the session with its resolved config, state, calls and turn" {
	an_agent calc
	agentrt-session new --id s -a calc >/dev/null
	run agentrt-session show s
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	assert_eq "$(jq -c '[.id, .agent_id, .status, .head, .turn, .turn_status, .config, .state, .calls, .nodes, .last_seq, .ancestry]' <<<"$output")" \
		'["s","calc","idle",null,null,null,null,null,[],0,1,[]]'
}

@test "an unknown session is one line on stderr and exit 1" {
	for sub in show log rm; do
		run agentrt-session "$sub" nosuch
		[ "$status" -eq 1 ] || fail "$sub exited $status"
		assert_eq "$output" "agentrt-session: no session 'nosuch'"
	done
}

@test "log --after skips events; a bad --after is a usage error" {
	agentrt-session new --id s >/dev/null
	append-events "$AGENTRT_DB" s 4
	run agentrt-session log --after 2 s
	[ "$status" -eq 0 ]
	assert_eq "$(jq -s -c 'map(.seq)' <<<"$output")" '[3,4,5]'
	run agentrt-session log --after 5 s
	assert_eq "$output" ""
	for bad in x -1 1.5 ''; do
		run agentrt-session log --after "$bad" s
		[ "$status" -eq 2 ] || fail "--after '$bad' accepted"
	done
}

@test "log reads a long log whole, in order, across its read batches" {
	agentrt-session new --id s >/dev/null
	append-events "$AGENTRT_DB" s 2500
	run agentrt-session log s
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2501 ]
	assert_eq "$(agentrt-session log s | jq -s -c '[map(.seq) == [range(1;2502)], (map(.payload.n) | .[1:] == [range(1;2501)])]')" '[true,true]'
}

@test "log -f sees every event another process appends, in order, once" {
	agentrt-session new --id s >/dev/null
	agentrt-session log -f s >"$BATS_TEST_TMPDIR/out" 3>&- &
	follower=$!
	append-events "$AGENTRT_DB" s 300 2000 3>&- &
	writer=$!
	wait "$writer"
	wait_lines "$BATS_TEST_TMPDIR/out" 301
	kill -INT "$follower"
	wait "$follower"	# SIGINT ends a follow cleanly: status 0
	assert_eq "$(jq -s -c 'map(.seq) == [range(1;302)]' "$BATS_TEST_TMPDIR/out")" true
	assert_eq "$(jq -s -c '.[1:] | map(.payload.n) == [range(1;301)]' "$BATS_TEST_TMPDIR/out")" true
}

@test "log -f starts after --after and keeps following" {
	agentrt-session new --id s >/dev/null
	append-events "$AGENTRT_DB" s 3
	agentrt-session log -f --after 2 s >"$BATS_TEST_TMPDIR/out" 3>&- &
	follower=$!
	wait_lines "$BATS_TEST_TMPDIR/out" 2
	append-events "$AGENTRT_DB" s 2
	wait_lines "$BATS_TEST_TMPDIR/out" 4
	kill -TERM "$follower"
	wait "$follower"
	assert_eq "$(jq -s -c 'map(.seq)' "$BATS_TEST_TMPDIR/out")" '[3,4,5,6]'
}

@test "rm deletes sessions and everything of them; other sessions stay" {
	agentrt-session new --id a >/dev/null
	agentrt-session new --id ab >/dev/null
	agentrt-session new --id b >/dev/null
	append-events "$AGENTRT_DB" a 3
	run agentrt-session rm a b
	[ "$status" -eq 0 ]
	assert_eq "$(agentrt-session ls -q)" ab
	run agentrt-session log a
	[ "$status" -eq 1 ]
	run agentrt-session log ab
	[ "${#lines[@]}" -eq 1 ]
	run agentrt-session new --id a
	[ "$status" -eq 0 ]
	assert_eq "$(agentrt-session log a | jq -s -c 'map(.seq)')" '[1]'
}

@test "rm of several sessions with one unknown removes none" {
	agentrt-session new --id a >/dev/null
	run agentrt-session rm a nosuch
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: no session 'nosuch'"
	assert_eq "$(agentrt-session ls -q)" a
}

@test "the store is -d, else AGENTRT_DB, else XDG_DATA_HOME, else HOME" {
	agentrt-session -d "$BATS_TEST_TMPDIR/d1" new --id one >/dev/null
	agentrt-session new --id two -d "$BATS_TEST_TMPDIR/d2" >/dev/null
	agentrt-session new --id three >/dev/null
	(unset AGENTRT_DB; agentrt-session new --id four >/dev/null)
	(unset AGENTRT_DB XDG_DATA_HOME; HOME="$BATS_TEST_TMPDIR/h2" agentrt-session new --id five >/dev/null)
	assert_eq "$(agentrt-session --db "$BATS_TEST_TMPDIR/d1" ls -q)" one
	assert_eq "$(agentrt-session -d "$BATS_TEST_TMPDIR/d2" ls -q)" two
	assert_eq "$(agentrt-session ls -q)" three
	assert_eq "$(agentrt-session -d "$XDG_DATA_HOME/agentrt" ls -q)" four
	assert_eq "$(agentrt-session -d "$BATS_TEST_TMPDIR/h2/.local/share/agentrt" ls -q)" five
}

@test "the store directory is created 0700 and its files 0600" {
	agentrt-session -d "$BATS_TEST_TMPDIR/new/deep/db" new >/dev/null
	assert_eq "$(stat -c %a "$BATS_TEST_TMPDIR/new/deep/db")" 700
	assert_eq "$(stat -c %a "$BATS_TEST_TMPDIR/new")" 700
	assert_eq "$(stat -c %a "$BATS_TEST_TMPDIR/new/deep/db/data.mdb")" 600
	assert_eq "$(stat -c %a "$BATS_TEST_TMPDIR/new/deep/db/lock.mdb")" 600
}

@test "AGENTRT_CLOCK pins timestamps and AGENTRT_ID_SEED pins ids" {
	export AGENTRT_CLOCK=2026-01-02T03:04:05Z AGENTRT_ID_SEED=test
	a=$(agentrt-session -d "$BATS_TEST_TMPDIR/x" new)
	b=$(agentrt-session -d "$BATS_TEST_TMPDIR/y" new)
	assert_eq "$a" "$b"
	[[ "$a" == 019b7ca9-8c88-7* ]]	# 48 bits of 2026-01-02T03:04:05Z
	assert_eq "$(agentrt-session -d "$BATS_TEST_TMPDIR/x" log "$a" | jq -r .occurred_at)" 2026-01-02T03:04:05.000Z
	assert_eq "$(agentrt-session -d "$BATS_TEST_TMPDIR/x" show "$a" | jq -r .created)" 2026-01-02T03:04:05.000Z
	AGENTRT_CLOCK=1767323045000 run agentrt-session -d "$BATS_TEST_TMPDIR/z" new --id s
	assert_eq "$(agentrt-session -d "$BATS_TEST_TMPDIR/z" show s | jq -r .created)" 2026-01-02T03:04:05.000Z
	AGENTRT_CLOCK=yesterday run agentrt-session new
	[ "$status" -eq 2 ]
	[[ "$output" == "agentrt-session: AGENTRT_CLOCK: bad clock 'yesterday'"* ]]
}

@test "a store another program made is refused, and left alone" {
	mkdir -p "$BATS_TEST_TMPDIR/other"
	printf 'VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n 6b6579\n 76616c\nDATA=END\n' |
		mdb_load "$BATS_TEST_TMPDIR/other"
	before=$(mdb_dump -a "$BATS_TEST_TMPDIR/other" | md5sum)
	run agentrt-session -d "$BATS_TEST_TMPDIR/other" ls
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: open store '$BATS_TEST_TMPDIR/other': not an agentrt store (made by another program)"
	assert_eq "$(mdb_dump -a "$BATS_TEST_TMPDIR/other" | md5sum)" "$before"
}

@test "a file that is not LMDB is refused with one line" {
	mkdir -p "$BATS_TEST_TMPDIR/junk"
	head -c 65536 /dev/urandom >"$BATS_TEST_TMPDIR/junk/data.mdb"
	run agentrt-session -d "$BATS_TEST_TMPDIR/junk" ls
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "agentrt-session: open store '$BATS_TEST_TMPDIR/junk': not an agentrt store ("* ]]
}

@test "a store of another schema version is refused" {
	agentrt-session new --id s >/dev/null
	printf 'VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n 736368656d61\n 39\nDATA=END\n' |
		mdb_load -s meta "$AGENTRT_DB"
	run agentrt-session show s
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: open store '$AGENTRT_DB': schema version 9, this agentrt reads version 1"
}

@test "a directory that cannot be made or written is one clear line" {
	touch "$BATS_TEST_TMPDIR/file"
	run agentrt-session -d "$BATS_TEST_TMPDIR/file" ls
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: open store '$BATS_TEST_TMPDIR/file': not a directory"
	run agentrt-session -d "$BATS_TEST_TMPDIR/file/db" ls
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: create store directory '$BATS_TEST_TMPDIR/file/db': Not a directory"
	if [ "$(id -u)" -eq 0 ]; then
		dir=/sys/agentrt-test-$$	# root may write anywhere but sysfs
	else
		mkdir -m 500 "$BATS_TEST_TMPDIR/ro"
		dir=$BATS_TEST_TMPDIR/ro
	fi
	run agentrt-session -d "$dir" new
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "agentrt-session: "*"'$dir"*": "* ]]
}

@test "a full map that cannot grow is one line, and nothing is half-written" {
	export AGENTRT_MAP_MAX=1M
	agentrt-session new --id small >/dev/null
	{ printf '{"id":"'; head -c 1500000 /dev/zero | tr '\0' x; printf '"}'; } >"$BATS_TEST_TMPDIR/big.json"
	run agentrt-session new --id big --identity "@$BATS_TEST_TMPDIR/big.json"
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: store '$AGENTRT_DB' is full: its map reached the limit of 1048576 bytes"
	assert_eq "$(agentrt-session ls -q)" small
	run agentrt-session log big
	[ "$status" -eq 1 ]
}

@test "the map grows past its first size when the limit allows" {
	{ printf '{"id":"'; head -c 3000000 /dev/zero | tr '\0' x; printf '"}'; } >"$BATS_TEST_TMPDIR/big.json"
	for i in $(seq 1 30); do
		agentrt-session new --id "s$i" --identity "@$BATS_TEST_TMPDIR/big.json" >/dev/null
	done
	assert_eq "$(agentrt-session ls -q | wc -l)" 30
	[ "$(stat -c %s "$AGENTRT_DB/data.mdb")" -gt $((64 * 1024 * 1024)) ]
	assert_eq "$(agentrt-session show s30 | jq '.identity.id | length')" 3000000
}

@test "a bad AGENTRT_MAP_MAX is a usage error" {
	AGENTRT_MAP_MAX=lots run agentrt-session ls
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-session: bad AGENTRT_MAP_MAX 'lots': expected a size such as 64M or 1T"
}

@test "a failed write to stdout is an error, not silent loss" {
	agentrt-session new --id s >/dev/null
	run bash -c 'agentrt-session ls >/dev/full'
	[ "$status" -eq 1 ]
	[[ "$output" == "agentrt-session: write: No space left on device" ]]
	run bash -c 'agentrt-session log s >/dev/full'
	[ "$status" -eq 1 ]
	run bash -c 'agentrt-session new >/dev/full'
	[ "$status" -eq 1 ]
}

@test "several processes create sessions in one store at once" {
	for i in $(seq 1 8); do
		( for j in $(seq 1 10); do agentrt-session new --id "p$i-$j" >/dev/null || exit 1; done ) &
	done
	wait
	assert_eq "$(agentrt-session ls -q | wc -l)" 80
}

@test "run needs -a or -s, and refuses bad values before touching the store" {
	run agentrt-session run -m hi </dev/null
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-session: run: give -a AGENT (a new session) or -s SESSION"
	run agentrt-session run -s '../x' </dev/null
	[ "$status" -eq 2 ]
	assert_eq "$output" "agentrt-session: bad session '../x': use 1-128 letters, digits, '.', '_', ':' or '-', not starting with '.' or '-'"
	run agentrt-session run -s s --turn-id 'a b' </dev/null
	[ "$status" -eq 2 ]
	run agentrt-session run -a calc extra </dev/null
	[ "$status" -eq 2 ]
	[ ! -e "$AGENTRT_DB" ]
}

@test "run -a with no agent file names the places it looked, exit 2" {
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/none" -a nosuch -m hi </dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == "agentrt-session: no agent 'nosuch' (looked in $BATS_TEST_TMPDIR/none, "* ]]
	assert_eq "$(agentrt-session ls -q)" ""
}

@test "run -a with a file that is not an AgentConfig is refused" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"system":"no model"}' >"$BATS_TEST_TMPDIR/agents/bad.json"
	echo '{"model":' >"$BATS_TEST_TMPDIR/agents/broken.json"
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -a bad </dev/null
	[ "$status" -eq 1 ]
	[[ "$output" == *"agents/bad.json"*"missing field 'model'"* ]]
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -a broken </dev/null
	[ "$status" -eq 1 ]
	[[ "$output" == *"agents/broken.json"*"not valid JSON"* ]]
}

@test "run -s of a session that does not exist is one line, exit 1" {
	run agentrt-session run -s nosuch </dev/null
	[ "$status" -eq 1 ]
	assert_eq "$output" "agentrt-session: no session 'nosuch'"
}

@test "run --input that is not JSON lines is a usage error" {
	agentrt-session new --id s >/dev/null
	run agentrt-session run -s s --input 'not json' </dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == "agentrt-session: --input:1: not valid JSON"* ]]
	run agentrt-session run -s s --input '{"no":"type"}' </dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *'--input:1: line has no string "type"' ]]
}

# bad_line_2 KIND: a three-line --input file whose line 2 is bad in one way.
bad_line_2() {
	local f=$BATS_TEST_TMPDIR/input-$1
	{
		echo '{"type":"client.message","message":{"role":"user","content":"one"}}'
		case $1 in
		json)	echo '{"type":"client.message",' ;;
		array)	echo '[{"type":"client.message"}]' ;;
		type)	echo '{"message":{"role":"user","content":"two"}}' ;;
		utf8)	printf '{"type":"client.message","message":{"role":"user","content":"\377\376"}}\n' ;;
		nul)	echo '{"type":"client.message\u0000x","message":{"role":"user","content":"two"}}' ;;
		esac
		echo '{"type":"client.message","message":{"role":"user","content":"three"}}'
	} >"$f"
	printf '%s\n' "$f"
}

@test "run --input with a bad line anywhere records nothing and makes no session" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/e.json"
	for kind in json array type utf8 nul; do
		f=$(bad_line_2 "$kind")
		run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -a e \
		    --input "@$f" </dev/null
		[ "$status" -eq 2 ] || fail "$kind: exit $status: $output"
		[ "${#lines[@]}" -eq 1 ] || fail "$kind: $output"
		[[ "$output" == "agentrt-session: --input:2: "* ]] ||
		    fail "$kind: $output"
		assert_eq "$(agentrt-session ls -q)" ""
	done
	[[ "$output" == *'"type" "client.message\u0000x" holds a NUL byte' ]]
}

@test "run -s --input with a bad line leaves the session's log as it was" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/e.json"
	agentrt-session new --agents "$BATS_TEST_TMPDIR/agents" --id s -a e >/dev/null
	before=$(agentrt-session log s)
	for kind in json array type utf8 nul; do
		f=$(bad_line_2 "$kind")
		run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s s \
		    --input "@$f" </dev/null
		[ "$status" -eq 2 ] || fail "$kind: exit $status: $output"
		[[ "$output" == "agentrt-session: --input:2: "* ]] ||
		    fail "$kind: $output"
		assert_eq "$(agentrt-session log s)" "$before"
	done
	# Bad UTF-8 given inline is seen too, not replaced.
	run agentrt-session run -s s --input "$(printf '{"type":"x\377"}')" </dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == "agentrt-session: --input:1: line is not valid UTF-8"* ]]
	assert_eq "$(agentrt-session log s)" "$before"
}

@test "run --input lines that are all good go in, in order" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/e.json"
	agentrt-session new --agents "$BATS_TEST_TMPDIR/agents" --id s -a e >/dev/null
	f=$(bad_line_2 good)
	# Two messages: the engine would refuse the second (the first's turn
	# is going), so the run refuses both, naming it, recording nothing.
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s s \
	    --input "@$f" </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"--input:2: a second client.message: one run takes one turn's message"* ]]
	assert_eq "$(agentrt-session log s | jq -r '.payload.type' | paste -sd' ')" \
	    "session.created"
	# One message, and the lines that are not: all go in, in order.
	{ sed -n 1p "$f"; echo '{"type":"error","code":"note","message":"x"}'; } >"$f.2"
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s s \
	    --input "@$f.2" </dev/null
	[ "$status" -eq 1 ]	# the ring closed: nothing answers
	assert_eq "$(agentrt-session log s | jq -r '.payload | select(.type == "decision.queued" or .type == "error") | .trigger.message.content // .code' | paste -sd' ')" \
	    "null one note"
}

@test "run --input: an unknown type, a number a double cannot hold, -m beside a message" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/e.json"
	agentrt-session new --agents "$BATS_TEST_TMPDIR/agents" --id u -a e >/dev/null
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s u \
	    --input '{"type":"client.mesage","message":{"role":"user","content":"x"}}' </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"--input:1: unknown line type 'client.mesage'"* ]]
	# A duplicate key: the last one is the line's type.
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s u \
	    --input '{"type":"client.message","type":"bogus"}' </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"--input:1: unknown line type 'bogus'"* ]]
	for n in 1e400 18446744073709551616 0.1e-400; do
		run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s u \
		    --input '{"type":"client.message","message":{"role":"user","content":"x"},"client":{"state":{"n":['"$n"']}}}' </dev/null
		[ "$status" -eq 2 ]
		[[ $output == *"--input:1: the number at /client/state/n/0 ($n) is "* ]]
	done
	# A part the seed has no type for (what a model could not be sent).
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s u \
	    --input '{"type":"client.message","message":{"role":"user","content":[{"type":"text","text":"hi"},{"type":"sticker","id":"x"}]}}' </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"--input:1: bad_input: messages[0].content[1]: unknown part type 'sticker': a part is text, image_url, file, input_audio or video_url"* ]]
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s u \
	    --input '{"type":"client.messages","messages":[{"role":"user","content":[{"text":"no type"}]}]}' </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"--input:1: bad_input: messages[0].content[0]: a part with no type: a part is text"* ]]
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s u -m hi \
	    --input '{"type":"client.message","message":{"role":"user","content":"x"}}' </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"-m and a client message in --input"* ]]
	# None of them recorded anything.
	assert_eq "$(agentrt-session log u | jq -r '.payload.type' | paste -sd' ')" \
	    "session.created"
}

@test "a type holding a NUL on the ring is an error event, never a match" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/e.json"
	echo '{"type":"llm.request\u0000x","id":"c1","attempt":1}' >"$BATS_TEST_TMPDIR/ring"
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s r -a e \
	    <"$BATS_TEST_TMPDIR/ring"
	[ "$status" -eq 1 ]
	[[ "$output" == *'agentrt-session: <stdin>:1: line'\''s "type" "llm.request\u0000x" holds a NUL byte'* ]]
	assert_eq "$(agentrt-session log r | jq -c 'select(.payload.type == "error") | .payload | [.code, .input]')" \
	    '["bad_type","{\"type\":\"llm.request\\u0000x\",\"id\":\"c1\",\"attempt\":1}"]'
}

@test "run alone writes the first decision and says the ring closed" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/e.json"
	run agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -a e -m hi </dev/null
	[ "$status" -eq 1 ]
	# No notice of the new session: the message that says how to go on
	# names it.
	[[ "${lines[0]}" == '{"type":"decision.request"'* ]] || fail "$output"
	[[ "$output" == *'"type":"decision.request"'*'"trigger":{"type":"session.start"}'* ]]
	[[ "$output" != *"agentrt-session: session "* ]] || fail "$output"
	sid=$(agentrt-session ls -q)
	[[ "$output" == *"the ring closed with session"*"$sid"*"run again with -s"* ]] || fail "$output"
	# -v says it first.
	run agentrt-session run -v --agents "$BATS_TEST_TMPDIR/agents" -a e -m hi </dev/null
	[ "$status" -eq 1 ]
	assert_eq "${lines[0]}" "agentrt-session: session $(agentrt-session ls -q | tail -1)"
	[[ "$output" == *"the ring closed with session"*"run again with -s"* ]]
}

@test "a second driver of a live session is refused" {
	mkdir -p "$BATS_TEST_TMPDIR/agents"
	echo '{"model":"mock/echo"}' >"$BATS_TEST_TMPDIR/agents/e.json"
	mkfifo "$BATS_TEST_TMPDIR/in"
	agentrt-session run --agents "$BATS_TEST_TMPDIR/agents" -s held -a e \
	    <"$BATS_TEST_TMPDIR/in" >/dev/null 2>&1 3>&- &
	exec 4>"$BATS_TEST_TMPDIR/in"	# keeps the first driver's ring open
	for i in $(seq 1 100); do
		agentrt-session show held >/dev/null 2>&1 && break
		sleep 0.05
	done
	run agentrt-session run -s held </dev/null
	exec 4>&-
	wait || true
	[ "$status" -eq 1 ]
	[[ "$output" == "agentrt-session: session 'held' is driven by process "* ]]
}
