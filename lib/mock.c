/* mock.c - the offline model: echo the user, or play a script
 *
 * Everything here is a function of the call: the mock keeps no record of
 * what it answered, so a redelivered or retried call gets the same answer
 * (or, for an error step with "times", the answer its attempt number
 * selects), and any number of sessions can share one agentrt-llm.  The
 * only memory is a cache of script files, read once per path.
 */
#include "mock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"

struct art_mock {
	jv	 script;	/* played for every call, or null */
	jv	 files;		/* path -> the script read from it */
};

/* The step fields a script may use; anything else is a typo. */
static const char *const step_fields[] = {
	"content", "json", "tool_calls", "error", "retryable", "code",
	"retry_after_ms", "times", "finish_reason", "delay_ms", "images", NULL
};

static const char *const tool_call_fields[] = { "name", "arguments", NULL };

static void *
mock_open(const struct art_llm_opts *opts, struct art_err *err)
{
	return art_mock_new(jv_copy(opts->mock_script), err);
}

static void
mock_close(void *m)
{
	art_mock_free(m);
}

static int
mock_answer(void *m, const struct art_llm_call *call, const char *model,
    struct art_llm_outcome *out, struct art_err *err)
{
	return art_mock_answer(m, call, model, out, err);
}

const struct art_llm_provider art_mock_provider = {
	.name = "mock",
	.open = mock_open,
	.close = mock_close,
	.answer = mock_answer,
};

struct art_mock *
art_mock_new(jv script, struct art_err *err)
{
	struct art_mock *m;
	jv_kind k = jv_get_kind(script);

	if (k != JV_KIND_NULL && k != JV_KIND_ARRAY) {
		jv_free(script);
		art_err_set(err, "bad_script", "mock script: expected array, "
		    "got %s", art_json_kind_name(k));
		return NULL;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		jv_free(script);
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	m->script = script;
	m->files = jv_object();
	return m;
}

void
art_mock_free(struct art_mock *m)
{
	if (m == NULL)
		return;
	jv_free(m->script);
	jv_free(m->files);
	free(m);
}

jv
art_mock_read_script(const char *path, struct art_err *err)
{
	struct art_buf text = ART_BUF_INIT;
	jv s;

	if (art_buf_read_file(&text, path, 0, err) == -1) {
		if (art_err_is(err, "io"))
			art_err_set(err, "io", "read mock script '%s': %s",
			    path, strerror(errno));
		art_buf_release(&text);
		return jv_invalid();
	}
	/* The buffer keeps a NUL after its bytes, as the parse needs. */
	s = art_json_parse(text.p, text.len, err);
	art_buf_release(&text);
	if (!jv_is_valid(s))
		return art_err_prefix(err, "mock script '%s'", path), s;
	if (jv_get_kind(s) != JV_KIND_ARRAY) {
		art_err_set(err, "bad_script", "mock script '%s': expected "
		    "an array, got %s", path,
		    art_json_kind_name(jv_get_kind(s)));
		jv_free(s);
		return jv_invalid();
	}
	return s;
}

/* --- reading the request --------------------------------------------- */

/* A message's text: string content, or its text parts joined. */
static jv
text_of(const jv *msg)
{
	jv c = art_json_field(msg, "content"), text;
	const char *t;

	if (jv_get_kind(c) == JV_KIND_STRING)
		return c;
	text = jv_string("");
	if (jv_get_kind(c) == JV_KIND_ARRAY) {
		jv_array_foreach(c, i, part) {
			if ((t = art_json_str(&part, "type")) != NULL &&
			    strcmp(t, "text") == 0 &&
			    (t = art_json_str(&part, "text")) != NULL)
				text = jv_string_append_str(text, t);
			jv_free(part);
		}
	}
	jv_free(c);
	return text;
}

/* The request's messages, an array ([] when it has none that are). */
static jv
messages_of(const jv *request)
{
	jv msgs = art_json_field(request, "messages");

	if (jv_get_kind(msgs) == JV_KIND_ARRAY)
		return msgs;
	jv_free(msgs);
	return jv_array();
}

static bool
has_role(const jv *msg, const char *role)
{
	const char *r = art_json_str(msg, "role");

	return r != NULL && strcmp(r, role) == 0;
}

/* The index of the last message with role, or -1. */
static int
last_index(const jv *msgs, const char *role)
{
	int last = -1;

	jv_array_foreach(*msgs, i, msg) {
		if (has_role(&msg, role))
			last = i;
		jv_free(msg);
	}
	return last;
}

/* The text of the last message with role, or "". */
static jv
last_text(const jv *request, const char *role)
{
	jv msgs = messages_of(request), msg, text;
	int i = last_index(&msgs, role);

	if (i < 0) {
		jv_free(msgs);
		return jv_string("");
	}
	msg = jv_array_get(msgs, i);
	text = text_of(&msg);
	jv_free(msg);
	return text;
}

int64_t
art_mock_step(const jv *request)
{
	jv msgs = messages_of(request), again;
	int from, len;
	int64_t n = 0;

	/*
	 * A call asking again for a structured answer ends with what was
	 * wrong with the last (agentrt's answer_retry): counted without it,
	 * it is the step after the reply it mends.
	 */
	again = art_json_field(request, "answer_retry");
	len = jv_get_kind(msgs) == JV_KIND_ARRAY ? jv_array_length(jv_copy(
	    msgs)) : 0;
	if (jv_get_kind(again) == JV_KIND_TRUE && len > 0)
		msgs = jv_array_slice(msgs, 0, len - 1);
	jv_free(again);
	from = last_index(&msgs, "user");

	jv_array_foreach(msgs, i, msg) {
		if (i > from && has_role(&msg, "assistant"))
			n++;
		jv_free(msg);
	}
	jv_free(msgs);
	return n;
}

/* The bytes of s (consumed), a string. */
static int64_t
len_of(jv s)
{
	return jv_string_length_bytes(s);
}

/* Tokens, for usage: a quarter of the bytes, rounded up. */
static int64_t
tokens(int64_t bytes)
{
	return (bytes + 3) / 4;
}

/* The bytes of text in every message of request. */
static int64_t
input_bytes(const jv *request)
{
	jv msgs = messages_of(request);
	int64_t n = 0;

	jv_array_foreach(msgs, i, msg) {
		n += len_of(text_of(&msg));
		jv_free(msg);
	}
	jv_free(msgs);
	return n;
}

/* --- building the reply ---------------------------------------------- */

/* The bytes of a reply: its content, and each tool call's name and
 * arguments. */
static int64_t
output_bytes(const jv *content, const jv *calls)
{
	int64_t n = 0;
	jv f;

	if (jv_get_kind(*content) == JV_KIND_STRING)
		n += len_of(jv_copy(*content));
	if (jv_get_kind(*calls) != JV_KIND_ARRAY)
		return n;
	jv_array_foreach(*calls, i, call) {
		f = art_json_field(&call, "function");
		n += len_of(art_json_field(&f, "name"));
		n += len_of(art_json_field(&f, "arguments"));
		jv_free(f);
		jv_free(call);
	}
	return n;
}

/*
 * An LlmResponse.  content (a string, or null for none) and calls (an
 * array, or null) are consumed.
 */
static jv
response(const char *model, jv content, jv calls, const char *finish,
    const jv *request)
{
	int64_t in = tokens(input_bytes(request));
	int64_t outn = tokens(output_bytes(&content, &calls));
	jv r = jv_object(), u = jv_object();

	r = jv_object_set(r, jv_string("model"), jv_string(model));
	if (jv_get_kind(content) == JV_KIND_STRING)
		r = jv_object_set(r, jv_string("content"), content);
	else
		jv_free(content);
	if (jv_get_kind(calls) == JV_KIND_ARRAY)
		r = jv_object_set(r, jv_string("tool_calls"), calls);
	else
		jv_free(calls);
	r = jv_object_set(r, jv_string("finish_reason"), jv_string(finish));
	u = jv_object_set(u, jv_string("input"), jv_number((double)in));
	u = jv_object_set(u, jv_string("output"), jv_number((double)outn));
	u = jv_object_set(u, jv_string("total"),
	    jv_number((double)(in + outn)));
	r = jv_object_set(r, jv_string("usage"), u);
	return jv_object_set(r, jv_string("cost"), jv_string("0"));
}

static const char *const placeholders[] = { "user", "tool", "tools" };
#define NPLACEHOLDERS	3

/*
 * The texts of the tool messages after the last assistant message (the
 * answers to its calls, in order), joined with "; ".
 */
static jv
tools_text(const jv *request)
{
	jv msgs = messages_of(request), out = jv_string("");
	int from = last_index(&msgs, "assistant"), n = 0;

	jv_array_foreach(msgs, i, msg) {
		if (i > from && has_role(&msg, "tool")) {
			if (n++ > 0)
				out = jv_string_append_str(out, "; ");
			out = jv_string_concat(out, text_of(&msg));
		}
		jv_free(msg);
	}
	jv_free(msgs);
	return out;
}

/* Which placeholder ("{{user}}", "{{tool}}", …) starts at s[i], or -1. */
static int
placeholder_at(const char *s, int n, int i)
{
	int k, len;

	if (n - i < 4 || s[i] != '{' || s[i + 1] != '{')
		return -1;
	for (k = 0; k < NPLACEHOLDERS; k++) {
		len = (int)strlen(placeholders[k]);
		if (i + len + 4 <= n &&
		    memcmp(s + i + 2, placeholders[k], (size_t)len) == 0 &&
		    memcmp(s + i + 2 + len, "}}", 2) == 0)
			return k;
	}
	return -1;
}

/* text (consumed) with {{user}} and {{tool}} replaced. */
static jv
fill(jv text, const jv *request)
{
	const char *s = jv_string_value(text);
	int n = jv_string_length_bytes(jv_copy(text)), i = 0, start = 0, k;
	jv out = jv_string("");

	while (i < n) {
		if ((k = placeholder_at(s, n, i)) < 0) {
			i++;
			continue;
		}
		out = jv_string_append_buf(out, s + start, i - start);
		out = jv_string_concat(out, k == 2 ? tools_text(request) :
		    last_text(request, placeholders[k]));
		i += (int)strlen(placeholders[k]) + 4;
		start = i;
	}
	out = jv_string_append_buf(out, s + start, n - start);
	jv_free(text);
	return out;
}

/*
 * A tool call's id: call_<tag>_<step>_<i>, where tag is the last 8
 * characters of the model call's id.  The engine mints call ids as
 * UUIDv7s, whose first characters are the time (the same for a minute,
 * and always under a pinned clock) and whose last are random, so the tail
 * keeps the ids of two turns apart.
 */
static jv
tool_call_id(const char *call_id, int64_t step, int i)
{
	size_t n = strlen(call_id);
	const char *tag = n > 8 ? call_id + n - 8 : call_id;

	return jv_string_fmt("call_%s_%lld_%d", tag, (long long)step, i);
}

/* The ToolCall a step's {name, arguments} asks for. */
static jv
tool_call(const jv *spec, const char *call_id, int64_t step, int i)
{
	jv args = art_json_field(spec, "arguments"), fn = jv_object(), tc;

	if (jv_get_kind(args) == JV_KIND_NULL) {
		jv_free(args);
		args = jv_string("{}");
	} else if (jv_get_kind(args) != JV_KIND_STRING) {
		args = jv_dump_string(args, 0);
	}
	fn = jv_object_set(fn, jv_string("name"),
	    jv_string(art_json_str(spec, "name")));
	fn = jv_object_set(fn, jv_string("arguments"), args);
	tc = jv_object_set(jv_object(), jv_string("id"),
	    tool_call_id(call_id, step, i));
	tc = jv_object_set(tc, jv_string("type"), jv_string("function"));
	return jv_object_set(tc, jv_string("function"), fn);
}

/* --- checking a step -------------------------------------------------- */

/* -1 with err naming the first field of obj not in known. */
static int
only_fields(const jv *obj, const char *const known[], struct art_err *err)
{
	const char *bad = NULL;
	size_t i;

	jv_object_foreach(*obj, k, v) {
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(known[i], jv_string_value(k)) == 0)
				break;
		if (known[i] == NULL && bad == NULL)
			bad = jv_string_value(k);	/* obj holds it */
		jv_free(k);
		jv_free(v);
	}
	if (bad != NULL)
		return art_err_set(err, "mock", "unknown field '%s'", bad);
	return 0;
}

static int
check_count(const jv *step, const char *key, struct art_err *err)
{
	int64_t n = 0;

	if (art_json_get_int(step, key, 0, &n, err) == -1)
		return -1;
	if (n < 0)
		return art_err_set(err, "mock", "field '%s': expected 0 or "
		    "more, got %lld", key, (long long)n);
	return 0;
}

static int
check_tool_calls(const jv *step, struct art_err *err)
{
	const char *name;
	jv calls = jv_null();
	int r = 0;

	if (art_json_get_kind(step, "tool_calls", JV_KIND_ARRAY, 0, &calls,
	    err) == -1)
		return -1;
	if (jv_get_kind(calls) != JV_KIND_ARRAY)
		return 0;
	jv_array_foreach(calls, i, tc) {
		if (r == 0 && jv_get_kind(tc) != JV_KIND_OBJECT)
			r = art_err_set(err, "mock", "tool call %d: expected "
			    "object, got %s", i,
			    art_json_kind_name(jv_get_kind(tc)));
		else if (r == 0 && (only_fields(&tc, tool_call_fields,
		    err) == -1 ||
		    art_json_get_str(&tc, "name", 1, &name, err) == -1))
			r = art_err_prefix(err, "tool call %d", i);
		jv_free(tc);
	}
	jv_free(calls);
	return r;
}

static bool
has_field(const jv *obj, const char *key)
{
	return jv_object_has(jv_copy(*obj), jv_string(key));
}

/* "json" is the content written as JSON, so the two cannot both come. */
static int
check_json(const jv *step, struct art_err *err)
{
	if (has_field(step, "json") && has_field(step, "content"))
		return art_err_set(err, "mock", "fields 'content' and 'json' "
		    "together: a reply is one or the other");
	return 0;
}

/* "images", when there: the LlmResponse's, [{"url": STRING}, ...]. */
static int
check_images(const jv *step, struct art_err *err)
{
	jv images = art_json_field(step, "images");
	int bad = -1;

	if (jv_get_kind(images) == JV_KIND_NULL) {
		jv_free(images);
		return 0;
	}
	if (jv_get_kind(images) == JV_KIND_ARRAY) {
		bad = 0;
		jv_array_foreach(images, i, img) {
			if (bad == 0 && (jv_get_kind(img) != JV_KIND_OBJECT ||
			    art_json_str(&img, "url") == NULL))
				bad = i + 1;
			jv_free(img);
		}
	}
	jv_free(images);
	if (bad == -1)
		return art_err_set(err, "mock", "field 'images': expected an "
		    "array of {\"url\": STRING}");
	if (bad > 0)
		return art_err_set(err, "mock", "images[%d]: expected "
		    "{\"url\": STRING}", bad - 1);
	return 0;
}

/* 0 when step is a step the mock can play; else -1 with err. */
static int
check_step(const jv *step, struct art_err *err)
{
	const char *s;
	int b;

	if (jv_get_kind(*step) != JV_KIND_OBJECT)
		return art_err_set(err, "mock", "expected object, got %s",
		    art_json_kind_name(jv_get_kind(*step)));
	if (only_fields(step, step_fields, err) == -1 ||
	    art_json_get_str(step, "content", 0, &s, err) == -1 ||
	    check_json(step, err) == -1 ||
	    art_json_get_str(step, "error", 0, &s, err) == -1 ||
	    art_json_get_str(step, "code", 0, &s, err) == -1 ||
	    art_json_get_str(step, "finish_reason", 0, &s, err) == -1 ||
	    art_json_get_bool(step, "retryable", 0, &b, err) == -1 ||
	    check_count(step, "retry_after_ms", err) == -1 ||
	    check_count(step, "times", err) == -1 ||
	    check_count(step, "delay_ms", err) == -1 ||
	    check_images(step, err) == -1 ||
	    check_tool_calls(step, err) == -1)
		return -1;
	return 0;
}

/* --- playing ---------------------------------------------------------- */

/* Whether step fails at this attempt; if so, makes out that error. */
static bool
step_fails(const jv *step, int64_t attempt, struct art_llm_outcome *out)
{
	const char *msg = art_json_str(step, "error");
	int64_t times = INT64_MAX, after = -1;
	int retryable = 0;

	if (msg == NULL)
		return false;
	art_json_get_int(step, "times", 0, &times, NULL);
	if (attempt > times)
		return false;
	art_json_get_bool(step, "retryable", 0, &retryable, NULL);
	art_llm_outcome_fail(out, msg, retryable != 0,
	    art_json_str(step, "code"));
	art_json_get_int(step, "retry_after_ms", 0, &after, NULL);
	if (after >= 0)
		out->error = jv_object_set(out->error,
		    jv_string("retry_after_ms"), jv_number((double)after));
	return true;
}

/* The reply a checked step gives when it does not fail. */
/* v (consumed) with the placeholders of every string in it filled. */
static jv
fill_json(jv v, const jv *request)
{
	jv out;

	switch (jv_get_kind(v)) {
	case JV_KIND_STRING:
		return fill(v, request);
	case JV_KIND_ARRAY:
		out = jv_array();
		jv_array_foreach(v, i, x)
			out = jv_array_append(out, fill_json(x, request));
		jv_free(v);
		return out;
	case JV_KIND_OBJECT:
		out = jv_object();
		jv_object_foreach(v, k, x)
			out = jv_object_set(out, k, fill_json(x, request));
		jv_free(v);
		return out;
	default:
		return v;
	}
}

static jv
step_reply(const jv *step, const struct art_llm_call *call,
    const char *model, int64_t n)
{
	const char *finish = art_json_str(step, "finish_reason");
	jv specs = art_json_field(step, "tool_calls"), calls = jv_null();
	jv content = art_json_field(step, "content"), r, images;

	if (has_field(step, "json")) {
		jv_free(content);
		content = jv_dump_string(fill_json(art_json_field(step, "json"),
		    &call->request), 0);
	} else if (jv_get_kind(content) == JV_KIND_STRING)
		content = fill(content, &call->request);
	if (jv_get_kind(specs) == JV_KIND_ARRAY) {
		calls = jv_array();
		jv_array_foreach(specs, i, spec) {
			calls = jv_array_append(calls,
			    tool_call(&spec, call->id, n, i));
			jv_free(spec);
		}
	}
	jv_free(specs);
	if (jv_get_kind(content) != JV_KIND_STRING &&
	    jv_get_kind(calls) != JV_KIND_ARRAY)
		content = jv_string("");
	if (finish == NULL)
		finish = jv_get_kind(calls) == JV_KIND_ARRAY ? "tool_calls" :
		    "stop";
	r = response(model, content, calls, finish, &call->request);
	images = art_json_field(step, "images");
	if (jv_get_kind(images) == JV_KIND_ARRAY)
		return jv_object_set(r, jv_string("images"), images);
	jv_free(images);
	return r;
}

/* The script the call plays, into *out; -1 with err when there is none. */
static int
find_script(struct art_mock *m, const struct art_llm_call *call, jv *out,
    struct art_err *err)
{
	const char *file = NULL;
	jv s;

	if (jv_get_kind(m->script) != JV_KIND_NULL) {
		*out = jv_copy(m->script);
		return 0;
	}
	if (art_json_get_kind(&call->mock, "script", JV_KIND_ARRAY, 0, out,
	    err) == -1 || art_json_get_str(&call->mock, "script_file", 0,
	    &file, err) == -1)
		return art_err_prefix(err, "mock");
	if (jv_get_kind(*out) == JV_KIND_ARRAY)
		return 0;
	if (file == NULL)
		return art_err_set(err, "no_script", "mock/script has no script: "
		    "set mock.script or mock.script_file in the agent, or "
		    "give --script");
	s = jv_object_get(jv_copy(m->files), jv_string(file));
	if (!jv_is_valid(s)) {
		jv_free(s);
		s = art_mock_read_script(file, err);
		if (!jv_is_valid(s))
			return -1;
		m->files = jv_object_set(m->files, jv_string(file),
		    jv_copy(s));
	}
	*out = s;
	return 0;
}

static int
play(struct art_mock *m, const struct art_llm_call *call, const char *model,
    struct art_llm_outcome *out, struct art_err *err)
{
	int64_t n = art_mock_step(&call->request), delay = 0;
	jv script = jv_null(), step;

	if (find_script(m, call, &script, err) == -1)
		return -1;
	if (n >= jv_array_length(jv_copy(script))) {
		jv_free(script);
		return art_err_set(err, "mock", "mock script has no step %lld",
		    (long long)n);
	}
	step = jv_array_get(script, (int)n);
	if (check_step(&step, err) == -1) {
		jv_free(step);
		return art_err_prefix(err, "mock script step %lld",
		    (long long)n);
	}
	art_json_get_int(&step, "delay_ms", 0, &delay, NULL);
	out->delay_ms = delay;
	if (!step_fails(&step, call->attempt, out)) {
		out->response = step_reply(&step, call, model, n);
		if (call->stream)
			out->deltas = jv_array_concat(out->deltas,
			    art_mock_deltas(&out->response));
	}
	jv_free(step);
	return 0;
}

/* Whether the schema of request's response_format has property key. */
static bool
format_has(const jv *request, const char *key)
{
	jv rf = art_json_field(request, "response_format");
	jv schema = art_json_field(&rf, "schema");
	jv props = art_json_field(&schema, "properties");
	bool yes = jv_get_kind(props) == JV_KIND_OBJECT &&
	    has_field(&props, key);

	jv_free(props);
	jv_free(schema);
	jv_free(rf);
	return yes;
}

/*
 * The echo of text (consumed) as the JSON request's response_format
 * asks for: a plan of one todo, an answer of one summary, or the text
 * as a JSON string.
 */
static jv
echo_json(jv text, const jv *request)
{
	jv v;

	if (format_has(request, "todos"))
		v = art_json_set(jv_object(), "todos", JV_ARRAY(
		    art_json_set(jv_object(), "title", text)));
	else if (format_has(request, "summary"))
		v = art_json_set(jv_object(), "summary", text);
	else
		v = text;
	return jv_dump_string(v, 0);
}

static void
echo(const struct art_llm_call *call, const char *model,
    struct art_llm_outcome *out)
{
	jv text = last_text(&call->request, "user"), rf;

	rf = art_json_field(&call->request, "response_format");
	if (jv_get_kind(rf) == JV_KIND_OBJECT)
		text = echo_json(text, &call->request);
	jv_free(rf);
	out->response = response(model, text, jv_null(), "stop",
	    &call->request);
	if (call->stream)
		out->deltas = jv_array_concat(out->deltas,
		    art_mock_deltas(&out->response));
}

int
art_mock_answer(struct art_mock *m, const struct art_llm_call *call,
    const char *model, struct art_llm_outcome *out, struct art_err *err)
{
	jv msgs = art_json_field(&call->request, "messages");
	jv_kind k = jv_get_kind(msgs);

	jv_free(msgs);
	if (call->format != NULL)
		return art_err_set(err, "mock", "mock models take no format "
		    "('%s')", call->format);
	if (k != JV_KIND_ARRAY && k != JV_KIND_NULL)
		return art_err_set(err, "mock", "request field 'messages': "
		    "expected array, got %s", art_json_kind_name(k));
	if (strcmp(model, "mock/echo") == 0) {
		echo(call, model, out);
		return 0;
	}
	if (strcmp(model, "mock/script") == 0)
		return play(m, call, model, out, err);
	return art_err_set(err, "mock", "unknown mock model '%s' (there are "
	    "mock/echo and mock/script)", model);
}

/* --- streaming -------------------------------------------------------- */

static jv
text_delta(const char *p, int n)
{
	return jv_object_set(jv_object(), jv_string("text"),
	    jv_string_sized(p, n));
}

static jv
tool_call_delta(const jv *tc)
{
	jv f = art_json_field(tc, "function"), d = jv_object();

	d = jv_object_set(d, jv_string("id"), art_json_field(tc, "id"));
	d = jv_object_set(d, jv_string("name"), art_json_field(&f, "name"));
	d = jv_object_set(d, jv_string("arguments"),
	    art_json_field(&f, "arguments"));
	jv_free(f);
	return jv_object_set(jv_object(), jv_string("tool_calls"),
	    jv_array_append(jv_array(), d));
}

jv
art_mock_deltas(const jv *resp)
{
	jv content = art_json_field(resp, "content"), calls;
	jv deltas = jv_array();
	const char *s = "";
	int i, start = 0, n = 0;

	if (jv_get_kind(content) == JV_KIND_STRING) {
		s = jv_string_value(content);
		n = jv_string_length_bytes(jv_copy(content));
	}
	for (i = 0; i < n; i++)
		if (s[i] == ' ' && (i + 1 == n || s[i + 1] != ' ')) {
			deltas = jv_array_append(deltas,
			    text_delta(s + start, i + 1 - start));
			start = i + 1;
		}
	if (start < n)
		deltas = jv_array_append(deltas, text_delta(s + start,
		    n - start));
	jv_free(content);
	calls = art_json_field(resp, "tool_calls");
	if (jv_get_kind(calls) == JV_KIND_ARRAY) {
		jv_array_foreach(calls, j, tc) {
			deltas = jv_array_append(deltas, tool_call_delta(&tc));
			jv_free(tc);
		}
	}
	jv_free(calls);
	return deltas;
}
