/* mock.h - the offline model: echo the user, or play a script */
#ifndef ART_MOCK_H
#define ART_MOCK_H

#include <stdint.h>

#include <jv.h>

#include "err.h"
#include "llm.h"

/*
 * mock/echo answers with the last user message's text.  A request with a
 * response_format gets that text as JSON the format can take: when the
 * schema's properties have "todos", {"todos": [{"title": text}]}; else
 * when they have "summary", {"summary": text}; else the text as a JSON
 * string.  mock/script plays a script, a JSON array of steps, so tests
 * and demos can drive tool loops, parallel tool calls, failures and
 * retries without a network:
 *
 *	{"content": "text"}		a reply; {{user}} and {{tool}} in
 *					it become the last user message's
 *					text and the last tool result's
 *	{"json": VALUE}			a reply whose content is VALUE (any
 *					JSON) dumped compactly: a structured
 *					answer or a plan, written readably,
 *					its strings' placeholders filled as
 *					content's are; not with "content"
 *	{"tool_calls": [{"name": "calc", "arguments": {...}}, ...]}
 *					tool calls (content may come too)
 *	{"error": "msg", "retryable": true, "code": "rate_limited",
 *	 "retry_after_ms": N, "times": K}
 *					an error on attempts 1..K (every
 *					attempt without times), then the
 *					step's other fields
 *	{"finish_reason": "length"}	a truncated reply
 *	{"delay_ms": N}			the answer waits N ms
 *
 * The mock remembers nothing between calls: a call's step is the number of
 * assistant messages after the last user message in its request, so every
 * turn starts at step 0 and each model call of a tool loop moves one on.
 * A call that asks again for a structured answer (its request's
 * "answer_retry") is counted without its last message, the correction,
 * so it plays the step after the reply it mends.
 */

/* The provider table art_llm dispatches "mock/..." models to. */
extern const struct art_llm_provider art_mock_provider;

struct art_mock;

/*
 * A mock.  script (consumed), when not null, is played for every
 * mock/script call, whatever the call's settings say.  NULL with err
 * "bad_script" when script is neither null nor an array.
 */
struct art_mock *art_mock_new(jv script, struct art_err *);
void	art_mock_free(struct art_mock *);

/*
 * Reads a script file: one JSON array.  Returns it (caller owns), or
 * jv_invalid() with err "io" ("read mock script 'f': ...") or
 * "bad_script" ("mock script 'f': ...").
 */
jv	art_mock_read_script(const char *path, struct art_err *);

/*
 * Answers call as model ("mock/echo" or "mock/script") into out, which
 * the caller has _init'ed.  The script is, first found: the one given to
 * art_mock_new(), call->mock's "script", or the file named by call->mock's
 * "script_file" (relative to the current directory, read once and kept
 * by path).  A script's errors are error outcomes; -1 with err is for
 * what cannot be answered: an unknown mock model, no script, a bad
 * script or step ("mock script step 1: field 'content': expected string,
 * got number"; "mock script step 0: fields 'content' and 'json'
 * together: ..."), or a step past the end ("mock script has no step 3").
 */
int	art_mock_answer(struct art_mock *, const struct art_llm_call *,
	    const char *model, struct art_llm_outcome *, struct art_err *);

/* The script step request (borrowed, an LlmRequest) stands at, from 0. */
int64_t	art_mock_step(const jv *request);

/*
 * The StreamDeltas a streaming answer of response (borrowed) sends: its
 * content cut after each run of spaces, then one delta per tool call
 * {"tool_calls":[{"id","name","arguments"}]}.  The texts join to the
 * content.  Returns a new array.
 */
jv	art_mock_deltas(const jv *response);

#endif
