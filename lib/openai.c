/* openai.c - the OpenAI Chat Completions wire format
 *
 * The seed's shapes are Chat Completions' own with the tools flattened, so
 * a request is mostly a copy that keeps only the fields the API knows.
 * Every way back in goes through one reader of a chat.completion body:
 * response() parses one, native() writes one, and a stream is added up
 * into the body the same answer would have had unstreamed before it is
 * read.  So response(native(x)) is x, and a stream and a plain call cannot
 * drift apart.  OpenAI-compatible servers (vLLM, DeepSeek, Ollama) send
 * their thinking as reasoning_content or reasoning; both are read.
 */
#include "wire.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "parts.h"

#define QUOTE_MAX	200	/* bytes quoted of a body that says nothing */
#define MAX_CALLS	1024	/* a tool call index past this is garbage */
#define MAX_DELAY_MS	1e15	/* some 30000 years: a delay past it is noise */

struct art_wire_stream {
	jv	 id;		/* the chunks' id, or null */
	jv	 model;		/* the chunks' model, or null */
	jv	 usage;		/* the usage chunk's object, or null */
	jv	 text;		/* delta.content, joined */
	jv	 reasoning;	/* delta.reasoning_content or reasoning */
	jv	 refusal;	/* delta.refusal, joined */
	jv	 calls;		/* by index: {id, name, arguments}, or null */
	jv	 finish;	/* the finish_reason once one came, or null */
};

/* --- small helpers --------------------------------------------------- */



static bool
has(const jv *obj, const char *key)
{
	return jv_get_kind(*obj) == JV_KIND_OBJECT &&
	    jv_object_has(jv_copy(*obj), jv_string(key));
}

static bool
is(const char *s, const char *want)
{
	return s != NULL && strcmp(s, want) == 0;
}

/* obj's field when it is a string of at least one byte, else jv_null(). */
static jv
nonempty(const jv *obj, const char *key)
{
	jv v = art_json_field(obj, key);

	if (jv_get_kind(v) == JV_KIND_STRING &&
	    jv_string_length_bytes(jv_copy(v)) > 0)
		return v;
	jv_free(v);
	return jv_null();
}

static bool
is_null(const jv *v)
{
	return jv_get_kind(*v) == JV_KIND_NULL;
}

/* A message's or delta's thinking, under either compatible name. */
static jv
reasoning_of(const jv *obj)
{
	jv r = nonempty(obj, "reasoning_content");

	if (!is_null(&r))
		return r;
	return nonempty(obj, "reasoning");
}

/* Tool arguments as the string the seed carries; some servers send JSON. */
static jv
args_text(jv a)
{
	switch (jv_get_kind(a)) {
	case JV_KIND_STRING:
		return a;
	case JV_KIND_NULL:
	case JV_KIND_INVALID:
		jv_free(a);
		return jv_string("");
	default:
		return jv_dump_string(a, 0);
	}
}

/* An error object {error, retryable, code}. */
static jv __attribute__((format(printf, 3, 4)))
fail(bool retryable, const char *code, const char *fmt, ...)
{
	va_list ap;
	jv msg;

	va_start(ap, fmt);
	msg = jv_string_vfmt(fmt, ap);
	va_end(ap);
	return art_wire_error(msg, retryable, code);
}

static jv __attribute__((format(printf, 2, 3)))
bad(struct art_err *err, const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	art_err_set(err, "bad_request", "openai: %s", msg);
	return jv_invalid();
}

/* body[0..len), which need not end in a NUL, parsed. */
static jv
parse(const char *body, size_t len, struct art_err *err)
{
	char *copy;
	jv v;

	/* libjq 1.6 reads its input as a C string when it fails. */
	if ((copy = malloc(len + 1)) == NULL) {
		art_err_set(err, "nomem", "out of memory");
		return jv_invalid();
	}
	if (len > 0)
		memcpy(copy, body, len);
	copy[len] = '\0';
	v = art_json_parse(copy, len, err);
	free(copy);
	return v;
}

/* art_json_parse()'s reason, without its "not valid JSON: " opening. */
static const char *
why_not_json(const struct art_err *err)
{
	static const char lead[] = "not valid JSON: ";

	if (strncmp(err->msg, lead, sizeof(lead) - 1) == 0)
		return err->msg + sizeof(lead) - 1;
	return err->msg;
}

/* --- request --------------------------------------------------------- */

/* Copies msg's optional string field key into *out. */
static int
copy_str(jv *out, const jv *msg, const char *key, int i, struct art_err *err)
{
	const char *s = NULL;
	struct art_err e;

	if (art_json_get_str(msg, key, 0, &s, &e) == -1) {
		bad(err, "messages[%d]: %s", i, e.msg);
		return -1;
	}
	if (s != NULL)
		*out = art_json_set(*out, key, jv_string(s));
	return 0;
}

/* msg's content: a string, null or parts as they are; absent stays so. */
static int
copy_content(jv *out, const jv *msg, int i, struct art_err *err)
{
	jv c = art_json_field(msg, "content");
	jv_kind k = jv_get_kind(c);

	if (k != JV_KIND_STRING && k != JV_KIND_ARRAY && k != JV_KIND_NULL) {
		jv_free(c);
		bad(err, "messages[%d]: content: expected a string, an array "
		    "or null, got %s", i, art_json_kind_name(k));
		return -1;
	}
	/* Chat Completions wants an assistant's content, if only null, and
	 * takes no image from it. */
	if (is(art_json_str(msg, "role"), "assistant"))
		*out = art_json_set(*out, "content", art_parts_assistant(c));
	else if (has(msg, "content"))
		*out = art_json_set(*out, "content", c);
	else
		jv_free(c);
	return 0;
}

static int
copy_tool_calls(jv *out, const jv *msg, int i, struct art_err *err)
{
	jv tc = art_json_field(msg, "tool_calls");
	jv_kind k = jv_get_kind(tc);

	if (k != JV_KIND_ARRAY && k != JV_KIND_NULL) {
		jv_free(tc);
		bad(err, "messages[%d]: tool_calls: expected an array, got %s",
		    i, art_json_kind_name(k));
		return -1;
	}
	/* The API takes no empty tool_calls array. */
	if (k == JV_KIND_ARRAY && jv_array_length(jv_copy(tc)) > 0)
		*out = art_json_set(*out, "tool_calls", tc);
	else
		jv_free(tc);
	return 0;
}

/*
 * A DraftMessage as a Chat Completions message: our "id" stays behind,
 * and so do Anthropic's signed "thinking_blocks", which no other
 * provider can read (a fallback after an Anthropic reply goes on).
 */
static jv
message_out(const jv *msg, int i, struct art_err *err)
{
	const char *role = art_json_str(msg, "role");
	jv out;

	if (jv_get_kind(*msg) != JV_KIND_OBJECT)
		return bad(err, "messages[%d]: expected an object, got %s", i,
		    art_json_kind_name(jv_get_kind(*msg)));
	if (role == NULL)
		return bad(err, "messages[%d]: no string 'role'", i);
	out = art_json_set(jv_object(), "role", jv_string(role));
	if (copy_content(&out, msg, i, err) == -1 ||
	    copy_str(&out, msg, "name", i, err) == -1 ||
	    copy_tool_calls(&out, msg, i, err) == -1 ||
	    copy_str(&out, msg, "tool_call_id", i, err) == -1) {
		jv_free(out);
		return jv_invalid();
	}
	return out;
}

static jv
text_part(jv text)
{
	return art_json_set(art_json_set(jv_object(), "type",
	    jv_string("text")), "text", text);
}

/*
 * A tool message takes text only on this wire, so each image part of
 * out's content (a tool message's) moves to *images, to go in a user
 * message after the tool messages, and the tool message says where it
 * went.  Its content becomes one string.  n counts images so far.
 */
static jv
tool_images_out(jv out, jv *images, int *n)
{
	jv c = art_json_field(&out, "content"), text = jv_string(""), img, t;
	const char *id = art_json_str(&out, "tool_call_id");
	int k = 0;

	if (jv_get_kind(c) != JV_KIND_ARRAY) {
		jv_free(c);
		jv_free(text);
		return out;
	}
	jv_array_foreach(c, j, part) {
		if (k++ > 0)
			text = jv_string_append_str(text, "\n");
		if (is(art_json_str(&part, "type"), "image_url")) {
			++*n;
			text = jv_string_concat(text, jv_string_fmt("[image %d: "
			    "in the user message after the tool results]", *n));
			img = text_part(jv_string_fmt("[image %d, from tool call "
			    "%s]", *n, id != NULL ? id : "?"));
			*images = jv_array_append(jv_array_append(*images, img),
			    part);
			continue;
		}
		/* A part of another kind (file, audio…) is named, not sent. */
		if ((t = art_json_field(&part, "text"), jv_get_kind(t)) !=
		    JV_KIND_STRING) {
			jv_free(t);
			t = jv_string_fmt("[%s part]", art_json_str(&part,
			    "type") != NULL ? art_json_str(&part, "type") :
			    "unknown");
		}
		text = jv_string_concat(text, t);
		jv_free(part);
	}
	jv_free(c);
	return art_json_set(out, "content", text);
}

/* The user message carrying images, if any; *images is emptied. */
static jv
flush_images(jv out, jv *images)
{
	if (jv_array_length(jv_copy(*images)) == 0)
		return out;
	out = jv_array_append(out, art_json_set(art_json_set(jv_object(),
	    "role", jv_string("user")), "content", *images));
	*images = jv_array();
	return out;
}

static jv
messages_out(const jv *req, struct art_err *err)
{
	jv msgs = art_json_field(req, "messages"), out, m, images;
	int n = 0;

	if (jv_get_kind(msgs) != JV_KIND_ARRAY) {
		jv_free(msgs);
		return bad(err, "request has no 'messages' array");
	}
	out = jv_array();
	images = jv_array();
	jv_array_foreach(msgs, i, msg) {
		m = message_out(&msg, i, err);
		if (!jv_is_valid(m)) {
			jv_free(msg);
			jv_free(out);
			out = m;
			break;
		}
		if (!is(art_json_str(&msg, "role"), "tool"))
			out = flush_images(out, &images);
		else if (art_parts_has_image(&msg))
			m = tool_images_out(m, &images, &n);
		jv_free(msg);
		out = jv_array_append(out, m);
	}
	if (jv_is_valid(out))
		out = flush_images(out, &images);
	jv_free(images);
	jv_free(msgs);
	return out;
}

/* {name, description, input} as {type: "function", function: {...}}. */
static jv
tool_out(const jv *tool, int i, struct art_err *err)
{
	const char *name = NULL, *desc = NULL;
	struct art_err e;
	jv fn, params;

	if (jv_get_kind(*tool) != JV_KIND_OBJECT)
		return bad(err, "tools[%d]: expected an object, got %s", i,
		    art_json_kind_name(jv_get_kind(*tool)));
	if (art_json_get_str(tool, "name", 1, &name, &e) == -1 ||
	    art_json_get_str(tool, "description", 0, &desc, &e) == -1)
		return bad(err, "tools[%d]: %s", i, e.msg);
	if (*name == '\0')
		return bad(err, "tools[%d]: empty 'name'", i);
	params = art_json_field(tool, "input");
	if (is_null(&params)) {
		jv_free(params);
		params = art_json_set(jv_object(), "type", jv_string("object"));
		params = art_json_set(params, "properties", jv_object());
	} else if (jv_get_kind(params) != JV_KIND_OBJECT) {
		jv_free(params);
		return bad(err, "tools[%d]: input: expected an object", i);
	}
	fn = art_json_set(jv_object(), "name", jv_string(name));
	if (desc != NULL)
		fn = art_json_set(fn, "description", jv_string(desc));
	fn = art_json_set(fn, "parameters", params);
	return art_json_set(art_json_set(jv_object(), "type",
	    jv_string("function")), "function", fn);
}

/* The tools, or jv_null() when there are none (the API takes no []). */
static jv
tools_out(const jv *req, struct art_err *err)
{
	jv tools = art_json_field(req, "tools"), out, t;

	if (is_null(&tools))
		return tools;
	if (jv_get_kind(tools) != JV_KIND_ARRAY) {
		jv_free(tools);
		return bad(err, "tools: expected an array");
	}
	out = jv_array();
	jv_array_foreach(tools, i, tool) {
		t = tool_out(&tool, i, err);
		jv_free(tool);
		if (!jv_is_valid(t)) {
			jv_free(out);
			out = t;
			break;
		}
		out = jv_array_append(out, t);
	}
	jv_free(tools);
	if (jv_is_valid(out) && jv_array_length(jv_copy(out)) == 0) {
		jv_free(out);
		return jv_null();
	}
	return out;
}

/* temperature, max_completion_tokens and reasoning.effort, when given. */
static int
options_out(jv *body, const jv *req, struct art_err *err)
{
	jv temp = jv_null(), reasoning = jv_null();
	const char *effort = NULL;
	int64_t max = INT64_MIN;
	struct art_err e;

	if (art_json_get_kind(req, "temperature", JV_KIND_NUMBER, 0, &temp,
	    &e) == -1 ||
	    art_json_get_int(req, "max_completion_tokens", 0, &max, &e) == -1 ||
	    art_json_get_kind(req, "reasoning", JV_KIND_OBJECT, 0, &reasoning,
	    &e) == -1 ||
	    art_json_get_str(&reasoning, "effort", 0, &effort, &e) == -1) {
		jv_free(temp);
		jv_free(reasoning);
		bad(err, "%s", e.msg);
		return -1;
	}
	if (!is_null(&temp))
		*body = art_json_set(*body, "temperature", temp);
	if (max != INT64_MIN)
		*body = art_json_set(*body, "max_completion_tokens",
		    jv_number((double)max));
	if (effort != NULL)
		*body = art_json_set(*body, "reasoning_effort",
		    jv_string(effort));
	jv_free(reasoning);
	return 0;
}

/*
 * agentrt's response_format {name, description?, schema} as Chat
 * Completions' json_schema one, or jv_null() when the request has none.
 * strict stays off: strict mode wants every property required and
 * additionalProperties false at every level, which the schemas agentrt
 * asks for (optional members) do not meet; the answer is checked after.
 */
static jv
response_format_out(const jv *req, struct art_err *err)
{
	jv rf = jv_null(), schema = jv_null(), js;
	const char *name = NULL, *desc = NULL;
	struct art_err e;

	if (art_json_get_kind(req, "response_format", JV_KIND_OBJECT, 0, &rf,
	    &e) == -1)
		return bad(err, "%s", e.msg);
	if (is_null(&rf))
		return rf;
	if (art_json_get_str(&rf, "name", 1, &name, &e) == -1 ||
	    art_json_get_str(&rf, "description", 0, &desc, &e) == -1 ||
	    art_json_get_kind(&rf, "schema", JV_KIND_OBJECT, 1, &schema,
	    &e) == -1) {
		jv_free(rf);
		return bad(err, "response_format: %s", e.msg);
	}
	if (*name == '\0') {
		jv_free(rf);
		jv_free(schema);
		return bad(err, "response_format: empty 'name'");
	}
	js = art_json_set(jv_object(), "name", jv_string(name));
	if (desc != NULL)
		js = art_json_set(js, "description", jv_string(desc));
	js = art_json_set(js, "schema", schema);
	js = art_json_set(js, "strict", jv_false());
	jv_free(rf);
	return art_json_set(art_json_set(jv_object(), "type",
	    jv_string("json_schema")), "json_schema", js);
}

static jv
openai_request(const jv *req, const char *model, bool stream,
    struct art_err *err)
{
	jv body, v;

	if (jv_get_kind(*req) != JV_KIND_OBJECT)
		return bad(err, "request: expected an object, got %s",
		    art_json_kind_name(jv_get_kind(*req)));
	if (model == NULL && (model = art_json_str(req, "model")) == NULL)
		return bad(err, "request has no model");
	body = art_json_set(jv_object(), "model", jv_string(model));
	if (!jv_is_valid(v = messages_out(req, err)))
		return jv_free(body), v;
	body = art_json_set(body, "messages", v);
	if (!jv_is_valid(v = tools_out(req, err)))
		return jv_free(body), v;
	if (!is_null(&v))
		body = art_json_set(body, "tools", v);
	if (!jv_is_valid(v = response_format_out(req, err)))
		return jv_free(body), v;
	if (!is_null(&v))
		body = art_json_set(body, "response_format", v);
	else
		jv_free(v);
	if (options_out(&body, req, err) == -1)
		return jv_free(body), jv_invalid();
	if (stream) {
		body = art_json_set(body, "stream", jv_true());
		body = art_json_set(body, "stream_options",
		    art_json_set(jv_object(), "include_usage", jv_true()));
	}
	return body;
}

/* --- responses ------------------------------------------------------- */

static double
number(const jv *obj, const char *key)
{
	jv v = art_json_field(obj, key);
	double d = jv_get_kind(v) == JV_KIND_NUMBER ? jv_number_value(v) : 0;

	jv_free(v);
	return d;
}

/*
 * wire.h's usage for OpenAI's (borrowed).  prompt_tokens holds the cached
 * tokens, which OpenAI counts in prompt_tokens_details and DeepSeek in
 * prompt_cache_hit_tokens; nothing is ever written to a cache.
 */
static jv
usage_in(const jv *u)
{
	jv details = art_json_field(u, "prompt_tokens_details"), n;
	double in = number(u, "prompt_tokens");
	double out = number(u, "completion_tokens");
	double cached = has(&details, "cached_tokens") ?
	    number(&details, "cached_tokens") :
	    number(u, "prompt_cache_hit_tokens");

	jv_free(details);
	n = art_json_set(jv_object(), "input", jv_number(in));
	n = art_json_set(n, "uncached_input", jv_number(in - cached));
	n = art_json_set(n, "cache_read", jv_number(cached));
	n = art_json_set(n, "cache_write", jv_number(0));
	n = art_json_set(n, "output", jv_number(out));
	n = art_json_set(n, "total", jv_number(in + out));
	return art_json_set(n, "provider", jv_copy(*u));
}

/* A ToolCall {id, type: "function", function: {name, arguments}}. */
static jv
tool_call(const jv *tc)
{
	jv fn = art_json_field(tc, "function"), f, out;

	f = art_json_set(jv_object(), "name", art_json_field(&fn, "name"));
	f = art_json_set(f, "arguments", args_text(art_json_field(&fn,
	    "arguments")));
	jv_free(fn);
	out = art_json_set(jv_object(), "id", art_json_field(tc, "id"));
	out = art_json_set(out, "type", jv_string("function"));
	return art_json_set(out, "function", f);
}

/* obj's tool_calls as ToolCalls, or jv_null() when it has none. */
static jv
tool_calls(const jv *obj)
{
	jv tcs = art_json_field(obj, "tool_calls"), out = jv_array();

	if (jv_get_kind(tcs) == JV_KIND_ARRAY) {
		jv_array_foreach(tcs, i, tc) {
			if (jv_get_kind(tc) == JV_KIND_OBJECT)
				out = jv_array_append(out, tool_call(&tc));
			jv_free(tc);
		}
	}
	jv_free(tcs);
	if (jv_array_length(jv_copy(out)) == 0) {
		jv_free(out);
		return jv_null();
	}
	return out;
}

/*
 * The ErrorCode for a provider's error (borrowed) at an HTTP status, or at
 * status 0 inside a stream, where only the error's type can tell.
 */
static const char *
classify(long status, const jv *perr, bool *retryable)
{
	const char *type = art_json_str(perr, "type");
	const char *code = art_json_str(perr, "code");

	if (is(type, "insufficient_quota") || is(code, "insufficient_quota")) {
		*retryable = false;
		return "budget_exceeded";
	}
	if (status == 429 || (status == 0 && (is(code, "rate_limit_exceeded") ||
	    is(type, "rate_limit_exceeded") || is(type, "rate_limit_error") ||
	    is(type, "tokens") || is(type, "requests")))) {
		*retryable = true;
		return "rate_limited";
	}
	if (status == 0)
		*retryable = type == NULL || is(type, "server_error") ||
		    strstr(type, "overloaded") != NULL;
	else
		*retryable = status == 408 || status == 409 || status >= 500;
	return "provider_error";
}

/* The provider's words in its error (borrowed), or NULL. */
static const char *
error_message(const jv *perr)
{
	const char *m;

	if (jv_get_kind(*perr) == JV_KIND_STRING)
		return jv_string_value(*perr);
	if ((m = art_json_str(perr, "message")) != NULL && *m != '\0')
		return m;
	return NULL;
}

/* An error the provider put in a body or chunk that otherwise succeeded. */
static jv
inline_error(const jv *perr, const char *where)
{
	const char *msg = error_message(perr), *code;
	double c = number(perr, "code");
	long status = 0;
	bool retryable;
	jv e;

	/* vLLM names the status it would have sent as the error's code. */
	if (c >= 400 && c < 600)
		status = (long)c;
	code = classify(status, perr, &retryable);
	e = fail(retryable, code, "openai: %s: %s", where,
	    msg != NULL ? msg : "no message");
	return art_json_set(e, "detail", art_json_set(jv_object(), "error",
	    jv_copy(*perr)));
}

/* choices[0], or jv_null(). */
static jv
first_choice(const jv *body)
{
	jv choices = art_json_field(body, "choices"), c = jv_null();

	if (jv_get_kind(choices) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(choices)) > 0)
		c = jv_array_get(jv_copy(choices), 0);
	jv_free(choices);
	return c;
}

/* Where a chat.completion body (borrowed) lacks its message; NULL if not. */
static const char *
missing(const jv *body)
{
	jv choices = art_json_field(body, "choices"), c, m;
	const char *what = NULL;

	if (jv_get_kind(choices) != JV_KIND_ARRAY)
		what = "choices";
	else if (jv_array_length(jv_copy(choices)) == 0)
		what = "choices[0]";
	else {
		c = jv_array_get(jv_copy(choices), 0);
		m = art_json_field(&c, "message");
		if (jv_get_kind(m) != JV_KIND_OBJECT)
			what = "choices[0].message";
		jv_free(m);
		jv_free(c);
	}
	jv_free(choices);
	return what;
}

/*
 * The LlmResponse for a choice's message.  A refusal is an answer, not a
 * failure: what was said before it stays in content, the model's words
 * go in refusal (agentrt's member), and finish_reason says "refusal";
 * content_filter comes as sent.  The engine ends the turn on either.
 */
static jv
response_of(const jv *body, const jv *choice, const jv *msg)
{
	jv r = jv_object(), v, refusal = nonempty(msg, "refusal");

	r = art_json_set_some(r, "id", nonempty(body, "id"));
	r = art_json_set_some(r, "model", nonempty(body, "model"));
	r = art_json_set_some(r, "content", nonempty(msg, "content"));
	r = art_json_set_some(r, "reasoning", reasoning_of(msg));
	r = art_json_set_some(r, "tool_calls", tool_calls(msg));
	if (!is_null(&refusal))
		r = art_json_set(r, "finish_reason", jv_string("refusal"));
	else
		r = art_json_set_some(r, "finish_reason", nonempty(choice,
		    "finish_reason"));
	r = art_json_set_some(r, "refusal", refusal);
	v = art_json_field(body, "usage");
	if (jv_get_kind(v) == JV_KIND_OBJECT)
		r = art_json_set(r, "usage", usage_in(&v));
	jv_free(v);
	return r;
}

/*
 * Reads a chat.completion body (borrowed): the one way back in, for
 * response(), native()'s output and a stream added up.
 */
static int
completion_in(const jv *body, jv *resp, jv *error)
{
	const char *what;
	jv choice, msg, v;

	if (jv_get_kind(*body) != JV_KIND_OBJECT) {
		*error = fail(false, "provider_error", "openai: response is "
		    "%s, not an object",
		    art_json_kind_name(jv_get_kind(*body)));
		return -1;
	}
	v = art_json_field(body, "error");
	if (!is_null(&v)) {
		*error = inline_error(&v, "error");
		jv_free(v);
		return -1;
	}
	if ((what = missing(body)) != NULL) {
		*error = fail(false, "provider_error", "openai: response has "
		    "no %s", what);
		return -1;
	}
	choice = first_choice(body);
	msg = art_json_field(&choice, "message");
	*resp = response_of(body, &choice, &msg);
	jv_free(msg);
	jv_free(choice);
	return 0;
}

static int
openai_response(const char *body, size_t len, jv *resp, jv *error)
{
	struct art_err err;
	jv v = parse(body, len, &err);
	int rc;

	if (!jv_is_valid(v)) {
		*error = fail(true, "provider_error", "openai: response is not "
		    "JSON: %s", why_not_json(&err));
		return -1;
	}
	rc = completion_in(&v, resp, error);
	jv_free(v);
	return rc;
}

/* {id, object, model, choices: [{index, message, finish_reason}], usage?} */
static jv
completion_body(jv id, jv model, jv msg, jv finish, jv usage)
{
	jv c = art_json_set(jv_object(), "index", jv_number(0)), b;

	c = art_json_set(c, "message", msg);
	c = art_json_set(c, "finish_reason", finish);
	b = art_json_set(jv_object(), "id", id);
	b = art_json_set(b, "object", jv_string("chat.completion"));
	b = art_json_set(b, "model", model);
	b = art_json_set(b, "choices", jv_array_append(jv_array(), c));
	if (jv_get_kind(usage) == JV_KIND_OBJECT)
		b = art_json_set(b, "usage", usage);
	else
		jv_free(usage);
	return b;
}

/*
 * OpenAI's usage for an LlmResponse's (borrowed): the provider's own when
 * it is OpenAI's, else rebuilt from the normalised counts, else null.
 */
static jv
usage_out(const jv *u)
{
	jv p = art_json_field(u, "provider"), n;

	if (has(&p, "prompt_tokens"))
		return p;
	jv_free(p);
	if (!has(u, "input") || !has(u, "output"))
		return jv_null();
	n = art_json_set(jv_object(), "prompt_tokens", jv_number(number(u,
	    "input")));
	n = art_json_set(n, "completion_tokens", jv_number(number(u,
	    "output")));
	n = art_json_set(n, "total_tokens",
	    jv_number(number(u, "input") + number(u, "output")));
	if (number(u, "cache_read") > 0)
		n = art_json_set(n, "prompt_tokens_details",
		    art_json_set(jv_object(),
		    "cached_tokens", jv_number(number(u, "cache_read"))));
	return n;
}

static jv
openai_native(const jv *resp)
{
	jv msg = art_json_set(jv_object(), "role", jv_string("assistant"));
	jv content = art_json_field(resp, "content");
	jv calls = tool_calls(resp), v, finish, usage, id;

	msg = art_json_set(msg, "content",
	    jv_get_kind(content) == JV_KIND_STRING ?
	    content : (jv_free(content), jv_null()));
	msg = art_json_set_some(msg, "reasoning_content", reasoning_of(resp));
	msg = art_json_set_some(msg, "refusal", nonempty(resp, "refusal"));
	finish = nonempty(resp, "finish_reason");
	/* "refusal" is agentrt's word: OpenAI ends a refusal with "stop". */
	if (is(art_json_str(resp, "finish_reason"), "refusal")) {
		jv_free(finish);
		finish = jv_string("stop");
	}
	if (is_null(&finish)) {
		jv_free(finish);
		finish = jv_string(is_null(&calls) ? "stop" : "tool_calls");
	}
	msg = art_json_set_some(msg, "tool_calls", calls);
	v = art_json_field(resp, "usage");
	usage = usage_out(&v);
	jv_free(v);
	v = art_json_field(resp, "model");
	id = nonempty(resp, "id");
	if (is_null(&id)) {
		jv_free(id);
		id = jv_string("chatcmpl-agentrt");	/* the API always has one */
	}
	return completion_body(id, jv_get_kind(v) ==
	    JV_KIND_STRING ? v : (jv_free(v), jv_string("")), msg, finish,
	    usage);
}

/* --- errors ---------------------------------------------------------- */

/* A number without sign or exponent at *sp; false when none is there. */
static bool
decimal(const char **sp, double *out)
{
	const char *s = *sp;
	double v = 0, scale = 1;
	bool any = false;

	for (; *s >= '0' && *s <= '9'; s++, any = true)
		v = v * 10 + (*s - '0');
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, any = true)
			v += (*s - '0') * (scale /= 10);
	if (!any)
		return false;
	*sp = s;
	*out = v;
	return true;
}

/* Milliseconds rounded up (a caller must not retry early), capped. */
static int64_t
whole_ms(double ms)
{
	/* Allow for decimal fractions that binary cannot hold exactly. */
	ms = ceil(ms - 1e-6);
	return ms < 0 ? 0 : ms > MAX_DELAY_MS ? (int64_t)MAX_DELAY_MS :
	    (int64_t)ms;
}

/* retry-after-ms: a count of milliseconds, perhaps fractional; or -1. */
static int64_t
millis(const char *s)
{
	double v;

	while (*s == ' ')
		s++;
	if (!decimal(&s, &v))
		return -1;
	while (*s == ' ')
		s++;
	return *s == '\0' ? whole_ms(v) : -1;
}

/* The unit at *sp of a Go duration ("6m0s", "20ms", "1.5s"), in ms. */
static bool
unit(const char **sp, double *ms)
{
	static const struct {
		const char	*name;
		double		 ms;
	} units[] = {
		{ "ns", 1e-6 }, { "us", 1e-3 }, { "\302\265s", 1e-3 },
		{ "\316\274s", 1e-3 }, { "ms", 1 }, { "s", 1e3 },
		{ "m", 6e4 }, { "h", 3.6e6 },
	};
	size_t i, n;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		n = strlen(units[i].name);
		if (strncmp(*sp, units[i].name, n) == 0) {
			*sp += n;
			*ms = units[i].ms;
			return true;
		}
	}
	return false;
}

/* An x-ratelimit-reset-* value in ms; a bare number is seconds; or -1. */
static int64_t
duration(const char *s)
{
	double total = 0, v, per;

	if (s == NULL || !decimal(&s, &v))
		return -1;
	if (*s == '\0')
		return whole_ms(v * 1e3);
	do {
		if (!unit(&s, &per))
			return -1;
		total += v * per;
	} while (*s != '\0' && decimal(&s, &v));
	return *s == '\0' ? whole_ms(total) : -1;
}

/* The delay the headers (borrowed) ask for before a retry, or -1. */
static int64_t
retry_delay(const jv *headers, long status, int64_t now_ms)
{
	const char *v;
	int64_t ms, tokens;

	if (headers == NULL)
		return -1;
	if ((v = art_json_str(headers, "retry-after-ms")) != NULL &&
	    (ms = millis(v)) >= 0)
		return ms;
	if ((v = art_json_str(headers, "retry-after")) != NULL &&
	    (ms = art_wire_retry_after(v, now_ms)) >= 0)
		return ms;
	/* The reset headers come on every answer; they explain only a 429. */
	if (status != 429)
		return -1;
	ms = duration(art_json_str(headers, "x-ratelimit-reset-requests"));
	tokens = duration(art_json_str(headers, "x-ratelimit-reset-tokens"));
	return tokens > ms ? tokens : ms;
}

/* The first QUOTE_MAX bytes of a body, as printable ASCII on one line. */
static void
quote(const char *body, size_t len, char out[QUOTE_MAX + 1])
{
	size_t i, n = len < QUOTE_MAX ? len : QUOTE_MAX;
	unsigned char c;

	for (i = 0; i < n; i++) {
		c = (unsigned char)body[i];
		if (c == '\n' || c == '\r' || c == '\t')
			c = ' ';
		out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

/* The provider's error in a parsed body (borrowed): body.error, or null. */
static jv
provider_error(const jv *body)
{
	jv e = art_json_field(body, "error");
	jv_kind k = jv_get_kind(e);

	if (k == JV_KIND_OBJECT || k == JV_KIND_STRING)
		return e;
	jv_free(e);
	return jv_null();
}

static jv
openai_error(long status, const jv *headers, const char *body, size_t len,
    int64_t now_ms)
{
	char said[QUOTE_MAX + 1] = "";
	struct art_err err;
	jv parsed = len > 0 ? parse(body, len, &err) : jv_invalid();
	jv perr = provider_error(&parsed), e, detail;
	const char *msg = error_message(&perr), *code;
	bool retryable;
	int64_t delay;

	if (msg == NULL && len > 0)
		quote(body, len, said);
	if (msg == NULL)
		msg = *said != '\0' ? said : "empty body";
	code = classify(status, &perr, &retryable);
	e = fail(retryable, code, "openai %ld: %s", status, msg);
	/* A delay is advice on retrying; a final error has no use for it. */
	if (retryable && (delay = retry_delay(headers, status, now_ms)) >= 0)
		e = art_json_set(e, "retry_after_ms", jv_number((double)delay));
	detail = art_json_set(jv_object(), "status", jv_number((double)status));
	e = art_json_set(e, "detail", art_json_set(detail, "error", perr));
	jv_free(parsed);
	return e;
}

/* --- streams --------------------------------------------------------- */

static struct art_wire_stream *
openai_stream_new(void)
{
	struct art_wire_stream *st;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return NULL;
	st->id = jv_null();
	st->model = jv_null();
	st->usage = jv_null();
	st->text = jv_string("");
	st->reasoning = jv_string("");
	st->refusal = jv_string("");
	st->calls = jv_array();
	st->finish = jv_null();
	return st;
}

static void
openai_stream_free(struct art_wire_stream *st)
{
	if (st == NULL)
		return;
	jv_free(st->id);
	jv_free(st->model);
	jv_free(st->usage);
	jv_free(st->text);
	jv_free(st->reasoning);
	jv_free(st->refusal);
	jv_free(st->calls);
	jv_free(st->finish);
	free(st);
}

/* The call at slot i, or jv_null(). */
static jv
call_at(const struct art_wire_stream *st, int i)
{
	jv c;

	if (i >= jv_array_length(jv_copy(st->calls)))
		return jv_null();
	c = jv_array_get(jv_copy(st->calls), i);
	return jv_is_valid(c) ? c : (jv_free(c), jv_null());
}

/* The slot of the call named id, or -1. */
static int
slot_named(const struct art_wire_stream *st, const char *id)
{
	int found = -1;

	jv_array_foreach(st->calls, i, c) {
		if (found == -1 && is(art_json_str(&c, "id"), id))
			found = i;
		jv_free(c);
	}
	return found;
}

/*
 * The slot a fragment (borrowed) belongs to, or -1 for an index out of
 * range.  OpenAI numbers every fragment; some compatible servers send
 * whole calls without an index, or each call as index 0 with its own id.
 */
static int
slot_of(const struct art_wire_stream *st, const jv *frag)
{
	jv ix = art_json_field(frag, "index"), c;
	const char *id = art_json_str(frag, "id");
	int n = jv_array_length(jv_copy(st->calls)), i, known;
	double d;

	if (id != NULL && *id == '\0')
		id = NULL;
	known = id != NULL ? slot_named(st, id) : -1;
	if (jv_get_kind(ix) != JV_KIND_NUMBER) {
		jv_free(ix);
		if (known >= 0)
			return known;
		return id != NULL || n == 0 ? n : n - 1;
	}
	d = jv_number_value(ix);
	jv_free(ix);
	if (d < 0 || d >= MAX_CALLS || d != floor(d))
		return -1;
	i = (int)d;
	c = call_at(st, i);
	if (id != NULL && known == -1 && !is_null(&c))
		i = n;		/* a new call reusing a taken index */
	jv_free(c);
	return i;
}

/*
 * Adds one tool call fragment (borrowed) to its call and its StreamDelta
 * piece to *pieces; -1 for an index out of range.
 */
static int
fragment(struct art_wire_stream *st, const jv *frag, jv *pieces)
{
	int i = slot_of(st, frag);
	jv fn = art_json_field(frag, "function"), call, piece, name, args;
	bool fresh, said = false;

	if (i < 0) {
		jv_free(fn);
		return -1;
	}
	call = call_at(st, i);
	name = nonempty(&fn, "name");
	args = args_text(art_json_field(&fn, "arguments"));
	if ((fresh = is_null(&call))) {
		jv id = nonempty(frag, "id");

		call = art_json_set(jv_object(), "id",
		    is_null(&id) ? (jv_free(id),
		    jv_string_fmt("call_%d", i)) : id);
		call = art_json_set(call, "name", jv_string(""));
		call = art_json_set(call, "arguments", jv_string(""));
	}
	piece = art_json_set(jv_object(), "id", art_json_field(&call, "id"));
	if (!is_null(&name) && *art_json_str(&call, "name") == '\0') {
		call = art_json_set(call, "name", jv_copy(name));
		piece = art_json_set(piece, "name", jv_copy(name));
		said = true;
	}
	if (jv_string_length_bytes(jv_copy(args)) > 0) {
		call = art_json_set(call, "arguments", jv_string_concat(
		    art_json_field(&call, "arguments"), jv_copy(args)));
		piece = art_json_set(piece, "arguments", jv_copy(args));
		said = true;
	}
	st->calls = jv_array_set(st->calls, i, call);
	if (fresh || said)
		*pieces = jv_array_append(*pieces, piece);
	else
		jv_free(piece);
	jv_free(name);
	jv_free(args);
	jv_free(fn);
	return 0;
}

/* A delta's tool_calls into the stream and *d; -1 for a bad index. */
static int
fragments(struct art_wire_stream *st, const jv *delta, jv *d)
{
	jv frags = art_json_field(delta, "tool_calls"), pieces = jv_array();
	int rc = 0;

	if (jv_get_kind(frags) == JV_KIND_ARRAY) {
		jv_array_foreach(frags, i, f) {
			if (rc == 0 && jv_get_kind(f) == JV_KIND_OBJECT)
				rc = fragment(st, &f, &pieces);
			jv_free(f);
		}
	}
	jv_free(frags);
	if (rc == 0 && jv_array_length(jv_copy(pieces)) > 0)
		*d = art_json_set(*d, "tool_calls", pieces);
	else
		jv_free(pieces);
	return rc;
}

/* Joins delta's key to *acc and, when out is not NULL, sets it in *d. */
static void
gather(jv *acc, jv piece, jv *d, const char *out)
{
	if (is_null(&piece))
		return;
	*acc = jv_string_concat(*acc, jv_copy(piece));
	if (out != NULL)
		*d = art_json_set(*d, out, piece);
	else
		jv_free(piece);
}

/* Puts v in *slot when it is of kind k; a chunk without one keeps *slot. */
static void
keep(jv *slot, jv v, jv_kind k)
{
	if (jv_get_kind(v) != k) {
		jv_free(v);
		return;
	}
	jv_free(*slot);
	*slot = v;
}

/* What one chunk (borrowed) adds, into the stream and *d; -1: bad index. */
static int
take_chunk(struct art_wire_stream *st, const jv *chunk, jv *d)
{
	jv choice = first_choice(chunk), delta, v;
	int rc;

	/* With n > 1 each chunk carries one choice; only the first counts. */
	if (number(&choice, "index") != 0) {
		jv_free(choice);
		choice = jv_null();
	}
	keep(&st->id, art_json_field(chunk, "id"), JV_KIND_STRING);
	keep(&st->model, art_json_field(chunk, "model"), JV_KIND_STRING);
	keep(&st->usage, art_json_field(chunk, "usage"), JV_KIND_OBJECT);
	delta = art_json_field(&choice, "delta");
	gather(&st->text, nonempty(&delta, "content"), d, "text");
	gather(&st->reasoning, reasoning_of(&delta), d, "reasoning");
	gather(&st->refusal, nonempty(&delta, "refusal"), d, NULL);
	rc = fragments(st, &delta, d);
	v = nonempty(&choice, "finish_reason");
	if (rc == 0 && !is_null(&v)) {
		jv_free(st->finish);
		st->finish = jv_copy(v);
		*d = art_json_set(*d, "finish_reason", v);
	} else
		jv_free(v);
	jv_free(delta);
	jv_free(choice);
	return rc;
}

static int
openai_stream_event(struct art_wire_stream *st,
    const struct art_sse_event *ev, jv *deltas, jv *error)
{
	struct art_err err;
	jv chunk, d, perr;

	if (art_sse_is_done(ev))
		return 1;
	chunk = art_json_parse(ev->data, ev->data_len, &err);
	if (!jv_is_valid(chunk)) {
		*error = fail(true, "provider_error", "openai: stream: bad "
		    "chunk: %s", err.msg);
		return -1;
	}
	if (jv_get_kind(chunk) != JV_KIND_OBJECT) {
		*error = fail(false, "provider_error", "openai: stream: bad "
		    "chunk: %s, not an object",
		    art_json_kind_name(jv_get_kind(chunk)));
		jv_free(chunk);
		return -1;
	}
	perr = art_json_field(&chunk, "error");
	if (!is_null(&perr)) {
		*error = inline_error(&perr, "stream error");
		jv_free(perr);
		jv_free(chunk);
		return -1;
	}
	d = jv_object();
	if (take_chunk(st, &chunk, &d) == -1) {
		*error = fail(false, "provider_error", "openai: stream: bad "
		    "chunk: tool call index out of range");
		jv_free(d);
		jv_free(chunk);
		return -1;
	}
	if (jv_object_length(jv_copy(d)) > 0)
		*deltas = jv_array_append(*deltas, d);
	else
		jv_free(d);
	jv_free(chunk);
	return 0;
}

/* A call the stream gathered (borrowed) as the API's ToolCall. */
static jv
stream_call(const jv *c)
{
	jv fn = art_json_set(jv_object(), "name", art_json_field(c, "name")),
	    tc;

	fn = art_json_set(fn, "arguments", art_json_field(c, "arguments"));
	tc = art_json_set(jv_object(), "id", art_json_field(c, "id"));
	tc = art_json_set(tc, "type", jv_string("function"));
	return art_json_set(tc, "function", fn);
}

/* The message the stream's pieces add up to, as the API would send it. */
static jv
stream_message(const struct art_wire_stream *st)
{
	jv m = art_json_set(jv_object(), "role", jv_string("assistant")), calls;

	m = art_json_set(m, "content",
	    jv_string_length_bytes(jv_copy(st->text)) > 0 ?
	    jv_copy(st->text) : jv_null());
	m = art_json_set(m, "reasoning_content", jv_copy(st->reasoning));
	m = art_json_set(m, "refusal", jv_copy(st->refusal));
	calls = jv_array();
	jv_array_foreach(st->calls, i, c) {
		if (jv_get_kind(c) == JV_KIND_OBJECT)
			calls = jv_array_append(calls, stream_call(&c));
		jv_free(c);
	}
	return art_json_set(m, "tool_calls", calls);
}

static int
openai_stream_result(struct art_wire_stream *st, jv *resp, jv *error)
{
	jv body;
	int rc;

	if (is_null(&st->finish) &&
	    jv_string_length_bytes(jv_copy(st->refusal)) == 0) {
		*error = fail(true, "provider_error",
		    "openai: stream ended early");
		return -1;
	}
	body = completion_body(jv_copy(st->id), jv_copy(st->model),
	    stream_message(st), jv_copy(st->finish), jv_copy(st->usage));
	rc = completion_in(&body, resp, error);
	jv_free(body);
	return rc;
}

const struct art_wire art_openai_wire = {
	.name = "openai",
	.base_url = "https://api.openai.com/v1",
	.base_url_env = "OPENAI_BASE_URL",
	.key_env = "OPENAI_API_KEY",
	.path = "/chat/completions",
	.key_header = "Authorization",
	.key_prefix = "Bearer ",
	.stream_options = "{\"include_usage\":true}",
	.request = openai_request,
	.message = message_out,
	.response = openai_response,
	.native = openai_native,
	.error = openai_error,
	.stream_new = openai_stream_new,
	.stream_free = openai_stream_free,
	.stream_event = openai_stream_event,
	.stream_result = openai_stream_result,
};
