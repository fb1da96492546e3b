#!/usr/bin/env bats
# agui-serve.bats - agentrt-serve against clients nobody here wrote:
# @ag-ui/client's HttpAgent (its verifier checks every stream's order and
# ids, @ag-ui/core's EventSchemas every event), and Debian's Chromium
# using the page as a person would.  The packages come from the npm
# registry through `make agui-core` ($AGUI_DIR); without node, them or
# chromium the tests are skipped, saying so.

load ../cli/lib
load ../cli/serve

teardown() {
	serve_stop
}

need_chromium() {
	need_agui
	[ -d "$AGUI_DIR/node_modules/puppeteer-core" ] ||
	    skip "puppeteer-core is not installed: make agui-core"
	CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
	[ -n "$CHROMIUM" ] || skip "chromium is not installed (Debian's chromium)"
	export CHROMIUM
}

@test "HttpAgent: a frontend tool ends the run on its call; the client's result gets the answer" {
	need_agui
	serve_start
	run timeout 90 node "$top_srcdir/tests/helpers/agui-client.mjs" tool "$url" hx-tool
	[ "$status" -eq 0 ] || fail "$output $(cat "$BATS_TEST_TMPDIR/serve.err")"
	first=$(sed -n 1p <<<"$output")
	second=$(sed -n 2p <<<"$output")
	# The first run: its events in order, the call its new message.
	assert_eq "$(jq -c '[.events[0], .events[-1]]' <<<"$first")" '["RUN_STARTED","RUN_FINISHED"]'
	assert_eq "$(jq -c '.newMessages' <<<"$first")" '[["assistant",null,["pick_color"]]]'
	assert_eq "$(jq -c '.messages' <<<"$first")" '["user","assistant"]'
	# The second: the answer, the client's view whole.
	assert_eq "$(jq -c '.last' <<<"$second")" '"the page picked blue"'
	assert_eq "$(jq -c '.messages' <<<"$second")" '["user","assistant","tool","assistant"]'
	# The store agrees: one turn, the client's result recorded once.
	assert_eq "$(agentrt-tree path hx-tool | jq -sc 'map(.role)')" \
	    '["user","assistant","tool","assistant"]'
}

@test "HttpAgent: a regenerate is a new answer on a branch of its own" {
	need_agui
	serve_start
	run timeout 90 node "$top_srcdir/tests/helpers/agui-client.mjs" regenerate "$url" hx-regen
	[ "$status" -eq 0 ] || fail "$output $(cat "$BATS_TEST_TMPDIR/serve.err")"
	first=$(sed -n 1p <<<"$output")
	second=$(sed -n 2p <<<"$output")
	assert_eq "$(jq -c '.last' <<<"$first")" '"17*23 = 391"'
	assert_eq "$(jq -c '[.last, .messages, .reused]' <<<"$second")" \
	    '["17*23 = 391",["user","assistant","tool","assistant"],0]'
	# Two branches from the user's message; the head is the new one.
	run curl -sf "${url}threads/hx-regen"
	assert_eq "$(jq -c '[(.branches | length), (.branches | map(select(.head)) | length)]' <<<"$output")" '[2,1]'
	assert_eq "$(agentrt-tree branches hx-regen | jq -s 'length')" 2
}

@test "every event of the e2e runs through agentrt-serve is an AG-UI event" {
	need_agui
	serve_start
	: >"$BATS_TEST_TMPDIR/all.ndjson"
	for a in calc guarded model-down echo; do
		post "$a" "$(input "hx-all-$a" r1 'What is 17*23?')" \
		    >>"$BATS_TEST_TMPDIR/all.ndjson"
	done
	n=$(grep -c . "$BATS_TEST_TMPDIR/all.ndjson")
	[ "$n" -gt 20 ]
	timeout 60 node --input-type=module -e '
	    import { createRequire } from "node:module";
	    import fs from "node:fs";
	    const require = createRequire(process.env.AGUI_DIR + "/node_modules/x.js");
	    const { EventSchemas } = require("@ag-ui/core/schemas");
	    let bad = 0;
	    for (const l of fs.readFileSync(process.argv[1], "utf8").split("\n")) {
	      if (!l) continue;
	      const r = EventSchemas.safeParse(JSON.parse(l));
	      if (!r.success) { bad++; console.error(l + ": " + r.error.message); }
	    }
	    process.exit(bad ? 1 : 0);
	' "$BATS_TEST_TMPDIR/all.ndjson"
}

@test "Chromium: the page sends a message and shows the tool call, its result and the answer" {
	need_chromium
	serve_start
	run timeout 90 node "$top_srcdir/tests/helpers/agui-page.mjs" "$url" calc 'What is 17*23?'
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -c '.messages' <<<"$output")" \
	    '[["user","What is 17*23?"],["tool","→ calc {\"expr\":\"17*23\"}"],["tool","← 391"],["assistant","17*23 = 391"]]'
	assert_eq "$(jq -c '[.errors, (.branches | length)]' <<<"$output")" '[[],1]'
	# The page's thread is a session in the store, its answer recorded.
	thread=$(jq -r .thread <<<"$output")
	assert_eq "$(agentrt-session show "$thread" | jq -r .turn_status)" completed
}

@test "Chromium: the page asks the approval the run parks on; Allow runs the tool" {
	need_chromium
	serve_start
	run timeout 90 node "$top_srcdir/tests/helpers/agui-page.mjs" "$url" guarded 'six times seven' approve
	[ "$status" -eq 0 ] || fail "$output"
	assert_eq "$(jq -c '.messages[-1]' <<<"$output")" '["assistant","calc said: 42"]'
	assert_eq "$(jq -c '[.messages[] | select(.[0] == "tool") | .[1]]' <<<"$output")" \
	    '["→ calc {\"expr\":\"6*7\"}","← 42"]'
	assert_eq "$(jq -c '.errors' <<<"$output")" '[]'
}
