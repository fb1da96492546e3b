/* wire.h - a model provider's HTTP wire format, spoken both ways */
#ifndef ART_WIRE_H
#define ART_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"
#include "sse.h"

/*
 * A wire format turns the seed's neutral shapes (LlmRequest, LlmResponse,
 * StreamDelta) into one provider's request and response bodies and back,
 * and maps the provider's failures to the seed's error object.  It does no
 * I/O: the HTTP is the caller's, so every function here is tested on bytes.
 *
 * An error object is what an llm.error line carries:
 *
 *	{ "error": "openai 429: Rate limit reached for ...",
 *	  "retryable": true, "code": "rate_limited",
 *	  "retry_after_ms": 2000,		(only when known)
 *	  "detail": { "status": 429, "error": <the provider's error> } }
 *
 * "error" starts with the format's name and the HTTP status when there is
 * one ("anthropic 529: Overloaded", "openai: stream error: ..."), then the
 * provider's own message.  "code" is one of the seed's ErrorCodes:
 * rate_limited (429), budget_exceeded (a quota, not a rate), refused (the
 * model refused), provider_error (everything else).  Retryable: 408, 409,
 * 429 (but not a quota), 5xx, 529, an overloaded or server error inside a
 * stream, a body that is not JSON.  Not retryable: other 4xx, a refusal,
 * JSON that is not the provider's shape.
 *
 * Usage comes back normalised, so totals add up across providers:
 *
 *	{ "input": all input tokens, cached ones included,
 *	  "uncached_input": input - cache_read - cache_write,
 *	  "cache_read": N, "cache_write": N,
 *	  "output": N, "total": input + output,
 *	  "provider": <the provider's usage object, as it came> }
 *
 * Anthropic's thinking comes back as "reasoning" (its text) and as
 * "thinking_blocks" (agentrt's extension: the thinking and
 * redacted_thinking blocks as the API gave them, signatures and data
 * included, in order), which request() sends back first in that
 * assistant message's content; other formats drop them.
 *
 * OpenAI's prompt_tokens already holds the cached tokens
 * (prompt_tokens_details.cached_tokens); Anthropic's input_tokens does not
 * (input = input_tokens + cache_read_input_tokens +
 * cache_creation_input_tokens).  A response without usage has none.
 */

struct art_wire_stream;

struct art_wire {
	const char	*name;		/* "openai", "anthropic" */

	/*
	 * Where the format's own provider lives, and how a key goes with a
	 * request: the data remote.c reads instead of asking which format it
	 * holds.  A provider block's base_url and api_key_env override the
	 * first three; base_url_env names the variable that overrides
	 * base_url for the built-in provider of this name.
	 */
	const char	*base_url;	/* "https://api.openai.com/v1" */
	const char	*base_url_env;	/* "OPENAI_BASE_URL" */
	const char	*key_env;	/* "OPENAI_API_KEY" */
	const char	*path;		/* appended to the base URL */
	const char	*key_header;	/* the header the key goes in */
	const char	*key_prefix;	/* before the key in it: "Bearer " */
	/*
	 * The variable of a bearer token the built-in provider also sends,
	 * as "Authorization: Bearer TOKEN" ("ANTHROPIC_AUTH_TOKEN"), or NULL.
	 */
	const char	*token_env;
	/*
	 * A header every request carries, its value from the provider
	 * block's member of the same name with '-' as '_', else the default
	 * ("anthropic-version": "2023-06-01").  NULL: none.
	 */
	const char	*version_header;
	const char	*version_default;
	/*
	 * What a provider-native body that asks for a stream adds beside
	 * "stream": true, as JSON text ("stream_options"), or NULL.
	 */
	const char	*stream_options;

	/*
	 * The request body for req (an LlmRequest, borrowed) naming model
	 * (the part after "provider/").  With stream, the body asks for a
	 * stream (OpenAI: with stream_options.include_usage); without, it
	 * has no "stream" key at all.  jv_invalid() with err "bad_request"
	 * naming what cannot be said in this format.
	 */
	jv	 (*request)(const jv *req, const char *model, bool stream,
		    struct art_err *);
	/*
	 * When the format turns each message into one message of its own
	 * (OpenAI), request's "messages" holds exactly what this gives for
	 * each, i its index: so a body can be built from the one before,
	 * converting only the messages it adds.  NULL when messages do not
	 * map one to one (Anthropic merges tool results).
	 */
	jv	 (*message)(const jv *msg, int i, struct art_err *);

	/*
	 * A 2xx response body (bytes, not yet parsed) as an LlmResponse,
	 * with the provider's "id" and its own "model" name.  A refusal is
	 * a response: the partial "content", the model's words in
	 * "refusal", finish_reason "refusal" (or "content_filter" as sent).
	 * Returns 0 with *resp set, or -1 with *error set to an error object
	 * (a body that is not JSON, JSON of the wrong shape).
	 * Exactly one of the two is set, and the caller owns it.
	 */
	int	 (*response)(const char *body, size_t len, jv *resp, jv *error);

	/*
	 * The provider's own response body for resp (an LlmResponse,
	 * borrowed): what a worker-run call with this format is answered
	 * with after a stream.  A new jv.
	 */
	jv	 (*native)(const jv *resp);

	/*
	 * For a call whose LlmRequest has a response_format named name:
	 * resp (what response() or stream_result() gave, consumed) with the
	 * answer the model gave through the format's own means (Anthropic:
	 * a call of the forced tool name) as "content", the JSON text of
	 * the object, and gone from "tool_calls".  A new jv.  NULL when the
	 * format answers in content already (OpenAI's json_schema).
	 */
	jv	 (*answer)(jv resp, const char *name);

	/*
	 * The error object for an HTTP status that is not 2xx.  headers is
	 * an object of lower-cased header names to values (borrowed); the
	 * retry delay comes from retry-after-ms, then retry-after (seconds
	 * or an HTTP-date), then the provider's reset headers, against
	 * now_ms (epoch milliseconds).  body may be anything, or empty.
	 */
	jv	 (*error)(long status, const jv *headers, const char *body,
		    size_t len, int64_t now_ms);

	/* A stream's state, one per call.  NULL when out of memory. */
	struct art_wire_stream *(*stream_new)(void);
	void	 (*stream_free)(struct art_wire_stream *);
	/*
	 * Tells st, before its first event, its call's response_format name
	 * (copied), so the answer streams as {text} deltas of its JSON and
	 * not as a tool call's.  NULL when answer is.
	 */
	void	 (*stream_answer)(struct art_wire_stream *, const char *name);

	/*
	 * One Server-Sent Event of a streamed response.  Appends to *deltas
	 * (an array the caller owns) a StreamDelta for what the event
	 * carries, if anything: {text}, {reasoning}, {tool_calls: [{id,
	 * name?, arguments?}]} (every fragment names its call's id, even
	 * where the provider gives only an index), {finish_reason}
	 * (normalised).  Returns 0 to go on, 1 when the event ends the
	 * stream (OpenAI's [DONE], Anthropic's message_stop), or -1 with
	 * *error set to an error object (an error event, a data line that
	 * is not the provider's JSON).
	 */
	int	 (*stream_event)(struct art_wire_stream *,
		    const struct art_sse_event *, jv *deltas, jv *error);

	/*
	 * The LlmResponse the events so far add up to, the same one the
	 * non-streaming call would have given, usage included.  Returns 0
	 * with *resp, or -1 with *error: the stream did not get as far as
	 * its finish (no finish_reason, no message_delta stop_reason), which
	 * is a retryable provider_error ("stream ended early"), never a
	 * truncated success.  A refusal is a response, as for response().
	 */
	int	 (*stream_result)(struct art_wire_stream *, jv *resp,
		    jv *error);
};

extern const struct art_wire art_openai_wire;
extern const struct art_wire art_anthropic_wire;

/*
 * The error object {error, retryable, code} for msg (a string, consumed):
 * what every failure here is built on.
 */
jv	art_wire_error(jv msg, bool retryable, const char *code);

/* The wire format called name, or NULL. */
const struct art_wire *art_wire_find(const char *name);

/*
 * Milliseconds a failed call should wait from a Retry-After value
 * (seconds, possibly fractional, or an HTTP-date) at now_ms; -1 when the
 * value is neither.  Never negative otherwise.
 */
int64_t	art_wire_retry_after(const char *value, int64_t now_ms);

#endif
