/* engine-scan.c - the security pipeline on a turn's text, before it is kept
 *
 * An agent's "security" object (security.h) is compiled once per distinct
 * config and kept by the engine.  What comes in is scanned before it is
 * recorded: a client's user messages (ART_SEC_INPUT), a model's reply, its
 * reasoning and its tool calls' arguments (ART_SEC_OUTPUT), a tool's
 * result or error (ART_SEC_TOOL; a client-handled tool's as input), so a
 * redacted secret reaches no event, log, view or client.  Every hit is a
 * "security" event in the log, and so on --events.  Token deltas are
 * scanned as a stream: what may be the start of a match is held back
 * until it is known, per call, in memory staged like the prompts are (a
 * step undone forgets what it streamed).
 */
#include "engine-int.h"

#include <stdio.h>
#include <string.h>

#include "reconcile.h"
#include "security.h"

#define STREAMS_MAX	256	/* calls streaming at once, at most */

void
eng_scan_free(struct art_engine *e)
{
	int i;

	for (i = 0; i < ENG_SEC_CACHE; i++) {
		art_security_free(e->sec[i]);
		e->sec[i] = NULL;
		jv_free(e->sec_key[i]);
		e->sec_key[i] = jv_null();
	}
	jv_free(e->streams);
	jv_free(e->stream_stage);
}

/*
 * The compiled pipeline of cfg (borrowed) in *out: NULL when the agent
 * has none.  -1 when its security object is bad (err says why; a loaded
 * agent file was checked, a decision's own agent may not be).
 */
int
eng_scan_sec(struct cx *c, const jv *cfg, const struct art_security **out)
{
	struct art_engine *e = c->e;
	jv sec = art_json_field(cfg, "security"), key;
	struct art_security *made;
	int i, old = 0;

	*out = NULL;
	if (jv_get_kind(sec) == JV_KIND_NULL) {
		jv_free(sec);
		return 0;
	}
	/* The system prompt is what redact_system_prompt looks for. */
	key = jv_dump_string(jv_array_append(jv_array_append(jv_array(), sec),
	    art_json_field(cfg, "system")), 0);
	for (i = 0; i < ENG_SEC_CACHE; i++) {
		if (e->sec[i] != NULL && jv_equal(jv_copy(key),
		    jv_copy(e->sec_key[i]))) {
			jv_free(key);
			e->sec_used[i] = ++e->sec_clock;
			*out = e->sec[i];
			return 0;
		}
		if (e->sec_used[i] < e->sec_used[old])
			old = i;
	}
	if (art_security_new(cfg, &made, c->err) == -1) {
		jv_free(key);
		return -1;
	}
	/* The least recently used goes (a free slot was never used). */
	art_security_free(e->sec[old]);
	jv_free(e->sec_key[old]);
	e->sec[old] = made;
	e->sec_key[old] = key;
	e->sec_used[old] = ++e->sec_clock;
	*out = made;
	return 0;
}

/*
 * A new session's agent file, while its session.start decision, live or
 * queued, has not yet made it the config: a first turn's input comes in
 * then.  jv_null() when there is none.
 */
static jv
starting_file(struct cx *c)
{
	jv s = eng_summary(c), e, all, tr, file = jv_null();
	const char *tt;

	if (!jv_is_valid(s))
		return s;
	e = art_json_field(&s, "live");
	jv_free(s);
	all = jv_get_kind(e) == JV_KIND_OBJECT ? jv_array_append(jv_array(),
	    e) : (jv_free(e), eng_queued(c));
	if (!jv_is_valid(all))
		return all;
	jv_array_foreach(all, i, q) {
		tr = art_json_field(&q, "trigger");
		tt = art_json_str(&tr, "type");
		if (jv_get_kind(file) == JV_KIND_NULL && tt != NULL &&
		    strcmp(tt, "session.start") == 0) {
			jv_free(file);
			file = art_json_field(&q, "agent_file");
		}
		jv_free(tr);
		jv_free(q);
	}
	jv_free(all);
	return file;
}

/* The pipeline of the config at the head; see eng_scan_sec(). */
int
eng_scan_sec_at(struct cx *c, const struct art_security **out)
{
	char h[ART_ID_MAX + 1];
	jv cfg;
	int r;

	*out = NULL;
	if (eng_head(c, h, sizeof(h)) == -1 ||
	    !jv_is_valid(cfg = eng_config_at(c, h)))
		return -1;
	if (jv_get_kind(cfg) == JV_KIND_NULL) {
		jv_free(cfg);
		if (!jv_is_valid(cfg = starting_file(c)))
			return -1;
	}
	r = eng_scan_sec(c, &cfg, out);
	jv_free(cfg);
	return r;
}

/*
 * value (consumed) scanned at scope, its hits recorded: the value as it
 * may be kept, or jv_invalid() when the store fails.  *block (set) is the
 * id of the first pattern that blocks it, or NULL.
 */
jv
eng_scan(struct cx *c, const struct art_security *sec,
    enum art_sec_scope scope, jv value, const char *where,
    const char **block)
{
	jv hits, out;
	int blocked = 0, r = 0;

	*block = NULL;
	if (sec == NULL)
		return value;
	out = art_security_scan(sec, scope, value, where, &hits, &blocked,
	    block);
	jv_array_foreach(hits, i, h) {
		if (r == 0)
			r = eng_rec(c, h);
		else
			jv_free(h);
	}
	jv_free(hits);
	if (!blocked)
		*block = NULL;
	if (r == -1) {
		jv_free(out);
		return jv_invalid();
	}
	return out;
}

/*
 * text (a string, consumed) redacted as client input, its hits not
 * recorded: what an error event quotes of a line it refused.  A
 * pipeline that cannot be read leaves nothing of it.
 */
jv
eng_scan_quiet(struct cx *c, jv text)
{
	const struct art_security *sec;
	const char *id;
	jv hits, out;
	int blocked;

	if (eng_scan_sec_at(c, &sec) == -1) {
		jv_free(text);
		return jv_string("");
	}
	if (sec == NULL)
		return text;
	out = art_security_scan(sec, ART_SEC_INPUT, text, "a quoted line",
	    &hits, &blocked, &id);
	jv_free(hits);
	return blocked ? (jv_free(out), jv_string("")) : out;
}

/* The text a block leaves in place of what it refused (what may be NULL). */
jv
eng_scan_refusal(const char *id, const char *what)
{
	return jv_string_fmt("%s%sblocked by security pattern %s",
	    what != NULL ? what : "", what != NULL ? " " : "",
	    id != NULL ? id : "?");
}

/* One client message (consumed), its content scanned as client input. */
static jv
scan_message(struct cx *c, const struct art_security *sec, jv m,
    const char **block)
{
	const char *role = art_json_str(&m, "role");
	jv content = art_json_field(&m, "content");

	*block = NULL;
	if (jv_get_kind(content) == JV_KIND_NULL || (role != NULL &&
	    strcmp(role, "tool") == 0)) {
		/* A tool message is scanned when it settles its call. */
		jv_free(content);
		return m;
	}
	content = eng_scan(c, sec, ART_SEC_INPUT, content, role != NULL &&
	    strcmp(role, "user") == 0 ? "user message" : "client message",
	    block);
	if (!jv_is_valid(content)) {
		jv_free(m);
		return content;
	}
	return set(m, "content", content);
}

/*
 * A client's input (consumed): one message (client.message), or a view
 * whose news is scanned (client.messages), as the session's agent's
 * pipeline says.  jv_invalid() when the store fails; *block as for
 * eng_scan().
 */
jv
eng_scan_input(struct cx *c, jv in, const char **block)
{
	const struct art_security *sec;
	const char *b;
	jv out;
	int news, n, i;

	*block = NULL;
	if (eng_scan_sec_at(c, &sec) == -1) {
		jv_free(in);
		return jv_invalid();
	}
	if (sec == NULL)
		return in;
	if (jv_get_kind(in) == JV_KIND_OBJECT)
		return scan_message(c, sec, in, block);
	if (jv_get_kind(in) != JV_KIND_ARRAY)
		return in;
	if ((news = art_reconcile_news_from(c->t, c->sid, &in, c->err)) < 0) {
		jv_free(in);
		return jv_invalid();
	}
	n = jv_array_length(jv_copy(in));
	out = jv_array_slice(jv_copy(in), 0, news);
	for (i = news; i < n && jv_is_valid(out); i++) {
		jv m = scan_message(c, sec, jv_array_get(jv_copy(in), i), &b);

		if (*block == NULL)
			*block = b;
		out = jv_is_valid(m) ? jv_array_append(out, m) :
		    (jv_free(out), m);
	}
	jv_free(in);
	return out;
}

/*
 * resp's thinking_blocks (Anthropic's, signed) scanned: the API checks a
 * block's signature against its text, so a block the scan would change
 * cannot go back redacted and is dropped whole, which its hit's event
 * says ("model thinking block (dropped)"); its text is never kept.
 * A redacted_thinking block is opaque data, kept as it came.
 */
static jv
scan_thinking(struct cx *c, const struct art_security *sec, jv resp,
    const char **block)
{
	jv tb = art_json_field(&resp, "thinking_blocks"), out = jv_array();
	const char *b = NULL;

	if (jv_get_kind(tb) != JV_KIND_ARRAY) {
		jv_free(tb);
		jv_free(out);
		return resp;
	}
	jv_array_foreach(tb, i, tk) {
		jv text = art_json_field(&tk, "thinking"), was, v;

		if (!jv_is_valid(out) || jv_get_kind(text) != JV_KIND_STRING) {
			jv_free(text);
			out = jv_is_valid(out) ? jv_array_append(out, tk) :
			    (jv_free(tk), out);
			continue;
		}
		was = jv_copy(text);
		v = eng_scan(c, sec, ART_SEC_OUTPUT, text,
		    "model thinking block (dropped)", &b);
		if (*block == NULL)
			*block = b;
		if (!jv_is_valid(v)) {
			jv_free(was);
			jv_free(tk);
			jv_free(out);
			out = v;
			continue;
		}
		out = jv_equal(v, was) ? jv_array_append(out, tk) :
		    (jv_free(tk), out);
		(void)i;
	}
	jv_free(tb);
	if (!jv_is_valid(out)) {
		jv_free(resp);
		return out;
	}
	if (jv_array_length(jv_copy(out)) == 0) {
		jv_free(out);
		return jv_object_delete(resp, jv_string("thinking_blocks"));
	}
	return set(resp, "thinking_blocks", out);
}

/*
 * A model's response (consumed) as it may be kept: its content,
 * reasoning, thinking blocks and tool-call arguments scanned at
 * ART_SEC_OUTPUT.  jv_invalid()
 * when the store fails; *block as for eng_scan().
 */
jv
eng_scan_reply(struct cx *c, const struct art_security *sec, jv resp,
    const char **block)
{
	static const char *const texts[][2] = { { "content", "model reply" },
	    { "reasoning", "model reasoning" } };
	const char *b = NULL;
	jv v, calls, out;
	size_t i;

	*block = NULL;
	if (sec == NULL || jv_get_kind(resp) != JV_KIND_OBJECT)
		return resp;
	out = jv_array();
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		v = art_json_field(&resp, texts[i][0]);
		if (jv_get_kind(v) == JV_KIND_NULL) {
			jv_free(v);
			continue;
		}
		v = eng_scan(c, sec, ART_SEC_OUTPUT, v, texts[i][1], &b);
		if (!jv_is_valid(v)) {
			jv_free(out);
			jv_free(resp);
			return v;
		}
		if (*block == NULL)
			*block = b;
		resp = set(resp, texts[i][0], v);
	}
	resp = scan_thinking(c, sec, resp, block);
	if (!jv_is_valid(resp)) {
		jv_free(out);
		return resp;
	}
	calls = art_json_field(&resp, "tool_calls");
	if (jv_get_kind(calls) != JV_KIND_ARRAY) {
		jv_free(calls);
		jv_free(out);
		return resp;
	}
	jv_array_foreach(calls, k, tc) {
		/* {id, name, arguments}, or OpenAI's {id, function: {...}} */
		jv fn = art_json_field(&tc, "function");
		int nested = jv_get_kind(fn) == JV_KIND_OBJECT;
		const jv *at = nested ? &fn : &tc;
		const char *name = art_json_str(at, "name");
		const char *args = art_json_str(at, "arguments");
		char where[160];
		jv a;

		if (!jv_is_valid(out) || args == NULL) {
			jv_free(fn);
			out = jv_is_valid(out) ? jv_array_append(out, tc) :
			    (jv_free(tc), out);
			continue;
		}
		snprintf(where, sizeof(where), "tool call '%.100s' arguments",
		    name != NULL ? name : "?");
		/* The strings inside, so a redaction keeps the JSON whole. */
		a = art_json_parse_str(args, NULL);
		if (!jv_is_valid(a)) {
			jv_free(a);
			a = eng_scan(c, sec, ART_SEC_OUTPUT, jv_string(args),
			    where, &b);
		} else {
			jv was = jv_copy(a);

			/* Unchanged, the model's text stays as it was. */
			a = eng_scan(c, sec, ART_SEC_OUTPUT, a, where, &b);
			if (jv_is_valid(a) && jv_equal(jv_copy(a), was))
				a = (jv_free(a), jv_string(args));
			else if (jv_is_valid(a))
				a = jv_dump_string(a, 0);
			else
				jv_free(was);
		}
		if (*block == NULL)
			*block = b;
		if (!jv_is_valid(a)) {
			jv_free(fn);
			jv_free(tc);
			jv_free(out);
			out = a;
			continue;
		}
		out = jv_array_append(out, nested ? set(tc, "function", set(fn,
		    "arguments", a)) : (jv_free(fn), set(tc, "arguments", a)));
		(void)k;
	}
	jv_free(calls);
	if (!jv_is_valid(out)) {
		jv_free(resp);
		return out;
	}
	return set(resp, "tool_calls", out);
}

/* --- token deltas, scanned as a stream ----------------------------- */

/* Call id's stream state: what the stage holds, else what was kept. */
static jv
stream_get(struct art_engine *e, const char *id)
{
	jv v = jv_object_get(jv_copy(e->stream_stage), jv_string(id));

	if (jv_is_valid(v))
		return v;
	v = jv_object_get(jv_copy(e->streams), jv_string(id));
	return jv_is_valid(v) ? v : (jv_free(v), jv_null());
}

static void
stream_put(struct art_engine *e, const char *id, jv st)
{
	e->stream_stage = jv_object_set(e->stream_stage, jv_string(id), st);
}

/* A committed step's streams are kept; an undone one's forgotten. */
void
eng_scan_keep(struct art_engine *e)
{
	if (jv_object_length(jv_copy(e->streams)) > STREAMS_MAX) {
		/* Calls that never settled (voided, lost): start again. */
		jv_free(e->streams);
		e->streams = jv_object();
	}
	jv_object_foreach(e->stream_stage, k, v) {
		if (jv_get_kind(v) == JV_KIND_NULL) {
			e->streams = art_json_delete(e->streams,
			    jv_string_value(k));
			jv_free(k);
			jv_free(v);
		} else
			e->streams = jv_object_set(e->streams, k, v);
	}
	eng_scan_unstage(e);
}

void
eng_scan_unstage(struct art_engine *e)
{
	jv_free(e->stream_stage);
	e->stream_stage = jv_object();
}

/*
 * One streamed field's piece (consumed; NULL kind: the stream's end) for
 * the client: what can be shown now of the text held so far.  The state
 * st (consumed) comes back updated.
 */
static jv
stream_field(const struct art_security *sec, jv st, const char *field,
    jv piece, int final, jv *show)
{
	jv held = art_json_field(&st, field), blocked, rest;
	jv bkey = jv_string_fmt("%s_blocked", field);
	int b = 0;

	*show = jv_null();
	blocked = jv_object_get(jv_copy(st), jv_copy(bkey));
	if (jv_get_kind(blocked) == JV_KIND_TRUE) {
		jv_free(blocked);
		jv_free(bkey);
		jv_free(held);
		jv_free(piece);
		return st;	/* a block shows nothing more of it */
	}
	jv_free(blocked);
	if (jv_get_kind(held) != JV_KIND_STRING) {
		jv_free(held);
		held = jv_string("");
	}
	if (jv_get_kind(piece) == JV_KIND_STRING)
		held = jv_string_concat(held, piece);
	else
		jv_free(piece);
	rest = art_security_stream(sec, ART_SEC_OUTPUT,
	    jv_string_value(held), (size_t)jv_string_length_bytes(
	    jv_copy(held)), final, show, &b);
	jv_free(held);
	if (b)
		st = jv_object_set(st, bkey, jv_true());
	else
		jv_free(bkey);
	return set(st, field, rest);
}

/*
 * A token delta (consumed) of call id as a client may see it: its text
 * and reasoning held back and redacted as a stream, its tool-call
 * argument fragments left out (the tool_call event has them whole).
 * jv_null() when nothing is to be shown yet.
 */
jv
eng_scan_delta(struct cx *c, const char *id, jv delta)
{
	static const char *const fields[] = { "text", "reasoning" };
	const struct art_security *sec = NULL;
	jv st, show, out = jv_object();
	size_t i;

	if (id == NULL || jv_get_kind(delta) != JV_KIND_OBJECT)
		return delta;
	st = stream_get(c->e, id);
	if (jv_get_kind(st) == JV_KIND_OBJECT &&
	    jv_object_has(jv_copy(st), jv_string("off"))) {
		jv_free(st);
		jv_free(out);
		return delta;
	}
	/* A pipeline that cannot be read shows nothing (fails closed). */
	if (eng_scan_sec_at(c, &sec) == -1) {
		jv_free(st);
		jv_free(out);
		jv_free(delta);
		return jv_null();
	}
	if (sec == NULL) {
		/* Remembered, so the agent's config is read once a call. */
		jv_free(st);
		jv_free(out);
		stream_put(c->e, id, jv_object_set(jv_object(),
		    jv_string("off"), jv_true()));
		return delta;
	}
	if (jv_get_kind(st) == JV_KIND_NULL)
		st = jv_object();
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (!jv_object_has(jv_copy(delta), jv_string(fields[i])))
			continue;
		st = stream_field(sec, st, fields[i], art_json_field(&delta,
		    fields[i]), 0, &show);
		if (jv_get_kind(show) == JV_KIND_STRING &&
		    jv_string_length_bytes(jv_copy(show)) > 0)
			out = set(out, fields[i], show);
		else
			jv_free(show);
	}
	stream_put(c->e, id, st);
	jv_object_foreach(delta, k, v) {
		const char *key = jv_string_value(k);

		if (strcmp(key, "text") != 0 && strcmp(key, "reasoning") != 0 &&
		    strcmp(key, "tool_calls") != 0)
			out = jv_object_set(out, k, v);
		else {
			jv_free(k);
			jv_free(v);
		}
	}
	jv_free(delta);
	return jv_object_length(jv_copy(out)) > 0 ? out : (jv_free(out),
	    jv_null());
}

/*
 * Call id's stream ended (its result came): what it still held, as the
 * last delta to show (jv_null() for none), and its state forgotten.
 */
jv
eng_scan_delta_end(struct cx *c, const char *id)
{
	static const char *const fields[] = { "text", "reasoning" };
	const struct art_security *sec = NULL;
	jv st = stream_get(c->e, id), show, out = jv_object();
	size_t i;

	if (jv_get_kind(st) == JV_KIND_NULL) {
		jv_free(st);
		jv_free(out);
		return jv_null();
	}
	stream_put(c->e, id, jv_null());
	if (jv_object_has(jv_copy(st), jv_string("off")) ||
	    eng_scan_sec_at(c, &sec) == -1 || sec == NULL) {
		jv_free(st);
		jv_free(out);
		return jv_null();
	}
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		st = stream_field(sec, st, fields[i], jv_null(), 1, &show);
		if (jv_get_kind(show) == JV_KIND_STRING &&
		    jv_string_length_bytes(jv_copy(show)) > 0)
			out = set(out, fields[i], show);
		else
			jv_free(show);
	}
	jv_free(st);
	return jv_object_length(jv_copy(out)) > 0 ? out : (jv_free(out),
	    jv_null());
}
