# cap-model-calls.jq - end a turn after at most N model calls
#
#   agentrt-decide -f cap-model-calls.jq [--argjson max N]
#
# N defaults to 8.  The model calls made in this turn are the assistant
# messages on the transcript since the last user message.  Once there are
# N of them, a proposed llm.call (call N+1) becomes a done with a note, so
# the turn ends instead.  Otherwise the proposal is the answer, and a
# request without one (tool.execute, llm.execute) is passed on.

($ARGS.named.max // 8) as $max
| (.proposed // {}) as $p
| if ($p | has("messages") or has("actions") or has("state") or has("agent"))
    | not
  then empty
  else
    # Proposals carry the whole transcript, the news included.
    (reduce ($p.messages // .messages // [])[] as $m (0;
        if $m.role == "user" then 0
        elif $m.role == "assistant" then . + 1
        else . end)) as $made
    | if $made >= $max and ($p | has("actions")) then
        $p | .actions |= map(
          if .type == "llm.call" then
            {type: "done",
             data: {note: "model call cap reached: \($made) of \($max)"}}
          else . end)
      else $p
      end
  end
