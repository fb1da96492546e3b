/* anthropic.c - the Anthropic Messages API, spoken both ways
 *
 * The neutral shapes use OpenAI's vocabulary, so most of the work is
 * re-nesting: system messages move to a top-level "system", a tool result
 * becomes a user turn of tool_result blocks, and a tool call becomes a
 * tool_use block whose input is an object rather than a string.  The
 * Messages API wants user and assistant turns to alternate, so turns of
 * one role that end up next to each other are merged into one.
 *
 * A stream is kept as its content blocks, by index, each with the text
 * (or the tool input JSON) its deltas have built up.  A tool_use block
 * counts only once its content_block_stop has come: a stream cut short
 * by max_tokens leaves a half-written input, and a call with half its
 * arguments must never run.
 *
 * Extended thinking comes as thinking blocks (text and a signature) and
 * redacted_thinking blocks (opaque data).  Their text is the response's
 * "reasoning", as for every provider; the blocks themselves, in order and
 * as they came, are its "thinking_blocks" (agentrt's extension), because
 * the API takes a tool loop's next request only when the assistant turn
 * that called the tool starts with them, signatures unchanged.
 */
#include "wire.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "clock.h"
#include "json.h"
#include "parts.h"
#include "utf8.h"

#define MAX_TOKENS	4096	/* the API requires max_tokens */
#define BUDGET		1024	/* the API's smallest thinking budget */
#define SNIPPET		200	/* bytes kept of a body that is not JSON */
#define MAX_BLOCKS	65536	/* a block index past this is not real */
#define RESET_PREFIX	"anthropic-ratelimit-"
#define RESET_SUFFIX	"-reset"

/* Stop reasons, both ways; the first of each neutral name goes back. */
static const struct stop {
	const char	*anthropic;
	const char	*neutral;
} stops[] = {
	{ "end_turn",		"stop" },
	{ "stop_sequence",	"stop" },
	{ "pause_turn",		"stop" },
	{ "tool_use",		"tool_calls" },
	{ "max_tokens",		"length" },
	{ "refusal",		"refusal" },
};
#define NSTOPS		(sizeof(stops) / sizeof(stops[0]))

/* --- small things ----------------------------------------------------- */


static bool
is(const char *s, const char *want)
{
	return s != NULL && strcmp(s, want) == 0;
}

/* obj's number field, or 0. */
static double
num(const jv *obj, const char *key)
{
	jv v = art_json_field(obj, key);
	double d = jv_get_kind(v) == JV_KIND_NUMBER ? jv_number_value(v) : 0;

	jv_free(v);
	return d;
}

/* Takes over a json.c error as the request's fault. */
static jv
bad_request(struct art_err *err)
{
	if (err != NULL)
		err->code = "bad_request";
	return jv_invalid();
}

/* acc with s after it (both consumed); acc null starts a new text. */
static jv
join(jv acc, jv s)
{
	if (jv_get_kind(s) != JV_KIND_STRING) {
		jv_free(s);
		s = jv_string("");
	}
	if (jv_get_kind(acc) != JV_KIND_STRING) {
		jv_free(acc);
		return s;
	}
	return jv_string_concat(acc, s);
}

/*
 * body[0..len) parsed, or jv_invalid().  The copy gives libjq 1.6 the NUL
 * it reads past the end when the text is not JSON.
 */
static jv
parse_body(const char *body, size_t len)
{
	jv text, v;

	if (body == NULL || len == 0 || len > INT_MAX)
		return jv_invalid();
	text = jv_string_sized(body, (int)len);
	v = art_json_parse(jv_string_value(text),
	    (size_t)jv_string_length_bytes(jv_copy(text)), NULL);
	jv_free(text);
	return v;
}

/* --- request: LlmRequest to a Messages body --------------------------- */

static jv
text_block(jv text)
{
	return art_json_set(art_json_set(jv_object(), "type",
	    jv_string("text")), "text", text);
}

/* Content as blocks: a string becomes a text block, unless it is empty. */
static jv
as_blocks(jv content)
{
	if (jv_get_kind(content) == JV_KIND_ARRAY)
		return content;
	if (jv_get_kind(content) != JV_KIND_STRING ||
	    jv_string_length_bytes(jv_copy(content)) == 0) {
		jv_free(content);
		return jv_array();
	}
	return JV_ARRAY(text_block(content));
}

/*
 * "data:image/png;base64,AAAA" as a base64 source; what ("image",
 * "file") names the part in an error.
 */
static jv
data_source(const char *url, const char *what, int i, int j,
    struct art_err *err)
{
	const char *media = url + 5, *comma = NULL, *semi = NULL;
	jv src;

	if (strncmp(url, "data:", 5) == 0 &&
	    (comma = strchr(media, ',')) != NULL)
		semi = memchr(media, ';', (size_t)(comma - media));
	if (semi == NULL || semi == media || comma - semi < 7 ||
	    strncmp(comma - 7, ";base64", 7) != 0) {
		art_err_set(err, "bad_request", "messages[%d].content[%d]: "
		    "%s data URL is not base64 with a media type", i, j, what);
		return jv_invalid();
	}
	src = art_json_set(jv_object(), "type", jv_string("base64"));
	src = art_json_set(src, "media_type",
	    jv_string_sized(media, (int)(semi - media)));
	return art_json_set(src, "data", jv_string(comma + 1));
}

static jv
image_block(const jv *part, int i, int j, struct art_err *err)
{
	jv img = art_json_field(part, "image_url"), src;
	const char *url = art_json_str(&img, "url");

	if (url == NULL) {
		jv_free(img);
		art_err_set(err, "bad_request", "messages[%d].content[%d]: "
		    "image_url part without a url", i, j);
		return jv_invalid();
	}
	if (strncmp(url, "data:", 5) == 0)
		src = data_source(url, "image", i, j, err);
	else
		src = art_json_set(art_json_set(jv_object(), "type",
		    jv_string("url")), "url", jv_string(url));
	jv_free(img);
	if (!jv_is_valid(src))
		return src;
	return art_json_set(art_json_set(jv_object(), "type",
	    jv_string("image")), "source", src);
}

/*
 * A text file's base64 source as a text source: Anthropic reads a text
 * document as its UTF-8 text, "text/plain" whatever text/ type it is.
 */
static jv
text_source(jv src, const char *name, int i, int j, struct art_err *err)
{
	const char *b64 = art_json_str(&src, "data");
	struct art_buf text = ART_BUF_INIT;
	jv out = jv_invalid();

	if (art_base64_decode(b64, strlen(b64), &text) == -1)
		art_err_set(err, "bad_request", "messages[%d].content[%d]: file "
		    "'%.64s': its data is not base64", i, j, name);
	else if (!art_utf8_valid(text.p != NULL ? text.p : "", text.len,
	    NULL))
		art_err_set(err, "bad_request", "messages[%d].content[%d]: file "
		    "'%.64s': a text file that is not UTF-8", i, j, name);
	else {
		out = art_json_set(jv_object(), "type", jv_string("text"));
		out = art_json_set(out, "media_type", jv_string("text/plain"));
		out = art_json_set(out, "data", jv_string_sized(text.p != NULL ?
		    text.p : "", (int)text.len));
	}
	art_buf_release(&text);
	jv_free(src);
	return out;
}

/*
 * A file part as a document block, titled with its filename: a PDF as
 * its base64, a text/ file as its text.  Anthropic reads no other kind.
 */
static jv
file_block(const jv *part, int i, int j, struct art_err *err)
{
	jv file = art_json_field(part, "file"), src, doc = jv_invalid();
	const char *data = art_json_str(&file, "file_data");
	const char *name = art_json_str(&file, "filename"), *media;

	if (data == NULL) {
		art_err_set(err, "bad_request", "messages[%d].content[%d]: "
		    "file part without file_data", i, j);
		jv_free(file);
		return doc;
	}
	src = data_source(data, "file", i, j, err);
	media = jv_is_valid(src) ? art_json_str(&src, "media_type") : NULL;
	if (media == NULL)
		;
	else if (strcmp(media, "application/pdf") == 0)
		doc = src;
	else if (strncmp(media, "text/", 5) == 0)
		doc = text_source(src, name != NULL ? name : "", i, j, err);
	else {
		art_err_set(err, "bad_request", "messages[%d].content[%d]: file "
		    "'%.64s' is %.64s: Anthropic reads PDF and text documents "
		    "only", i, j, name != NULL ? name : "", media);
		jv_free(src);
	}
	if (jv_is_valid(doc)) {
		doc = art_json_set(art_json_set(jv_object(), "type",
		    jv_string("document")), "source", doc);
		if (name != NULL && name[0] != '\0')
			doc = art_json_set(doc, "title", jv_string(name));
	} else if (media == NULL)
		jv_free(src);
	jv_free(file);
	return doc;
}

static jv
part_block(const jv *part, int i, int j, struct art_err *err)
{
	const char *type = art_json_str(part, "type");
	jv text;

	if (is(type, "image_url"))
		return image_block(part, i, j, err);
	if (is(type, "file"))
		return file_block(part, i, j, err);
	if (!is(type, "text")) {
		art_err_set(err, "bad_request", "messages[%d].content[%d]: "
		    "part type '%.64s' has no Anthropic equivalent", i, j,
		    type != NULL ? type : "(none)");
		return jv_invalid();
	}
	text = art_json_field(part, "text");
	if (jv_get_kind(text) != JV_KIND_STRING) {
		jv_free(text);
		art_err_set(err, "bad_request", "messages[%d].content[%d]: "
		    "text part without a text string", i, j);
		return jv_invalid();
	}
	return text_block(text);
}

/* Message i's content: a string as it is, parts as blocks; "" if none. */
static jv
content(const jv *m, int i, struct art_err *err)
{
	jv c = art_json_field(m, "content"), blocks, part, b;
	int j, n;

	if (jv_get_kind(c) == JV_KIND_NULL) {
		jv_free(c);
		return jv_string("");
	}
	if (jv_get_kind(c) == JV_KIND_STRING)
		return c;
	if (jv_get_kind(c) != JV_KIND_ARRAY) {
		jv_free(c);
		art_err_set(err, "bad_request", "messages[%d]: content must be "
		    "a string or an array of parts", i);
		return jv_invalid();
	}
	blocks = jv_array();
	n = jv_array_length(jv_copy(c));
	for (j = 0; j < n; j++) {
		part = jv_array_get(jv_copy(c), j);
		b = part_block(&part, i, j, err);
		jv_free(part);
		if (!jv_is_valid(b)) {
			jv_free(blocks);
			blocks = b;
			break;
		}
		blocks = jv_array_append(blocks, b);
	}
	jv_free(c);
	return blocks;
}

/* The text of a system or tool message: a string, or its text parts. */
static jv
text_of(const jv *m, int i, struct art_err *err)
{
	jv c = art_json_field(m, "content"), out, part, text;
	const char *type;
	int j, n;

	if (jv_get_kind(c) != JV_KIND_ARRAY) {
		jv_free(c);
		return content(m, i, err);
	}
	out = jv_string("");
	n = jv_array_length(jv_copy(c));
	for (j = 0; j < n && jv_is_valid(out); j++) {
		part = jv_array_get(jv_copy(c), j);
		type = art_json_str(&part, "type");
		text = art_json_field(&part, "text");
		if (is(type, "text") && jv_get_kind(text) == JV_KIND_STRING)
			out = jv_string_concat(out, text);
		else {
			art_err_set(err, "bad_request", "messages[%d]."
			    "content[%d]: a %s message holds only text, not "
			    "part type '%.64s'", i, j, art_json_str(m, "role"),
			    type != NULL ? type : "(none)");
			jv_free(text);
			jv_free(out);
			out = jv_invalid();
		}
		jv_free(part);
	}
	jv_free(c);
	return out;
}

/* A tool call's arguments as a tool_use input: an object; "" is {}. */
static jv
call_input(const jv *fn)
{
	jv args = art_json_field(fn, "arguments"), input;
	int n;

	switch (jv_get_kind(args)) {
	case JV_KIND_OBJECT:
		return args;
	case JV_KIND_STRING:
		if ((n = jv_string_length_bytes(jv_copy(args))) == 0)
			input = jv_object();
		else
			input = art_json_parse(jv_string_value(args),
			    (size_t)n, NULL);
		break;
	case JV_KIND_NULL:
		input = jv_object();
		break;
	default:
		input = jv_invalid();
	}
	jv_free(args);
	return input;
}

static jv
tool_use(const jv *call, int i, int j, struct art_err *err)
{
	jv fn = art_json_field(call, "function"), input = jv_null();
	jv out = jv_invalid();
	const char *id = art_json_str(call, "id");
	const char *name = art_json_str(&fn, "name");

	if (id == NULL)
		art_err_set(err, "bad_request", "messages[%d].tool_calls[%d]: "
		    "call without an id", i, j);
	else if (name == NULL)
		art_err_set(err, "bad_request", "messages[%d].tool_calls[%d]: "
		    "call '%.64s' without a function name", i, j, id);
	else if (jv_get_kind(input = call_input(&fn)) != JV_KIND_OBJECT) {
		jv_free(input);
		art_err_set(err, "bad_request", "messages[%d].tool_calls[%d]: "
		    "arguments of call '%.64s' are not a JSON object", i, j,
		    id);
	} else {
		out = art_json_set(jv_object(), "type", jv_string("tool_use"));
		out = art_json_set(out, "id", jv_string(id));
		out = art_json_set(out, "name", jv_string(name));
		out = art_json_set(out, "input", input);
	}
	jv_free(fn);
	return out;
}

static jv
turn(const char *role, jv content)
{
	if (!jv_is_valid(content))
		return content;
	return art_json_set(art_json_set(jv_object(), "role", jv_string(role)),
	    "content", content);
}

/*
 * Message i's thinking_blocks, checked: each a thinking block with string
 * thinking and signature, or a redacted_thinking block with string data.
 * They go back as they came, so nothing else is kept of them.
 */
static jv
thinking_blocks(const jv *m, int i, struct art_err *err)
{
	static const char *const need[][3] = {
		{ "thinking", "thinking", "signature" },
		{ "redacted_thinking", "data", NULL },
	};
	jv tb = jv_null(), out;
	const char *type;
	size_t k;
	int j, n, good;

	if (art_json_get_kind(m, "thinking_blocks", JV_KIND_ARRAY, 0, &tb,
	    err) == -1) {
		art_err_prefix(err, "messages[%d]", i);
		return bad_request(err);
	}
	if (jv_get_kind(tb) != JV_KIND_ARRAY) {
		jv_free(tb);
		return jv_array();
	}
	n = jv_array_length(jv_copy(tb));
	for (j = 0; j < n; j++) {
		out = jv_array_get(jv_copy(tb), j);
		type = jv_get_kind(out) == JV_KIND_OBJECT ?
		    art_json_str(&out, "type") : NULL;
		for (k = 0, good = 0; k < 2 && !good; k++)
			good = is(type, need[k][0]) &&
			    art_json_str(&out, need[k][1]) != NULL &&
			    (need[k][2] == NULL ||
			    art_json_str(&out, need[k][2]) != NULL);
		jv_free(out);
		if (!good) {
			jv_free(tb);
			art_err_set(err, "bad_request", "messages[%d]."
			    "thinking_blocks[%d]: not a thinking block with "
			    "its signature, nor a redacted_thinking block with "
			    "its data", i, j);
			return jv_invalid();
		}
	}
	return tb;
}

/*
 * Thinking blocks first (the API wants them before what they led to),
 * then text (or parts), then one tool_use block per tool call.
 */
static jv
assistant(const jv *m, int i, struct art_err *err)
{
	jv calls = jv_null(), c, call, use, think, mm;
	int j, n;

	if (art_json_get_kind(m, "tool_calls", JV_KIND_ARRAY, 0, &calls,
	    err) == -1) {
		art_err_prefix(err, "messages[%d]", i);
		return bad_request(err);
	}
	if (!jv_is_valid(think = thinking_blocks(m, i, err))) {
		jv_free(calls);
		return think;
	}
	/* An assistant turn takes no image: a reply's own stay recorded. */
	mm = art_json_set(jv_copy(*m), "content", art_parts_assistant(
	    art_json_field(m, "content")));
	c = content(&mm, i, err);
	jv_free(mm);
	n = jv_get_kind(calls) == JV_KIND_ARRAY ?
	    jv_array_length(jv_copy(calls)) : 0;
	if (jv_is_valid(c) && jv_array_length(jv_copy(think)) > 0)
		c = jv_array_concat(think, as_blocks(c));
	else
		jv_free(think);
	if (n > 0 && jv_is_valid(c))
		c = as_blocks(c);
	for (j = 0; j < n && jv_is_valid(c); j++) {
		call = jv_array_get(jv_copy(calls), j);
		use = tool_use(&call, i, j, err);
		jv_free(call);
		if (!jv_is_valid(use)) {
			jv_free(c);
			c = use;
		} else
			c = jv_array_append(c, use);
	}
	jv_free(calls);
	return turn("assistant", c);
}

static jv
tool_result(const jv *m, int i, struct art_err *err)
{
	const char *id = art_json_str(m, "tool_call_id");
	jv text, b;

	if (id == NULL) {
		art_err_set(err, "bad_request", "messages[%d]: tool message "
		    "without a tool_call_id", i);
		return jv_invalid();
	}
	/* tool_result content may hold image blocks: parts go as blocks. */
	text = art_parts_has_image(m) ? content(m, i, err) : text_of(m, i, err);
	if (!jv_is_valid(text))
		return text;
	b = art_json_set(jv_object(), "type", jv_string("tool_result"));
	b = art_json_set(b, "tool_use_id", jv_string(id));
	b = art_json_set(b, "content", text);
	return turn("user", JV_ARRAY(b));
}

/*
 * Message i as a Messages API turn; a system message's text goes onto
 * *system instead, and jv_null() comes back.
 */
static jv
message(const jv *m, int i, jv *system, struct art_err *err)
{
	const char *role = art_json_str(m, "role");
	jv text;

	if (role == NULL) {
		art_err_set(err, "bad_request", "messages[%d]: no string "
		    "role", i);
		return jv_invalid();
	}
	if (is(role, "system")) {
		if (!jv_is_valid(text = text_of(m, i, err)))
			return text;
		*system = jv_array_append(*system, text);
		return jv_null();
	}
	if (is(role, "user"))
		return turn("user", content(m, i, err));
	if (is(role, "assistant"))
		return assistant(m, i, err);
	if (is(role, "tool"))
		return tool_result(m, i, err);
	art_err_set(err, "bad_request", "messages[%d]: unknown role '%.64s'",
	    i, role);
	return jv_invalid();
}

/* Appends t, or merges it into the last turn when the roles match. */
static jv
add_turn(jv turns, jv t)
{
	int n = jv_array_length(jv_copy(turns));
	jv last, c;

	if (n > 0) {
		last = jv_array_get(jv_copy(turns), n - 1);
		if (jv_equal(art_json_field(&last, "role"),
		    art_json_field(&t, "role"))) {
			c = jv_array_concat(
			    as_blocks(art_json_field(&last, "content")),
			    as_blocks(art_json_field(&t, "content")));
			jv_free(t);
			return jv_array_set(turns, n - 1,
			    art_json_set(last, "content", c));
		}
		jv_free(last);
	}
	return jv_array_append(turns, t);
}

static jv
join_system(jv texts)
{
	jv out = jv_null(), s;
	int i, n = jv_array_length(jv_copy(texts));

	for (i = 0; i < n; i++) {
		s = jv_array_get(jv_copy(texts), i);
		out = jv_get_kind(out) == JV_KIND_STRING ?
		    jv_string_concat(jv_string_append_str(out, "\n\n"), s) : s;
	}
	jv_free(texts);
	return out;
}

static jv
put_messages(jv body, const jv *msgs, struct art_err *err)
{
	jv system = jv_array(), turns = jv_array(), m, t;
	int i, n = jv_array_length(jv_copy(*msgs));

	for (i = 0; i < n; i++) {
		m = jv_array_get(jv_copy(*msgs), i);
		t = message(&m, i, &system, err);
		jv_free(m);
		if (!jv_is_valid(t)) {
			jv_free(system);
			jv_free(turns);
			jv_free(body);
			return t;
		}
		if (jv_get_kind(t) == JV_KIND_OBJECT)
			turns = add_turn(turns, t);
	}
	if (jv_array_length(jv_copy(system)) > 0)
		body = art_json_set(body, "system", join_system(system));
	else
		jv_free(system);
	return art_json_set(body, "messages", turns);
}

static jv
tool(const jv *t, int i, struct art_err *err)
{
	const char *name = art_json_str(t, "name");
	jv desc, input, out;

	if (name == NULL) {
		art_err_set(err, "bad_request", "tools[%d]: no string name", i);
		return jv_invalid();
	}
	out = art_json_set(jv_object(), "name", jv_string(name));
	if (jv_get_kind(desc = art_json_field(t, "description")) ==
	    JV_KIND_STRING)
		out = art_json_set(out, "description", desc);
	else
		jv_free(desc);
	if (jv_get_kind(input = art_json_field(t, "input")) != JV_KIND_OBJECT) {
		jv_free(input);
		input = art_json_set(art_json_set(jv_object(), "type",
		    jv_string("object")), "properties", jv_object());
	}
	return art_json_set(out, "input_schema", input);
}

static jv
put_tools(jv body, const jv *req, struct art_err *err)
{
	jv tools = jv_null(), out, t, one;
	int i, n;

	if (art_json_get_kind(req, "tools", JV_KIND_ARRAY, 0, &tools,
	    err) == -1) {
		jv_free(body);
		return bad_request(err);
	}
	if (jv_get_kind(tools) != JV_KIND_ARRAY ||
	    (n = jv_array_length(jv_copy(tools))) == 0) {
		jv_free(tools);
		return body;
	}
	out = jv_array();
	for (i = 0; i < n; i++) {
		t = jv_array_get(jv_copy(tools), i);
		one = tool(&t, i, err);
		jv_free(t);
		if (!jv_is_valid(one)) {
			jv_free(out);
			jv_free(tools);
			jv_free(body);
			return one;
		}
		out = jv_array_append(out, one);
	}
	jv_free(tools);
	return art_json_set(body, "tools", out);
}

/*
 * The Messages API has no response format, so agentrt's response_format
 * {name, description?, schema} becomes a tool whose input is the answer,
 * and tool_choice makes the model use it: that tool alone when it is the
 * only one, else any tool (a real call, or the answer).  Extended
 * thinking refuses a forced tool choice, so with thinking on the choice
 * stays "auto" and the model is only offered the tool.
 */
/* The tool_choice that makes the model answer through tool name. */
static jv
answer_choice(const jv *body, const jv *tools, const char *name)
{
	jv think = art_json_field(body, "thinking");
	bool thinking = jv_get_kind(think) == JV_KIND_OBJECT;

	jv_free(think);
	if (thinking)
		return art_json_set(jv_object(), "type", jv_string("auto"));
	if (jv_array_length(jv_copy(*tools)) > 0)
		return art_json_set(jv_object(), "type", jv_string("any"));
	return art_json_set(art_json_set(jv_object(), "type",
	    jv_string("tool")), "name", jv_string(name));
}

/* Whether one of tools (borrowed, the body's) is called name. */
static bool
has_tool(const jv *tools, const char *name)
{
	bool found = false;

	jv_array_foreach(*tools, i, t) {
		found |= is(art_json_str(&t, "name"), name);
		jv_free(t);
	}
	return found;
}

static jv
put_answer_tool(jv body, const jv *req, struct art_err *err)
{
	jv rf = jv_null(), schema = jv_null(), tools, t, choice;
	const char *name = NULL, *desc = NULL;

	if (art_json_get_kind(req, "response_format", JV_KIND_OBJECT, 0, &rf,
	    err) == -1) {
		jv_free(body);
		return bad_request(err);
	}
	if (jv_get_kind(rf) != JV_KIND_OBJECT)
		return body;
	if (art_json_get_str(&rf, "name", 1, &name, err) == -1 ||
	    art_json_get_str(&rf, "description", 0, &desc, err) == -1 ||
	    art_json_get_kind(&rf, "schema", JV_KIND_OBJECT, 1, &schema,
	    err) == -1) {
		art_err_prefix(err, "response_format");
		jv_free(rf);
		jv_free(body);
		return bad_request(err);
	}
	tools = art_json_field(&body, "tools");
	if (jv_get_kind(tools) != JV_KIND_ARRAY) {
		jv_free(tools);
		tools = jv_array();
	}
	if (*name == '\0' || has_tool(&tools, name)) {
		if (*name == '\0')
			art_err_set(err, "bad_request", "response_format: "
			    "empty 'name'");
		else
			art_err_set(err, "bad_request", "response_format: "
			    "name '%.64s' is a tool's name too", name);
		jv_free(tools);
		jv_free(schema);
		jv_free(rf);
		jv_free(body);
		return jv_invalid();
	}
	choice = answer_choice(&body, &tools, name);
	t = art_json_set(jv_object(), "name", jv_string(name));
	if (desc != NULL)
		t = art_json_set(t, "description", jv_string(desc));
	t = art_json_set(t, "input_schema", schema);
	jv_free(rf);
	body = art_json_set(body, "tools", jv_array_append(tools, t));
	return art_json_set(body, "tool_choice", choice);
}

/*
 * Extended thinking, when reasoning asks for it: enabled, or a token
 * budget given.  An explicit "enabled": false wins over a budget.
 */
static jv
thinking(const jv *reasoning, struct art_err *err)
{
	int64_t budget = -1;
	int enabled = -1;

	if (art_json_get_bool(reasoning, "enabled", 0, &enabled, err) == -1 ||
	    art_json_get_int(reasoning, "max_tokens", 0, &budget, err) == -1) {
		art_err_prefix(err, "reasoning");
		return bad_request(err);
	}
	if (enabled == 0 || (enabled == -1 && budget == -1))
		return jv_null();
	return art_json_set(art_json_set(jv_object(), "type",
	    jv_string("enabled")),
	    "budget_tokens", jv_number(budget >= 0 ? (double)budget : BUDGET));
}

static jv
put_limits(jv body, const jv *req, struct art_err *err)
{
	jv temp = jv_null(), reasoning = jv_null(), think;
	int64_t max = MAX_TOKENS;

	if (art_json_get_int(req, "max_completion_tokens", 0, &max,
	    err) == -1 || art_json_get_kind(req, "temperature",
	    JV_KIND_NUMBER, 0, &temp, err) == -1 ||
	    art_json_get_kind(req, "reasoning", JV_KIND_OBJECT, 0, &reasoning,
	    err) == -1) {
		jv_free(body);
		return bad_request(err);
	}
	think = thinking(&reasoning, err);
	jv_free(reasoning);
	if (!jv_is_valid(think)) {
		jv_free(temp);
		jv_free(body);
		return think;
	}
	/*
	 * What the API refuses is fixed up or refused here: a budget under
	 * its least; max_tokens holds the thinking budget, so one that does
	 * not exceed it gets the answer's tokens on top; and thinking takes
	 * no temperature but 1.
	 */
	if (jv_get_kind(think) == JV_KIND_OBJECT) {
		jv b = art_json_field(&think, "budget_tokens");
		int64_t budget = (int64_t)jv_number_value(b);

		jv_free(b);
		if (budget < BUDGET) {
			jv_free(temp);
			jv_free(think);
			jv_free(body);
			art_err_set(err, "bad_request", "reasoning.max_tokens "
			    "%lld: Anthropic's thinking budget is %d tokens "
			    "at least", (long long)budget, BUDGET);
			return bad_request(err);
		}
		if (max <= budget)
			max += budget;
		if (jv_get_kind(temp) == JV_KIND_NUMBER &&
		    jv_number_value(temp) != 1) {
			jv_free(temp);
			temp = jv_null();
		}
	}
	body = art_json_set(body, "max_tokens", jv_number((double)max));
	if (jv_get_kind(temp) == JV_KIND_NUMBER)
		body = art_json_set(body, "temperature", temp);
	else
		jv_free(temp);
	if (jv_get_kind(think) == JV_KIND_OBJECT)
		body = art_json_set(body, "thinking", think);
	else
		jv_free(think);
	return body;
}

static jv
make_request(const jv *req, const char *model, bool stream,
    struct art_err *err)
{
	jv msgs = jv_null(), body;

	if (jv_get_kind(*req) != JV_KIND_OBJECT) {
		art_err_set(err, "bad_request", "request: expected an object, "
		    "got %s", art_json_kind_name(jv_get_kind(*req)));
		return jv_invalid();
	}
	if (art_json_get_kind(req, "messages", JV_KIND_ARRAY, 1, &msgs,
	    err) == -1)
		return bad_request(err);
	body = art_json_set(jv_object(), "model",
	    jv_string(model != NULL ? model : ""));
	body = put_limits(body, req, err);
	if (jv_is_valid(body))
		body = put_messages(body, &msgs, err);
	if (jv_is_valid(body))
		body = put_tools(body, req, err);
	if (jv_is_valid(body))
		body = put_answer_tool(body, req, err);
	if (jv_is_valid(body) && stream)
		body = art_json_set(body, "stream", jv_true());
	jv_free(msgs);
	return body;
}

/* --- errors ----------------------------------------------------------- */

/*
 * The code and retryability of a failure, by HTTP status (0: none) and
 * the provider's error type.  A billing error is a quota, never a rate.
 */
static bool
classify(long status, const char *type, const char **code)
{
	*code = "provider_error";
	if (is(type, "billing_error")) {
		*code = "budget_exceeded";
		return false;
	}
	if (status == 429 || is(type, "rate_limit_error")) {
		*code = "rate_limited";
		return true;
	}
	return status == 408 || status == 409 || status == 529 ||
	    (status >= 500 && status <= 599) || is(type, "overloaded_error") ||
	    is(type, "api_error") || is(type, "timeout_error");
}

/* The first SNIPPET printable bytes of a body, on one line. */
static jv
snippet(const char *body, size_t len)
{
	unsigned char buf[SNIPPET], c;
	size_t i, n = 0;
	bool blank = false;

	for (i = 0; i < len && n < SNIPPET; i++) {
		c = (unsigned char)body[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			blank = n > 0;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			continue;
		if (blank && n < SNIPPET - 1)
			buf[n++] = ' ';
		blank = false;
		buf[n++] = c;
	}
	n = art_utf8_whole((const char *)buf, n);
	if (n == 0)
		return jv_string("empty response body");
	return jv_string_sized((const char *)buf, (int)n);
}

/*
 * The error object for a failure the provider described: status (0 when
 * none), the body parsed (null when it is not JSON) and as it came, what
 * the failure is ("" or "stream error: "), the retry delay (-1: unknown)
 * and the request id from the headers (NULL: none).
 */
static jv
describe(long status, const jv *parsed, const char *raw, size_t len,
    const char *what, int64_t retry_ms, const char *header_id)
{
	jv perr = art_json_field(parsed, "error"), msg, e, detail;
	const char *text, *code, *rid = art_json_str(parsed, "request_id");
	bool retryable;

	if (jv_get_kind(perr) != JV_KIND_OBJECT) {
		jv_free(perr);
		perr = jv_null();
	}
	if ((text = art_json_str(&perr, "message")) == NULL)
		text = art_json_str(&perr, "type");
	msg = text != NULL ? jv_string(text) : snippet(raw, len);
	retryable = classify(status, art_json_str(&perr, "type"), &code);
	e = art_wire_error(jv_string_concat(status > 0 ?
	    jv_string_fmt("anthropic %ld: %s", status, what) :
	    jv_string_fmt("anthropic: %s", what), msg), retryable, code);
	if (retry_ms >= 0)
		e = art_json_set(e, "retry_after_ms",
		    jv_number((double)retry_ms));
	detail = jv_object();
	if (status > 0)
		detail = art_json_set(detail, "status",
		    jv_number((double)status));
	detail = art_json_set(detail, "error", perr);
	if ((rid = rid != NULL ? rid : header_id) != NULL)
		detail = art_json_set(detail, "request_id", jv_string(rid));
	return art_json_set(e, "detail", detail);
}

/* A retry-after-ms value, rounded up; -1 when it is not a number. */
static int64_t
millis(const char *v)
{
	char *end;
	double d = strtod(v, &end);
	int64_t ms;

	if (end == v || *end != '\0' || !(d >= 0 && d < 1e15))
		return -1;
	ms = (int64_t)d;
	return (double)ms < d ? ms + 1 : ms;
}

/* True when the limit whose reset header is key has nothing left. */
static bool
used_up(const jv *headers, const char *key)
{
	size_t n = strlen(key) - strlen(RESET_SUFFIX);
	jv name = jv_string_fmt("%.*sremaining", (int)n + 1, key);
	const char *left = art_json_str(headers, jv_string_value(name));

	jv_free(name);
	return is(left, "0");
}

/*
 * The anthropic-ratelimit-*-reset headers say when each limit resets.
 * A retry must wait for every limit that is used up, so the latest of
 * their resets; when none says it is used up, the earliest reset.
 */
static int64_t
reset_after(const jv *headers, int64_t now_ms)
{
	int64_t t, first = INT64_MAX, spent = INT64_MIN;
	const char *k;
	size_t n;

	jv_object_foreach(*headers, key, val) {
		k = jv_string_value(key);
		n = strlen(k);
		if (strncmp(k, RESET_PREFIX, strlen(RESET_PREFIX)) == 0 &&
		    n > strlen(RESET_PREFIX RESET_SUFFIX) &&
		    strcmp(k + n - strlen(RESET_SUFFIX), RESET_SUFFIX) == 0 &&
		    jv_get_kind(val) == JV_KIND_STRING &&
		    art_clock_parse(jv_string_value(val), &t, NULL) == 0) {
			if (t < first)
				first = t;
			if (t > spent && used_up(headers, k))
				spent = t;
		}
		jv_free(key);
		jv_free(val);
	}
	if (spent != INT64_MIN)
		first = spent;
	if (first == INT64_MAX)
		return -1;
	return first > now_ms ? first - now_ms : 0;
}

static int64_t
retry_after(const jv *headers, int64_t now_ms)
{
	const char *v;
	int64_t ms;

	if (headers == NULL || jv_get_kind(*headers) != JV_KIND_OBJECT)
		return -1;
	if ((v = art_json_str(headers, "retry-after-ms")) != NULL &&
	    (ms = millis(v)) >= 0)
		return ms;
	if ((v = art_json_str(headers, "retry-after")) != NULL &&
	    (ms = art_wire_retry_after(v, now_ms)) >= 0)
		return ms;
	return reset_after(headers, now_ms);
}

static jv
map_error(long status, const jv *headers, const char *body, size_t len,
    int64_t now_ms)
{
	jv parsed = parse_body(body, len), e;
	const char *rid = NULL;

	if (!jv_is_valid(parsed)) {
		jv_free(parsed);
		parsed = jv_null();
	}
	if (headers != NULL)
		rid = art_json_str(headers, "request-id");
	e = describe(status, &parsed, body, len, "",
	    retry_after(headers, now_ms), rid);
	jv_free(parsed);
	return e;
}

/* --- response: a Messages body to an LlmResponse ---------------------- */

/* What an answer is made of, from a whole body or from a stream. */
struct answer {
	jv	 id;		/* the message's id, msg_... */
	jv	 model;
	jv	 text;		/* null until a text block */
	jv	 reasoning;	/* null until a thinking block */
	jv	 thinking;	/* the thinking_blocks, in order */
	jv	 calls;		/* tool_calls */
	jv	 stop;		/* the stop_reason */
	jv	 usage;		/* the provider's */
};

static jv
finish_reason(const char *stop)
{
	size_t i;

	for (i = 0; i < NSTOPS; i++)
		if (strcmp(stops[i].anthropic, stop) == 0)
			return jv_string(stops[i].neutral);
	return jv_string(stop);
}

static jv
usage_of(jv raw)
{
	double in = num(&raw, "input_tokens");
	double rd = num(&raw, "cache_read_input_tokens");
	double wr = num(&raw, "cache_creation_input_tokens");
	double out = num(&raw, "output_tokens");
	jv u = art_json_set(jv_object(), "input", jv_number(in + rd + wr));

	u = art_json_set(u, "uncached_input", jv_number(in));
	u = art_json_set(u, "cache_read", jv_number(rd));
	u = art_json_set(u, "cache_write", jv_number(wr));
	u = art_json_set(u, "output", jv_number(out));
	u = art_json_set(u, "total", jv_number(in + rd + wr + out));
	return art_json_set(u, "provider", raw);
}

static jv
tool_call(jv id, jv name, jv arguments)
{
	jv fn = art_json_set(art_json_set(jv_object(), "name", name),
	    "arguments", arguments);
	jv c = art_json_set(jv_object(), "id", id);

	c = art_json_set(c, "type", jv_string("function"));
	return art_json_set(c, "function", fn);
}

static void
answer_release(struct answer *a)
{
	jv_free(a->id);
	jv_free(a->model);
	jv_free(a->text);
	jv_free(a->reasoning);
	jv_free(a->thinking);
	jv_free(a->calls);
	jv_free(a->stop);
	jv_free(a->usage);
}

static bool
is_kind(const jv *v, jv_kind kind)
{
	return jv_get_kind(*v) == kind;
}

/*
 * The LlmResponse a adds up to; releases a.  A refusal is an answer too,
 * finish_reason "refusal", with whatever was said before it.
 */
static int
finish(struct answer *a, jv *resp, jv *error)
{
	const char *stop = is_kind(&a->stop, JV_KIND_STRING) ?
	    jv_string_value(a->stop) : NULL;
	jv r = jv_object();

	(void)error;
	if (is_kind(&a->id, JV_KIND_STRING))
		r = art_json_set(r, "id", jv_copy(a->id));
	if (is_kind(&a->model, JV_KIND_STRING))
		r = art_json_set(r, "model", jv_copy(a->model));
	if (is_kind(&a->text, JV_KIND_STRING))
		r = art_json_set(r, "content", jv_copy(a->text));
	if (jv_array_length(jv_copy(a->calls)) > 0)
		r = art_json_set(r, "tool_calls", jv_copy(a->calls));
	if (stop != NULL)
		r = art_json_set(r, "finish_reason", finish_reason(stop));
	if (is_kind(&a->usage, JV_KIND_OBJECT))
		r = art_json_set(r, "usage", usage_of(jv_copy(a->usage)));
	if (is_kind(&a->reasoning, JV_KIND_STRING))
		r = art_json_set(r, "reasoning", jv_copy(a->reasoning));
	if (jv_array_length(jv_copy(a->thinking)) > 0)
		r = art_json_set(r, "thinking_blocks", jv_copy(a->thinking));
	answer_release(a);
	*resp = r;
	return 0;
}

/* Adds one content block of a whole response to a; false if malformed. */
static bool
add_block(struct answer *a, const jv *b)
{
	const char *type = art_json_str(b, "type");
	jv id, name;

	if (is(type, "text"))
		a->text = join(a->text, art_json_field(b, "text"));
	else if (is(type, "thinking")) {
		a->reasoning = join(a->reasoning,
		    art_json_field(b, "thinking"));
		a->thinking = jv_array_append(a->thinking, jv_copy(*b));
	} else if (is(type, "redacted_thinking"))
		a->thinking = jv_array_append(a->thinking, jv_copy(*b));
	else if (is(type, "tool_use")) {
		id = art_json_field(b, "id");
		name = art_json_field(b, "name");
		if (jv_get_kind(id) != JV_KIND_STRING ||
		    jv_get_kind(name) != JV_KIND_STRING) {
			jv_free(id);
			jv_free(name);
			return false;
		}
		a->calls = jv_array_append(a->calls, tool_call(id, name,
		    jv_dump_string(art_json_field(b, "input"), 0)));
	}
	return true;
}

static int
read_response(const char *body, size_t len, jv *resp, jv *error)
{
	jv msg = parse_body(body, len), blocks, b;
	struct answer a;
	bool good = true;
	int i, n;

	if (!jv_is_valid(msg)) {
		jv_free(msg);
		*error = art_wire_error(jv_string("anthropic: response is not valid "
		    "JSON"), true, "provider_error");
		return -1;
	}
	if (is(art_json_str(&msg, "type"), "error")) {
		*error = describe(0, &msg, body, len, "", -1, NULL);
		jv_free(msg);
		return -1;
	}
	blocks = art_json_field(&msg, "content");
	if (jv_get_kind(blocks) != JV_KIND_ARRAY) {
		jv_free(blocks);
		jv_free(msg);
		*error = art_wire_error(jv_string("anthropic: response has no "
		    "content array"), false, "provider_error");
		return -1;
	}
	a.id = art_json_field(&msg, "id");
	a.model = art_json_field(&msg, "model");
	a.text = a.reasoning = jv_null();
	a.thinking = jv_array();
	a.calls = jv_array();
	a.stop = art_json_field(&msg, "stop_reason");
	a.usage = art_json_field(&msg, "usage");
	n = jv_array_length(jv_copy(blocks));
	for (i = 0; i < n && good; i++) {
		b = jv_array_get(jv_copy(blocks), i);
		good = add_block(&a, &b);
		jv_free(b);
	}
	jv_free(blocks);
	jv_free(msg);
	if (!good) {
		answer_release(&a);
		*error = art_wire_error(jv_string("anthropic: tool_use block without "
		    "an id and a name"), false, "provider_error");
		return -1;
	}
	return finish(&a, resp, error);
}

/* --- native: an LlmResponse as a Messages body ------------------------ */

/* Arguments that are not a JSON object cannot be an input: {} then. */
static jv
native_tool_use(const jv *call)
{
	jv fn = art_json_field(call, "function"), input = call_input(&fn), b;

	if (jv_get_kind(input) != JV_KIND_OBJECT) {
		jv_free(input);
		input = jv_object();
	}
	b = art_json_set(jv_object(), "type", jv_string("tool_use"));
	b = art_json_set(b, "id", art_json_field(call, "id"));
	b = art_json_set(b, "name", art_json_field(&fn, "name"));
	jv_free(fn);
	return art_json_set(b, "input", input);
}

/* The thinking the response keeps, or its reasoning as one block. */
static jv
native_thinking(const jv *resp)
{
	jv v = art_json_field(resp, "thinking_blocks"), b;

	if (jv_get_kind(v) == JV_KIND_ARRAY)
		return v;
	jv_free(v);
	if (jv_get_kind(v = art_json_field(resp, "reasoning")) !=
	    JV_KIND_STRING) {
		jv_free(v);
		return jv_array();
	}
	b = art_json_set(jv_object(), "type", jv_string("thinking"));
	b = art_json_set(b, "thinking", v);
	return JV_ARRAY(art_json_set(b, "signature", jv_string("")));
}

static jv
native_content(const jv *resp)
{
	jv out = native_thinking(resp), v, calls;
	int i, n;

	if (jv_get_kind(v = art_json_field(resp, "content")) ==
	    JV_KIND_STRING)
		out = jv_array_append(out, text_block(v));
	else
		jv_free(v);
	calls = art_json_field(resp, "tool_calls");
	n = jv_get_kind(calls) == JV_KIND_ARRAY ?
	    jv_array_length(jv_copy(calls)) : 0;
	for (i = 0; i < n; i++) {
		v = jv_array_get(jv_copy(calls), i);
		out = jv_array_append(out, native_tool_use(&v));
		jv_free(v);
	}
	jv_free(calls);
	return out;
}

static jv
native_stop(const jv *resp)
{
	const char *fr = art_json_str(resp, "finish_reason");
	size_t i;

	if (fr == NULL)
		return jv_null();
	for (i = 0; i < NSTOPS; i++)
		if (strcmp(stops[i].neutral, fr) == 0)
			return jv_string(stops[i].anthropic);
	return jv_string(fr);
}

/* The provider's usage as it came, or rebuilt from the normalised one. */
static jv
native_usage(const jv *resp)
{
	jv usage = art_json_field(resp, "usage"), raw, u;

	raw = art_json_field(&usage, "provider");
	if (jv_get_kind(raw) == JV_KIND_OBJECT || jv_get_kind(usage) !=
	    JV_KIND_OBJECT) {
		jv_free(usage);
		return raw;
	}
	jv_free(raw);
	u = art_json_set(jv_object(), "input_tokens",
	    jv_number(num(&usage, "uncached_input")));
	u = art_json_set(u, "cache_creation_input_tokens",
	    jv_number(num(&usage, "cache_write")));
	u = art_json_set(u, "cache_read_input_tokens",
	    jv_number(num(&usage, "cache_read")));
	u = art_json_set(u, "output_tokens", jv_number(num(&usage, "output")));
	jv_free(usage);
	return u;
}

static jv
make_native(const jv *resp)
{
	const char *model = art_json_str(resp, "model");
	const char *id = art_json_str(resp, "id");
	jv out = art_json_set(jv_object(), "id", jv_string(id != NULL ? id :
	    "msg_agentrt")), usage;

	out = art_json_set(out, "type", jv_string("message"));
	out = art_json_set(out, "role", jv_string("assistant"));
	out = art_json_set(out, "model", jv_string(model != NULL ? model : ""));
	out = art_json_set(out, "content", native_content(resp));
	out = art_json_set(out, "stop_reason", native_stop(resp));
	out = art_json_set(out, "stop_sequence", jv_null());
	if (jv_get_kind(usage = native_usage(resp)) == JV_KIND_OBJECT)
		out = art_json_set(out, "usage", usage);
	else
		jv_free(usage);
	return out;
}

/* --- streams ---------------------------------------------------------- */

enum kind { OTHER, TEXT, TOOL, THINKING, REDACTED };

struct block {
	enum kind	 kind;
	bool		 started;
	bool		 stopped;	/* content_block_stop came */
	jv		 id, name;	/* a tool_use block's */
	jv		 text;		/* the text, thinking, data or input JSON */
	jv		 sig;		/* a thinking block's signature */
	bool		 answer;	/* a tool_use of the answer tool */
};

struct art_wire_stream {
	jv		 id;		/* message_start's message.id */
	jv		 model;
	jv		 usage;		/* the provider's, merged as it comes */
	jv		 stop;		/* message_delta's stop_reason */
	bool		 started;	/* message_start came */
	bool		 ended;		/* message_stop came */
	jv		 answer;	/* the answer tool's name, or null */
	struct block	*blocks;
	size_t		 nblocks;
};

static void
block_release(struct block *b)
{
	jv_free(b->id);
	jv_free(b->name);
	jv_free(b->text);
	jv_free(b->sig);
	memset(b, 0, sizeof(*b));
	b->id = b->name = b->text = b->sig = jv_null();
}

static struct art_wire_stream *
stream_new(void)
{
	struct art_wire_stream *st;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return NULL;
	st->id = st->model = st->usage = st->stop = st->answer = jv_null();
	return st;
}

static void
stream_answer(struct art_wire_stream *st, const char *name)
{
	jv_free(st->answer);
	st->answer = jv_string(name);
}

static void
stream_free(struct art_wire_stream *st)
{
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; i < st->nblocks; i++)
		block_release(&st->blocks[i]);
	free(st->blocks);
	jv_free(st->id);
	jv_free(st->model);
	jv_free(st->usage);
	jv_free(st->stop);
	jv_free(st->answer);
	free(st);
}

static int
malformed(jv *error, const char *event, const char *why)
{
	*error = art_wire_error(jv_string_fmt("anthropic: stream event %s %s",
	    event, why), false, "provider_error");
	return -1;
}

/*
 * The block data's "index" names, grown into when create is set; NULL
 * with *error set when there is none.
 */
static struct block *
block_at(struct art_wire_stream *st, const jv *data, bool create,
    const char *event, jv *error)
{
	struct block *nb;
	int64_t idx = -1;
	size_t i;

	art_json_get_int(data, "index", 1, &idx, NULL);
	if (idx < 0 || idx >= MAX_BLOCKS) {
		malformed(error, event, "has no valid index");
		return NULL;
	}
	if ((size_t)idx >= st->nblocks && create) {
		if ((nb = realloc(st->blocks, ((size_t)idx + 1) *
		    sizeof(*nb))) == NULL) {
			*error = art_wire_error(jv_string("anthropic: out of memory"),
			    false, "provider_error");
			return NULL;
		}
		st->blocks = nb;
		for (i = st->nblocks; i <= (size_t)idx; i++) {
			memset(&nb[i], 0, sizeof(nb[i]));
			block_release(&nb[i]);
		}
		st->nblocks = (size_t)idx + 1;
	}
	if ((size_t)idx >= st->nblocks || (!create &&
	    !st->blocks[idx].started)) {
		malformed(error, event, "names a block that never started");
		return NULL;
	}
	return &st->blocks[idx];
}

static jv
call_delta(const jv *id, const char *key, jv v)
{
	jv c = art_json_set(art_json_set(jv_object(), "id", jv_copy(*id)), key,
	    v);

	return art_json_set(jv_object(), "tool_calls", JV_ARRAY(c));
}

/* Appends {key: piece} to deltas unless piece is empty; consumes it. */
static jv
text_delta(jv deltas, const char *key, jv piece)
{
	if (jv_get_kind(piece) != JV_KIND_STRING ||
	    jv_string_length_bytes(jv_copy(piece)) == 0) {
		jv_free(piece);
		return deltas;
	}
	return jv_array_append(deltas, art_json_set(jv_object(), key, piece));
}

static int
on_message_start(struct art_wire_stream *st, const jv *data, jv *deltas,
    jv *error)
{
	jv msg = art_json_field(data, "message"), usage;

	(void)deltas;
	(void)error;
	st->started = true;
	jv_free(st->id);
	st->id = art_json_field(&msg, "id");
	jv_free(st->model);
	st->model = art_json_field(&msg, "model");
	if (jv_get_kind(usage = art_json_field(&msg, "usage")) ==
	    JV_KIND_OBJECT) {
		jv_free(st->usage);
		st->usage = usage;
	} else
		jv_free(usage);
	jv_free(msg);
	return 0;
}

static int
on_block_start(struct art_wire_stream *st, const jv *data, jv *deltas,
    jv *error)
{
	struct block *b;
	jv cb;
	const char *type;

	if ((b = block_at(st, data, true, "content_block_start",
	    error)) == NULL)
		return -1;
	block_release(b);
	b->started = true;
	cb = art_json_field(data, "content_block");
	type = art_json_str(&cb, "type");
	if (is(type, "text")) {
		b->kind = TEXT;
		b->text = join(jv_null(), art_json_field(&cb, "text"));
		*deltas = text_delta(*deltas, "text", jv_copy(b->text));
	} else if (is(type, "thinking")) {
		b->kind = THINKING;
		b->text = join(jv_null(), art_json_field(&cb, "thinking"));
		b->sig = join(jv_null(), art_json_field(&cb, "signature"));
		*deltas = text_delta(*deltas, "reasoning", jv_copy(b->text));
	} else if (is(type, "redacted_thinking")) {
		b->kind = REDACTED;
		b->text = art_json_field(&cb, "data");
		if (jv_get_kind(b->text) != JV_KIND_STRING) {
			jv_free(cb);
			return malformed(error, "content_block_start",
			    "has a redacted_thinking block without its data");
		}
	} else if (is(type, "tool_use")) {
		b->kind = TOOL;
		b->id = art_json_field(&cb, "id");
		b->name = art_json_field(&cb, "name");
		b->text = jv_string("");
		if (jv_get_kind(b->id) != JV_KIND_STRING ||
		    jv_get_kind(b->name) != JV_KIND_STRING) {
			jv_free(cb);
			return malformed(error, "content_block_start",
			    "has a tool_use block without an id and a name");
		}
		/* The answer streams as its JSON text, as OpenAI's does. */
		b->answer = jv_get_kind(st->answer) == JV_KIND_STRING &&
		    strcmp(jv_string_value(st->answer),
		    jv_string_value(b->name)) == 0;
		if (!b->answer)
			*deltas = jv_array_append(*deltas, call_delta(&b->id,
			    "name", jv_copy(b->name)));
	}
	jv_free(cb);
	return 0;
}

static int
on_block_delta(struct art_wire_stream *st, const jv *data, jv *deltas,
    jv *error)
{
	struct block *b;
	const char *type;
	jv d, piece = jv_null();

	if ((b = block_at(st, data, false, "content_block_delta",
	    error)) == NULL)
		return -1;
	d = art_json_field(data, "delta");
	type = art_json_str(&d, "type");
	if (is(type, "text_delta") && b->kind == TEXT) {
		piece = art_json_field(&d, "text");
		*deltas = text_delta(*deltas, "text", jv_copy(piece));
	} else if (is(type, "thinking_delta") && b->kind == THINKING) {
		piece = art_json_field(&d, "thinking");
		*deltas = text_delta(*deltas, "reasoning", jv_copy(piece));
	} else if (is(type, "signature_delta") && b->kind == THINKING) {
		b->sig = join(b->sig, art_json_field(&d, "signature"));
	} else if (is(type, "input_json_delta") && b->kind == TOOL) {
		piece = art_json_field(&d, "partial_json");
		if (b->answer)
			*deltas = text_delta(*deltas, "text", jv_copy(piece));
		else if (jv_get_kind(piece) == JV_KIND_STRING &&
		    jv_string_length_bytes(jv_copy(piece)) > 0)
			*deltas = jv_array_append(*deltas, call_delta(&b->id,
			    "arguments", jv_copy(piece)));
	}
	if (jv_get_kind(piece) == JV_KIND_STRING)
		b->text = jv_string_concat(b->text, piece);
	else
		jv_free(piece);
	jv_free(d);
	return 0;
}

static int
on_block_stop(struct art_wire_stream *st, const jv *data, jv *deltas,
    jv *error)
{
	struct block *b;

	(void)deltas;
	if ((b = block_at(st, data, false, "content_block_stop",
	    error)) == NULL)
		return -1;
	b->stopped = true;
	return 0;
}

/* message_delta's usage holds the final counts: each replaces the old. */
static void
merge_usage(struct art_wire_stream *st, const jv *usage)
{
	if (jv_get_kind(st->usage) != JV_KIND_OBJECT) {
		jv_free(st->usage);
		st->usage = jv_object();
	}
	jv_object_foreach(*usage, k, v) {
		if (jv_get_kind(v) != JV_KIND_NULL)
			st->usage = jv_object_set(st->usage, k, v);
		else {
			jv_free(k);
			jv_free(v);
		}
	}
}

static int
on_message_delta(struct art_wire_stream *st, const jv *data, jv *deltas,
    jv *error)
{
	jv d = art_json_field(data, "delta"), usage;
	const char *stop = art_json_str(&d, "stop_reason");

	(void)error;
	if (stop != NULL) {
		jv_free(st->stop);
		st->stop = jv_string(stop);
		*deltas = jv_array_append(*deltas, art_json_set(jv_object(),
		    "finish_reason", finish_reason(stop)));
	}
	if (jv_get_kind(usage = art_json_field(data, "usage")) ==
	    JV_KIND_OBJECT)
		merge_usage(st, &usage);
	jv_free(usage);
	jv_free(d);
	return 0;
}

static int
on_message_stop(struct art_wire_stream *st, const jv *data, jv *deltas,
    jv *error)
{
	(void)data;
	(void)deltas;
	(void)error;
	st->ended = true;
	return 1;
}

static const struct handler {
	const char	*event;
	int		(*fn)(struct art_wire_stream *, const jv *, jv *, jv *);
} handlers[] = {
	{ "message_start",		on_message_start },
	{ "content_block_start",	on_block_start },
	{ "content_block_delta",	on_block_delta },
	{ "content_block_stop",		on_block_stop },
	{ "message_delta",		on_message_delta },
	{ "message_stop",		on_message_stop },
};
#define NHANDLERS	(sizeof(handlers) / sizeof(handlers[0]))

static int
stream_event(struct art_wire_stream *st, const struct art_sse_event *ev,
    jv *deltas, jv *error)
{
	jv data = art_json_parse(ev->data, ev->data_len, NULL);
	const char *name = ev->event, *type;
	size_t i;
	int rc = 0;

	if (!jv_is_valid(data)) {
		jv_free(data);
		*error = art_wire_error(jv_string_fmt("anthropic: stream event "
		    "'%.64s' is not valid JSON", name), true, "provider_error");
		return -1;
	}
	/* A data-only event still says what it is in its "type". */
	if (strcmp(name, "message") == 0 &&
	    (type = art_json_str(&data, "type")) != NULL)
		name = type;
	if (strcmp(name, "error") == 0) {
		*error = describe(0, &data, ev->data, ev->data_len,
		    "stream error: ", -1, NULL);
		rc = -1;
	}
	for (i = 0; i < NHANDLERS && rc == 0; i++)
		if (strcmp(handlers[i].event, name) == 0) {
			/* As Anthropic's SDK has it: a message begins first. */
			if (!st->started && i > 0) {
				*error = art_wire_error(jv_string_fmt(
				    "anthropic: stream event '%.64s' before "
				    "message_start", name), true,
				    "provider_error");
				rc = -1;
				break;
			}
			rc = handlers[i].fn(st, &data, deltas, error);
			break;
		}
	jv_free(data);
	return rc;
}

/* Input JSON as response() gives it: compact; "" is {}; bad JSON as is. */
static jv
stream_arguments(const jv *text)
{
	jv v;

	if (jv_string_length_bytes(jv_copy(*text)) == 0)
		return jv_string("{}");
	v = art_json_parse(jv_string_value(*text),
	    (size_t)jv_string_length_bytes(jv_copy(*text)), NULL);
	if (!jv_is_valid(v)) {
		jv_free(v);
		return jv_copy(*text);
	}
	return jv_dump_string(v, 0);
}

/* A thinking block as the response keeps it: what came, in its shape. */
static jv
thinking_block(const struct block *b)
{
	jv out = art_json_set(jv_object(), "type", jv_string(b->kind ==
	    THINKING ? "thinking" : "redacted_thinking"));

	if (b->kind == REDACTED)
		return art_json_set(out, "data", jv_copy(b->text));
	out = art_json_set(out, "thinking", jv_copy(b->text));
	return art_json_set(out, "signature", jv_get_kind(b->sig) ==
	    JV_KIND_STRING ? jv_copy(b->sig) : jv_string(""));
}

/*
 * A message_stop with no message_delta before it is a whole message
 * that gives no stop reason; only a stream that got to neither ended
 * early.
 */
static int
stream_result(struct art_wire_stream *st, jv *resp, jv *error)
{
	struct answer a;
	struct block *b;
	size_t i;

	if (jv_get_kind(st->stop) != JV_KIND_STRING && !st->ended) {
		*error = art_wire_error(jv_string("anthropic: stream ended early"),
		    true, "provider_error");
		return -1;
	}
	a.id = jv_copy(st->id);
	a.model = jv_copy(st->model);
	a.text = a.reasoning = jv_null();
	a.thinking = jv_array();
	a.calls = jv_array();
	a.stop = jv_copy(st->stop);
	a.usage = jv_copy(st->usage);
	for (i = 0; i < st->nblocks; i++) {
		b = &st->blocks[i];
		if (b->kind == TEXT)
			a.text = join(a.text, jv_copy(b->text));
		else if (b->kind == THINKING || b->kind == REDACTED) {
			if (b->kind == THINKING)
				a.reasoning = join(a.reasoning,
				    jv_copy(b->text));
			/* Only a whole block, signed, can be sent back. */
			if (b->stopped && (b->kind == REDACTED ||
			    (jv_get_kind(b->sig) == JV_KIND_STRING &&
			    jv_string_length_bytes(jv_copy(b->sig)) > 0)))
				a.thinking = jv_array_append(a.thinking,
				    thinking_block(b));
		} else if (b->kind == TOOL && b->stopped)
			a.calls = jv_array_append(a.calls, tool_call(
			    jv_copy(b->id), jv_copy(b->name),
			    stream_arguments(&b->text)));
	}
	return finish(&a, resp, error);
}

/* --- answers through the forced tool ------------------------------------ */

/*
 * The first call of tool name becomes the content, the JSON text of its
 * input (compact, as tool_calls carry it), in place of any text beside
 * it; the other calls stay.  With none left the model has answered, so
 * a finish of "tool_calls" becomes "stop".  A response without
 * such a call is left as it is: the caller checks its text.
 */
static jv
make_answer(jv resp, const char *name)
{
	jv calls = art_json_field(&resp, "tool_calls"), rest = jv_array();
	jv text = jv_null(), fn;

	if (jv_get_kind(calls) != JV_KIND_ARRAY) {
		jv_free(calls);
		jv_free(rest);
		return resp;
	}
	jv_array_foreach(calls, i, c) {
		fn = art_json_field(&c, "function");
		if (!is(art_json_str(&fn, "name"), name))
			rest = jv_array_append(rest, c);
		else {
			if (jv_get_kind(text) == JV_KIND_NULL)
				text = art_json_field(&fn, "arguments");
			jv_free(c);
		}
		jv_free(fn);
	}
	jv_free(calls);
	if (jv_get_kind(text) != JV_KIND_STRING) {
		jv_free(text);
		jv_free(rest);
		return resp;
	}
	resp = art_json_set(resp, "content", text);
	if (jv_array_length(jv_copy(rest)) > 0)
		return art_json_set(resp, "tool_calls", rest);
	jv_free(rest);
	resp = jv_object_delete(resp, jv_string("tool_calls"));
	/* A cut-short answer ("length") stays so. */
	if (art_json_str(&resp, "finish_reason") == NULL ||
	    is(art_json_str(&resp, "finish_reason"), "tool_calls"))
		resp = art_json_set(resp, "finish_reason", jv_string("stop"));
	return resp;
}

const struct art_wire art_anthropic_wire = {
	.name = "anthropic",
	.base_url = "https://api.anthropic.com",
	.base_url_env = "ANTHROPIC_BASE_URL",
	.key_env = "ANTHROPIC_API_KEY",
	.path = "/v1/messages",
	.key_header = "x-api-key",
	.key_prefix = "",
	.token_env = "ANTHROPIC_AUTH_TOKEN",
	.version_header = "anthropic-version",
	.version_default = "2023-06-01",
	.request = make_request,
	.response = read_response,
	.native = make_native,
	.answer = make_answer,
	.error = map_error,
	.stream_new = stream_new,
	.stream_free = stream_free,
	.stream_answer = stream_answer,
	.stream_event = stream_event,
	.stream_result = stream_result,
};
