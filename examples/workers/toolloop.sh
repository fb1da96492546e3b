#!/usr/bin/env bash
# toolloop.sh - an agentrt decision worker: a tool loop in bash and jq
#
#   agentrt-decide --exec 'bash examples/workers/toolloop.sh [MAX]' | ...
#
# Reads one decision.request a line on stdin and writes one answer a line:
# a bare DecisionResponse, or null to pass the request on (tool.execute and
# llm.execute, which agentrt-tool and agentrt-llm run).  It builds its own
# answers instead of taking .proposed, and keeps {"model_calls": n} in the
# session's state: after MAX model calls in a turn (default 8) it ends the
# turn instead of calling the model again.  One long-lived jq does the work.
# It knows tools, not sub-agents: leave agents that delegate to a later,
# plain agentrt-decide stage (--agent ID picks the agents a stage serves).
max=${1:-${TOOLLOOP_MAX_CALLS:-8}}
exec jq --unbuffered -c --argjson max "$max" '
  def calls: if (.state | type) == "object" then .state.model_calls // 0 else 0 end;
  # Record $msgs and ask the model about them, unless the cap is reached.
  def ask($msgs; $n):
    if $n >= $max then {messages: $msgs, actions: [{type: "done",
        data: "toolloop: stopped after \($n) model calls"}]}
    else {messages: $msgs, state: {model_calls: ($n + 1)}, actions: [{
        type: "llm.call", stream: (.agent.stream // false),
        messages: ([.agent.system // empty | {role: "system", content: .}] + $msgs)}]}
    end;
  def start_tools: [.tool_calls[] |
    {type: "tool.call", id, name: .function.name, arguments: .function.arguments}];
  .trigger as $t | try (
    if .type != "decision.request" then null
    elif $t.type == "session.start" then {agent: .proposed.agent}
    elif $t.type == "client.messages" then ask($t.messages; 0)
    elif $t.type == "llm.finished" and $t.ok and ($t.truncated | not) then
      (.messages + [$t.message]) as $msgs
      | if ($t.message.tool_calls // []) == [] then
          {messages: $msgs, actions: [{type: "done", data: $t.message.content}]}
        else {messages: $msgs, actions: ($t.message | start_tools)} end
    elif $t.type == "llm.finished" then {actions: [{type: "interrupt",
        reason: "llm call failed: \($t.error // "truncated")",
        payload: {type: "llm.failed", id: $t.id, error: $t.error, truncated: $t.truncated}}]}
    elif $t.type == "tool.finished" then
      (.messages + [{role: "tool", tool_call_id: $t.id, name: $t.name,
          content: ($t.result // $t.error // "")}]) as $msgs
      | if .pending_calls > 0 then {messages: $msgs} else ask($msgs; calls) end
    elif $t.type == "interrupt.resumed" then ask(.messages; calls)
    elif $t.type == "client.action" then {}
    else null end   # tool.execute, llm.execute: for the stages after us
  ) catch {type: "decision.error", error: "toolloop: \(.)", retryable: false}'
