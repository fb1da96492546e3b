#!/usr/bin/env bash
# chat.sh - a long-lived client of an agentrt ring, in bash
#
# Usage: chat.sh AGENT [SESSION]
#
# Reads one user message a line on stdin and prints each turn as a person
# reads it: the tool calls, their results, then the answer.  A line that
# starts with '{' is sent as it is, as a ClientInput line of its own (an
# interrupt.resume, a client.messages view, a tool.result).  With SESSION
# it continues that session, else it starts one of AGENT; it says the id
# on stderr.  Its exit status is the last turn's (0 completed, 1 failed,
# 3 parked).
#
# The ring runs in a bash coprocess that lives as long as the client: the
# client writes it one ClientInput line per message and reads the turn's
# client events (agentrt-session run --events) back, until the line
# {"type":"chat.turn_over","status":N} that the coprocess adds when the
# ring has ended.  agentrt-session run ends once its turn is over, so the
# coprocess starts the ring again for each line.  The binaries must be on
# PATH, and AGENTRT_AGENTS and AGENTRT_TOOLS (or ./agents and ./tools)
# must find the agent and its tools.

set -u

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo 'usage: chat.sh AGENT [SESSION]' >&2
	exit 2
fi
agent=$1
if [ $# -eq 2 ]; then
	sid=$2
else
	sid=$(agentrt-session new -a "$agent") || exit 1
fi
echo "chat.sh: session $sid" >&2

dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/ring" || exit 1

# The ring: one ClientInput line in, the turn's events out on fd 3 (the
# coprocess's stdout), then the line that says the ring has ended.
coproc RING {
	while IFS= read -r input; do
		agentrt-decide <"$dir/ring" | agentrt-llm | agentrt-tool |
		    agentrt-session run -s "$sid" --input "$input" \
		    --events /dev/fd/3 3>&1 >"$dir/ring"
		printf '{"type":"chat.turn_over","status":%d}\n' "$?"
	done
}

# How an event reads: the calls in each assistant message (tools and
# sub-agents alike), each answer, and the root session's result; a
# sub-agent's own (another session_id) indented.
render='
(if .session_id == $sid then "" else "  " end) as $in |
def text: if type == "string" then . else map(.text // "[\(.type)]") | join("") end;
if .type == "message" and .message.role == "assistant" then
	.message.tool_calls[]? | "\($in)→ \(.function.name) \(.function.arguments)"
elif .type == "message" and .message.role == "tool" then
	"\($in)← \(.message.name): \(.message.content | text)"
elif .type == "status" and .status == "suspended" then
	"\($in)parked: \(.reason) (resume: {\"type\":\"interrupt.resume\",\"interrupt_id\":\"\(.interrupt_id)\",\"payload\":...})"
elif .type == "completion" and .session_id == $sid then
	if .error then "turn failed: \(.error)" else .text end
else empty end'

status=0
while IFS= read -r text; do
	[ -n "$text" ] || continue
	case $text in
	'{'*)	line=$text ;;
	*)	line=$(jq -nc --arg a "$agent" --arg t "$text" \
		    '{type: "client.message", agent_id: $a,
		      message: {role: "user", content: $t}}') ;;
	esac
	printf '%s\n' "$line" >&"${RING[1]}"
	while IFS= read -r event <&"${RING[0]}"; do
		case $event in
		'{"type":"chat.turn_over",'*)
			status=$(jq -r .status <<<"$event")
			break ;;
		esac
		jq -r --arg sid "$sid" "$render" <<<"$event"
	done
done
fd=${RING[1]}
exec {fd}>&-
wait
exit "$status"
