/* agui.c - client events as AG-UI events (see agui.h for the mapping) */
#include "agui.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "json.h"

#define ID_MAX	256

struct art_agui {
	struct art_agui_opts	 o;
	char			 root[ID_MAX];	/* the session; "" until seen */
	bool			 run;		/* RUN_STARTED said, not ended */
	char			 thread[ID_MAX], run_id[ID_MAX];
	char			 step[16];	/* the step open, or "" */
	char			 text[ID_MAX];	/* the text message open, or "" */
	char			 last[ID_MAX];	/* the root's last message */
	jv			 plan;		/* the plan's todo ids, in order */
	jv			 pending;	/* client tool calls unanswered */
	/*
	 * The "at" of the event being encoded, in milliseconds: every AG-UI
	 * event it causes carries it, the END of a message it closes too.
	 */
	int64_t			 ms;
	bool			 has_ms;
	bool			 nomem;
};

struct art_agui *
art_agui_new(const struct art_agui_opts *o)
{
	struct art_agui *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	if (o != NULL)
		t->o = *o;
	t->plan = jv_array();
	t->pending = jv_array();
	return t;
}

void
art_agui_free(struct art_agui *t)
{
	if (t == NULL)
		return;
	jv_free(t->plan);
	jv_free(t->pending);
	free(t);
}

static void
copy(char *dst, const char *s)
{
	snprintf(dst, ID_MAX, "%s", s != NULL ? s : "");
}

static jv
event(const char *type)
{
	return jv_object_set(jv_object(), jv_string("type"), jv_string(type));
}

static jv
put(jv o, const char *key, jv v)
{
	return jv_object_set(o, jv_string(key), v);
}

static jv
put_str(jv o, const char *key, const char *s)
{
	return put(o, key, jv_string(s));
}

/* Appends e (consumed), with the timestamp if known, to out as one line. */
static void
emit(struct art_agui *t, struct art_buf *out, jv e)
{
	size_t len;
	char *s;

	if (t->has_ms)
		e = put(e, "timestamp", jv_number((double)t->ms));
	s = art_json_dump(&e, &len);
	jv_free(e);
	if (s == NULL || art_buf_add(out, s, len) == -1 ||
	    art_buf_addc(out, '\n') == -1)
		t->nomem = true;
	free(s);
}

/* A string value as text: itself, or its JSON. */
static jv
text_of(jv v)
{
	jv s;

	if (jv_get_kind(v) == JV_KIND_STRING)
		return v;
	if (jv_get_kind(v) == JV_KIND_NULL || !jv_is_valid(v)) {
		jv_free(v);
		return jv_string("");
	}
	s = jv_dump_string(v, 0);
	return s;
}

jv
art_agui_message(jv m)
{
	const char *role = art_json_str(&m, "role");
	jv a = jv_object(), calls, c;

	a = put(a, "id", text_of(art_json_field(&m, "id")));
	if (role == NULL || (strcmp(role, "assistant") != 0 &&
	    strcmp(role, "user") != 0 && strcmp(role, "system") != 0 &&
	    strcmp(role, "tool") != 0 && strcmp(role, "developer") != 0))
		role = "assistant";
	a = put_str(a, "role", role);
	c = art_json_field(&m, "content");
	if (strcmp(role, "assistant") != 0 || jv_get_kind(c) != JV_KIND_NULL)
		a = put(a, "content", text_of(c));
	else
		jv_free(c);
	calls = art_json_field(&m, "tool_calls");
	if (strcmp(role, "assistant") == 0 &&
	    jv_get_kind(calls) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(calls)) > 0) {
		jv out = jv_array();

		jv_array_foreach(calls, i, call) {
			jv fn = art_json_field(&call, "function"), f;

			f = put(put(jv_object(), "name", text_of(
			    art_json_field(&fn, "name"))), "arguments",
			    text_of(art_json_field(&fn, "arguments")));
			out = jv_array_append(out, put(put(put(jv_object(),
			    "id", text_of(art_json_field(&call, "id"))),
			    "type", jv_string("function")), "function", f));
			jv_free(fn);
			jv_free(call);
			(void)i;
		}
		a = put(a, "toolCalls", out);
	}
	jv_free(calls);
	if (strcmp(role, "tool") == 0)
		a = put(a, "toolCallId", text_of(art_json_field(&m,
		    "tool_call_id")));
	jv_free(m);
	return a;
}

/* RUN_STARTED, unless a run is open: the turn ev names, or "run". */
static void
open_run(struct art_agui *t, const jv *ev, struct art_buf *out)
{
	const char *tid = art_json_str(ev, "turn_id");

	if (t->run)
		return;
	copy(t->thread, t->root);
	copy(t->run_id, tid != NULL ? tid : "run");
	t->run = true;
	emit(t, out, put_str(put_str(event("RUN_STARTED"), "threadId",
	    t->thread), "runId", t->run_id));
}

static void
close_text(struct art_agui *t, struct art_buf *out)
{
	if (t->text[0] == '\0')
		return;
	emit(t, out, put_str(event("TEXT_MESSAGE_END"), "messageId", t->text));
	t->text[0] = '\0';
}

static void
close_step(struct art_agui *t, struct art_buf *out)
{
	if (t->step[0] == '\0')
		return;
	emit(t, out, put_str(event("STEP_FINISHED"), "stepName", t->step));
	t->step[0] = '\0';
}

static void
open_step(struct art_agui *t, const char *name, struct art_buf *out)
{
	close_text(t, out);
	close_step(t, out);
	snprintf(t->step, sizeof(t->step), "%s", name);
	emit(t, out, put_str(event("STEP_STARTED"), "stepName", name));
}

/* The session's path, whole, when the caller can read it. */
static void
snapshot(struct art_agui *t, struct art_buf *out)
{
	jv path, msgs;

	if (t->o.path_of == NULL || t->last[0] == '\0')
		return;
	path = t->o.path_of(t->o.ctx, t->root, t->last);
	if (jv_get_kind(path) != JV_KIND_ARRAY) {
		jv_free(path);
		return;
	}
	msgs = jv_array();
	jv_array_foreach(path, i, m) {
		msgs = jv_array_append(msgs, art_agui_message(m));
		(void)i;
	}
	jv_free(path);
	emit(t, out, put(event("MESSAGES_SNAPSHOT"), "messages", msgs));
}

/*
 * Ends the run with e (consumed): RUN_FINISHED, after the snapshot, or
 * RUN_ERROR; what is open is closed first.
 */
static void
end_run(struct art_agui *t, jv e, struct art_buf *out)
{
	const char *type = art_json_str(&e, "type");

	close_text(t, out);
	close_step(t, out);
	if (type != NULL && strcmp(type, "RUN_FINISHED") == 0) {
		snapshot(t, out);
		e = put_str(put_str(e, "threadId", t->thread), "runId",
		    t->run_id);
	}
	emit(t, out, e);
	t->run = false;
	jv_free(t->pending);
	t->pending = jv_array();
}

/* agentrt's usage {input, output, total} as AG-UI's TokenUsage[]. */
static jv
usage_of(const jv *ev)
{
	jv u = art_json_field(ev, "usage"), in, o, tot, e;

	if (jv_get_kind(u) != JV_KIND_OBJECT) {
		jv_free(u);
		return jv_invalid();
	}
	in = art_json_field(&u, "input");
	o = art_json_field(&u, "output");
	tot = art_json_field(&u, "total");
	jv_free(u);
	e = jv_object();
	e = jv_get_kind(in) == JV_KIND_NUMBER ? put(e, "inputTokens", in) :
	    (jv_free(in), e);
	e = jv_get_kind(o) == JV_KIND_NUMBER ? put(e, "outputTokens", o) :
	    (jv_free(o), e);
	e = jv_get_kind(tot) == JV_KIND_NUMBER ? put(e, "totalTokens", tot) :
	    (jv_free(tot), e);
	return jv_array_append(jv_array(), e);
}

static void
on_completion(struct art_agui *t, const jv *ev, struct art_buf *out)
{
	jv error = art_json_field(ev, "error"), e, u;
	const char *code = art_json_str(ev, "code");

	open_run(t, ev, out);
	if (jv_get_kind(error) != JV_KIND_NULL) {
		e = put(event("RUN_ERROR"), "message", text_of(error));
		if (code != NULL)
			e = put_str(e, "code", code);
	} else {
		jv_free(error);
		e = put(event("RUN_FINISHED"), "result", art_json_field(ev,
		    "text"));
		e = put(e, "outcome", put_str(jv_object(), "type", "success"));
		if (jv_is_valid(u = usage_of(ev)))
			e = put(e, "usage", u);
		else
			jv_free(u);
	}
	end_run(t, e, out);
}

/* A turn parked on an interrupt: what to ask, then the run's end. */
static void
on_suspended(struct art_agui *t, const jv *ev, struct art_buf *out)
{
	jv p = art_json_field(ev, "payload"), it, q;
	const char *iid = art_json_str(ev, "interrupt_id");
	const char *call = art_json_str(&p, "tool_call_id");

	open_run(t, ev, out);
	close_text(t, out);
	close_step(t, out);
	emit(t, out, put(put_str(event("CUSTOM"), "name",
	    "agentrt.interrupt"), "value", put(put(put(jv_object(),
	    "interrupt_id", art_json_field(ev, "interrupt_id")), "reason",
	    art_json_field(ev, "reason")), "payload", jv_copy(p))));
	it = put_str(jv_object(), "id", iid != NULL ? iid : "");
	it = put(it, "reason", text_of(art_json_field(ev, "reason")));
	q = art_json_field(&p, "question");
	it = jv_get_kind(q) == JV_KIND_STRING ? put(it, "message", q) :
	    (jv_free(q), it);
	if (call != NULL)
		it = put_str(it, "toolCallId", call);
	jv_free(p);
	end_run(t, put(event("RUN_FINISHED"), "outcome", put(put_str(
	    jv_object(), "type", "interrupt"), "interrupts",
	    jv_array_append(jv_array(), it))), out);
}

static void
on_assistant(struct art_agui *t, const jv *m, struct art_buf *out)
{
	const char *id = art_json_str(m, "id");
	jv content = art_json_field(m, "content"), calls;

	if (id == NULL) {
		jv_free(content);
		return;
	}
	close_step(t, out);	/* the model's step ends with its message */
	if (strcmp(t->text, id) == 0)
		close_text(t, out);
	else if (jv_get_kind(content) == JV_KIND_STRING &&
	    jv_string_length_bytes(jv_copy(content)) > 0) {
		close_text(t, out);
		emit(t, out, put_str(put_str(event(
		    "TEXT_MESSAGE_START"), "messageId", id), "role",
		    "assistant"));
		emit(t, out, put(put_str(event("TEXT_MESSAGE_CONTENT"),
		    "messageId", id), "delta", jv_copy(content)));
		emit(t, out, put_str(event("TEXT_MESSAGE_END"), "messageId",
		    id));
	}
	jv_free(content);
	calls = art_json_field(m, "tool_calls");
	if (jv_get_kind(calls) == JV_KIND_ARRAY)
		jv_array_foreach(calls, i, c) {
			jv fn = art_json_field(&c, "function");
			const char *cid = art_json_str(&c, "id");
			jv args = text_of(art_json_field(&fn, "arguments"));

			if (cid != NULL) {
				emit(t, out, put_str(put(put_str(event(
				    "TOOL_CALL_START"), "toolCallId", cid),
				    "toolCallName", text_of(art_json_field(&fn,
				    "name"))), "parentMessageId", id));
				if (jv_string_length_bytes(jv_copy(args)) > 0)
					emit(t, out, put(put_str(event(
					    "TOOL_CALL_ARGS"), "toolCallId", cid),
					    "delta", jv_copy(args)));
				emit(t, out, put_str(event("TOOL_CALL_END"),
				    "toolCallId", cid));
			}
			jv_free(args);
			jv_free(fn);
			jv_free(c);
			(void)i;
		}
	jv_free(calls);
}

static void
on_message(struct art_agui *t, const jv *ev, struct art_buf *out)
{
	jv m = art_json_field(ev, "message");
	const char *role = art_json_str(&m, "role"), *id = art_json_str(&m,
	    "id"), *call;

	open_run(t, ev, out);
	if (id != NULL)
		copy(t->last, id);
	if (role != NULL && strcmp(role, "assistant") == 0)
		on_assistant(t, &m, out);
	else if (role != NULL && strcmp(role, "tool") == 0 && id != NULL &&
	    (call = art_json_str(&m, "tool_call_id")) != NULL) {
		emit(t, out, put_str(put(put_str(put_str(event(
		    "TOOL_CALL_RESULT"), "messageId", id), "toolCallId", call),
		    "content", text_of(art_json_field(&m, "content"))), "role",
		    "tool"));
		t->pending = art_json_without_str(t->pending, call);
	}
	jv_free(m);
}

static void
on_token(struct art_agui *t, const jv *ev, struct art_buf *out)
{
	const char *id = art_json_str(ev, "id"), *text = art_json_str(ev,
	    "text");

	if (id == NULL || text == NULL || *text == '\0')
		return;
	open_run(t, ev, out);
	if (strcmp(t->text, id) != 0) {
		close_text(t, out);
		emit(t, out, put_str(put_str(event("TEXT_MESSAGE_START"),
		    "messageId", id), "role", "assistant"));
		copy(t->text, id);
	}
	emit(t, out, put_str(put_str(event("TEXT_MESSAGE_CONTENT"),
	    "messageId", id), "delta", text));
}

/* The plan, its todos pending: the run's state. */
static void
on_decomposition(struct art_agui *t, const jv *ev, struct art_buf *out)
{
	jv todos = art_json_field(ev, "todos"), list = jv_array(), plan;

	open_run(t, ev, out);
	jv_free(t->plan);
	t->plan = jv_array();
	if (jv_get_kind(todos) == JV_KIND_ARRAY)
		jv_array_foreach(todos, i, td) {
			t->plan = jv_array_append(t->plan, text_of(
			    art_json_field(&td, "id")));
			list = jv_array_append(list, put_str(put(put(
			    jv_object(), "id", art_json_field(&td, "id")),
			    "title", art_json_field(&td, "title")), "status",
			    "pending"));
			jv_free(td);
			(void)i;
		}
	jv_free(todos);
	plan = put(put(jv_object(), "goal", art_json_field(ev, "goal")),
	    "todos", list);
	emit(t, out, put(event("STATE_SNAPSHOT"), "snapshot",
	    put(jv_object(), "plan", plan)));
}

/* 1 when ev, a todo of the plan, went out as a STATE_DELTA. */
static int
on_todo(struct art_agui *t, const jv *ev, struct art_buf *out)
{
	const char *id = art_json_str(ev, "id"), *st = art_json_str(ev,
	    "status");
	int at = -1;
	char path[64];

	if (id == NULL || st == NULL)
		return 0;
	jv_array_foreach(t->plan, i, p) {
		if (at < 0 && strcmp(jv_string_value(p), id) == 0)
			at = i;
		jv_free(p);
	}
	if (at < 0)
		return 0;
	snprintf(path, sizeof(path), "/plan/todos/%d/status", at);
	emit(t, out, put(event("STATE_DELTA"), "delta", jv_array_append(
	    jv_array(), put_str(put_str(put_str(jv_object(), "op", "replace"),
	    "path", path), "value", st))));
	return 1;
}

static void
custom(struct art_agui *t, const jv *ev, const char *type, struct art_buf *out)
{
	char name[96];

	snprintf(name, sizeof(name), "agentrt.%s", type);
	emit(t, out, put(put_str(event("CUSTOM"), "name", name), "value",
	    jv_copy(*ev)));
}

int
art_agui_event(struct art_agui *t, const jv *ev, struct art_buf *out)
{
	const char *type = art_json_str(ev, "type");
	const char *sid = art_json_str(ev, "session_id"), *st, *at;
	struct art_err err;
	jv r;

	if (type == NULL)
		return 0;
	at = art_json_str(ev, "at");
	t->has_ms = at != NULL && art_clock_parse(at, &t->ms, &err) == 0;
	if (t->root[0] == '\0' && sid != NULL)
		copy(t->root, sid);
	if (sid != NULL && strcmp(sid, t->root) != 0) {
		/* A sub-agent's session: told inside the parent's run. */
		if (t->run)
			custom(t, ev, type, out);
		return t->nomem ? -1 : 0;
	}
	st = art_json_str(ev, "status");
	if (strcmp(type, "turn.started") == 0) {
		if (t->run)
			end_run(t, put(event("RUN_FINISHED"), "outcome",
			    put_str(jv_object(), "type", "success")), out);
		open_run(t, ev, out);
	} else if (strcmp(type, "token") == 0)
		on_token(t, ev, out);
	else if (strcmp(type, "message") == 0)
		on_message(t, ev, out);
	else if (strcmp(type, "status") == 0 && st != NULL) {
		if (strcmp(st, "thinking") == 0 || strcmp(st, "acting") == 0) {
			open_run(t, ev, out);
			open_step(t, st[0] == 't' ? "model" : "tool", out);
		} else if (strcmp(st, "suspended") == 0)
			on_suspended(t, ev, out);
	} else if (strcmp(type, "tool_call") == 0) {
		st = art_json_str(ev, "handler");
		if (st != NULL && strcmp(st, "client") == 0 &&
		    (st = art_json_str(ev, "id")) != NULL)
			t->pending = jv_array_append(t->pending,
			    jv_string(st));
	} else if (strcmp(type, "completion") == 0)
		on_completion(t, ev, out);
	else if (strcmp(type, "decomposition") == 0)
		on_decomposition(t, ev, out);
	else if (strcmp(type, "error") == 0 && !t->run) {
		/* An input refused with no turn going: a run of its own. */
		open_run(t, ev, out);
		r = put(event("RUN_ERROR"), "message", text_of(art_json_field(
		    ev, "message")));
		if ((st = art_json_str(ev, "code")) != NULL)
			r = put_str(r, "code", st);
		end_run(t, r, out);
	} else if (strcmp(type, "tool_result") == 0 ||
	    strcmp(type, "turn.finished") == 0 || strcmp(type, "status") == 0)
		;	/* said by the messages, the completion */
	else if (strcmp(type, "todo") != 0 || !on_todo(t, ev, out)) {
		open_run(t, ev, out);
		custom(t, ev, type, out);
	}
	return t->nomem ? -1 : 0;
}

int
art_agui_end(struct art_agui *t, const char *error, struct art_buf *out)
{
	jv o;

	t->has_ms = false;	/* no event says when the stream ended */
	if (t->run && error != NULL)
		end_run(t, put_str(put_str(event("RUN_ERROR"), "message",
		    error), "code", "run_failed"), out);
	else if (t->run) {
		o = put_str(jv_object(), "type", "success");
		if (jv_array_length(jv_copy(t->pending)) > 0)
			o = put(o, "pendingToolCallIds", jv_copy(t->pending));
		end_run(t, put(event("RUN_FINISHED"), "outcome", o), out);
	}
	return t->nomem ? -1 : 0;
}
