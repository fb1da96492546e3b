# require-tool.jq - no final answer before at least one tool call
#
#   agentrt-decide -f require-tool.jq [--argjson nudges N]
#
# When the model answers without calling a tool and no tool result is on
# the transcript since the user last spoke, its answer is recorded with a
# user nudge after it and the model is called again, instead of ending the
# turn.  After N nudges in a turn (N defaults to 1) the answer stands, so a
# model that never calls a tool cannot loop.  Otherwise the proposal is the
# answer, and a request without one is passed on.

def nudge: "[require-tool] Call a tool before you answer.";

# The messages after the last user message that is not a nudge.
def this_turn:
  reduce .[] as $m ([];
    if $m.role == "user" and $m.content != nudge then [] else . + [$m] end);

($ARGS.named.nudges // 1) as $nudges
| (.proposed // {}) as $p
| if ($p | has("messages") or has("actions") or has("state") or has("agent"))
    | not
  then empty
  elif .trigger.type == "llm.finished" and .trigger.ok
    and (.trigger.truncated | not)
    and ((.trigger.message.tool_calls // []) | length) == 0
  then
    ($p.messages // .messages // [] | this_turn) as $turn
    | if any($turn[]; .role == "tool")
        or ([$turn[] | select(.role == "user")] | length) >= $nudges
      then $p
      else $p | .messages += [{role: "user", content: nudge}]
              | .actions = [{type: "llm.call"}]
      end
  else $p
  end
