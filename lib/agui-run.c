/* agui-run.c - one AG-UI run: its input, and its envelope (agui-run.h) */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agui-run.h"
#include "json.h"

/* --- the input ---------------------------------------------------- */

/* An AG-UI message's content (consumed) as text: a string, or its parts'. */
static jv
content_text(jv c)
{
	jv s;

	if (jv_get_kind(c) != JV_KIND_ARRAY)
		return c;
	s = jv_string("");
	jv_array_foreach(c, i, part) {
		const char *t = art_json_str(&part, "text");

		if (t != NULL)
			s = jv_string_append_str(s, t);
		jv_free(part);
		(void)i;
	}
	jv_free(c);
	return s;
}

/*
 * An AG-UI Message as the protocol's DraftMessage; jv_null() for a role
 * the protocol has no place for (activity, reasoning), jv_invalid() for
 * what is not a message.
 */
static jv
draft_of(const jv *m)
{
	const char *role = art_json_str(m, "role");
	jv d, calls;

	if (jv_get_kind(*m) != JV_KIND_OBJECT || role == NULL)
		return jv_invalid();
	if (strcmp(role, "developer") == 0)
		role = "system";
	if (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0 &&
	    strcmp(role, "system") != 0 && strcmp(role, "tool") != 0)
		return jv_null();
	d = art_json_set_some(jv_object(), "id", art_json_field(m, "id"));
	d = art_json_set(d, "role", jv_string(role));
	d = art_json_set_some(d, "content",
	    content_text(art_json_field(m, "content")));
	calls = art_json_field(m, "toolCalls");
	if (jv_get_kind(calls) == JV_KIND_ARRAY && jv_array_length(
	    jv_copy(calls)) > 0)
		d = art_json_set(d, "tool_calls", calls);
	else
		jv_free(calls);
	return art_json_set_some(d, "tool_call_id", art_json_field(m,
	    "toolCallId"));
}

/* A RunAgentInput's tools as the protocol's AgentTool[], client-handled. */
static jv
tools_of(const jv *tools)
{
	jv out = jv_array(), d;

	jv_array_foreach(*tools, i, t) {
		d = art_json_set_some(jv_object(), "name",
		    art_json_field(&t, "name"));
		d = art_json_set_some(d, "description", art_json_field(&t,
		    "description"));
		d = art_json_set_some(d, "input", art_json_field(&t,
		    "parameters"));
		d = art_json_set(d, "handler", jv_string("client"));
		out = jv_array_append(out, d);
		jv_free(t);
		(void)i;
	}
	return out;
}

/* Copies string member key of in into dst; -1 with err naming it. */
static int
id_of(const jv *in, const char *key, char *dst, struct art_err *err)
{
	const char *s = art_json_str(in, key);
	size_t i, len;

	if (s == NULL)
		return art_err_set(err, "bad_input", "%s must be a string",
		    key);
	len = strlen(s);
	if (len == 0 || len > ART_AGUI_ID_MAX)
		return art_err_set(err, "bad_input", "%s must be 1 to %d "
		    "bytes", key, ART_AGUI_ID_MAX);
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x21 || s[i] == '/' || s[i] == 0x7f)
			return art_err_set(err, "bad_input", "%s must have no "
			    "spaces, control characters or '/'", key);
	memcpy(dst, s, len + 1);
	return 0;
}

/*
 * A RunAgentInput's resume (AG-UI's answers to the interrupts a run
 * ended on) as an interrupt.resume in *line: one entry a run, since a
 * turn parks on one interrupt at a time.  An entry "cancelled" is
 * answered as a refusal, which is what an approval abandoned means.
 * 0 when there is none, 1 when *line is made, -1 with err.
 */
static int
resume_of(const jv *in, jv *line, struct art_err *err)
{
	jv res = art_json_field(in, "resume"), e, p;
	const char *iid, *st;
	int n = jv_get_kind(res) == JV_KIND_ARRAY ?
	    jv_array_length(jv_copy(res)) : -1;

	if (jv_get_kind(res) == JV_KIND_NULL || n == 0) {
		jv_free(res);
		return 0;
	}
	if (n != 1) {
		jv_free(res);
		return art_err_set(err, "bad_input", "resume must be an array "
		    "of one entry: agentrt parks a run on one interrupt");
	}
	e = jv_array_get(res, 0);
	iid = art_json_str(&e, "interruptId");
	st = art_json_str(&e, "status");
	if (iid == NULL || st == NULL || (strcmp(st, "resolved") != 0 &&
	    strcmp(st, "cancelled") != 0)) {
		jv_free(e);
		return art_err_set(err, "bad_input", "resume[0] needs an "
		    "interruptId and a status, resolved or cancelled");
	}
	*line = art_json_set(jv_object(), "type",
	    jv_string("interrupt.resume"));
	*line = art_json_set(*line, "interrupt_id", jv_string(iid));
	if (strcmp(st, "cancelled") == 0)
		p = jv_parse("{\"approved\":false,\"cancelled\":true,"
		    "\"reason\":\"cancelled by the client\"}");
	else
		p = art_json_field(&e, "payload");
	if (jv_get_kind(p) != JV_KIND_NULL)
		*line = art_json_set(*line, "payload", p);
	else
		jv_free(p);
	jv_free(e);
	return 1;
}

/* The client's messages (borrowed) as a view; -1 with err. */
static int
view_of(const jv *msgs, jv *view, struct art_err *err)
{
	jv d;

	if (jv_get_kind(*msgs) != JV_KIND_ARRAY)
		return art_err_set(err, "bad_input", "messages must be an "
		    "array");
	*view = jv_array();
	jv_array_foreach(*msgs, i, m) {
		d = draft_of(&m);
		jv_free(m);
		if (!jv_is_valid(d)) {
			jv_free(*view);
			*view = jv_null();
			return art_err_set(err, "bad_input", "messages[%d]: "
			    "not a message with a role", i);
		}
		if (jv_get_kind(d) != JV_KIND_NULL)
			*view = jv_array_append(*view, d);
		else
			jv_free(d);
	}
	return 0;
}

/* ClientContext: the client's tools, context, state, forwardedProps. */
static int
client_of(const jv *in, jv *client, struct art_err *err)
{
	jv tools = art_json_field(in, "tools");

	if (jv_get_kind(tools) != JV_KIND_NULL &&
	    jv_get_kind(tools) != JV_KIND_ARRAY) {
		jv_free(tools);
		return art_err_set(err, "bad_input", "tools must be an array");
	}
	*client = jv_object();
	if (jv_get_kind(tools) == JV_KIND_ARRAY && jv_array_length(
	    jv_copy(tools)) > 0)
		*client = art_json_set(*client, "tools", tools_of(&tools));
	jv_free(tools);
	*client = art_json_set_some(*client, "context", art_json_field(in,
	    "context"));
	*client = art_json_set_some(*client, "state", art_json_field(in,
	    "state"));
	*client = art_json_set_some(*client, "forwarded_props",
	    art_json_field(in, "forwardedProps"));
	return 0;
}

int
art_agui_input(const jv *in, const char *agent, struct art_agui_ids *ids,
    jv *line, struct art_err *err)
{
	jv msgs, view = jv_null(), client = jv_null();
	int r;

	*line = jv_null();
	ids->thread[0] = ids->run[0] = '\0';
	if (jv_get_kind(*in) != JV_KIND_OBJECT)
		return art_err_set(err, "bad_input", "the body is not a "
		    "RunAgentInput object");
	if (id_of(in, "threadId", ids->thread, err) == -1 ||
	    id_of(in, "runId", ids->run, err) == -1)
		return -1;
	if ((r = resume_of(in, line, err)) != 0) {
		if (r == 1)
			*line = art_json_set(*line, "session_id",
			    jv_string(ids->thread));
		return r == 1 ? 0 : -1;
	}
	msgs = art_json_field(in, "messages");
	r = view_of(&msgs, &view, err);
	jv_free(msgs);
	if (r == -1 || client_of(in, &client, err) == -1) {
		jv_free(view);
		return -1;
	}
	*line = art_json_set(jv_object(), "type", jv_string("client.messages"));
	*line = art_json_set(*line, "session_id", jv_string(ids->thread));
	*line = art_json_set(*line, "agent_id", jv_string(agent));
	*line = art_json_set(*line, "turn_id", jv_string(ids->run));
	*line = art_json_set(*line, "messages", view);
	if (jv_object_length(jv_copy(client)) > 0)
		*line = art_json_set(*line, "client", client);
	else
		jv_free(client);
	return 0;
}

/* --- the envelope ------------------------------------------------- */

struct art_agui_run {
	struct art_agui	*enc;
	char		 thread[ART_AGUI_ID_MAX + 1], run[ART_AGUI_ID_MAX + 1];
	bool		 started, ended;
	const char	*outcome;
	jv		 pending;	/* client tool calls started, unanswered */
	jv		 interrupts;	/* AG-UI Interrupts, as said */
	struct art_buf	 tmp;		/* the encoder's lines, one event's */
};

struct art_agui_run *
art_agui_run_new(const char *thread, const char *run,
    const struct art_agui_opts *opts)
{
	struct art_agui_run *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	if ((r->enc = art_agui_new(opts)) == NULL) {
		free(r);
		return NULL;
	}
	snprintf(r->thread, sizeof(r->thread), "%s", thread);
	snprintf(r->run, sizeof(r->run), "%s", run);
	r->outcome = "success";
	r->pending = jv_array();
	r->interrupts = jv_array();
	return r;
}

void
art_agui_run_free(struct art_agui_run *r)
{
	if (r == NULL)
		return;
	art_agui_free(r->enc);
	jv_free(r->pending);
	jv_free(r->interrupts);
	art_buf_release(&r->tmp);
	free(r);
}

/* Appends event v (consumed) to out as one line. */
static int
put(struct art_buf *out, jv v)
{
	size_t len;
	char *s = art_json_dump(&v, &len);
	int rc;

	jv_free(v);
	if (s == NULL)
		return -1;
	rc = art_buf_add(out, s, len) == -1 || art_buf_addc(out, '\n') == -1 ?
	    -1 : 0;
	free(s);
	return rc;
}

static jv
run_event(const struct art_agui_run *r, const char *type)
{
	jv v = art_json_set(jv_object(), "type", jv_string(type));

	v = art_json_set(v, "threadId", jv_string(r->thread));
	return art_json_set(v, "runId", jv_string(r->run));
}

int
art_agui_run_start(struct art_agui_run *r, struct art_buf *out)
{
	if (r->started)
		return 0;
	r->started = true;
	return put(out, run_event(r, "RUN_STARTED"));
}

/* A CUSTOM agentrt.interrupt's value (borrowed) as an AG-UI Interrupt. */
static jv
interrupt_of(const jv *val, const char *id)
{
	jv it = art_json_set(jv_object(), "id", jv_string(id)), p, q;

	q = art_json_field(val, "reason");
	it = art_json_set(it, "reason", jv_get_kind(q) == JV_KIND_STRING ? q :
	    (jv_free(q), jv_string("input")));
	p = art_json_field(val, "payload");
	q = art_json_field(&p, "question");
	if (jv_get_kind(q) == JV_KIND_STRING)
		it = art_json_set(it, "message", q);
	else
		jv_free(q);
	jv_free(p);
	return it;
}

/*
 * What the run is left waiting on, from the events it carried: a
 * CUSTOM agentrt.interrupt (an approval, a question); a tool call, from
 * TOOL_CALL_START until its TOOL_CALL_RESULT.
 */
static void
track(struct art_agui_run *r, const char *type, const jv *v)
{
	const char *id, *name;
	jv val;

	if (strcmp(type, "TOOL_CALL_START") == 0 &&
	    (id = art_json_str(v, "toolCallId")) != NULL)
		r->pending = jv_array_append(r->pending, jv_string(id));
	else if (strcmp(type, "TOOL_CALL_RESULT") == 0 &&
	    (id = art_json_str(v, "toolCallId")) != NULL)
		r->pending = art_json_without_str(r->pending, id);
	else if (strcmp(type, "CUSTOM") == 0 && (name = art_json_str(v,
	    "name")) != NULL && strcmp(name, "agentrt.interrupt") == 0) {
		val = art_json_field(v, "value");
		if ((id = art_json_str(&val, "interrupt_id")) != NULL)
			r->interrupts = jv_array_append(r->interrupts,
			    interrupt_of(&val, id));
		jv_free(val);
	}
}

/* RUN_FINISHED's outcome from what the run carried: interrupt, success. */
static jv
outcome_of(struct art_agui_run *r)
{
	jv o;

	if (jv_array_length(jv_copy(r->interrupts)) > 0) {
		r->outcome = "interrupt";
		o = art_json_set(jv_object(), "type", jv_string("interrupt"));
		return art_json_set(o, "interrupts", jv_copy(r->interrupts));
	}
	o = art_json_set(jv_object(), "type", jv_string("success"));
	if (jv_array_length(jv_copy(r->pending)) > 0) {
		r->outcome = "interrupt";
		return art_json_set(o, "pendingToolCallIds",
		    jv_copy(r->pending));
	}
	r->outcome = "success";
	return o;
}

/* One AG-UI event (consumed) of the encoder's, in the run's envelope. */
static int
envelope(struct art_agui_run *r, jv v, struct art_buf *out)
{
	const char *type = art_json_str(&v, "type"), *ot;
	jv o;

	if (type == NULL || r->ended || strcmp(type, "RUN_STARTED") == 0) {
		jv_free(v);
		return art_agui_run_start(r, out);
	}
	if (art_agui_run_start(r, out) == -1) {
		jv_free(v);
		return -1;
	}
	track(r, type, &v);
	if (strcmp(type, "RUN_ERROR") == 0) {
		r->ended = true;
		r->outcome = "error";
	} else if (strcmp(type, "RUN_FINISHED") == 0) {
		r->ended = true;
		v = art_json_set(v, "threadId", jv_string(r->thread));
		v = art_json_set(v, "runId", jv_string(r->run));
		o = art_json_field(&v, "outcome");
		ot = art_json_str(&o, "type");
		if (ot == NULL || strcmp(ot, "success") == 0)
			v = art_json_set(v, "outcome", outcome_of(r));
		else
			r->outcome = strcmp(ot, "interrupt") == 0 ?
			    "interrupt" : "cancelled";
		jv_free(o);
	}
	return put(out, v);
}

/* The encoder's lines in r->tmp, each through the envelope. */
static int
envelope_lines(struct art_agui_run *r, struct art_buf *out)
{
	struct art_err err;
	char *nl;
	int rc = 0;
	jv v;

	while (rc == 0 && r->tmp.len > 0 && (nl = memchr(r->tmp.p, '\n',
	    r->tmp.len)) != NULL) {
		v = art_json_parse(r->tmp.p, (size_t)(nl - r->tmp.p), &err);
		art_buf_consume(&r->tmp, (size_t)(nl - r->tmp.p) + 1);
		if (jv_is_valid(v))
			rc = envelope(r, v, out);
		else
			jv_free(v);	/* the encoder's own: never */
	}
	art_buf_clear(&r->tmp);
	return rc;
}

int
art_agui_run_event(struct art_agui_run *r, const jv *ev,
    struct art_buf *out)
{
	if (r->ended)
		return 0;
	if (art_agui_event(r->enc, ev, &r->tmp) == -1)
		return -1;
	return envelope_lines(r, out);
}

int
art_agui_run_end(struct art_agui_run *r, enum art_agui_end_how how,
    const char *why, struct art_buf *out)
{
	jv e;

	if (r->ended)
		return 0;
	if (how == ART_AGUI_END_IDLE && (art_agui_end(r->enc, NULL,
	    &r->tmp) == -1 || envelope_lines(r, out) == -1))
		return -1;
	if (r->ended)
		return 0;
	if (art_agui_run_start(r, out) == -1)
		return -1;
	r->ended = true;
	if (how == ART_AGUI_END_FAILED) {
		r->outcome = "error";
		e = art_json_set(jv_object(), "type", jv_string("RUN_ERROR"));
		e = art_json_set(e, "message", jv_string(why != NULL ? why :
		    "the run failed"));
		return put(out, art_json_set(e, "code",
		    jv_string("run_failed")));
	}
	e = run_event(r, "RUN_FINISHED");
	if (how == ART_AGUI_END_CANCELLED) {
		r->outcome = "cancelled";
		return put(out, art_json_set(e, "outcome", art_json_set(
		    jv_object(), "type", jv_string("cancelled"))));
	}
	return put(out, art_json_set(e, "outcome", outcome_of(r)));
}

bool
art_agui_run_ended(const struct art_agui_run *r)
{
	return r->ended;
}

const char *
art_agui_run_outcome(const struct art_agui_run *r)
{
	return r->outcome;
}
