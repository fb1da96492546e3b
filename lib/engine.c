/* engine.c - the engine: inputs in, decisions and calls out, all recorded
 *
 * Each public entry point runs one write transaction through
 * art_store_write().  Inside it a struct cx gathers the lines and client
 * events the step produces; they reach the engine's outboxes only after
 * the commit, and a transaction that is rerun (the map grew) starts them
 * afresh.  A step that finds its input bad after it began writing aborts
 * with err code "reject"; the entry point then records only the rejection
 * in a second transaction, so a half-applied response never lands.
 */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <signal.h>

#include "calls.h"
#include "json.h"
#include "propose.h"
#include "reconcile.h"
#include "request.h"
#include "schema.h"
#include "log.h"
#include "session.h"
#include "sha.h"
#include "tree.h"
#include "views.h"
#include "wire.h"

#define MAX_SESSIONS		64
#define DECISION_ATTEMPTS	10
#define SUB_AGENT_DEPTH		5	/* max_subagent_depth's default */

struct art_engine {
	struct art_engine_opts	 o;
	char			 sids[MAX_SESSIONS][ART_ID_MAX + 1];
	int			 nsids;
	jv			 out;		/* lines for the ring */
	jv			 events;	/* events for clients */
	int64_t			 wake;		/* the earliest of wakes[] */
	int64_t			 wakes[MAX_SESSIONS];
	jv			 first_token;	/* call id -> ms, for ttft */
	/*
	 * sid -> {head, depth, text}: the messages of the path root..head
	 * as JSON text, joined by commas, as the last model call of sid
	 * sent them.  The next call's prompt is that text and the few
	 * messages since, so building it costs the news, not the path.
	 * Only what a committed step made is kept (prompt_stage until then).
	 */
	jv			 prompts;
	jv			 prompt_stage;
};

/* One step's work inside one transaction. */
struct cx {
	struct art_engine	*e;
	struct art_txn		*t;
	struct art_err		*err;
	const char		*sid;
	int64_t			 now;
	jv			 out;
	jv			 events;
	int64_t			 wake;
	jv			 sum;		/* the summary, until the next rec */
	jv			 adopt;		/* sessions to drive from now on */
	const struct cx		*up;		/* the step this one runs within */
};

static int	plan(struct cx *);
static jv	call_request(struct cx *, const jv *);
static int	rec_error(struct cx *, const char *, const char *, const jv *);
static enum art_engine_state session_state(struct cx *, int);
static int	outside_call(struct cx *, const jv *, int);
static int	in_ids(const jv *, const char *);

/*
 * Runs fn in session sid inside the same transaction (a sub-agent, the
 * parent it reports to, the target of a message.send), then plans sid
 * unless a step of sid is already under way further up: that step plans
 * it when it ends.  Lines, events and wakes join c's.
 */
static int
with_session(struct cx *c, const char *sid, int (*fn)(struct cx *, void *),
    void *arg)
{
	struct cx s = *c;
	const struct cx *u;
	int r, busy = 0;

	if (strcmp(sid, c->sid) == 0)
		return fn(c, arg);
	for (u = c; u != NULL; u = u->up)
		if (strcmp(u->sid, sid) == 0)
			busy = 1;
	s.sid = sid;
	s.sum = jv_invalid();
	s.up = c;
	r = fn(&s, arg);
	if (r == 0 && !busy)
		r = plan(&s);
	jv_free(s.sum);
	c->out = s.out;
	c->events = s.events;
	c->adopt = s.adopt;
	c->wake = s.wake;
	jv_free(c->sum);	/* sid's step may have written ours too */
	c->sum = jv_invalid();
	return r;
}

/* sid is driven by this engine from now on (once the step commits). */
static void
adopt(struct cx *c, const char *sid)
{
	c->adopt = jv_array_append(c->adopt, jv_string(sid));
}

/* --- small things --------------------------------------------------- */

static jv
iso(int64_t ms)
{
	char buf[ART_CLOCK_BUFSZ];

	return jv_string(art_clock_format(ms, buf));
}

static int64_t
ms_of(const jv *o, const char *key)
{
	const char *s = art_json_str(o, key);
	int64_t ms;

	if (s == NULL || art_clock_parse(s, &ms, NULL) == -1)
		return -1;
	return ms;
}

static int
mint(struct cx *c, char *buf)
{
	if (art_ids_v7(c->e->o.ids, buf) == -1)
		return art_err_set(c->err, "ids", "cannot mint an id");
	return 0;
}

/* Refuses the step's input: the entry point records only the refusal. */
static int
reject(struct cx *c, const char *fmt, const char *arg)
{
	char a[sizeof(c->err->msg)];

	snprintf(a, sizeof(a), "%s", arg != NULL ? arg : "");	/* may alias */
	art_err_set(c->err, "reject", fmt, a);
	return -1;
}

static jv
obj(const char *type)
{
	return jv_object_set(jv_object(), jv_string("type"), jv_string(type));
}

static jv
set(jv o, const char *key, jv v)
{
	return jv_object_set(o, jv_string(key), v);
}

/* v unless it is null (or invalid), when the key is left out. */
static jv
set_some(jv o, const char *key, jv v)
{
	if (!jv_is_valid(v) || jv_get_kind(v) == JV_KIND_NULL) {
		jv_free(v);
		return o;
	}
	return jv_object_set(o, jv_string(key), v);
}

static void
wake_at(struct cx *c, int64_t ms)
{
	if (ms >= 0 && (c->wake < 0 || ms < c->wake))
		c->wake = ms;
}

static void
wake(struct cx *c, const jv *o, const char *key)
{
	wake_at(c, ms_of(o, key));
}

static void
emit(struct cx *c, jv line)
{
	c->out = jv_array_append(c->out, line);
}

/* --- client events: a projection of what was recorded ---------------- */

static void
publish(struct cx *c, const jv *ev, jv ce)
{
	ce = set(ce, "session_id", jv_string(c->sid));
	if (ev != NULL) {
		ce = set_some(ce, "seq", art_json_field(ev, "seq"));
		ce = set_some(ce, "turn_id", art_json_field(ev, "turn_id"));
		ce = set_some(ce, "at", art_json_field(ev, "occurred_at"));
	}
	c->events = jv_array_append(c->events, ce);
}

static void
status_event(struct cx *c, const jv *ev, const char *status)
{
	publish(c, ev, set(obj("status"), "status", jv_string(status)));
}

/* Milliseconds from the call's dispatch to now. */
static jv
call_ms(struct cx *c, const char *id)
{
	jv call = art_store_get(c->t, ART_DB_CALLS, c->sid, id, strlen(id),
	    NULL);
	int64_t at = jv_is_valid(call) ? ms_of(&call, "dispatched_at") : -1;

	jv_free(call);
	return at >= 0 ? jv_number((double)(c->now - at)) : jv_null();
}

static jv
turn_record(struct cx *c, const char *tid)
{
	return tid != NULL ? art_store_get(c->t, ART_DB_TURNS, c->sid, tid,
	    strlen(tid), NULL) : jv_invalid();
}

static void
project_completion(struct cx *c, const jv *ev, const jv *p)
{
	jv turn = turn_record(c, art_json_str(p, "turn_id")), ce;
	int64_t started = jv_is_valid(turn) ? ms_of(&turn, "started") : -1;
	jv error = art_json_field(p, "error");
	int failed = jv_get_kind(error) != JV_KIND_NULL;

	ce = set(obj("completion"), "text", art_json_field(p, "data"));
	ce = set(ce, "usage", art_json_field(p, "usage"));
	ce = set(ce, "cost", art_json_field(p, "cost"));
	ce = set(ce, "loop_iterations", art_json_field(p, "llm_calls"));
	ce = set(ce, "duration_ms", started >= 0 ?
	    jv_number((double)(c->now - started)) : jv_null());
	ce = set_some(ce, "error", jv_copy(error));
	if (ev == NULL)		/* a turn reported again: name it */
		ce = set(ce, "turn_id", art_json_field(p, "turn_id"));
	publish(c, ev, ce);
	status_event(c, ev, failed ? "error" : "complete");
	publish(c, ev, set(obj("turn.finished"), "status",
	    jv_string(failed ? "failed" : "completed")));
	jv_free(error);
	jv_free(turn);
}

static void
project_tool_result(struct cx *c, const jv *ev, const jv *p, int ok)
{
	const char *id = art_json_str(p, "id");
	jv ce = obj("tool_result");

	ce = set(ce, "id", art_json_field(p, "id"));
	ce = set(ce, "name", art_json_field(p, "name"));
	ce = set(ce, ok ? "result" : "error", art_json_field(p,
	    ok ? "result" : "error"));
	ce = set(ce, "duration_ms", id != NULL ? call_ms(c, id) : jv_null());
	publish(c, ev, ce);
}

static void
project_metrics(struct cx *c, const jv *ev, const jv *p)
{
	const char *id = art_json_str(p, "id");
	jv resp = art_json_field(p, "response"), ce = obj("metrics"), first;
	jv total = id != NULL ? call_ms(c, id) : jv_null();

	ce = set(ce, "id", art_json_field(p, "id"));
	ce = set(ce, "model", art_json_field(&resp, "model"));
	ce = set(ce, "usage", art_json_field(&resp, "usage"));
	ce = set(ce, "cost", art_json_field(&resp, "cost"));
	first = id != NULL ? jv_object_get(jv_copy(c->e->first_token),
	    jv_string(id)) : jv_invalid();
	if (jv_get_kind(first) == JV_KIND_NUMBER &&
	    jv_get_kind(total) == JV_KIND_NUMBER)
		ce = set(ce, "ttft_ms", jv_number(jv_number_value(total) -
		    (double)(c->now - (int64_t)jv_number_value(first))));
	else
		ce = set(ce, "ttft_ms", jv_copy(total));
	jv_free(first);
	ce = set(ce, "total_ms", total);
	publish(c, ev, ce);
	jv_free(resp);
}

static void
project_errored(struct cx *c, const jv *ev, const jv *p, const char *what)
{
	jv ce = set(obj("error"), "code", jv_string(what));
	jv next = art_json_field(p, "next_at"), again;

	ce = set(ce, "id", art_json_field(p, "id"));
	ce = set(ce, "message", art_json_field(p, "error"));
	/* A call retries at next_at; a decision is sent again at once. */
	again = art_json_field(p, "retryable");
	ce = set(ce, "retrying", jv_get_kind(next) != JV_KIND_NULL ||
	    (strcmp(what, "decision_error") == 0 &&
	    jv_get_kind(again) == JV_KIND_TRUE) ? jv_true() : jv_false());
	jv_free(next);
	jv_free(again);
	publish(c, ev, ce);
}

/* What a client sees of a recorded event; most events show nothing. */
static void
project(struct cx *c, const jv *ev)
{
	jv p = art_json_field(ev, "payload");
	const char *type = art_json_str(&p, "type");
	jv next;

	if (type == NULL)
		;
	else if (strcmp(type, "turn.started") == 0)
		publish(c, ev, obj("turn.started"));
	else if (strcmp(type, "message.new") == 0)
		publish(c, ev, set(set(obj("message"), "message",
		    art_json_field(&p, "message")), "parent_id",
		    art_json_field(&p, "parent_id")));
	else if (strcmp(type, "llm.call.dispatched") == 0)
		status_event(c, ev, "thinking");
	else if (strcmp(type, "tool.call.requested") == 0)
		publish(c, ev, set(set(set(set(obj("tool_call"), "id",
		    art_json_field(&p, "id")), "name", art_json_field(&p,
		    "name")), "arguments", art_json_field(&p, "arguments")),
		    "handler", art_json_field(&p, "handler")));
	else if (strcmp(type, "tool.call.dispatched") == 0)
		status_event(c, ev, "acting");
	else if (strcmp(type, "tool.call.completed") == 0)
		project_tool_result(c, ev, &p, 1);
	else if (strcmp(type, "tool.call.errored") == 0) {
		next = art_json_field(&p, "next_at");
		if (jv_get_kind(next) == JV_KIND_NULL)
			project_tool_result(c, ev, &p, 0);
		else
			project_errored(c, ev, &p, "tool_error");
		jv_free(next);
	} else if (strcmp(type, "llm.call.completed") == 0)
		project_metrics(c, ev, &p);
	else if (strcmp(type, "llm.call.errored") == 0)
		project_errored(c, ev, &p, "llm_error");
	else if (strcmp(type, "decision.errored") == 0)
		project_errored(c, ev, &p, "decision_error");
	else if (strcmp(type, "session.interrupted") == 0)
		publish(c, ev, set(set(set(set(obj("status"), "status",
		    jv_string("suspended")), "interrupt_id", art_json_field(&p,
		    "interrupt_id")), "reason", art_json_field(&p, "reason")),
		    "payload", art_json_field(&p, "payload")));
	else if (strcmp(type, "turn.completed") == 0)
		project_completion(c, ev, &p);
	else if (strcmp(type, "error") == 0)
		publish(c, ev, set(set(obj("error"), "code", art_json_field(&p,
		    "code")), "message", art_json_field(&p, "message")));
	jv_free(p);
}

/* Records payload (consumed) in the step's session and projects it. */
static int
rec(struct cx *c, jv payload)
{
	jv ev;

	jv_free(c->sum);	/* every event may change the summary */
	c->sum = jv_invalid();
	if (art_session_record_at(c->t, c->sid, payload, &ev, &c->sum,
	    c->err) == -1) {
		c->sum = jv_invalid();
		return -1;
	}
	project(c, &ev);
	jv_free(ev);
	return 0;
}

/* --- reading the session -------------------------------------------- */

/* The session's summary, read once per change (a step reads it often). */
static jv
summary(struct cx *c)
{
	if (!jv_is_valid(c->sum)) {
		jv_free(c->sum);
		c->sum = art_session_get(c->t, c->sid, c->err);
		if (!jv_is_valid(c->sum))
			return jv_copy(c->sum);
	}
	return jv_copy(c->sum);
}

/* The head now, copied to buf ("" when the tree is empty). */
static int
head(struct cx *c, char *buf, size_t n)
{
	jv s = summary(c);
	const char *h;

	if (!jv_is_valid(s))
		return -1;
	h = art_json_str(&s, "head");
	snprintf(buf, n, "%s", h != NULL ? h : "");
	jv_free(s);
	return 0;
}

static jv
head_jv(const char *h)
{
	return *h != '\0' ? jv_string(h) : jv_null();
}

static jv
config_at(struct cx *c, const char *h)
{
	return art_session_resolve(c->t, c->sid, ART_VERSION_AGENT,
	    *h != '\0' ? h : NULL, c->err);
}

static jv
get_call(struct cx *c, const char *id)
{
	return art_store_get(c->t, ART_DB_CALLS, c->sid, id, strlen(id),
	    c->err);
}

/* The open calls, as full records, in id order. */
static jv
open_calls(struct cx *c, const jv *s)
{
	jv open = art_json_field(s, "open"), out = jv_array(), call;

	if (jv_get_kind(open) == JV_KIND_OBJECT) {
		jv keys = jv_keys(jv_copy(open));

		jv_array_foreach(keys, i, k) {
			call = get_call(c, jv_string_value(k));
			if (jv_is_valid(call))
				out = jv_array_append(out, call);
			else
				jv_free(call);
			jv_free(k);
		}
		jv_free(keys);
	}
	jv_free(open);
	return out;
}

/* A call as the seed's Call type shows it. */
static jv
wire_call(const jv *call)
{
	static const char *const keys[] = { "id", "kind", "status", "attempt",
	    "deadline", "anchor", "name", "arguments", "handler", "stream",
	    "agent_id", "session_id", NULL };
	const char *const *k;
	jv w = jv_object();

	for (k = keys; *k != NULL; k++)
		w = set_some(w, *k, art_json_field(call, *k));
	return w;
}

struct queue_scan {
	jv	first;		/* the first entry the filter takes */
	jv	all;		/* every entry, when wanted */
	int	parked;		/* take only what passes an interrupt */
};

static int
passes_park(const jv *q)
{
	jv tr = art_json_field(q, "trigger");
	const char *t = art_json_str(&tr, "type");
	jv esc = art_json_field(q, "escapes");
	/* Tools already started keep running (PROTOCOL-NOTES §7). */
	int ok = t != NULL && (strcmp(t, "interrupt.resumed") == 0 ||
	    strcmp(t, "client.action") == 0 ||
	    strcmp(t, "tool.execute") == 0);

	/* A view that leaves the parked branch (see escapes_park). */
	ok = ok || jv_get_kind(esc) == JV_KIND_TRUE;
	jv_free(esc);
	jv_free(tr);
	return ok;
}

static int
queue_fn(const void *sub, size_t sublen, jv v, void *ctx, struct art_err *err)
{
	struct queue_scan *q = ctx;

	(void)sub, (void)sublen, (void)err;
	if (jv_get_kind(q->first) == JV_KIND_NULL &&
	    (!q->parked || passes_park(&v)))
		q->first = jv_copy(v);
	if (jv_is_valid(q->all))
		q->all = jv_array_append(q->all, v);
	else
		jv_free(v);
	return 0;
}

static int
scan_queue(struct cx *c, struct queue_scan *q)
{
	return art_store_scan(c->t, ART_DB_PENDING, c->sid, NULL, 0, NULL, 0,
	    0, queue_fn, q, c->err);
}

/* Every queued decision, in order: a new array, or jv_invalid(). */
static jv
queued(struct cx *c)
{
	struct queue_scan q = { jv_null(), jv_array(), 0 };
	int r = scan_queue(c, &q);

	jv_free(q.first);
	if (r == -1) {
		jv_free(q.all);
		return jv_invalid();
	}
	return q.all;
}

static int
is_finished_trigger(const jv *trigger)
{
	const char *t = art_json_str(trigger, "type");

	return t != NULL && (strcmp(t, "tool.finished") == 0 ||
	    strcmp(t, "sub_agent.finished") == 0);
}

/*
 * Open tool and sub-agent calls, plus results not yet folded in (queued
 * tool.finished decisions other than the one being built).
 */
static int64_t
pending_calls(struct cx *c, const jv *s, const char *except)
{
	jv open = art_json_field(s, "open"), all;
	int64_t n = 0;

	if (jv_get_kind(open) == JV_KIND_OBJECT) {
		jv_object_foreach(open, k, kind) {
			if (strcmp(jv_string_value(kind), "llm_call") != 0)
				n++;
			jv_free(k);
			jv_free(kind);
		}
	}
	jv_free(open);
	if (jv_is_valid(all = queued(c))) {
		jv_array_foreach(all, i, e) {
			jv tr = art_json_field(&e, "trigger");
			const char *id = art_json_str(&e, "id");

			if (is_finished_trigger(&tr) && (except == NULL ||
			    id == NULL || strcmp(id, except) != 0))
				n++;
			jv_free(tr);
			jv_free(e);
		}
	}
	jv_free(all);
	return n;
}

/* --- the queue and the live decision -------------------------------- */

static int
queue_decision(struct cx *c, jv trigger, int priority, jv extra)
{
	char id[ART_ID_BUFSZ];
	jv p;

	if (mint(c, id) == -1) {
		jv_free(trigger);
		jv_free(extra);
		return -1;
	}
	p = set(obj("decision.queued"), "id", jv_string(id));
	p = set(p, "trigger", trigger);
	p = set(p, "priority", jv_number(priority));
	/* What the proposal needs beside the trigger: agent_file, interrupt. */
	if (jv_get_kind(extra) == JV_KIND_OBJECT) {
		jv_object_foreach(extra, k, v)
			p = jv_object_set(p, k, v);
	}
	jv_free(extra);
	return rec(c, p);
}

/* client.message becomes client.messages, composed against the head. */
static jv
compose(struct cx *c, const char *h, jv trigger)
{
	const char *type = art_json_str(&trigger, "type");
	jv path, msg, n, out;
	char id[ART_ID_BUFSZ];
	int known = 0, news;

	if (type == NULL || (strcmp(type, "client.message") != 0 &&
	    strcmp(type, "client.messages") != 0))
		return trigger;
	out = set(obj("client.messages"), "client", jv_get_kind(n =
	    art_json_field(&trigger, "client")) == JV_KIND_OBJECT ? n :
	    (jv_free(n), jv_object()));
	if (strcmp(type, "client.messages") == 0) {
		msg = art_json_field(&trigger, "messages");
		news = art_reconcile_news_from(c->t, c->sid, &msg, c->err);
		out = set(out, "messages", msg);
		jv_free(trigger);
		return set(out, "new_from", jv_number(news < 0 ? 0 : news));
	}
	path = art_tree_path(c->t, c->sid, *h != '\0' ? h : NULL, c->err);
	if (!jv_is_valid(path))
		path = jv_array();
	msg = art_json_field(&trigger, "message");
	if (art_json_str(&msg, "id") == NULL && mint(c, id) == 0)
		msg = set(msg, "id", jv_string(id));
	n = art_tree_node(c->t, c->sid, art_json_str(&msg, "id"), NULL);
	known = jv_is_valid(n);
	jv_free(n);
	out = set(out, "new_from", jv_number(jv_array_length(jv_copy(path))));
	out = set(out, "messages", known ? path : jv_array_append(path, msg));
	if (known)
		jv_free(msg);
	jv_free(trigger);
	return out;
}

static jv
llm_call_cb(void *ctx, const char *id)
{
	struct cx *c = ctx;
	jv call = art_store_get(c->t, ART_DB_CALLS, c->sid, id, strlen(id),
	    NULL);

	if (!jv_is_valid(call)) {
		jv_free(call);
		return jv_null();
	}
	return set(call, "request", call_request(c, &call));
}

/* Does message m ask for tool call id? */
static int
asks_for(const jv *m, const char *id)
{
	jv calls = art_json_field(m, "tool_calls");
	const char *role = art_json_str(m, "role"), *cid;
	int yes = 0;

	if (role != NULL && strcmp(role, "assistant") == 0 &&
	    jv_get_kind(calls) == JV_KIND_ARRAY) {
		jv_array_foreach(calls, k, tc) {
			cid = art_json_str(&tc, "id");
			yes = yes || (cid != NULL && strcmp(cid, id) == 0);
			jv_free(tc);
			(void)k;
		}
	}
	jv_free(calls);
	return yes;
}

/*
 * The message of node at (ART_ID_MAX + 1 bytes), at moved to its parent
 * ("" past a root); jv_invalid() when at names no node.  The walks up
 * from the head below are made of it: each goes as far as it needs.
 */
static jv
step_up(struct cx *c, char *at)
{
	jv n = art_tree_node(c->t, c->sid, at, NULL), m;
	const char *p;

	if (!jv_is_valid(n))
		return n;
	m = art_json_field(&n, "message");
	p = art_json_str(&n, "parent_id");
	snprintf(at, ART_ID_MAX + 1, "%s", p != NULL ? p : "");
	jv_free(n);
	return m;
}

/* a (consumed) back to front. */
static jv
reversed(jv a)
{
	jv out = jv_array();
	int i;

	for (i = jv_array_length(jv_copy(a)) - 1; i >= 0; i--)
		out = jv_array_append(out, jv_array_get(jv_copy(a), i));
	jv_free(a);
	return out;
}

/*
 * The messages from the last assistant message on the active path that
 * asked for call id down to the head: a walk up from the head, as far as
 * that message (the tool results since it, in a tool loop).
 */
static jv
since_call_cb(void *ctx, const char *id)
{
	struct cx *c = ctx;
	char at[ART_ID_MAX + 1];
	jv rev = jv_array(), m;
	int found = 0;

	if (head(c, at, sizeof(at)) == -1)
		*at = '\0';
	while (!found && *at != '\0' && jv_is_valid(m = step_up(c, at))) {
		found = asks_for(&m, id);
		rev = jv_array_append(rev, m);
	}
	if (!found) {
		jv_free(rev);
		return jv_null();
	}
	return reversed(rev);
}

static jv
prompt_cb(void *ctx, const jv *req)
{
	struct cx *c = ctx;

	return art_request_prompt(c->t, c->sid, req, c->err);
}

/* The seq of sid's last event, 0 for none. */
static int64_t
last_seq(struct cx *c)
{
	unsigned char k[8];
	size_t n = sizeof(k);

	if (art_store_last(c->t, ART_DB_EVENTS, c->sid, NULL, 0, k, &n,
	    NULL) != 1 || n != 8)
		return 0;
	return (int64_t)art_be64_get(k);
}

/* Do the view's first from messages have the ids of the path to h? */
static int
continues(struct cx *c, const jv *trigger, const char *h)
{
	jv view = art_json_field(trigger, "messages"), ids;
	int64_t from = -1;
	int yes;

	art_json_get_int(trigger, "new_from", -1, &from, NULL);
	ids = art_tree_path_ids(c->t, c->sid, *h != '\0' ? h : NULL, NULL);
	yes = jv_is_valid(ids) && jv_get_kind(view) == JV_KIND_ARRAY &&
	    from == jv_array_length(jv_copy(ids)) &&
	    from <= jv_array_length(jv_copy(view));
	for (int i = 0; yes && i < from; i++) {
		jv m = jv_array_get(jv_copy(view), i);
		jv id = jv_array_get(jv_copy(ids), i);
		const char *mid = art_json_str(&m, "id");

		yes = mid != NULL && strcmp(mid, jv_string_value(id)) == 0;
		jv_free(m);
		jv_free(id);
	}
	jv_free(ids);
	jv_free(view);
	return yes;
}

/*
 * The decision.request line for the live decision, by reference (DESIGN
 * §2.1): the trigger, the proposal (news only), the calls, and where it
 * stands in the store ("ref": the head and the log position), but not
 * the conversation, the tree, the state or the config, which
 * agentrt-decide reads back from the store for whoever needs them
 * (art_request_whole).
 */
static jv
build_request(struct cx *c, const jv *live)
{
	char h[ART_ID_MAX + 1];
	jv s = summary(c), r, config, calls, trigger, file, wcalls, intr, ref;
	struct art_propose_in in;
	const char *id = art_json_str(live, "id"), *tt;

	if (!jv_is_valid(s) || head(c, h, sizeof(h)) == -1) {
		jv_free(s);
		return jv_invalid();
	}
	config = config_at(c, h);
	trigger = art_json_field(live, "trigger");
	file = art_json_field(live, "agent_file");
	intr = art_json_field(live, "interrupt");
	calls = open_calls(c, &s);
	wcalls = jv_array();
	jv_array_foreach(calls, i, call) {
		wcalls = jv_array_append(wcalls, wire_call(&call));
		jv_free(call);
	}
	jv_free(calls);
	tt = art_json_str(&trigger, "type");
	in = (struct art_propose_in){ &trigger, &config, &file, &intr,
	    *h != '\0' ? h : NULL, id, pending_calls(c, &s, id),
	    tt != NULL && strcmp(tt, "client.messages") == 0 &&
	    continues(c, &trigger, h), llm_call_cb, since_call_cb, prompt_cb,
	    c };
	r = set(obj("decision.request"), "session_id", jv_string(c->sid));
	r = set(r, "decision_id", art_json_field(live, "id"));
	r = set(r, "agent_id", art_json_field(&s, "agent_id"));
	r = set(r, "identity", art_json_field(&s, "identity"));
	r = set(r, "trigger", jv_copy(trigger));
	r = set(r, "proposed", jv_is_valid(config) ? art_propose(&in) :
	    jv_object());
	r = set(r, "calls", wcalls);
	r = set(r, "pending_calls", jv_number((double)in.pending_calls));
	r = set(r, "ancestry", art_json_field(&s, "ancestry"));
	r = set(r, "attempts", art_json_field(live, "attempts"));
	r = set(r, "deadline", art_json_field(live, "deadline"));
	r = set(r, "turn_id", art_json_field(&s, "turn"));
	/* agentrt-llm runs a worker's model call with the agent's settings. */
	if (tt != NULL && strcmp(tt, "llm.execute") == 0)
		r = set(r, "agent", jv_copy(config));
	ref = set(jv_object(), "store", jv_string(art_store_dir(
	    art_txn_store(c->t))));
	ref = set(ref, "head", head_jv(h));
	ref = set(ref, "seq", jv_number((double)last_seq(c)));
	r = set(r, "ref", ref);
	jv_free(config);
	jv_free(trigger);
	jv_free(file);
	jv_free(intr);
	jv_free(s);
	return r;
}

/* Records the dispatch of a decision (live, consumed) and sends it. */
static int
send_decision(struct cx *c, jv live)
{
	struct art_retry pol;
	jv req;

	art_retry_default(&pol, ART_KIND_DECISION);
	live = set(live, "deadline", iso(art_retry_deadline_ms(&pol, c->now)));
	if (rec(c, set(jv_copy(live), "type",
	    jv_string("decision.dispatched"))) == -1) {
		jv_free(live);
		return -1;
	}
	wake(c, &live, "deadline");
	req = build_request(c, &live);
	jv_free(live);
	if (!jv_is_valid(req))
		return -1;
	emit(c, req);
	return 0;
}

/* Sends the live decision again, one attempt more. */
static int
redeliver(struct cx *c, const jv *live)
{
	int64_t attempts = 1;
	jv again = jv_copy(*live);

	art_json_get_int(live, "attempts", 0, &attempts, NULL);
	again = jv_object_delete(again, jv_string("dispatched_at"));
	again = set(again, "attempts", jv_number((double)attempts + 1));
	return send_decision(c, again);
}

/* The open interrupt that parks the head (a new jv), or jv_null(). */
static jv
parking(struct cx *c, const jv *s)
{
	jv all = art_json_field(s, "interrupts"), ids, found = jv_null();
	const char *h = art_json_str(s, "head"), *anchor;

	if (jv_get_kind(all) != JV_KIND_OBJECT ||
	    jv_object_length(jv_copy(all)) == 0) {
		jv_free(all);
		return found;
	}
	ids = art_tree_path_ids(c->t, c->sid, h, c->err);
	if (!jv_is_valid(ids))
		ids = jv_array();
	jv_object_foreach(all, k, it) {
		anchor = art_json_str(&it, "anchor");
		if (jv_get_kind(found) == JV_KIND_NULL && (anchor == NULL ||
		    in_ids(&ids, anchor))) {
			jv_free(found);
			found = jv_copy(it);
		}
		jv_free(k);
		jv_free(it);
	}
	jv_free(ids);
	jv_free(all);
	return found;
}

/* Is the active path parked on an open interrupt? */
static int
is_parked(struct cx *c, const jv *s)
{
	jv it = parking(c, s);
	int parked = jv_get_kind(it) != JV_KIND_NULL;

	jv_free(it);
	return parked;
}

/* The queue's next decision goes live, if none is. */
static int
dispatch_decision(struct cx *c, const jv *s)
{
	struct queue_scan q = { jv_null(), jv_invalid(), 0 };
	char h[ART_ID_MAX + 1];
	jv live = art_json_field(s, "live"), d;

	if (jv_get_kind(live) != JV_KIND_NULL) {
		jv_free(live);
		return 0;
	}
	jv_free(live);
	q.parked = is_parked(c, s);
	if (scan_queue(c, &q) == -1)
		return -1;
	if (jv_get_kind(q.first) == JV_KIND_NULL)
		return 0;
	if (head(c, h, sizeof(h)) == -1) {
		jv_free(q.first);
		return -1;
	}
	d = set(jv_object(), "id", art_json_field(&q.first, "id"));
	d = set(d, "attempts", jv_number(1));
	d = set(d, "trigger", compose(c, h, art_json_field(&q.first,
	    "trigger")));
	d = set_some(d, "turn_id", art_json_field(&q.first, "turn_id"));
	d = set_some(d, "agent_file", art_json_field(&q.first, "agent_file"));
	d = set_some(d, "interrupt", art_json_field(&q.first, "interrupt"));
	jv_free(q.first);
	return send_decision(c, d);
}

/* --- calls ------------------------------------------------------------ */

static int
call_retry(const jv *call, enum art_call_kind kind, struct art_retry *r)
{
	jv pol = art_json_field(call, "retry");

	art_retry_default(r, kind);
	art_retry_layer(r, &pol, NULL);
	jv_free(pol);
	return 0;
}

static enum art_call_kind
kind_of(const jv *call)
{
	const char *k = art_json_str(call, "kind"), *h;

	if (k != NULL && strcmp(k, "llm_call") == 0)
		return ART_KIND_LLM;
	if (k != NULL && strcmp(k, "sub_agent") == 0)
		return ART_KIND_SUB_AGENT;
	h = art_json_str(call, "handler");
	return h != NULL && strcmp(h, "client") == 0 ? ART_KIND_CLIENT_TOOL :
	    ART_KIND_TOOL;
}

/* "llm.call.", "tool.call." or "sub_agent." + step. */
static jv
call_event(const jv *call, const char *step)
{
	enum art_call_kind k = kind_of(call);
	char type[32];

	snprintf(type, sizeof(type), "%s.%s", k == ART_KIND_LLM ? "llm.call" :
	    k == ART_KIND_SUB_AGENT ? "sub_agent" : "tool.call", step);
	return set(set(obj(type), "id", art_json_field(call, "id")),
	    "attempt", art_json_field(call, "attempt"));
}

/* The tool's arguments as the seed's ToolInput. */
static jv
tool_input(const char *args, const jv *call)
{
	struct art_err err;
	jv v = art_json_parse_str(args, &err), in = jv_object();
	const char *why = art_json_str(call, "input_error");

	if (jv_get_kind(v) == JV_KIND_OBJECT && why != NULL) {
		/* Parsed, but not what the tool's input schema says. */
		in = set(in, "status", jv_string("invalid"));
		in = set(in, "value", v);
		return set(in, "error", jv_string(why));
	}
	if (jv_get_kind(v) == JV_KIND_OBJECT) {
		in = set(in, "status", jv_string("valid"));
		return set(in, "value", v);
	}
	in = set(in, "status", jv_string("malformed"));
	in = set(in, "error", jv_is_valid(v) ? jv_string_fmt("arguments are "
	    "%s, not a JSON object", art_json_kind_name(jv_get_kind(v))) :
	    jv_string(err.msg));
	jv_free(v);
	return in;
}

/* A model call's request, kept apart from the call (views.c). */
static jv
call_request(struct cx *c, const jv *call)
{
	const char *id = art_json_str(call, "id");
	jv req = id != NULL ? art_store_get(c->t, ART_DB_REQUESTS, c->sid, id,
	    strlen(id), NULL) : jv_invalid();

	return jv_is_valid(req) ? req : (jv_free(req), jv_null());
}

struct settle {
	const char	*id;
	int64_t		 attempt;	/* 0: whatever attempt is current */
	int		 ok;
	jv		 value;		/* result, response, or error text */
	int		 retryable;
	jv		 code;
	int64_t		 retry_after_ms;
	int		 internal;	/* the engine's own: drop stale quietly */
};

static int settle(struct cx *, struct settle *, const char *, const jv *);
static int hold_call(struct cx *, const jv *);
static int open_child(struct cx *, const jv *);

/*
 * The request a worker-run call with a format carries: the provider's own
 * body (PROTOCOL-NOTES §9), without "stream" (the trigger says).
 */
static jv
native_request(const jv *call, jv req, struct art_err *err)
{
	const char *format = art_json_str(call, "format");
	const struct art_wire *w = format != NULL ? art_wire_find(format) :
	    NULL;
	const char *model = art_json_str(&req, "model"), *slash;
	jv body;

	if (format == NULL)
		return req;
	if (w == NULL) {
		jv_free(req);
		art_err_set(err, "bad_request", "format '%s' is not openai or "
		    "anthropic", format);
		return jv_invalid();
	}
	slash = model != NULL ? strchr(model, '/') : NULL;
	body = w->request(&req, slash != NULL ? slash + 1 : model != NULL ?
	    model : "", false, err);
	jv_free(req);
	return body;
}

/* text (consumed) and the JSON text of msgs (consumed), comma-joined. */
static jv
joined(jv text, jv msgs)
{
	jv_array_foreach(msgs, k, m) {
		if (jv_is_valid(text) && jv_string_length_bytes(jv_copy(text)) > 0)
			text = jv_string_append_buf(text, ",", 1);
		if (jv_is_valid(text))
			text = art_json_append_dump(text, &m);
		jv_free(m);
		(void)k;
	}
	jv_free(msgs);
	return text;
}

/*
 * The messages root..h as JSON text joined by commas ("" for none): the
 * text kept for the session's last model call and the messages below it
 * (a walk up of as many nodes), or, off that path, the whole path read.
 */
static jv
path_text(struct cx *c, const char *h)
{
	jv kept = jv_null(), n, m, news = jv_array(), text, entry;
	char at[ART_ID_MAX + 1];
	int64_t depth = 0, kd = -1, i;
	const char *kh = NULL;
	int found = 0;

	if (h == NULL)
		return jv_string("");
	n = art_tree_node(c->t, c->sid, h, c->err);
	if (!jv_is_valid(n) || art_json_get_int(&n, "depth", 1, &depth,
	    c->err) == -1) {
		jv_free(news);
		return n;
	}
	jv_free(n);
	if (c->e != NULL) {
		kept = jv_object_get(jv_copy(c->e->prompt_stage),
		    jv_string(c->sid));
		if (!jv_is_valid(kept)) {
			jv_free(kept);
			kept = jv_object_get(jv_copy(c->e->prompts),
			    jv_string(c->sid));
		}
		if (!jv_is_valid(kept)) {
			jv_free(kept);
			kept = jv_null();
		}
		kh = art_json_str(&kept, "head");
		art_json_get_int(&kept, "depth", -1, &kd, NULL);
	}
	/* Up from h to the depth of the kept head: is it there? */
	snprintf(at, sizeof(at), "%s", h);
	for (i = depth; kh != NULL && kd >= 0 && i > kd && *at != '\0' &&
	    jv_is_valid(m = step_up(c, at)); i--)
		news = jv_array_append(news, m);
	found = kh != NULL && i == kd && strcmp(at, kh) == 0;
	if (found)
		text = joined(art_json_field(&kept, "text"), reversed(news));
	else {
		jv_free(news);
		news = art_tree_path(c->t, c->sid, h, c->err);
		if (!jv_is_valid(news)) {
			jv_free(kept);
			return news;
		}
		text = joined(jv_string(""), news);
	}
	jv_free(kept);
	if (!jv_is_valid(text)) {
		art_err_set(c->err, "nomem", "out of memory");
		return text;
	}
	if (c->e != NULL) {
		entry = set(set(set(jv_object(), "head", jv_string(h)), "depth",
		    jv_number((double)depth)), "text", jv_copy(text));
		c->e->prompt_stage = jv_object_set(c->e->prompt_stage,
		    jv_string(c->sid), entry);
	}
	return text;
}

/* ",", then the members of a non-empty object o and its closing brace. */
static jv
append_members(jv text, const jv *o)
{
	jv t = art_json_append_dump(jv_string(""), o);

	if (!jv_is_valid(t)) {
		jv_free(text);
		return t;
	}
	text = jv_string_append_str(text, ",");
	text = jv_string_append_buf(text, jv_string_value(t) + 1,
	    jv_string_length_bytes(jv_copy(t)) - 1);
	jv_free(t);
	return text;
}

/* Object text (consumed) without its closing brace. */
static jv
open_object(jv text)
{
	jv out;

	if (!jv_is_valid(text))
		return text;
	out = jv_string_sized(jv_string_value(text),
	    jv_string_length_bytes(jv_copy(text)) - 1);
	jv_free(text);
	return out;
}

/*
 * The llm.request line for a call whose prompt is the engine's default,
 * as text: the one O(path) piece of a step (DESIGN §2.1) is then a copy
 * of the path's text, kept from the last call, and the news.  The bytes
 * are those art_json_dump() makes of the line with the request made
 * whole (art_request_llm).  jv_null() when the request holds its own
 * messages; jv_invalid() on failure.
 */
static jv
llm_line_text(struct cx *c, jv head, const jv *req, jv tail)
{
	jv pr = art_json_field(req, "prompt"), text, msgs, rest, t, sys;
	const char *s = art_json_str(&pr, "system");
	jv model = art_json_field(req, "model");

	if (jv_get_kind(pr) != JV_KIND_OBJECT || jv_get_kind(model) ==
	    JV_KIND_INVALID) {
		jv_free(pr);
		jv_free(model);
		jv_free(head);
		jv_free(tail);
		return jv_null();
	}
	msgs = path_text(c, art_json_str(&pr, "path"));
	if (!jv_is_valid(msgs)) {
		jv_free(pr);
		jv_free(model);
		jv_free(head);
		jv_free(tail);
		return msgs;
	}
	t = jv_string("[");
	if (s != NULL) {
		sys = set(set(jv_object(), "role", jv_string("system")),
		    "content", jv_string(s));
		t = art_json_append_dump(t, &sys);
		jv_free(sys);
		if (jv_is_valid(t) && jv_string_length_bytes(jv_copy(msgs)) > 0)
			t = jv_string_append_buf(t, ",", 1);
	}
	if (jv_is_valid(t))
		t = jv_string_concat(t, msgs);
	else
		jv_free(msgs);
	if (jv_is_valid(t))
		t = jv_string_append_buf(t, "]", 1);
	/* {"type":…,"attempt":N,"request":{"model":M,"messages":[…],…},…} */
	text = open_object(art_json_append_dump(jv_string(""), &head));
	text = jv_string_append_str(text, ",\"request\":{\"model\":");
	text = art_json_append_dump(text, &model);
	text = jv_string_append_str(text, ",\"messages\":");
	if (jv_is_valid(t) && jv_is_valid(text))
		text = jv_string_concat(text, t);
	else {
		jv_free(t);
		jv_free(text);
		text = jv_invalid();
	}
	rest = jv_object_delete(jv_object_delete(jv_copy(*req),
	    jv_string("prompt")), jv_string("model"));
	if (jv_is_valid(text) && jv_object_length(jv_copy(rest)) > 0)
		text = append_members(text, &rest);
	else if (jv_is_valid(text))
		text = jv_string_append_str(text, "}");
	if (jv_is_valid(text))
		text = append_members(text, &tail);
	jv_free(rest);
	jv_free(pr);
	jv_free(model);
	jv_free(head);
	jv_free(tail);
	if (!jv_is_valid(text))
		art_err_set(c->err, "nomem", "out of memory");
	return text;
}

static int
dispatch_llm(struct cx *c, const jv *call, jv p)
{
	const char *handler = art_json_str(call, "handler");
	struct art_err err;
	jv line, tr, req;

	if (handler != NULL && strcmp(handler, "worker") == 0) {
		req = art_request_llm(c->t, c->sid, call_request(c, call),
		    c->err);
		if (!jv_is_valid(req)) {
			jv_free(p);
			return -1;
		}
		req = native_request(call, req, &err);
		if (!jv_is_valid(req)) {
			struct settle st = { art_json_str(call, "id"), 0, 0,
			    jv_string(err.msg), 0, jv_string("provider_error"),
			    0, 1 };

			jv_free(req);
			jv_free(p);
			return settle(c, &st, "llm.error", NULL);
		}
		tr = set(obj("llm.execute"), "id", art_json_field(call, "id"));
		tr = set(tr, "request", req);
		tr = set_some(tr, "format", art_json_field(call, "format"));
		tr = set(tr, "stream", art_json_field(call, "stream"));
		tr = set(tr, "attempt", art_json_field(call, "attempt"));
		tr = set_some(tr, "deadline", art_json_field(&p, "deadline"));
		jv_free(p);
		return queue_decision(c, tr, 1, jv_null());
	}
	line = set(obj("llm.request"), "session_id", jv_string(c->sid));
	line = set(line, "id", art_json_field(call, "id"));
	line = set(line, "attempt", art_json_field(call, "attempt"));
	tr = set(jv_object(), "stream", art_json_field(call, "stream"));
	tr = set_some(tr, "deadline", art_json_field(&p, "deadline"));
	tr = set_some(tr, "mock", art_json_field(call, "mock"));
	tr = set_some(tr, "providers", art_json_field(call, "providers"));
	tr = set_some(tr, "fallback", art_json_field(call, "fallback"));
	jv_free(p);
	req = call_request(c, call);
	/* A default prompt goes out as text made from the last call's. */
	p = llm_line_text(c, jv_copy(line), &req, jv_copy(tr));
	if (jv_get_kind(p) == JV_KIND_STRING) {
		jv_free(req);
		jv_free(line);
		jv_free(tr);
		emit(c, p);
		return 0;
	}
	if (!jv_is_valid(p)) {
		jv_free(req);
		jv_free(line);
		jv_free(tr);
		return -1;
	}
	req = art_request_llm(c->t, c->sid, req, c->err);
	if (!jv_is_valid(req)) {
		jv_free(line);
		jv_free(tr);
		return -1;
	}
	line = set(line, "request", req);
	jv_object_foreach(tr, k, v)
		line = jv_object_set(line, k, v);
	jv_free(tr);
	emit(c, line);
	return 0;
}

/* A queued call goes out: a request line, or an execute decision. */
static int
dispatch_call(struct cx *c, const jv *call)
{
	struct art_retry pol;
	enum art_call_kind kind = kind_of(call);
	int64_t deadline;
	jv p, tr, yes = art_json_field(call, "approved");
	const char *args;
	int held = art_json_str(call, "hold") != NULL &&
	    jv_get_kind(yes) != JV_KIND_TRUE;

	jv_free(yes);
	if (held)
		return hold_call(c, call);	/* a person answers first */
	p = call_event(call, "dispatched");
	call_retry(call, kind, &pol);
	deadline = art_retry_deadline_ms(&pol, c->now);
	if (deadline >= 0)
		p = set(p, "deadline", iso(deadline));
	wake_at(c, deadline);
	if (rec(c, jv_copy(p)) == -1) {
		jv_free(p);
		return -1;
	}
	if (kind == ART_KIND_LLM)
		return dispatch_llm(c, call, p);
	if (kind == ART_KIND_SUB_AGENT) {
		jv_free(p);
		return open_child(c, call);
	}
	if (kind == ART_KIND_CLIENT_TOOL) {
		jv_free(p);
		return 0;	/* the client settles it */
	}
	args = art_json_str(call, "arguments");
	tr = set(obj("tool.execute"), "id", art_json_field(call, "id"));
	tr = set(tr, "name", art_json_field(call, "name"));
	tr = set(tr, "arguments", jv_string(args != NULL ? args : ""));
	tr = set(tr, "input", tool_input(args != NULL ? args : "", call));
	tr = set(tr, "attempt", art_json_field(call, "attempt"));
	tr = set_some(tr, "deadline", art_json_field(&p, "deadline"));
	jv_free(p);
	return queue_decision(c, tr, 1, jv_null());
}

/* A settle's value as the text a tool message holds. */
static jv
as_text(jv v)
{
	if (jv_get_kind(v) == JV_KIND_STRING)
		return v;
	if (jv_get_kind(v) == JV_KIND_NULL) {
		jv_free(v);
		return jv_string("");
	}
	return jv_dump_string(v, 0);
}

/* Finds the pending call a settle names; jv_invalid() when refused. */
static jv
settle_target(struct cx *c, const struct settle *st, const char *kind,
    const jv *line)
{
	jv call = art_store_get(c->t, ART_DB_CALLS, c->sid, st->id,
	    strlen(st->id), NULL);
	const char *status = art_json_str(&call, "status"), *k;
	int64_t attempt = 0;
	char msg[300];

	k = art_json_str(&call, "kind");
	art_json_get_int(&call, "attempt", 0, &attempt, NULL);
	if (!jv_is_valid(call) || k == NULL || strcmp(k, kind) != 0)
		snprintf(msg, sizeof(msg), "no %s '%s'", kind, st->id);
	else if (status == NULL || strcmp(status, "pending") != 0)
		snprintf(msg, sizeof(msg), "%s '%s' is not pending (%s)",
		    kind, st->id, status != NULL ? status : "?");
	else if (st->attempt != 0 && st->attempt != attempt)
		snprintf(msg, sizeof(msg), "%s '%s': attempt %lld is stale "
		    "(now %lld)", kind, st->id, (long long)st->attempt,
		    (long long)attempt);
	else
		return call;
	jv_free(call);
	if (!st->internal && rec_error(c, "stale_settle", msg, line) == -1)
		return jv_number(-1);
	return jv_invalid();
}

/* A failed attempt: retry when allowed, else the terminal fold-back. */
static int
call_failed(struct cx *c, const jv *call, const struct settle *st,
    jv finished)
{
	struct art_retry pol;
	int64_t attempt = 1, wait;
	jv p = call_event(call, "errored");

	art_json_get_int(call, "attempt", 0, &attempt, NULL);
	call_retry(call, kind_of(call), &pol);
	p = set_some(p, "name", art_json_field(call, "name"));
	p = set(p, "error", jv_copy(st->value));
	p = set(p, "retryable", st->retryable ? jv_true() : jv_false());
	p = set_some(p, "code", jv_copy(st->code));
	if (st->retryable && art_retry_again(&pol, attempt)) {
		wait = art_retry_backoff_ms(&pol, attempt);
		if (st->retry_after_ms > wait)
			wait = st->retry_after_ms;
		p = set(p, "next_at", iso(c->now + wait));
		wake_at(c, c->now + wait);
		jv_free(finished);
		return rec(c, p);
	}
	if (rec(c, p) == -1) {
		jv_free(finished);
		return -1;
	}
	finished = set(finished, "ok", jv_false());
	finished = set(finished, "error", jv_copy(st->value));
	return queue_decision(c, finished, 1, jv_null());
}

/*
 * A result against the tool's output schema: the result's JSON when it
 * is JSON text, else the text itself.  0, or -1 with the reason in err.
 */
static int
check_output(const jv *call, const jv *result, struct art_err *err)
{
	jv schema = art_json_field(call, "output_schema"), v;
	int r = 0;

	if (jv_get_kind(schema) == JV_KIND_NULL) {
		jv_free(schema);
		return 0;
	}
	v = jv_get_kind(*result) == JV_KIND_STRING ? art_json_parse_str(
	    jv_string_value(*result), NULL) : jv_copy(*result);
	if (!jv_is_valid(v)) {
		jv_free(v);
		v = jv_copy(*result);
	}
	if (art_schema_validate(&schema, &v, err) == -1) {
		art_err_prefix(err, "output does not match the tool's output "
		    "schema");
		r = -1;
	}
	jv_free(v);
	jv_free(schema);
	return r;
}

/* The trigger a call's end queues: tool.finished or sub_agent.finished. */
static jv
finished_for(const jv *call)
{
	if (kind_of(call) == ART_KIND_SUB_AGENT)
		return set(set(set(obj("sub_agent.finished"), "id",
		    art_json_field(call, "tool_call_id")), "session_id",
		    art_json_field(call, "id")), "agent_id", art_json_field(call,
		    "agent_id"));
	return set(set(obj("tool.finished"), "id", art_json_field(call, "id")),
	    "name", art_json_field(call, "name"));
}

/* A tool call's result (borrowed), recorded and queued to fold in. */
static int
tool_done(struct cx *c, const jv *call, const jv *value)
{
	jv p, fin = finished_for(call);

	if (check_output(call, value, c->err) == -1) {
		/* A result the tool promised otherwise: terminal, not retried. */
		struct settle bad = { art_json_str(call, "id"), 0, 0,
		    jv_string(c->err->msg), 0, jv_null(), 0, 1 };
		int r = call_failed(c, call, &bad, fin);

		jv_free(bad.value);
		return r;
	}
	p = call_event(call, "completed");
	p = set(p, "name", art_json_field(call, "name"));
	p = set(p, "result", as_text(jv_copy(*value)));
	if (rec(c, p) == -1) {
		jv_free(fin);
		return -1;
	}
	fin = set(fin, "ok", jv_true());
	fin = set(fin, "result", as_text(jv_copy(*value)));
	return queue_decision(c, fin, 1, jv_null());
}

static int
settle_tool(struct cx *c, const struct settle *st, const jv *line)
{
	jv call = settle_target(c, st, "tool_call", line);
	int r;

	if (jv_get_kind(call) == JV_KIND_NUMBER)
		return -1;
	if (!jv_is_valid(call))
		return 0;
	r = st->ok ? tool_done(c, &call, &st->value) : call_failed(c, &call,
	    st, finished_for(&call));
	jv_free(call);
	return r;
}

/* The assistant message a model reply records, under the call's id. */
static jv
assistant(const char *id, const jv *resp)
{
	jv m = set(jv_object(), "id", jv_string(id)), tc;

	m = set(m, "role", jv_string("assistant"));
	m = set_some(m, "content", art_json_field(resp, "content"));
	tc = art_json_field(resp, "tool_calls");
	if (jv_get_kind(tc) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(tc)) > 0)
		return set(m, "tool_calls", tc);
	jv_free(tc);
	return m;
}

static int
is_worker(const jv *call)
{
	const char *h = art_json_str(call, "handler");

	return h != NULL && strcmp(h, "worker") == 0;
}

/*
 * A worker-run call with a format is answered in the provider's body:
 * read it as an LlmResponse, or make the settle the error it is.
 */
static void
native_response(const jv *call, struct settle *st)
{
	const struct art_wire *w = art_wire_find(art_json_str(call,
	    "format"));
	jv resp = jv_invalid(), e = jv_invalid();
	size_t len;
	char *text;
	int r = -1;

	if (w != NULL && (text = art_json_dump(&st->value, &len)) != NULL) {
		r = w->response(text, len, &resp, &e);
		free(text);
	}
	jv_free(st->value);
	if (r == 0) {
		jv_free(e);
		st->value = resp;
		return;
	}
	jv_free(resp);
	st->ok = 0;
	st->value = jv_is_valid(e) ? art_json_field(&e, "error") :
	    jv_string("llm.result: cannot read the response");
	st->retryable = jv_get_kind(jv_object_get(jv_copy(e),
	    jv_string("retryable"))) == JV_KIND_TRUE;
	jv_free(st->code);
	st->code = jv_is_valid(e) ? art_json_field(&e, "code") : jv_null();
	jv_free(e);
}

static int
settle_llm(struct cx *c, struct settle *st, const jv *line)
{
	jv call = settle_target(c, st, "llm_call", line), p, fin;
	const char *fr;

	if (jv_get_kind(call) == JV_KIND_NUMBER)
		return -1;
	if (!jv_is_valid(call))
		return 0;
	if (st->ok && art_json_str(&call, "format") != NULL &&
	    is_worker(&call))
		native_response(&call, st);
	fin = set(obj("llm.finished"), "id", jv_string(st->id));
	if (!st->ok) {
		int r;

		fin = set(fin, "truncated", jv_false());
		fin = set_some(fin, "code", jv_copy(st->code));
		r = call_failed(c, &call, st, fin);
		jv_free(call);
		return r;
	}
	p = set(call_event(&call, "completed"), "response", jv_copy(st->value));
	jv_free(call);
	if (rec(c, p) == -1) {
		jv_free(fin);
		return -1;
	}
	fr = art_json_str(&st->value, "finish_reason");
	fin = set(fin, "ok", jv_true());
	fin = set(fin, "message", assistant(st->id, &st->value));
	fin = set(fin, "truncated", fr != NULL && strcmp(fr, "length") == 0 ?
	    jv_true() : jv_false());
	fin = set_some(fin, "usage", art_json_field(&st->value, "usage"));
	fin = set_some(fin, "cost", art_json_field(&st->value, "cost"));
	return queue_decision(c, fin, 1, jv_null());
}

/* Reads a settle from a line or an action; -1 when it is malformed. */
static int
read_settle(const jv *src, const char *type, struct settle *st,
    struct art_err *err)
{
	int is_error = strcmp(type + strlen(type) - 6, ".error") == 0;
	int is_llm = strncmp(type, "llm.", 4) == 0;

	memset(st, 0, sizeof(*st));
	st->value = jv_null();
	st->code = art_json_field(src, "code");
	if (art_json_get_str(src, "id", 0, &st->id, err) == -1 ||
	    art_json_get_int(src, "attempt", 0, &st->attempt, err) == -1 ||
	    art_json_get_bool(src, "retryable", 0, &st->retryable, err) == -1 ||
	    art_json_get_int(src, "retry_after_ms", 0, &st->retry_after_ms,
	    err) == -1)
		return -1;
	st->ok = !is_error;
	if (is_error) {
		st->value = art_json_field(src, "error");
		if (jv_get_kind(st->value) != JV_KIND_STRING)
			return art_err_set(err, "bad_field", "%s: field 'error': "
			    "expected string", type);
	} else if (is_llm) {
		st->value = art_json_field(src, "response");
		if (jv_get_kind(st->value) != JV_KIND_OBJECT)
			return art_err_set(err, "bad_field", "%s: field "
			    "'response': expected object", type);
	} else
		st->value = art_json_field(src, "result");
	return 0;
}

static void
settle_release(struct settle *st)
{
	jv_free(st->value);
	jv_free(st->code);
}

static int
settle(struct cx *c, struct settle *st, const char *type, const jv *line)
{
	int r = strncmp(type, "llm.", 4) == 0 ? settle_llm(c, st, line) :
	    settle_tool(c, st, line);

	settle_release(st);
	return r;
}

/* Fails a call the engine itself gave up on (deadline, lost dispatch). */
static int	refuse_call(struct cx *, const jv *, jv);
static int	cancel_step(struct cx *, void *);

static int
fail_call(struct cx *c, const jv *call, const char *why, const char *code)
{
	struct settle st = { art_json_str(call, "id"), 0, 0, jv_string(why), 1,
	    code != NULL ? jv_string(code) : jv_null(), 0, 1 };
	const char *child = art_json_str(call, "id");
	jv cs;
	int r;

	if (kind_of(call) == ART_KIND_SUB_AGENT) {
		/* A child out of time: it stops, and the parent reads why. */
		settle_release(&st);
		if (refuse_call(c, call, jv_string_fmt("sub-agent %s: %s",
		    art_json_str(call, "agent_id"), why)) == -1)
			return -1;
		cs = art_session_get(c->t, child, NULL);
		r = jv_is_valid(cs) ? with_session(c, child, cancel_step,
		    "cancelled: the delegation that started this session ran "
		    "out of time") : 0;
		jv_free(cs);
		return r;
	}
	return settle(c, &st, kind_of(call) == ART_KIND_LLM ? "llm.error" :
	    "tool.error", NULL);
}

/* --- held calls: approval and ask_user ------------------------------- */

/* The hex SHA-256 of "session:loop_iteration:tool_call_id" (seed 002). */
static jv
idempotency_key(const char *sid, int64_t loop, const char *id)
{
	unsigned char d[ART_SHA256_LEN];
	char hex[2 * ART_SHA256_LEN + 1];
	jv name = jv_string_fmt("%s:%lld:%s", sid, (long long)loop, id);

	art_sha256(jv_string_value(name), (size_t)jv_string_length_bytes(
	    jv_copy(name)), d);
	jv_free(name);
	return jv_string(art_hex(d, sizeof(d), hex));
}

/* Fails a call for good, with a message the model reads. */
static int
refuse_call(struct cx *c, const jv *call, jv why)
{
	struct settle st = { art_json_str(call, "id"), 0, 0, why, 0,
	    jv_null(), 0, 1 };
	int r = call_failed(c, call, &st, finished_for(call));

	settle_release(&st);
	return r;
}

/*
 * A call that waits for a person before it runs: a tool declared
 * requires_approval, or the built-in ask_user.  It raises an interrupt
 * parking the head, whose payload says what to answer, and the call is
 * held (no deadline runs) until a resume answers it.
 */
static int
hold_call(struct cx *c, const jv *call)
{
	const char *hold = art_json_str(call, "hold"), *id = art_json_str(call,
	    "id"), *why = art_json_str(call, "input_error");
	const char *args = art_json_str(call, "arguments");
	char iid[ART_ID_MAX + 1], h[ART_ID_MAX + 1];
	int ask = strcmp(hold, "input_required") == 0, r;
	jv v, p, ev, s, turn, opts, text;
	int64_t loop = 0;

	if (why != NULL)
		return refuse_call(c, call, jv_string_fmt("invalid tool "
		    "arguments: %s", why));
	v = art_json_parse_str(args != NULL ? args : "", NULL);
	if (ask && jv_get_kind(v) != JV_KIND_OBJECT) {
		jv_free(v);
		return refuse_call(c, call, jv_string("invalid tool arguments: "
		    "not a JSON object"));
	}
	if (head(c, h, sizeof(h)) == -1 || mint(c, iid) == -1 ||
	    !jv_is_valid(s = summary(c))) {
		jv_free(v);
		return -1;
	}
	turn = turn_record(c, art_json_str(&s, "turn"));
	if (jv_is_valid(turn))
		art_json_get_int(&turn, "llm_calls", 0, &loop, NULL);
	jv_free(turn);
	jv_free(s);
	p = set(obj(hold), "tool_call_id", jv_string(id));
	p = set(p, "tool_name", art_json_field(call, "name"));
	p = set(p, "arguments", jv_get_kind(v) == JV_KIND_OBJECT ? jv_copy(v) :
	    jv_string(args != NULL ? args : ""));
	p = set(p, "idempotency_key", idempotency_key(c->sid, loop, id));
	if (ask) {
		opts = art_json_field(&v, "options");
		text = art_json_field(&v, "allow_text");
		p = set(p, "question", art_json_field(&v, "question"));
		/* Without options only text can answer; with them, by default
		 * only they can. */
		p = set(p, "allow_text", jv_get_kind(text) == JV_KIND_TRUE ||
		    jv_get_kind(opts) != JV_KIND_ARRAY ||
		    jv_array_length(jv_copy(opts)) == 0 ? jv_true() :
		    jv_false());
		p = set_some(p, "options", opts);
		jv_free(text);
	}
	ev = set(obj("session.interrupted"), "interrupt_id", jv_string(iid));
	ev = set(ev, "origin", jv_string("system"));
	ev = set(ev, "reason", ask ? art_json_field(&v, "question") :
	    jv_string_fmt("approval required: %s", art_json_str(call, "name")));
	ev = set(ev, "payload", p);
	ev = set(ev, "anchor", head_jv(h));
	jv_free(v);
	if ((r = rec(c, ev)) == 0)
		r = rec(c, set(call_event(call, "held"), "interrupt_id",
		    jv_string(iid)));
	return r;
}

/* The answer a resume gives an ask_user question, or jv_invalid(). */
static jv
answer_of(const jv *payload, const jv *asked, char *why, size_t n)
{
	jv a = jv_get_kind(*payload) == JV_KIND_STRING ? jv_copy(*payload) :
	    jv_null(), opts = art_json_field(asked, "options"), text;
	const char *keys[] = { "answer", "text", "choice", NULL }, **k;
	int found = 0;

	for (k = keys; jv_get_kind(a) == JV_KIND_NULL && *k != NULL; k++) {
		jv_free(a);
		a = art_json_field(payload, *k);
	}
	if (jv_get_kind(a) != JV_KIND_STRING) {
		snprintf(why, n, "an ask_user question needs an answer: a "
		    "string payload, or {\"answer\": TEXT}");
		jv_free(opts);
		jv_free(a);
		return jv_invalid();
	}
	text = art_json_field(asked, "allow_text");
	if (jv_get_kind(text) == JV_KIND_FALSE &&
	    jv_get_kind(opts) == JV_KIND_ARRAY) {
		jv list = jv_string("");

		jv_array_foreach(opts, i, o) {
			if (jv_get_kind(o) == JV_KIND_STRING && strcmp(
			    jv_string_value(o), jv_string_value(a)) == 0)
				found = 1;
			list = jv_string_concat(list, i > 0 ? jv_string(", ") :
			    jv_string(""));
			list = jv_string_concat(list, jv_get_kind(o) ==
			    JV_KIND_STRING ? o : (jv_free(o), jv_string("?")));
		}
		if (!found) {
			snprintf(why, n, "the answer must be one of: %s",
			    jv_string_value(list));
			jv_free(a);
			a = jv_invalid();
		}
		jv_free(list);
	}
	jv_free(text);
	jv_free(opts);
	return a;
}

/*
 * A resume of interrupt iid (it, borrowed) that held a call: with apply
 * 0 checks the payload (1 and why when it cannot answer), with apply 1
 * answers the call: approved, it runs; denied, it fails with the reason;
 * asked, the answer is its result.  0 when it held no call (any more).
 */
static int
answer_hold(struct cx *c, const jv *it, const jv *payload, const char *iid,
    int apply, char *why, size_t n)
{
	jv p = art_json_field(it, "payload"), call, a, reason;
	const char *type = art_json_str(&p, "type");
	const char *tcid = art_json_str(&p, "tool_call_id"), *st, *held;
	int r = 0, yes = 0;

	call = type != NULL && tcid != NULL ? art_store_get(c->t, ART_DB_CALLS,
	    c->sid, tcid, strlen(tcid), NULL) : jv_invalid();
	st = art_json_str(&call, "status");
	held = art_json_str(&call, "interrupt_id");
	if (!jv_is_valid(call) || st == NULL || strcmp(st, "held") != 0 ||
	    held == NULL || strcmp(held, iid) != 0) {
		jv_free(call);
		jv_free(p);
		return 0;
	}
	if (strcmp(type, "approval") == 0) {
		if (art_json_get_bool(payload, "approved", 1, &yes, NULL) == -1) {
			snprintf(why, n, "an approval needs {\"approved\": true} "
			    "or {\"approved\": false, \"reason\": TEXT}");
			r = 1;
		} else if (apply && yes)
			r = rec(c, set(call_event(&call, "approved"), "approved",
			    jv_true()));
		else if (apply) {
			reason = art_json_field(payload, "reason");
			r = refuse_call(c, &call, jv_get_kind(reason) ==
			    JV_KIND_STRING ? jv_string_fmt("the user did not "
			    "approve %s: %s", art_json_str(&call, "name"),
			    jv_string_value(reason)) : jv_string_fmt("the user "
			    "did not approve %s", art_json_str(&call, "name")));
			jv_free(reason);
		}
	} else {
		a = answer_of(payload, &p, why, n);
		if (!jv_is_valid(a))
			r = 1;
		else if (apply)
			r = tool_done(c, &call, &a);
		jv_free(a);
	}
	jv_free(call);
	jv_free(p);
	return r;
}

/* --- sub-agents -------------------------------------------------------- */

static int	claim(struct cx *);
static int	fail_run(struct cx *, const char *);
static int	input_message(struct cx *, const jv *, const char *);
static int	drop_for_call(struct cx *, const char *);
static int	deliver(struct cx *, void *);

static int
alive(long pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* The pid of another process that drives sid and lives, or 0. */
static int64_t
driver_of(struct cx *c, const char *sid)
{
	jv d = art_store_get(c->t, ART_DB_DRIVERS, sid, NULL, 0, NULL);
	int64_t pid = 0;

	if (jv_is_valid(d))
		art_json_get_int(&d, "pid", 0, &pid, NULL);
	jv_free(d);
	return pid != 0 && pid != c->e->o.pid && alive((long)pid) ? pid : 0;
}

static int64_t
other_driver(struct cx *c)
{
	return driver_of(c, c->sid);
}

struct child_open {
	const jv	*call;
	jv		 file;		/* the agent file's config; null: exists */
	jv		 ancestry;
	jv		 identity;
};

/* In the child: created (once), driven by us, its first message sent. */
static int
child_open_step(struct cx *c, void *arg)
{
	struct child_open *co = arg;
	jv m;
	int r;

	if (jv_get_kind(co->file) != JV_KIND_NULL) {
		if (art_session_create(c->t, c->sid, art_json_str(co->call,
		    "agent_id"), jv_copy(co->identity), jv_copy(co->ancestry),
		    c->err) == -1 || claim(c) == -1)
			return -1;
		adopt(c, c->sid);
		if (queue_decision(c, obj("session.start"), 1, set(jv_object(),
		    "agent_file", jv_copy(co->file))) == -1)
			return -1;
		m = art_json_field(co->call, "message");
		r = jv_get_kind(m) == JV_KIND_OBJECT ? deliver(c, &m) : 0;
		jv_free(m);
		return r;
	}
	if (claim(c) == -1)
		return -1;
	adopt(c, c->sid);
	return 0;
}

/* The session's ancestry with itself appended: its child's. */
static jv
child_ancestry(struct cx *c)
{
	jv s = summary(c), a;

	if (!jv_is_valid(s))
		return s;
	a = art_json_field(&s, "ancestry");
	jv_free(s);
	if (jv_get_kind(a) != JV_KIND_ARRAY) {
		jv_free(a);
		a = jv_array();
	}
	return jv_array_append(a, jv_string(c->sid));
}

/* The last id of a session's ancestry (its parent), or NULL. */
static const char *
parent_of(const jv *s)
{
	jv a = art_json_field(s, "ancestry"), last;
	const char *p = NULL;
	int n;

	if (jv_get_kind(a) == JV_KIND_ARRAY &&
	    (n = jv_array_length(jv_copy(a))) > 0) {
		/* Borrowed: s's ancestry array keeps the string alive. */
		last = jv_array_get(jv_copy(a), n - 1);
		p = jv_get_kind(last) == JV_KIND_STRING ?
		    jv_string_value(last) : NULL;
		jv_free(last);
	}
	jv_free(a);
	return p;
}

/*
 * A sub-agent call goes out: its child session is opened (created with
 * the parent's identity and ancestry + the parent, claimed, its first
 * message sent) and driven by this engine.  A child that exists and is
 * ours counts as opened (a redelivered spawn).
 */
static int
open_child(struct cx *c, const jv *call)
{
	const char *child = art_json_str(call, "id");
	const char *agent = art_json_str(call, "agent_id");
	struct child_open co = { call, jv_null(), jv_invalid(), jv_invalid() };
	struct art_err lerr;
	jv cs = art_session_get(c->t, child, NULL), s;
	const char *parent;
	int64_t pid;
	int r, mine;

	if (jv_is_valid(cs)) {
		parent = parent_of(&cs);
		mine = parent != NULL && strcmp(parent, c->sid) == 0;
		jv_free(cs);
		if (!mine)
			return refuse_call(c, call, jv_string_fmt("cannot start "
			    "sub-agent %s: session %s exists and is not this "
			    "session's child", agent, child));
	} else {
		jv_free(cs);
		co.file = c->e->o.load_agent(c->e->o.agent_ctx, agent, &lerr);
		if (!jv_is_valid(co.file)) {
			jv_free(co.file);
			return refuse_call(c, call, jv_string_fmt("cannot start "
			    "sub-agent %s: %s", agent, lerr.msg));
		}
	}
	if ((pid = driver_of(c, child)) != 0) {
		struct settle st = { child, 0, 0, jv_string_fmt("sub-agent "
		    "session %s is driven by process %lld", child,
		    (long long)pid), 1, jv_null(), 0, 1 };

		jv_free(co.file);
		r = call_failed(c, call, &st, finished_for(call));
		settle_release(&st);
		return r;
	}
	co.ancestry = child_ancestry(c);
	s = summary(c);
	co.identity = jv_is_valid(s) ? art_json_field(&s, "identity") :
	    jv_null();
	jv_free(s);
	r = jv_is_valid(co.ancestry) ? with_session(c, child, child_open_step,
	    &co) : -1;
	jv_free(co.file);
	jv_free(co.ancestry);
	jv_free(co.identity);
	return r;
}

struct child_done {
	const char	*child;
	jv		 data, error, usage, cost;
};

/* In the parent: the child's turn ended; its result folds in. */
static int
child_done_step(struct cx *c, void *arg)
{
	struct child_done *d = arg;
	jv call = art_store_get(c->t, ART_DB_CALLS, c->sid, d->child,
	    strlen(d->child), NULL), p, fin;
	const char *st = art_json_str(&call, "status");
	int r;

	if (!jv_is_valid(call) || kind_of(&call) != ART_KIND_SUB_AGENT ||
	    st == NULL || strcmp(st, "pending") != 0) {
		jv_free(call);
		return 0;	/* voided, or not a delegation of ours */
	}
	if (jv_get_kind(d->error) != JV_KIND_NULL) {
		r = refuse_call(c, &call, jv_string_fmt("sub-agent %s failed: "
		    "%s", art_json_str(&call, "agent_id"), jv_get_kind(
		    d->error) == JV_KIND_STRING ? jv_string_value(d->error) :
		    "error"));
		jv_free(call);
		return r;
	}
	fin = finished_for(&call);
	p = call_event(&call, "completed");
	p = set(p, "result", as_text(jv_copy(d->data)));
	p = set_some(p, "usage", jv_copy(d->usage));
	p = set_some(p, "cost", jv_copy(d->cost));
	jv_free(call);
	if (rec(c, p) == -1) {
		jv_free(fin);
		return -1;
	}
	fin = set(fin, "ok", jv_true());
	fin = set(fin, "result", as_text(jv_copy(d->data)));
	return queue_decision(c, fin, 1, jv_null());
}

/* In a child whose delegation was voided: everything stops. */
static int
cancel_step(struct cx *c, void *arg)
{
	const char *why = arg, *st;
	jv s = summary(c), live, open, all, intr;
	int work, r = 0;

	if (!jv_is_valid(s))
		return -1;
	live = art_json_field(&s, "live");
	open = art_json_field(&s, "open");
	st = art_json_str(&s, "status");
	work = (st != NULL && strcmp(st, "running") == 0) ||
	    (jv_get_kind(open) == JV_KIND_OBJECT &&
	    jv_object_length(jv_copy(open)) > 0);
	jv_free(open);
	if (jv_get_kind(live) == JV_KIND_OBJECT && rec(c, set(
	    obj("decision.dropped"), "id", art_json_field(&live, "id"))) == -1) {
		jv_free(live);
		jv_free(s);
		return -1;
	}
	jv_free(live);
	/* Its open interrupts go too: nothing is left to resume. */
	intr = art_json_field(&s, "interrupts");
	jv_free(s);
	if (jv_get_kind(intr) == JV_KIND_OBJECT) {
		jv_object_foreach(intr, k, it) {
			if (r == 0)
				r = rec(c, set(set(obj(
				    "session.interrupt_cancelled"),
				    "interrupt_id", jv_copy(k)), "reason",
				    jv_string(why)));
			jv_free(k);
			jv_free(it);
		}
	}
	jv_free(intr);
	if (r == 0 && !work) {
		if (!jv_is_valid(all = queued(c)))
			return -1;
		work = jv_array_length(jv_copy(all)) > 0;
		jv_free(all);
	}
	return r == -1 ? -1 : work ? fail_run(c, why) : 0;
}

/* Is interrupt id open in this session? */
static int
interrupt_open(struct cx *c, const char *id)
{
	jv s = summary(c), all = art_json_field(&s, "interrupts"), it;
	int open;

	it = jv_get_kind(all) == JV_KIND_OBJECT ? jv_object_get(jv_copy(all),
	    jv_string(id)) : jv_invalid();
	open = jv_is_valid(it);
	jv_free(it);
	jv_free(all);
	jv_free(s);
	return open;
}

/*
 * Abandons an open call: voided, its queued decisions dropped, and for a
 * sub-agent its child session cancelled, and so its children (§7).
 */
static int
void_call(struct cx *c, const jv *call)
{
	const char *id = art_json_str(call, "id");
	const char *st = art_json_str(call, "status");
	const char *iid = art_json_str(call, "interrupt_id");
	jv cs;
	int r = rec(c, set(set(obj("call.voided"), "kind", art_json_field(call,
	    "kind")), "id", jv_string(id)));

	if (r == 0)
		r = drop_for_call(c, id);
	/* A held call's question has nobody left to answer it. */
	if (r == 0 && st != NULL && strcmp(st, "held") == 0 && iid != NULL &&
	    interrupt_open(c, iid))
		r = rec(c, set(set(obj("session.interrupt_cancelled"),
		    "interrupt_id", jv_string(iid)), "reason", jv_string("the "
		    "call it held was voided")));
	if (r == 0 && kind_of(call) == ART_KIND_SUB_AGENT) {
		cs = art_session_get(c->t, id, NULL);
		if (jv_is_valid(cs))
			r = with_session(c, id, cancel_step, "cancelled: the "
			    "delegation that started this session was voided");
		jv_free(cs);
	}
	return r;
}

/* --- actions ---------------------------------------------------------- */

static int
call_exists(struct cx *c, const char *id)
{
	jv call = art_store_get(c->t, ART_DB_CALLS, c->sid, id, strlen(id),
	    NULL);
	int ok = jv_is_valid(call);

	jv_free(call);
	return ok;
}

static jv
pick(const jv *a, const jv *cfg, const char *key)
{
	jv v = art_json_field(a, key);

	if (jv_get_kind(v) != JV_KIND_NULL)
		return v;
	jv_free(v);
	return art_json_field(cfg, key);
}

static int
layer_retry(struct cx *c, struct art_retry *r, const jv *cfg, const jv *a)
{
	jv p1 = art_json_field(cfg, "retry"), p2 = art_json_field(a, "retry");
	int bad = art_retry_layer(r, &p1, c->err) == -1 ||
	    art_retry_layer(r, &p2, c->err) == -1;

	jv_free(p1);
	jv_free(p2);
	return bad ? reject(c, "%s", c->err->msg) : 0;
}

static jv
llm_request(const jv *a, const jv *cfg, const char *h)
{
	static const char *const extras[] = { "temperature",
	    "max_completion_tokens", "reasoning", NULL };
	const char *const *k;
	jv req = set(jv_object(), "model", pick(a, cfg, "model"));
	jv msgs = art_json_field(a, "messages"), tools;
	const char *sys = art_json_str(cfg, "system");

	if (jv_get_kind(msgs) == JV_KIND_NULL) {
		/*
		 * The seed's default, the config's system prompt and then the
		 * active path, is recorded by reference: the path is read
		 * when the call goes out (art_request_llm), so recording a
		 * call costs the same at step 1000 as at step 1.
		 */
		jv_free(msgs);
		msgs = jv_object();
		if (sys != NULL && *sys != '\0')
			msgs = set(msgs, "system", jv_string(sys));
		req = set(req, "prompt", set(msgs, "path", head_jv(h)));
	} else
		req = set(req, "messages", msgs);
	tools = art_json_field(a, "tools");
	if (jv_get_kind(tools) == JV_KIND_NULL) {
		jv_free(tools);
		tools = art_propose_llm_tools(cfg);
	}
	req = set_some(req, "tools", tools);
	for (k = extras; *k != NULL; k++)
		req = set_some(req, *k, pick(a, cfg, *k));
	return req;
}

static int
act_llm_call(struct cx *c, const jv *a, const jv *cfg, const char *h)
{
	char id[ART_ID_MAX + 1];
	struct art_retry pol;
	const char *given = art_json_str(a, "id"), *handler;
	jv p, req, stream, hv, msgs = art_json_field(a, "messages");
	int bad_msgs = jv_get_kind(msgs) != JV_KIND_NULL &&
	    art_reconcile_check(&msgs, c->err) == -1;

	jv_free(msgs);
	if (bad_msgs)
		return reject(c, "llm.call: %s", c->err->msg);
	if (given != NULL && call_exists(c, given))
		return 0;	/* a live id: the call is already made */
	if (given != NULL)
		snprintf(id, sizeof(id), "%s", given);
	else if (mint(c, id) == -1)
		return -1;
	req = llm_request(a, cfg, h);
	if (!jv_is_valid(req))
		return -1;
	if (art_json_str(&req, "model") == NULL) {
		jv_free(req);
		return reject(c, "llm.call has no model (none in the action or "
		    "the agent config)%s", NULL);
	}
	art_retry_default(&pol, ART_KIND_LLM);
	hv = pick(a, cfg, "handler");
	handler = jv_get_kind(hv) == JV_KIND_STRING ? jv_string_value(hv) :
	    "server";
	if (strcmp(handler, "server") != 0 && strcmp(handler, "worker") != 0) {
		jv_free(hv);
		jv_free(req);
		return reject(c, "llm.call: handler must be server or worker%s",
		    NULL);
	}
	if (layer_retry(c, &pol, cfg, a) == -1) {
		jv_free(hv);
		jv_free(req);
		return -1;
	}
	stream = pick(a, cfg, "stream");
	p = set(obj("llm.call.requested"), "id", jv_string(id));
	p = set(p, "attempt", jv_number(1));
	p = set(p, "request", req);
	p = set(p, "stream", jv_get_kind(stream) == JV_KIND_TRUE ? jv_true() :
	    jv_false());
	p = set(p, "retry", art_retry_json(&pol));
	p = set(p, "handler", jv_string(handler));
	p = set(p, "anchor", head_jv(h));
	p = set_some(p, "mock", art_json_field(cfg, "mock"));
	p = set_some(p, "format", art_json_field(cfg, "format"));
	p = set_some(p, "providers", art_json_field(cfg, "providers"));
	p = set_some(p, "fallback", art_json_field(cfg, "fallback"));
	jv_free(stream);
	jv_free(hv);
	return rec(c, p);
}

/*
 * The call's arguments against the declaration's input schema, once, when
 * the call is made: the verdict rides on the call (input_error) to the
 * tool.execute trigger's ToolInput, and the output schema rides along for
 * the settle.  p is the tool.call.requested payload (consumed).
 */
static jv
check_tool_schemas(jv p, const jv *decl)
{
	jv schema = art_json_field(decl, "input"), args;
	const char *text = art_json_str(&p, "arguments");
	struct art_err err;

	if (jv_get_kind(schema) != JV_KIND_NULL && text != NULL) {
		args = art_json_parse_str(text, NULL);
		if (jv_get_kind(args) == JV_KIND_OBJECT &&
		    art_schema_validate(&schema, &args, &err) == -1)
			p = set(p, "input_error", art_err_is(&err,
			    "bad_schema") ? jv_string_fmt("the tool's input "
			    "schema cannot be used: %s", err.msg) :
			    jv_string(err.msg));
		jv_free(args);
	}
	jv_free(schema);
	return set_some(p, "output_schema", art_json_field(decl, "output"));
}

static int
act_tool_call(struct cx *c, const jv *a, const jv *cfg, const char *h)
{
	char id[ART_ID_MAX + 1];
	struct art_retry pol;
	const char *given = art_json_str(a, "id"), *name, *dh;
	jv args = art_json_field(a, "arguments"), decl, p, hold = jv_null();
	int client;

	if ((name = art_json_str(a, "name")) == NULL) {
		jv_free(args);
		return reject(c, "tool.call has no name%s", NULL);
	}
	if (given != NULL && call_exists(c, given)) {
		jv_free(args);
		return 0;
	}
	if (given != NULL)
		snprintf(id, sizeof(id), "%s", given);
	else if (mint(c, id) == -1) {
		jv_free(args);
		return -1;
	}
	decl = art_propose_tool(cfg, name);
	if (jv_get_kind(decl) == JV_KIND_NULL && strcmp(name, "ask_user") == 0 &&
	    art_propose_asks_user(cfg)) {
		jv_free(decl);
		decl = set(art_propose_ask_user_tool(), "hold",
		    jv_string("input_required"));
	} else if (jv_get_kind(hold = art_json_field(&decl,
	    "requires_approval")) == JV_KIND_TRUE)
		decl = set(decl, "hold", jv_string("approval"));
	jv_free(hold);
	hold = jv_null();
	dh = art_json_str(&decl, "handler");
	client = dh != NULL && strcmp(dh, "client") == 0;
	dh = art_json_str(a, "handler");
	if (dh != NULL && strcmp(dh, "client") == 0)
		client = 1;
	art_retry_default(&pol, client ? ART_KIND_CLIENT_TOOL : ART_KIND_TOOL);
	if (layer_retry(c, &pol, cfg, a) == -1) {
		jv_free(args);
		jv_free(decl);
		return -1;
	}
	p = set(obj("tool.call.requested"), "id", jv_string(id));
	p = set(p, "attempt", jv_number(1));
	p = set(p, "name", jv_string(name));
	p = set(p, "arguments", jv_get_kind(args) == JV_KIND_STRING ? args :
	    jv_get_kind(args) == JV_KIND_NULL ? (jv_free(args),
	    jv_string("")) : jv_dump_string(args, 0));
	p = set(p, "handler", jv_string(client ? "client" : "worker"));
	p = set(p, "retry", art_retry_json(&pol));
	p = set(p, "anchor", head_jv(h));
	p = check_tool_schemas(p, &decl);
	p = set_some(p, "hold", art_json_field(&decl, "hold"));
	jv_free(decl);
	return rec(c, p);
}

/* A settle inside a response: id and attempt default from the execute. */
static int
act_settle(struct cx *c, const jv *a, const char *type, const jv *live)
{
	jv tr = art_json_field(live, "trigger"), src = jv_copy(*a);
	const char *tt = art_json_str(&tr, "type");
	const char *want = strncmp(type, "llm.", 4) == 0 ? "llm.execute" :
	    "tool.execute";
	struct settle st;
	int r;

	if (art_json_str(a, "id") == NULL) {
		if (tt == NULL || strcmp(tt, want) != 0) {
			jv_free(tr);
			jv_free(src);
			return reject(c, "%s without an id answers no execute "
			    "(unresolvable settle id)", type);
		}
		jv at = art_json_field(a, "attempt");

		src = set(src, "id", art_json_field(&tr, "id"));
		if (jv_get_kind(at) == JV_KIND_NULL)
			src = set(src, "attempt", art_json_field(&tr, "attempt"));
		jv_free(at);
	}
	jv_free(tr);
	if (read_settle(&src, type, &st, c->err) == -1) {
		settle_release(&st);
		jv_free(src);
		return reject(c, "%s", c->err->msg);
	}
	r = settle(c, &st, type, &src);
	jv_free(src);
	return r;
}

static jv
turn_totals(struct cx *c, jv p, const char *tid)
{
	jv turn = turn_record(c, tid);

	p = set(p, "usage", jv_is_valid(turn) ? art_json_field(&turn,
	    "usage") : jv_null());
	p = set(p, "cost", jv_is_valid(turn) ? art_json_field(&turn, "cost") :
	    jv_null());
	p = set(p, "llm_calls", jv_is_valid(turn) ? art_json_field(&turn,
	    "llm_calls") : jv_null());
	jv_free(turn);
	return p;
}

/* Ends the running turn (error: failed) and marks the session done. */
static int
end_turn(struct cx *c, jv data, jv error)
{
	jv s = summary(c), p, pv = jv_invalid();
	struct child_done d = { NULL, jv_null(), jv_null(), jv_null(),
	    jv_null() };
	const char *st, *tid, *parent;
	int r = 0;

	if (!jv_is_valid(s)) {
		jv_free(data);
		jv_free(error);
		return -1;
	}
	st = art_json_str(&s, "status");
	tid = art_json_str(&s, "turn");
	parent = parent_of(&s);
	if (st != NULL && strcmp(st, "running") == 0 && tid != NULL) {
		p = set(obj("turn.completed"), "turn_id", jv_string(tid));
		p = set(p, "data", jv_copy(data));
		p = set_some(p, "error", jv_copy(error));
		p = turn_totals(c, p, tid);
		d.usage = art_json_field(&p, "usage");
		d.cost = art_json_field(&p, "cost");
		r = rec(c, p);
		/* A sub-agent's turn answers the call that started it. */
		if (r == 0 && parent != NULL && (pv = art_session_get(c->t,
		    parent, NULL), jv_is_valid(pv))) {
			d.child = c->sid;
			d.data = data;
			d.error = error;
			r = with_session(c, parent, child_done_step, &d);
		}
		jv_free(pv);
	}
	jv_free(d.usage);
	jv_free(d.cost);
	jv_free(data);
	jv_free(error);
	jv_free(s);
	return r == -1 ? -1 : rec(c, obj("session.done"));
}

/*
 * Raising an interrupt voids the model calls not yet answered on the
 * path it parks (PROTOCOL-NOTES §7); tools already started keep running.
 */
static int
void_parked_llm(struct cx *c, const char *h)
{
	jv s = summary(c), calls, ids;
	int r = 0;

	if (!jv_is_valid(s))
		return -1;
	calls = open_calls(c, &s);
	jv_free(s);
	ids = *h != '\0' ? art_tree_path_ids(c->t, c->sid, h, c->err) :
	    jv_array();
	if (!jv_is_valid(ids)) {
		jv_free(calls);
		return -1;
	}
	jv_array_foreach(calls, i, call) {
		const char *anchor = art_json_str(&call, "anchor");

		if (r == 0 && kind_of(&call) == ART_KIND_LLM &&
		    (anchor == NULL || in_ids(&ids, anchor)))
			r = void_call(c, &call);
		jv_free(call);
	}
	jv_free(calls);
	jv_free(ids);
	return r;
}

static int
act_interrupt(struct cx *c, const jv *a, const char *h)
{
	char id[ART_ID_MAX + 1];
	const char *given = art_json_str(a, "interrupt_id");
	jv p, s = summary(c);
	int parked = jv_is_valid(s) ? is_parked(c, &s) : 0;

	jv_free(s);
	if (parked)
		return 0;	/* already parked here: a no-op */
	if (given != NULL)
		snprintf(id, sizeof(id), "%s", given);
	else if (mint(c, id) == -1)
		return -1;
	p = set(obj("session.interrupted"), "interrupt_id", jv_string(id));
	p = set(p, "origin", jv_string("frontend"));
	p = set(p, "reason", art_json_str(a, "reason") != NULL ?
	    art_json_field(a, "reason") : jv_string("interrupted"));
	p = set(p, "payload", art_json_field(a, "payload"));
	p = set(p, "anchor", head_jv(h));
	if (rec(c, p) == -1)
		return -1;
	return void_parked_llm(c, h);
}

/* How deep sub-agents may nest: the config's max_subagent_depth, else 5. */
static int64_t
max_depth(const jv *cfg)
{
	int64_t n = SUB_AGENT_DEPTH;

	if (art_json_get_int(cfg, "max_subagent_depth", 0, &n, NULL) == -1 ||
	    n < 0)
		n = SUB_AGENT_DEPTH;
	return n;
}

/*
 * sub_agent.spawn: a call of kind sub_agent whose id is the child's
 * session id (the seed's Call.id), answering tool_call_id.  It goes out
 * when planned (open_child); one that would nest deeper than the limit
 * fails at once, as a tool error the model reads.
 */
static int
act_spawn(struct cx *c, const jv *a, const jv *cfg, const char *h)
{
	const char *child = art_json_str(a, "session_id");
	const char *agent = art_json_str(a, "agent_id");
	const char *tcid = art_json_str(a, "tool_call_id");
	struct art_retry pol;
	jv p, s, anc, none = jv_null(), call;
	int64_t depth = 0, max = max_depth(cfg);
	int r;

	if (child == NULL || !art_id_is_valid(child))
		return reject(c, "sub_agent.spawn: session_id must be a session "
		    "id%s", NULL);
	if (agent == NULL || !art_id_is_valid(agent) || tcid == NULL)
		return reject(c, "sub_agent.spawn needs agent_id and "
		    "tool_call_id%s", NULL);
	if (strcmp(child, c->sid) == 0)
		return reject(c, "sub_agent.spawn: a session cannot be its own "
		    "child%s", NULL);
	if (call_exists(c, child))
		return 0;	/* redelivered: the child is already asked for */
	art_retry_default(&pol, ART_KIND_SUB_AGENT);
	if (layer_retry(c, &pol, &none, a) == -1)
		return -1;
	p = set(obj("sub_agent.requested"), "id", jv_string(child));
	p = set(p, "attempt", jv_number(1));
	p = set(p, "agent_id", jv_string(agent));
	p = set(p, "session_id", jv_string(child));
	p = set(p, "tool_call_id", jv_string(tcid));
	p = set(p, "name", jv_string(agent));
	p = set(p, "retry", art_retry_json(&pol));
	p = set(p, "anchor", head_jv(h));
	if (rec(c, p) == -1 || !jv_is_valid(s = summary(c)))
		return -1;
	anc = art_json_field(&s, "ancestry");
	if (jv_get_kind(anc) == JV_KIND_ARRAY)
		depth = jv_array_length(jv_copy(anc));
	jv_free(anc);
	jv_free(s);
	if (depth + 1 <= max)
		return 0;
	call = get_call(c, child);
	if (!jv_is_valid(call))
		return -1;
	r = refuse_call(c, &call, jv_string_fmt("sub-agent depth limit "
	    "reached: this session is %lld deep and max_subagent_depth is "
	    "%lld, so %s cannot be started", (long long)depth, (long long)max,
	    agent));
	jv_free(call);
	return r;
}

/* A user message (arg, borrowed) into this session, as a client's. */
static int
deliver(struct cx *c, void *arg)
{
	jv line = set(obj("client.message"), "message", jv_copy(*(jv *)arg));
	int r = input_message(c, &line, "client.message");

	jv_free(line);
	return r;
}

/* In a session a message.send reaches: driven by us, then delivered. */
static int
send_step(struct cx *c, void *arg)
{
	if (claim(c) == -1)
		return -1;
	adopt(c, c->sid);
	return deliver(c, arg);
}

/*
 * message.send: to a child not yet opened, the message waits on its call
 * and goes with it; to any other session (this one, another root) it is
 * delivered now as a client.message, opening a turn there, unless a live
 * process other than ours drives that session.
 */
static int
act_send(struct cx *c, const jv *a)
{
	const char *to = art_json_str(a, "session_id"), *st;
	jv m = art_json_field(a, "message"), view, call, ts;
	int r;

	view = jv_array_append(jv_array(), jv_copy(m));
	r = to == NULL || jv_get_kind(m) != JV_KIND_OBJECT ? -1 :
	    art_reconcile_check(&view, c->err);
	jv_free(view);
	if (r == -1) {
		jv_free(m);
		return reject(c, "message.send needs session_id and a message%s",
		    NULL);
	}
	call = art_store_get(c->t, ART_DB_CALLS, c->sid, to, strlen(to), NULL);
	st = art_json_str(&call, "status");
	ts = art_session_get(c->t, to, NULL);
	if (jv_is_valid(call) && kind_of(&call) == ART_KIND_SUB_AGENT &&
	    !jv_is_valid(ts) && st != NULL) {
		/* Not opened yet: the message goes with it; never: dropped. */
		r = strcmp(st, "queued") == 0 || strcmp(st, "retry_scheduled") ==
		    0 ? rec(c, set(set(obj("sub_agent.messaged"), "id",
		    jv_string(to)), "message", jv_copy(m))) : 0;
		jv_free(call);
		jv_free(ts);
		jv_free(m);
		return r;
	}
	jv_free(call);
	if (rec(c, set(set(obj("session.message_requested"), "session_id",
	    jv_string(to)), "message", jv_copy(m))) == -1) {
		jv_free(ts);
		jv_free(m);
		return -1;
	}
	if (!jv_is_valid(ts))
		r = rec_error(c, "not_found", "message.send: no session with "
		    "that id", a);
	else if (strcmp(to, c->sid) == 0)
		r = deliver(c, &m);
	else if (driver_of(c, to) != 0)
		r = rec_error(c, "busy", "message.send: another process drives "
		    "that session", a);
	else
		r = with_session(c, to, send_step, &m);
	jv_free(ts);
	jv_free(m);
	return r;
}

static int
act(struct cx *c, const jv *a, const jv *live, const jv *cfg)
{
	const char *type = art_json_str(a, "type");
	char h[ART_ID_MAX + 1];
	jv data;

	if (head(c, h, sizeof(h)) == -1)
		return -1;
	if (type == NULL)
		return reject(c, "an action has no type%s", NULL);
	if (strcmp(type, "llm.call") == 0)
		return act_llm_call(c, a, cfg, h);
	if (strcmp(type, "tool.call") == 0)
		return act_tool_call(c, a, cfg, h);
	if (strcmp(type, "tool.result") == 0 || strcmp(type, "tool.error") ==
	    0 || strcmp(type, "llm.result") == 0 ||
	    strcmp(type, "llm.error") == 0)
		return act_settle(c, a, type, live);
	if (strcmp(type, "done") == 0) {
		data = art_json_field(a, "data");
		return end_turn(c, data, jv_null());
	}
	if (strcmp(type, "interrupt") == 0)
		return act_interrupt(c, a, h);
	if (strcmp(type, "sub_agent.spawn") == 0)
		return act_spawn(c, a, cfg, h);
	if (strcmp(type, "message.send") == 0)
		return act_send(c, a);
	return reject(c, "unsupported action '%s'", type);
}

/* --- applying a decision response ----------------------------------- */

static int
rec_cb(void *ctx, jv payload)
{
	return rec(ctx, payload);
}

static int
mint_cb(void *ctx, char *buf)
{
	return mint(ctx, buf);
}

static int
check_response(struct cx *c, const jv *r)
{
	jv m = art_json_field(r, "messages"), a = art_json_field(r, "actions");
	jv agent = art_json_field(r, "agent");
	jv after = art_json_field(r, "messages_after");
	int bad = 0;

	if (jv_get_kind(m) != JV_KIND_NULL && art_reconcile_check(&m,
	    c->err) == -1)
		bad = 1;
	else if (jv_get_kind(after) != JV_KIND_NULL &&
	    (jv_get_kind(after) != JV_KIND_STRING ||
	    !art_id_is_valid(jv_string_value(after))))
		bad = art_err_set(c->err, "reject", "messages_after: expected "
		    "a message id or null") == -1;
	else if (jv_get_kind(a) != JV_KIND_NULL &&
	    jv_get_kind(a) != JV_KIND_ARRAY)
		bad = art_err_set(c->err, "reject", "actions: expected an "
		    "array") == -1;
	else if (jv_get_kind(agent) != JV_KIND_NULL &&
	    (jv_get_kind(agent) != JV_KIND_OBJECT ||
	    art_json_str(&agent, "model") == NULL))
		bad = art_err_set(c->err, "reject", "agent: expected an "
		    "AgentConfig with a model") == -1;
	jv_free(m);
	jv_free(a);
	jv_free(agent);
	jv_free(after);
	return bad ? reject(c, "%s", c->err->msg) : 0;
}

/* state or agent: a present, non-null value that differs is a version. */
static int
version(struct cx *c, const jv *r, const char *field, const char *type,
    const char *as, enum art_version kind)
{
	char h[ART_ID_MAX + 1];
	jv v = art_json_field(r, field), cur;
	int same;

	if (jv_get_kind(v) == JV_KIND_NULL) {
		jv_free(v);
		return 0;
	}
	if (head(c, h, sizeof(h)) == -1) {
		jv_free(v);
		return -1;
	}
	cur = art_session_resolve(c->t, c->sid, kind, *h != '\0' ? h : NULL,
	    c->err);
	same = art_json_equal(&v, &cur);
	jv_free(cur);
	if (same) {
		jv_free(v);
		return 0;
	}
	return rec(c, set(set(obj(type), as, v), "anchor", head_jv(h)));
}

static int
in_ids(const jv *ids, const char *id)
{
	int found = 0;

	jv_array_foreach(*ids, i, x) {
		if (!found && strcmp(jv_string_value(x), id) == 0)
			found = 1;
		jv_free(x);
	}
	return found;
}

/* Drops the queued decisions about call id (its execute or finished). */
static int
drop_for_call(struct cx *c, const char *id)
{
	jv all = queued(c);
	int r = jv_is_valid(all) ? 0 : -1;

	if (r == 0) {
		jv_array_foreach(all, i, e) {
			jv tr = art_json_field(&e, "trigger");
			const char *tid = art_json_str(&tr, "id");
			const char *cs = art_json_str(&tr, "session_id");

			/* A sub-agent's finished names its child session. */
			if (r == 0 && ((tid != NULL && strcmp(tid, id) == 0) ||
			    (cs != NULL && strcmp(cs, id) == 0)))
				r = rec(c, set(obj("decision.dropped"), "id",
				    art_json_field(&e, "id")));
			jv_free(tr);
			jv_free(e);
		}
	}
	jv_free(all);
	return r;
}

/*
 * After a fork, work anchored off the new path is abandoned: its calls are
 * voided and their queued decisions dropped (PROTOCOL-NOTES.md §3).  A
 * head that only grew keeps every anchor on its path, so that is skipped.
 */
/* Is node h at most steps below old?  A walk up of that many parents. */
static int
below(struct cx *c, const char *h, const char *old, int steps)
{
	char at[ART_ID_MAX + 1];
	jv m;
	int i, yes = 0;

	snprintf(at, sizeof(at), "%s", h);
	for (i = 0; i < steps && !yes && *at != '\0' &&
	    jv_is_valid(m = step_up(c, at)); i++) {
		jv_free(m);
		yes = strcmp(at, old) == 0;
	}
	return yes;
}

/*
 * The head moved from old: calls anchored off the new path are voided.
 * A head that went down from old by the steps just written is still on
 * old's path (the tool loop's case), found without reading the path.
 */
static int
void_stranded(struct cx *c, const char *old, int steps)
{
	char h[ART_ID_MAX + 1];
	jv ids, s, calls;
	int r = 0;

	if (head(c, h, sizeof(h)) == -1)
		return -1;
	if (*old == '\0' || strcmp(old, h) == 0 || below(c, h, old, steps))
		return 0;
	ids = art_tree_path_ids(c->t, c->sid, *h != '\0' ? h : NULL, c->err);
	if (!jv_is_valid(ids) || in_ids(&ids, old)) {
		r = jv_is_valid(ids) ? 0 : -1;
		jv_free(ids);
		return r;
	}
	s = summary(c);
	calls = jv_is_valid(s) ? open_calls(c, &s) : jv_array();
	jv_free(s);
	jv_array_foreach(calls, i, call) {
		const char *anchor = art_json_str(&call, "anchor");
		const char *id = art_json_str(&call, "id");

		if (r == 0 && anchor != NULL && id != NULL &&
		    !in_ids(&ids, anchor))
			r = void_call(c, &call);
		jv_free(call);
	}
	jv_free(calls);
	jv_free(ids);
	return r;
}

/*
 * The response as decision.completed keeps it: its messages are the
 * whole transcript again, and what they add is recorded by message.new
 * events, so the log keeps their count, not a copy.
 */
static jv
recorded_response(const jv *resp)
{
	jv r = jv_copy(*resp), m = art_json_field(resp, "messages");

	if (jv_get_kind(m) == JV_KIND_ARRAY) {
		r = jv_object_delete(r, jv_string("messages"));
		r = set(r, "messages_count", jv_number(jv_array_length(m)));
	} else
		jv_free(m);
	return r;
}

/* view (consumed) with its tool messages on their nodes; see reconcile.h */
static jv
normalized(struct cx *c, jv view, const char *h)
{
	jv out = art_reconcile_normalize(c->t, c->sid, &view, *h != '\0' ? h :
	    NULL, c->err);

	jv_free(view);
	return out;
}

static int
apply_response(struct cx *c, const jv *live, const jv *r)
{
	const char *id = art_json_str(live, "id");
	char h[ART_ID_MAX + 1], old[ART_ID_MAX + 1];
	struct art_reconcile_ops ops = { mint_cb, rec_cb, c };
	jv resp = jv_copy(*r), msgs, actions, cfg;
	int rc = 0, by_ref;

	resp = jv_object_delete(resp, jv_string("type"));
	resp = jv_object_delete(resp, jv_string("session_id"));
	resp = jv_object_delete(resp, jv_string("decision_id"));
	if (check_response(c, &resp) == -1 || rec(c, set(set(
	    obj("decision.completed"), "id", jv_string(id)), "response",
	    recorded_response(&resp))) == -1 || head(c, h, sizeof(h)) == -1) {
		jv_free(resp);
		return -1;
	}
	msgs = art_json_field(&resp, "messages");
	snprintf(old, sizeof(old), "%s", h);
	by_ref = jv_object_has(jv_copy(resp), jv_string("messages_after"));
	if (by_ref && jv_get_kind(msgs) == JV_KIND_NULL) {
		jv_free(msgs);
		msgs = jv_array();
	}
	/* Again at the write: the view may predate a node now recorded. */
	if (jv_get_kind(msgs) == JV_KIND_ARRAY)
		msgs = normalized(c, msgs, h);
	if (!jv_is_valid(msgs))
		rc = -1;
	else if (by_ref) {
		/* The news after a node (DESIGN §2.1): O(news), no path read. */
		jv after = art_json_field(&resp, "messages_after");

		rc = art_reconcile_apply_after(c->t, c->sid, &msgs,
		    jv_get_kind(after) == JV_KIND_STRING ?
		    jv_string_value(after) : NULL, *h != '\0' ? h : NULL, &ops,
		    c->err);
		if (rc == -1 && art_err_is(c->err, "not_found"))
			rc = reject(c, "messages_after: %s", c->err->msg);
		jv_free(after);
	} else if (jv_get_kind(msgs) == JV_KIND_ARRAY)
		rc = art_reconcile_apply(c->t, c->sid, &msgs, *h != '\0' ? h :
		    NULL, &ops, c->err);
	jv_free(msgs);
	if (rc != -1)
		rc = void_stranded(c, old, rc);
	if (rc == -1 || version(c, &resp, "state", "worker.state.updated",
	    "state", ART_VERSION_STATE) == -1 || version(c, &resp, "agent",
	    "agent.updated", "config", ART_VERSION_AGENT) == -1 ||
	    head(c, h, sizeof(h)) == -1) {
		jv_free(resp);
		return -1;
	}
	/* A response's own agent is the source of its llm.call defaults. */
	cfg = art_json_field(&resp, "agent");
	if (jv_get_kind(cfg) == JV_KIND_NULL) {
		jv_free(cfg);
		cfg = config_at(c, h);
	}
	actions = art_json_field(&resp, "actions");
	rc = jv_is_valid(cfg) ? 0 : -1;
	if (jv_get_kind(actions) == JV_KIND_ARRAY) {
		jv_array_foreach(actions, i, a) {
			if (rc == 0 && jv_get_kind(a) != JV_KIND_OBJECT)
				rc = reject(c, "an action is not an object%s",
				    NULL);
			if (rc == 0)
				rc = act(c, &a, live, &cfg);
			jv_free(a);
		}
	}
	jv_free(actions);
	jv_free(cfg);
	jv_free(resp);
	return rc;
}

/* A terminal failure: void open work, drop the queue, fail the turn. */
static int
fail_run(struct cx *c, const char *why)
{
	jv s = summary(c), calls, all;
	int r = 0;

	if (!jv_is_valid(s))
		return -1;
	calls = open_calls(c, &s);
	jv_free(s);
	jv_array_foreach(calls, i, call) {
		if (r == 0)
			r = void_call(c, &call);
		jv_free(call);
	}
	jv_free(calls);
	if (r == 0 && !jv_is_valid(all = queued(c)))
		r = -1;
	else if (r == 0) {
		jv_array_foreach(all, i, e) {
			if (r == 0)
				r = rec(c, set(obj("decision.dropped"), "id",
				    art_json_field(&e, "id")));
			jv_free(e);
		}
		jv_free(all);
	}
	return r == -1 ? -1 : end_turn(c, jv_null(), jv_string(why));
}

/* --- inputs ----------------------------------------------------------- */

/* An error event: the line (borrowed, may be NULL) quoted in part. */
static int
rec_error(struct cx *c, const char *code, const char *message, const jv *line)
{
	jv p = set(set(obj("error"), "code", jv_string(code)), "message",
	    jv_string(message)), text;
	const char *s;
	int n;

	if (line != NULL) {
		text = jv_dump_string(jv_copy(*line), 0);
		s = jv_string_value(text);
		n = (int)strlen(s) > 256 ? 256 : (int)strlen(s);
		p = set(p, "input", jv_string_sized(s, n));
		jv_free(text);
	}
	return rec(c, p);
}

/* A new turn, unless one runs; a completed turn_id runs nothing. */
static int
begin_turn(struct cx *c, const jv *line, int *skip)
{
	char tid[ART_ID_MAX + 1];
	const char *given = art_json_str(line, "turn_id"), *st;
	jv s = summary(c), turn;

	*skip = 0;
	if (!jv_is_valid(s))
		return -1;
	st = art_json_str(&s, "status");
	if (st != NULL && strcmp(st, "running") == 0) {
		snprintf(tid, sizeof(tid), "%s", art_json_str(&s, "turn"));
		jv_free(s);
		*skip = 1;
		return rec_error(c, "turn_already_active", tid, line);
	}
	jv_free(s);
	if (given != NULL) {
		if (!art_id_is_valid(given))
			return *skip = 1, rec_error(c, "bad_input",
			    "bad turn_id", line);
		turn = turn_record(c, given);
		if (jv_is_valid(turn)) {
			/* Done before: report it again, run nothing. */
			jv p = set(obj("turn.completed"), "turn_id",
			    jv_string(given));

			p = set(p, "data", art_json_field(&turn, "data"));
			p = set_some(p, "error", art_json_field(&turn, "error"));
			p = set(p, "usage", art_json_field(&turn, "usage"));
			p = set(p, "cost", art_json_field(&turn, "cost"));
			p = set(p, "llm_calls", art_json_field(&turn,
			    "llm_calls"));
			project_completion(c, NULL, &p);
			jv_free(p);
			jv_free(turn);
			*skip = 1;
			return 0;
		}
		jv_free(turn);
		snprintf(tid, sizeof(tid), "%s", given);
	} else if (mint(c, tid) == -1)
		return -1;
	return rec(c, set(obj("turn.started"), "turn_id", jv_string(tid)));
}

/*
 * A client-handled call the tool message m (borrowed) answers: its id,
 * borrowed from m, or NULL when m answers no pending client call.
 */
static const char *
answers_client_call(struct cx *c, const jv *m)
{
	const char *role = art_json_str(m, "role");
	const char *id = art_json_str(m, "tool_call_id"), *status;
	jv call;
	int yes;

	if (role == NULL || strcmp(role, "tool") != 0 || id == NULL)
		return NULL;
	call = art_store_get(c->t, ART_DB_CALLS, c->sid, id, strlen(id), NULL);
	status = art_json_str(&call, "status");
	yes = jv_is_valid(call) && kind_of(&call) == ART_KIND_CLIENT_TOOL &&
	    status != NULL && strcmp(status, "pending") == 0;
	jv_free(call);
	return yes ? id : NULL;
}

/*
 * The fast path of PROTOCOL-NOTES §3: a client view whose only news is
 * tool messages answering pending client-handled calls settles those
 * calls as tool.result inputs would, and the view itself is dropped (the
 * proposal of each tool.finished appends its message).  1 when view was
 * that, 0 when it was not (it goes the ordinary way), -1 on failure.
 */
static int
client_answers(struct cx *c, const jv *view, const jv *line)
{
	int news = art_reconcile_news_from(c->t, c->sid, view, c->err);
	int n = jv_array_length(jv_copy(*view)), i, r = 0;
	jv m, done = jv_object();

	if (news < 0 || news >= n) {
		jv_free(done);
		return news < 0 ? -1 : 0;
	}
	for (i = news; i < n; i++) {
		m = jv_array_get(jv_copy(*view), i);
		if (answers_client_call(c, &m) == NULL)
			r = -1;
		jv_free(m);
		if (r == -1) {
			jv_free(done);
			return 0;
		}
	}
	for (i = news; i < n && r == 0; i++) {
		struct settle st;
		const char *id;
		jv seen;

		m = jv_array_get(jv_copy(*view), i);
		id = answers_client_call(c, &m);
		seen = id != NULL ? jv_object_get(jv_copy(done),
		    jv_string(id)) : jv_invalid();
		if (id != NULL && !jv_is_valid(seen)) {
			/* The first answer to a call wins. */
			done = jv_object_set(done, jv_string(id), jv_true());
			memset(&st, 0, sizeof(st));
			st.id = id;
			st.ok = 1;
			st.value = art_json_field(&m, "content");
			st.code = jv_null();
			r = settle(c, &st, "tool.result", line);
		}
		jv_free(seen);
		jv_free(m);
	}
	jv_free(done);
	return r == -1 ? -1 : 1;
}

/*
 * Is the running turn waiting only for outside input: no decision live
 * or queued, every open call a client-handled one, and at least one such
 * call or an interrupt parking the head?  1 yes, 0 no, -1 on failure.
 */
static int
waits_outside(struct cx *c)
{
	jv s = summary(c), live, calls, all;
	const char *st;
	int n = 0, r;

	if (!jv_is_valid(s))
		return -1;
	st = art_json_str(&s, "status");
	live = art_json_field(&s, "live");
	r = st != NULL && strcmp(st, "running") == 0 &&
	    jv_get_kind(live) == JV_KIND_NULL;
	jv_free(live);
	if (r == 1) {
		calls = open_calls(c, &s);
		jv_array_foreach(calls, i, call) {
			if (!outside_call(c, &call, 0))
				r = 0;
			n++;
			jv_free(call);
		}
		jv_free(calls);
	}
	if (r == 1 && !jv_is_valid(all = queued(c)))
		r = -1;
	else if (r == 1) {
		if (jv_array_length(jv_copy(all)) > 0)
			r = 0;
		jv_free(all);
	}
	if (r == 1 && n == 0)
		r = is_parked(c, &s);
	jv_free(s);
	return r;
}

/*
 * A client view that leaves a parked branch (PROTOCOL-NOTES §3, "views
 * escaping a parked head are allowed"): while the turn waits only for
 * outside input, a view whose known prefix does not reach the head is
 * taken into that turn, and its reconcile voids what waited off the new
 * path.  A view that continues the parked branch is not.  1 when view
 * (borrowed) escapes, 0 when not, -1 on failure.
 */
static int
escapes_park(struct cx *c, const jv *view)
{
	char h[ART_ID_MAX + 1];
	int n = jv_array_length(jv_copy(*view)), news, i, r;

	if (n == 0 || (r = waits_outside(c)) != 1)
		return n == 0 ? 0 : r;
	if (head(c, h, sizeof(h)) == -1)
		return -1;
	if ((news = art_reconcile_news_from(c->t, c->sid, view, c->err)) < 0)
		return -1;
	for (i = 0; i < news && r == 1; i++) {
		jv m = jv_array_get(jv_copy(*view), i);
		const char *id = art_json_str(&m, "id");

		if (id != NULL && strcmp(id, h) == 0)
			r = 0;
		jv_free(m);
	}
	return *h != '\0' ? r : 0;
}

/*
 * New user messages on a parked branch are refused (PROTOCOL-NOTES §7):
 * 1 when line was (an error is recorded), 0 when the head is not parked.
 */
static int
refuse_parked(struct cx *c, const jv *line)
{
	jv s = summary(c), it;
	char msg[600];

	if (!jv_is_valid(s))
		return -1;
	it = parking(c, &s);
	jv_free(s);
	if (jv_get_kind(it) == JV_KIND_NULL)
		return 0;
	snprintf(msg, sizeof(msg), "the branch is parked on interrupt %s "
	    "(%.300s); resume it first (interrupt.resume, or agentrt-session "
	    "run --resume %s)", art_json_str(&it, "interrupt_id"),
	    art_json_str(&it, "reason") != NULL ? art_json_str(&it, "reason") :
	    "no reason", art_json_str(&it, "interrupt_id"));
	jv_free(it);
	return rec_error(c, "interrupted", msg, line) == -1 ? -1 : 1;
}

static int
input_message(struct cx *c, const jv *line, const char *type)
{
	jv m = art_json_field(line, strcmp(type, "client.message") == 0 ?
	    "message" : "messages"), tr, view, client;
	int skip, r;

	view = strcmp(type, "client.message") == 0 ?
	    jv_array_append(jv_array(), jv_copy(m)) : jv_copy(m);
	r = art_reconcile_check(&view, c->err);
	jv_free(view);
	if (r == -1) {
		jv_free(m);
		return rec_error(c, "bad_input", c->err->msg, line);
	}
	if (strcmp(type, "client.messages") == 0) {
		char h[ART_ID_MAX + 1];

		if (head(c, h, sizeof(h)) == -1 ||
		    !jv_is_valid(m = normalized(c, m, h)))
			return -1;
	}
	if (strcmp(type, "client.messages") == 0 &&
	    (r = client_answers(c, &m, line)) != 0) {
		jv_free(m);
		return r < 0 ? -1 : 0;
	}
	if (strcmp(type, "client.messages") == 0 &&
	    (r = escapes_park(c, &m)) != 0) {
		if (r < 0) {
			jv_free(m);
			return -1;
		}
		tr = set_some(set(obj(type), "messages", m), "client",
		    art_json_field(line, "client"));
		return queue_decision(c, tr, 1, set(jv_object(), "escapes",
		    jv_true()));
	}
	if ((r = refuse_parked(c, line)) != 0) {
		jv_free(m);
		return r < 0 ? -1 : 0;
	}
	if (begin_turn(c, line, &skip) == -1 || skip) {
		jv_free(m);
		return skip ? 0 : -1;
	}
	tr = set(obj(type), strcmp(type, "client.message") == 0 ? "message" :
	    "messages", m);
	client = art_json_field(line, "client");
	tr = set_some(tr, "client", client);
	return queue_decision(c, tr, 1, jv_null());
}

static int
input_action(struct cx *c, const jv *line)
{
	const char *name = art_json_str(line, "name");

	if (name == NULL)
		return rec_error(c, "bad_input", "client.action has no name",
		    line);
	return queue_decision(c, set_some(set(obj("client.action"), "name",
	    jv_string(name)), "args", art_json_field(line, "args")), 1,
	    jv_null());
}

static int
input_resume(struct cx *c, const jv *line)
{
	const char *id = art_json_str(line, "interrupt_id");
	jv s = summary(c), all, it, payload;
	char why[400];
	int parked, r;

	if (!jv_is_valid(s))
		return -1;
	all = art_json_field(&s, "interrupts");
	it = id != NULL && jv_get_kind(all) == JV_KIND_OBJECT ?
	    jv_object_get(jv_copy(all), jv_string(id)) : jv_invalid();
	parked = is_parked(c, &s);
	jv_free(all);
	jv_free(s);
	if (!jv_is_valid(it)) {
		char msg[300];

		jv_free(it);
		snprintf(msg, sizeof(msg), id != NULL ? "no open interrupt '%s' "
		    "(unknown, or already resumed): nothing done" :
		    "interrupt.resume has no interrupt_id%s", id != NULL ? id :
		    "");
		return rec_error(c, "no_interrupt", msg, line);
	}
	payload = art_json_field(line, "payload");
	if (answer_hold(c, &it, &payload, id, 0, why, sizeof(why)) == 1) {
		/* The answer does not fit the question: it stays open. */
		jv_free(it);
		jv_free(payload);
		return rec_error(c, "bad_input", why, line);
	}
	r = rec(c, set(set(obj("session.interrupt_resumed"), "interrupt_id",
	    jv_string(id)), "payload", jv_copy(payload)));
	if (r == 0)
		r = answer_hold(c, &it, &payload, id, 1, why, sizeof(why));
	jv_free(payload);
	if (r == -1 || !parked) {
		jv_free(it);
		return r;
	}
	return queue_decision(c, set_some(set(obj("interrupt.resumed"),
	    "interrupt_id", jv_string(id)), "payload", art_json_field(line,
	    "payload")), 0, set(jv_object(), "interrupt", it));
}

static int
input_settle(struct cx *c, const jv *line, const char *type)
{
	struct settle st;

	if (read_settle(line, type, &st, c->err) == -1 || st.id == NULL) {
		settle_release(&st);
		return rec_error(c, "bad_input", st.id == NULL ? "settle has "
		    "no id" : c->err->msg, line);
	}
	return settle(c, &st, type, line);
}

static int
input_response(struct cx *c, const jv *line)
{
	const char *id = art_json_str(line, "decision_id"), *lid;
	jv s = summary(c), live;
	int r;

	if (!jv_is_valid(s))
		return -1;
	live = art_json_field(&s, "live");
	lid = art_json_str(&live, "id");
	jv_free(s);
	if (id == NULL || lid == NULL || strcmp(id, lid) != 0) {
		jv_free(live);
		return rec_error(c, "stale_response", id != NULL ? id :
		    "decision.response has no decision_id", line);
	}
	r = apply_response(c, &live, line);
	jv_free(live);
	return r;
}

/*
 * A stage could not get a decision answered: a worker died, timed out, or
 * refused.  A retryable error sends the live decision again, as a lapsed
 * deadline does, until DECISION_ATTEMPTS; any other fails the run with
 * the worker's words.  An error about a decision no longer live, or about
 * an earlier attempt ("attempt"), is an old delivery's and changes
 * nothing.
 */
static int
input_decision_error(struct cx *c, const jv *line)
{
	const char *id = art_json_str(line, "decision_id"), *lid, *e;
	jv s = summary(c), live, ev;
	int64_t attempts = 1, sent;
	int r, retry, again;
	char why[600];

	if (!jv_is_valid(s))
		return -1;
	live = art_json_field(&s, "live");
	jv_free(s);
	lid = art_json_str(&live, "id");
	art_json_get_int(&live, "attempts", 0, &attempts, NULL);
	sent = attempts;
	art_json_get_int(line, "attempt", 0, &sent, NULL);
	if (id == NULL || lid == NULL || strcmp(id, lid) != 0 ||
	    sent != attempts) {
		jv_free(live);
		return 0;	/* about an old delivery: already dealt with */
	}
	if ((e = art_json_str(line, "error")) == NULL)
		e = "the worker gave no reason";
	retry = 0;
	art_json_get_bool(line, "retryable", 0, &retry, NULL);
	again = retry && attempts < DECISION_ATTEMPTS;
	ev = set(set(set(obj("decision.errored"), "id", jv_string(id)),
	    "error", jv_string(e)), "retryable", jv_bool(again));
	if (art_json_str(line, "code") != NULL)
		ev = set(ev, "code", art_json_field(line, "code"));
	r = rec(c, ev);
	if (r == 0 && again)
		r = redeliver(c, &live);
	else if (r == 0) {
		snprintf(why, sizeof(why), "decision '%s' failed%s: %.400s", id,
		    retry ? " too often" : "", e);
		r = fail_run(c, why);
	}
	jv_free(live);
	return r;
}

/* A request of ours came round the ring: no stage answered it. */
static int
input_unanswered(struct cx *c, const jv *line)
{
	const char *id = art_json_str(line, "decision_id"), *lid, *tt;
	jv s = summary(c), live, tr, call;
	char msg[300];
	int r;

	if (!jv_is_valid(s))
		return -1;
	live = art_json_field(&s, "live");
	jv_free(s);
	lid = art_json_str(&live, "id");
	if (id == NULL || lid == NULL || strcmp(id, lid) != 0) {
		jv_free(live);
		return 0;	/* an old delivery: already dealt with */
	}
	tr = art_json_field(&live, "trigger");
	tt = art_json_str(&tr, "type");
	if (tt != NULL && (strcmp(tt, "tool.execute") == 0 ||
	    strcmp(tt, "llm.execute") == 0)) {
		snprintf(msg, sizeof(msg), "no stage in the ring ran %s '%s'",
		    strcmp(tt, "tool.execute") == 0 ? "tool" : "model call",
		    strcmp(tt, "tool.execute") == 0 ? art_json_str(&tr,
		    "name") : art_json_str(&tr, "id"));
		call = get_call(c, art_json_str(&tr, "id"));
		r = rec(c, set(set(obj("decision.completed"), "id",
		    jv_string(id)), "response", jv_object()));
		if (r == 0 && jv_is_valid(call)) {
			struct settle st = { art_json_str(&tr, "id"), 0, 0,
			    jv_string(msg), 0, jv_null(), 0, 1 };

			r = settle(c, &st, strcmp(tt, "llm.execute") == 0 ?
			    "llm.error" : "tool.error", NULL);
		}
		jv_free(call);
	} else {
		snprintf(msg, sizeof(msg), "no stage answered decision '%s' "
		    "(trigger %s)", id, tt != NULL ? tt : "?");
		r = rec(c, set(set(set(obj("decision.errored"), "id",
		    jv_string(id)), "error", jv_string(msg)), "retryable",
		    jv_false()));
		if (r == 0)
			r = fail_run(c, msg);
	}
	jv_free(tr);
	jv_free(live);
	return r;
}

/* An llm.request came back: no model stage took it. */
static int
input_unanswered_llm(struct cx *c, const jv *line)
{
	struct settle st = { art_json_str(line, "id"), 0, 0,
	    jv_string("no stage in the ring answered the model call"), 0,
	    jv_null(), 0, 1 };

	if (st.id == NULL) {
		settle_release(&st);
		return 0;
	}
	art_json_get_int(line, "attempt", 0, &st.attempt, NULL);
	return settle(c, &st, "llm.error", NULL);
}

static void
input_delta(struct cx *c, const jv *line)
{
	const char *id = art_json_str(line, "id");
	jv d = art_json_field(line, "delta"), ce = obj("token"), seen;

	if (id != NULL) {
		seen = jv_object_get(jv_copy(c->e->first_token), jv_string(id));
		if (!jv_is_valid(seen))
			c->e->first_token = jv_object_set(c->e->first_token,
			    jv_string(id), jv_number((double)c->now));
		jv_free(seen);
	}
	ce = set(ce, "id", art_json_field(line, "id"));
	if (jv_get_kind(d) == JV_KIND_OBJECT) {
		jv_object_foreach(d, k, v)
			ce = jv_object_set(ce, k, v);
	}
	jv_free(d);
	publish(c, NULL, ce);
}

static int
dispatch_input(struct cx *c, const jv *line)
{
	const char *type = art_json_str(line, "type");
	char msg[200];

	if (type == NULL)
		return rec_error(c, "no_type", "line has no string \"type\"",
		    line);
	if (strcmp(type, "client.message") == 0 ||
	    strcmp(type, "client.messages") == 0)
		return input_message(c, line, type);
	if (strcmp(type, "client.action") == 0)
		return input_action(c, line);
	if (strcmp(type, "interrupt.resume") == 0)
		return input_resume(c, line);
	if (strcmp(type, "tool.result") == 0 || strcmp(type, "tool.error") ==
	    0 || strcmp(type, "llm.result") == 0 ||
	    strcmp(type, "llm.error") == 0)
		return input_settle(c, line, type);
	if (strcmp(type, "decision.response") == 0)
		return input_response(c, line);
	if (strcmp(type, "decision.error") == 0)
		return input_decision_error(c, line);
	if (strcmp(type, "decision.request") == 0)
		return input_unanswered(c, line);
	if (strcmp(type, "llm.request") == 0)
		return input_unanswered_llm(c, line);
	if (strcmp(type, "llm.token.delta") == 0) {
		input_delta(c, line);
		return 0;
	}
	if (strcmp(type, "error") == 0) {
		jv p = jv_copy(*line);

		p = jv_object_delete(p, jv_string("session_id"));
		if (art_json_str(&p, "code") == NULL)
			p = set(p, "code", jv_string("error"));
		return rec(c, p);
	}
	snprintf(msg, sizeof(msg), "unknown line type '%.100s'", type);
	return rec_error(c, "unknown_type", msg, line);
}

/* --- planning and timers -------------------------------------------- */

static int
timers_for_call(struct cx *c, const jv *call)
{
	const char *st = art_json_str(call, "status");
	int64_t due;

	if (st == NULL)
		return 0;
	if (strcmp(st, "pending") == 0) {
		due = ms_of(call, "deadline");
		if (due >= 0 && due <= c->now)
			return fail_call(c, call, "deadline exceeded",
			    "deadline_exceeded");
		wake_at(c, due);
	} else if (strcmp(st, "retry_scheduled") == 0) {
		due = ms_of(call, "next_at");
		if (due >= 0 && due <= c->now) {
			int64_t n = 1;

			art_json_get_int(call, "attempt", 0, &n, NULL);
			return rec(c, set(call_event(call, "requested"),
			    "attempt", jv_number((double)n + 1)));
		}
		wake_at(c, due);
	}
	return 0;
}

static int
timers_for_decision(struct cx *c, const jv *s)
{
	jv live = art_json_field(s, "live");
	int64_t due = ms_of(&live, "deadline"), attempts = 1;
	int r = 0, again;

	if (jv_get_kind(live) != JV_KIND_OBJECT || due < 0 || due > c->now) {
		wake_at(c, due);
		jv_free(live);
		return 0;
	}
	art_json_get_int(&live, "attempts", 0, &attempts, NULL);
	again = attempts < DECISION_ATTEMPTS;
	r = rec(c, set(set(set(obj("decision.errored"), "id",
	    art_json_field(&live, "id")), "error",
	    jv_string("deadline exceeded")), "retryable", again ? jv_true() :
	    jv_false()));
	if (r == 0)
		r = again ? redeliver(c, &live) : fail_run(c, "decision "
		    "deadline exceeded too often");
	jv_free(live);
	return r;
}

/* Timers, then calls that can go out, then the next decision. */
static int
plan(struct cx *c)
{
	jv s = summary(c), calls;
	int r = 0;

	if (!jv_is_valid(s))
		return -1;
	r = timers_for_decision(c, &s);
	jv_free(s);
	s = summary(c);
	calls = jv_is_valid(s) ? open_calls(c, &s) : jv_array();
	jv_free(s);
	jv_array_foreach(calls, i, call) {
		if (r == 0)
			r = timers_for_call(c, &call);
		jv_free(call);
	}
	jv_free(calls);
	if (r == -1 || !jv_is_valid(s = summary(c)))
		return -1;
	calls = open_calls(c, &s);
	jv_array_foreach(calls, i, call) {
		const char *st = art_json_str(&call, "status");

		if (r == 0 && st != NULL && strcmp(st, "queued") == 0)
			r = dispatch_call(c, &call);
		jv_free(call);
	}
	jv_free(calls);
	jv_free(s);
	if (r == -1 || !jv_is_valid(s = summary(c)))
		return -1;
	r = dispatch_decision(c, &s);
	jv_free(s);
	return r;
}

/* --- transactions ---------------------------------------------------- */

/*
 * Group commit (DESIGN §4).  The lines one loop iteration read are one
 * write transaction (art_engine_input_batch), and only a transaction
 * with an effect is synced to disk: a model call or a tool run going
 * out, a sub-agent starting, an event a client may act on.  The rest
 * (recording that a tool started, a decision.request, a token, a
 * message a client only shows) commits to the OS page cache and is made
 * durable by the next synced commit, which fdatasyncs the whole file.
 * A process killed with kill -9 loses none of it; an OS crash can lose
 * that unsynced tail, and what it held is re-derived on the next run: a
 * decision.request is a pure function of what is recorded, so the live
 * decision is sent again, and a call whose dispatch was lost is retried.
 * A tool step is then two synced commits: the decision that starts the
 * tool run, and the one that makes the model call.
 */
static int	checkout_step(struct cx *, void *);
static int	start_step(struct cx *, void *);

struct op {
	struct art_engine	*e;
	const char		*sid;
	int			(*fn)(struct cx *, void *);
	void			*arg;
	const jv		*line;
	jv			 out, events, adopt;
	int64_t			 wake;
	int			 quiet;		/* no plan: nothing goes out */
	int			 sync;		/* durable whatever it emits */
};

static int
op_txn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct op *op = ctx;
	struct cx c = { op->e, t, err, op->sid,
	    art_clock_now_ms(op->e->o.clock), jv_array(), jv_array(), -1,
	    jv_invalid(), jv_array(), NULL };
	int r;

	r = op->fn != NULL ? op->fn(&c, op->arg) : 0;

	if (r == 0 && !op->quiet)
		r = plan(&c);
	jv_free(c.sum);
	jv_free(op->out);
	jv_free(op->events);
	jv_free(op->adopt);
	op->out = c.out;	/* a rerun (the map grew) starts afresh */
	op->events = c.events;
	op->adopt = c.adopt;
	op->wake = c.wake;
	return r;
}

/* The prompts a transaction kept are dropped (it is run again or undone). */
static void
prompts_unstage(struct art_engine *e)
{
	jv_free(e->prompt_stage);
	e->prompt_stage = jv_object();
}

/* The transaction committed: what it kept is what the next builds on. */
static void
prompts_keep(struct art_engine *e)
{
	jv_object_foreach(e->prompt_stage, k, v)
		e->prompts = jv_object_set(e->prompts, k, v);
	prompts_unstage(e);
}

/* Is a ring line an effect?  Only some decisions are pure. */
static int
line_acts(const jv *line)
{
	const char *type = art_json_str(line, "type"), *tt;
	jv tr;
	int acts;

	if (type == NULL || strcmp(type, "decision.request") != 0)
		return 1;	/* llm.request, and anything unforeseen */
	tr = art_json_field(line, "trigger");
	tt = art_json_str(&tr, "type");
	acts = tt == NULL || strcmp(tt, "tool.execute") == 0 ||
	    strcmp(tt, "llm.execute") == 0;
	jv_free(tr);
	return acts;
}

/*
 * May a client act on this event?  Only what a client just shows is
 * left unsynced: a token, a message, a tool's result, metrics, a turn
 * starting, thinking or acting.  A completion, an error, a tool call (a
 * client tool is run on it), a suspension and anything unforeseen sync.
 */
static int
event_acts(const jv *ev)
{
	static const char *const shown[] = { "token", "message",
	    "tool_result", "metrics", "turn.started", NULL };
	const char *type = art_json_str(ev, "type"), *st;
	int i;

	if (type == NULL)
		return 1;
	for (i = 0; shown[i] != NULL; i++)
		if (strcmp(type, shown[i]) == 0)
			return 0;
	st = art_json_str(ev, "status");
	return strcmp(type, "status") != 0 || st == NULL ||
	    (strcmp(st, "thinking") != 0 && strcmp(st, "acting") != 0);
}

static int
any_acts(const jv *a, int (*acts)(const jv *))
{
	int r = 0;

	jv_array_foreach(*a, i, x) {
		r = r || acts(&x);
		jv_free(x);
		(void)i;
	}
	return r;
}

/* Must op's transaction reach the disk before what it made goes out? */
static int
op_has_effect(const struct op *op)
{
	return op->sync || jv_array_length(jv_copy(op->adopt)) > 0 ||
	    any_acts(&op->out, line_acts) || any_acts(&op->events, event_acts);
}

/* One op as its own transaction, synced only when it has an effect. */
static int
op_write(struct art_txn *t, void *ctx, struct art_err *err)
{
	int r;

	prompts_unstage(((struct op *)ctx)->e);	/* a rerun starts afresh */
	r = op_txn(t, ctx, err);

	if (r == 0 && !op_has_effect(ctx) &&
	    !((struct op *)ctx)->e->o.sync_always)
		art_txn_nosync(t);
	return r;
}

/* The refusal of a step's input, recorded on its own. */
static int
reject_step(struct cx *c, void *arg)
{
	const char *why = arg;
	jv s = summary(c), live;
	const char *lid;
	int r;

	if (!jv_is_valid(s))
		return -1;
	live = art_json_field(&s, "live");
	jv_free(s);
	lid = art_json_str(&live, "id");
	if (lid != NULL)
		r = rec(c, set(set(set(obj("decision.errored"), "id",
		    jv_string(lid)), "error", jv_string(why)), "retryable",
		    jv_false()));
	else
		r = 0;
	jv_free(live);
	if (r == 0)
		r = rec_error(c, "bad_response", why, NULL);
	return r == 0 && lid != NULL ? fail_run(c, why) : r;
}

/* A session's next timer, and so the engine's: the earliest of all. */
static void
set_wake(struct art_engine *e, const char *sid, int64_t wake)
{
	int i, n = e->nsids;

	for (i = 0; i < e->nsids; i++)
		if (strcmp(e->sids[i], sid) == 0)
			break;
	/* i == nsids: the session being started takes the next slot. */
	if (i < MAX_SESSIONS)
		e->wakes[i] = wake;
	if (i == e->nsids && n < MAX_SESSIONS)
		n++;
	e->wake = -1;
	for (i = 0; i < n; i++)
		if (e->wakes[i] >= 0 && (e->wake < 0 || e->wakes[i] < e->wake))
			e->wake = e->wakes[i];
}

/*
 * Sessions a step started driving (sub-agents, message.send targets)
 * join the ring's sessions; sids (consumed) may repeat or be known.
 */
static void
drive(struct art_engine *e, jv sids, int64_t wake)
{
	int i;

	jv_array_foreach(sids, k, sid) {
		for (i = 0; i < e->nsids; i++)
			if (strcmp(e->sids[i], jv_string_value(sid)) == 0)
				break;
		if (i == e->nsids && e->nsids < MAX_SESSIONS) {
			snprintf(e->sids[e->nsids], sizeof(e->sids[0]), "%s",
			    jv_string_value(sid));
			set_wake(e, e->sids[e->nsids], wake);
			e->nsids++;
		}
		jv_free(sid);
		(void)k;
	}
	jv_free(sids);
}

static int	cancel_op(struct cx *, void *);

static int
run_op(struct art_engine *e, const char *sid, int (*fn)(struct cx *, void *),
    void *arg, struct art_err *err)
{
	int quiet = fn == checkout_step || fn == cancel_op;
	struct op op = { e, sid, fn, arg, NULL, jv_array(), jv_array(),
	    jv_array(), -1, quiet, quiet || fn == start_step };
	char why[sizeof(err->msg)];
	int r;

	r = art_store_write(e->o.store, op_write, &op, err);
	if (r == -1 && art_err_is(err, "reject")) {
		snprintf(why, sizeof(why), "%s", err->msg);
		op.fn = reject_step;
		op.arg = why;
		r = art_store_write(e->o.store, op_write, &op, err);
	}
	if (r == 0) {
		prompts_keep(e);
		e->out = jv_array_concat(e->out, op.out);
		e->events = jv_array_concat(e->events, op.events);
		set_wake(e, sid, op.wake);
		drive(e, op.adopt, op.wake);
	} else {
		prompts_unstage(e);
		jv_free(op.out);
		jv_free(op.events);
		jv_free(op.adopt);
	}
	return r;
}

/* --- the public side ------------------------------------------------ */

struct art_engine *
art_engine_new(const struct art_engine_opts *o)
{
	struct art_engine *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->o = *o;
	e->out = jv_array();
	e->events = jv_array();
	e->prompts = jv_object();
	e->prompt_stage = jv_object();
	e->first_token = jv_object();
	e->wake = -1;
	for (int i = 0; i < MAX_SESSIONS; i++)
		e->wakes[i] = -1;
	return e;
}

void
art_engine_free(struct art_engine *e)
{
	if (e == NULL)
		return;
	jv_free(e->out);
	jv_free(e->events);
	jv_free(e->first_token);
	jv_free(e->prompts);
	jv_free(e->prompt_stage);
	free(e);
}

jv
art_engine_output(struct art_engine *e)
{
	jv out = e->out;

	e->out = jv_array();
	return out;
}

jv
art_engine_events(struct art_engine *e)
{
	jv ev = e->events;

	e->events = jv_array();
	return ev;
}

int64_t
art_engine_wake(const struct art_engine *e)
{
	return e->wake;
}

struct start {
	const char	*agent;
	jv		 file;		/* the agent file's config */
	int		 create;	/* 1: make the session; 2: only start it */
};


/* Takes the session over; err code "busy" when its driver still lives. */
static int
claim(struct cx *c)
{
	int64_t pid = other_driver(c);
	jv d;

	if (pid != 0)
		return art_err_set(c->err, "busy", "session '%s' is driven by "
		    "process %lld", c->sid, (long long)pid);
	d = set(jv_object(), "pid", jv_number((double)c->e->o.pid));
	d = set(d, "since", iso(c->now));
	return art_store_put(c->t, ART_DB_DRIVERS, c->sid, NULL, 0, d, c->err);
}

/*
 * Is call id's execute decision still live or queued?  Then the worker
 * will be asked again, and the call is not lost.
 */
static int
execute_waits(struct cx *c, const jv *live, const char *id)
{
	jv tr = art_json_field(live, "trigger"), all = jv_null();
	const char *tid = art_json_str(&tr, "id"), *tt = art_json_str(&tr,
	    "type");
	int waits = id != NULL && tid != NULL && tt != NULL &&
	    strcmp(tid, id) == 0 && strstr(tt, ".execute") != NULL;

	jv_free(tr);
	if (!waits && id != NULL && jv_is_valid(all = queued(c))) {
		jv_array_foreach(all, i, e) {
			tr = art_json_field(&e, "trigger");
			tid = art_json_str(&tr, "id");
			tt = art_json_str(&tr, "type");
			if (tid != NULL && tt != NULL && strcmp(tid, id) == 0 &&
			    strstr(tt, ".execute") != NULL)
				waits = 1;
			jv_free(tr);
			jv_free(e);
		}
	}
	jv_free(all);
	return waits;
}

static int	recover(struct cx *);

static int
adopt_step(struct cx *c, void *arg)
{
	(void)arg;
	if (claim(c) == -1)
		return -1;
	adopt(c, c->sid);
	return recover(c);
}

/*
 * A running child is driven again with its parent, and recovered the
 * same way, so a ring started on the parent finishes what the children
 * were doing (and routes a resume to the child it parks).  A child that
 * another live process drives is left to it.
 */
static int
adopt_child(struct cx *c, const char *child)
{
	jv cs;
	int r = 0;

	if (child == NULL || driver_of(c, child) != 0)
		return 0;
	cs = art_session_get(c->t, child, NULL);
	if (jv_is_valid(cs))
		r = with_session(c, child, adopt_step, NULL);
	jv_free(cs);
	return r;
}

/*
 * A driver that died left its work where it was: the live decision goes
 * out again and calls that were out fail retryably (their answers went
 * down with the old ring), so each is retried as its policy allows.
 */
static int
recover(struct cx *c)
{
	jv s = summary(c), live, calls;
	int r = 0;

	if (!jv_is_valid(s))
		return -1;
	live = art_json_field(&s, "live");
	calls = open_calls(c, &s);
	jv_free(s);
	if (jv_get_kind(live) == JV_KIND_OBJECT) {
		r = rec(c, set(set(set(obj("decision.errored"), "id",
		    art_json_field(&live, "id")), "error", jv_string("dispatch "
		    "lost on engine restart")), "retryable", jv_true()));
		if (r == 0)
			r = redeliver(c, &live);
	}
	jv_array_foreach(calls, i, call) {
		const char *st = art_json_str(&call, "status");

		if (r == 0 && st != NULL && strcmp(st, "pending") == 0 &&
		    kind_of(&call) == ART_KIND_SUB_AGENT)
			r = adopt_child(c, art_json_str(&call, "id"));
		else if (r == 0 && st != NULL && strcmp(st, "pending") == 0 &&
		    kind_of(&call) != ART_KIND_CLIENT_TOOL &&
		    !execute_waits(c, &live, art_json_str(&call, "id")))
			r = fail_call(c, &call, "dispatch lost on engine "
			    "restart", NULL);
		jv_free(call);
	}
	jv_free(calls);
	jv_free(live);
	return r;
}

static int
start_step(struct cx *c, void *arg)
{
	struct start *st = arg;
	jv trigger;

	if (st->create) {
		if (st->create == 1 && art_session_create(c->t, c->sid,
		    st->agent, jv_null(), jv_array(), c->err) == -1)
			return -1;
		trigger = obj("session.start");
		if (claim(c) == -1)
			return -1;
		return queue_decision(c, trigger, 1, set(jv_object(),
		    "agent_file", jv_copy(st->file)));
	}
	if (claim(c) == -1)
		return -1;
	return recover(c);
}

struct exists {
	const char	*sid;
	int		 found;
	/* Never started (made by new, say): the id of its agent. */
	char		 unstarted[ART_ID_MAX + 1];
};

static int
exists_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct exists *x = ctx;
	jv s = art_session_get(t, x->sid, err), live, config;
	const char *a = art_json_str(&s, "agent_id");
	int64_t nodes = 0;

	x->found = jv_is_valid(s);
	if (!x->found || a == NULL) {
		jv_free(s);
		return 0;
	}
	/*
	 * Never started: made by new, or its session.start was cancelled
	 * before it was answered.  No config, no decision on its way, and
	 * no message yet (a policy may keep a session without a config).
	 */
	live = art_json_field(&s, "live");
	art_json_get_int(&s, "nodes", 0, &nodes, NULL);
	/* Only a session with no message yet is worth resolving. */
	config = jv_get_kind(live) == JV_KIND_NULL && nodes == 0 ?
	    art_session_resolve(t, x->sid, ART_VERSION_AGENT,
	    art_json_str(&s, "head"), err) : jv_true();
	if (jv_get_kind(config) == JV_KIND_NULL)
		snprintf(x->unstarted, sizeof(x->unstarted), "%s", a);
	jv_free(config);
	jv_free(live);
	jv_free(s);
	return 0;
}

int
art_engine_start(struct art_engine *e, const char *sid, const char *agent,
    char *out, struct art_err *err)
{
	struct start st = { agent, jv_null(), 0 };
	struct exists x = { NULL, 0, "" };
	char id[ART_ID_BUFSZ];
	int r, i;

	if (e->nsids >= MAX_SESSIONS)
		return art_err_set(err, "busy", "too many sessions in one ring");
	if (sid == NULL) {
		if (art_ids_v7(e->o.ids, id) == -1)
			return art_err_set(err, "ids", "cannot mint an id");
		sid = id;
	} else {
		x.sid = sid;
		if (art_store_read(e->o.store, exists_fn, &x, err) == -1)
			return -1;
	}
	if (!x.found) {
		if (agent == NULL)
			return art_err_set(err, "not_found", "no session '%s'",
			    sid);
		st.file = e->o.load_agent(e->o.agent_ctx, agent, err);
		if (!jv_is_valid(st.file))
			return -1;
		st.create = 1;
	} else if (x.unstarted[0] != '\0') {
		/* Its first run starts it, with the agent it was made for. */
		st.file = e->o.load_agent(e->o.agent_ctx, x.unstarted, err);
		if (!jv_is_valid(st.file))
			return -1;
		st.create = 2;
	}
	/* Its slot first: the children it adopts take the next ones. */
	i = e->nsids++;
	snprintf(e->sids[i], sizeof(e->sids[0]), "%s", sid);
	r = run_op(e, e->sids[i], start_step, &st, err);
	jv_free(st.file);
	if (r == -1) {
		e->nsids--;
		return -1;
	}
	snprintf(out, ART_ID_MAX + 1, "%s", e->sids[i]);
	return 0;
}

static int
release_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct art_engine *e = ctx;
	int i;

	for (i = 0; i < e->nsids; i++)
		if (art_store_del(t, ART_DB_DRIVERS, e->sids[i], NULL, 0,
		    err) == -1)
			return -1;
	return 0;
}

void
art_engine_stop(struct art_engine *e)
{
	struct art_err err;

	art_store_write(e->o.store, release_fn, e, &err);
	e->nsids = 0;
}

/*
 * Is the running turn left with nothing at all: no decision live or
 * queued, no open call?  1 yes, 0 no, -1 on failure.
 */
static int
idle_turn(struct cx *c)
{
	jv s = summary(c), live, open, all;
	const char *st;
	int r;

	if (!jv_is_valid(s))
		return -1;
	st = art_json_str(&s, "status");
	live = art_json_field(&s, "live");
	open = art_json_field(&s, "open");
	r = st != NULL && strcmp(st, "running") == 0 &&
	    jv_get_kind(live) == JV_KIND_NULL &&
	    (jv_get_kind(open) != JV_KIND_OBJECT ||
	    jv_object_length(jv_copy(open)) == 0);
	jv_free(live);
	jv_free(open);
	jv_free(s);
	if (r == 1) {
		if (!jv_is_valid(all = queued(c)))
			return -1;
		r = jv_array_length(jv_copy(all)) == 0;
		jv_free(all);
	}
	return r;
}

/*
 * Moves the head to node, as a view ending there would (PROTOCOL-NOTES
 * §3): head.moved, then the work stranded off the new path is voided.
 * Nothing is planned, so nothing is sent: the next run continues from
 * the new head.  A session a live ring drives is left to that ring.
 */
static int
checkout_step(struct cx *c, void *arg)
{
	const char *node = arg;
	char old[ART_ID_MAX + 1];
	jv n;
	int64_t pid;
	int r;

	if (head(c, old, sizeof(old)) == -1)
		return -1;
	if ((pid = other_driver(c)) != 0)
		return art_err_set(c->err, "busy", "session '%s' is driven by "
		    "process %lld; send it a client.messages view instead",
		    c->sid, (long long)pid);
	n = art_tree_node(c->t, c->sid, node, c->err);
	if (!jv_is_valid(n))
		return -1;
	jv_free(n);
	if (strcmp(old, node) == 0)
		return 0;
	if (rec(c, set(obj("head.moved"), "head_id", jv_string(node))) == -1 ||
	    void_stranded(c, old, 0) == -1)
		return -1;
	/*
	 * A turn that waited on the old branch has nothing left to wait for
	 * and nobody to end it: it ends here, so the next turn can start.
	 */
	if ((r = waits_outside(c)) == 0 && (r = idle_turn(c)) == 1)
		return end_turn(c, jv_null(), jv_string("the head moved off "
		    "the turn's branch"));
	return r < 0 ? -1 : 0;
}

int
art_engine_checkout(struct art_engine *e, const char *sid, const char *node,
    struct art_err *err)
{
	char id[ART_ID_MAX + 1];

	if (strlen(node) > ART_ID_MAX)
		return art_err_set(err, "not_found", "no node '%s'", node);
	snprintf(id, sizeof(id), "%s", node);
	return run_op(e, sid, checkout_step, id, err);
}

/* Stops a session and, through its voided delegations, its children. */
static int
cancel_op(struct cx *c, void *arg)
{
	int64_t pid = other_driver(c);

	if (pid != 0)
		return art_err_set(c->err, "busy", "session '%s' is driven by "
		    "process %lld", c->sid, (long long)pid);
	return cancel_step(c, arg);
}

int
art_engine_cancel(struct art_engine *e, const char *sid, const char *why,
    struct art_err *err)
{
	return run_op(e, sid, cancel_op, (void *)why, err);
}

static int
input_step(struct cx *c, void *arg)
{
	return dispatch_input(c, arg);
}

struct find_intr {
	struct art_engine	*e;
	const char		*id;
	int			 at;	/* the session's index, or -1 */
};

static int
find_intr_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct find_intr *f = ctx;
	jv s, all, it;
	int i;

	(void)err;
	for (i = 0; i < f->e->nsids && f->at < 0; i++) {
		s = art_session_get(t, f->e->sids[i], NULL);
		all = art_json_field(&s, "interrupts");
		it = jv_get_kind(all) == JV_KIND_OBJECT ? jv_object_get(
		    jv_copy(all), jv_string(f->id)) : jv_invalid();
		if (jv_is_valid(it))
			f->at = i;
		jv_free(it);
		jv_free(all);
		jv_free(s);
	}
	return 0;
}

/*
 * The session a line (consumed, and replaced when it is not ours) goes
 * to: its index in e->sids, or -1 when the engine drives none (the line
 * is dropped), or -2 on store failure.  The interrupt a resume names is
 * looked up in t, or in a read transaction when t is NULL.
 */
static int
route(struct art_engine *e, struct art_txn *t, const char *sid, jv *line,
    struct art_err *err)
{
	const char *named = art_json_str(line, "session_id");
	const char *type = art_json_str(line, "type");
	struct find_intr f = { e, art_json_str(line, "interrupt_id"), -1 };
	int i;

	if (named != NULL)
		sid = named;
	else if (type != NULL && strcmp(type, "interrupt.resume") == 0 &&
	    f.id != NULL) {
		/* A resume naming no session: the one holding the interrupt. */
		if ((t != NULL ? find_intr_fn(t, &f, err) :
		    art_store_read(e->o.store, find_intr_fn, &f, err)) == -1)
			return -2;
		if (f.at >= 0)
			sid = e->sids[f.at];
	}
	for (i = 0; i < e->nsids; i++)
		if (sid != NULL && strcmp(e->sids[i], sid) == 0)
			return i;
	if (e->nsids == 0)
		return -1;
	/* Not ours: say so in the first session we drive. */
	jv text = jv_dump_string(jv_copy(*line), 0);
	const char *s = jv_string_value(text);
	jv_free(*line);
	*line = set(obj("error"), "code", jv_string("unknown_session"));
	*line = set(*line, "message", jv_string("a line for a session "
	    "this ring does not drive"));
	*line = set(*line, "input", jv_string_sized(s, strlen(s) > 256 ?
	    256 : (int)strlen(s)));
	jv_free(text);
	return 0;
}

int
art_engine_input(struct art_engine *e, const char *sid, jv line,
    struct art_err *err)
{
	int i = route(e, NULL, sid, &line, err), r;

	if (i < 0) {
		jv_free(line);
		return i == -1 ? 0 : -1;
	}
	r = run_op(e, e->sids[i], input_step, &line, err);
	jv_free(line);
	return r;
}

/* What the engine drives, saved so a batch that is undone undoes it. */
struct driven {
	int	nsids;
	int64_t	wakes[MAX_SESSIONS];
	int64_t	wake;
};

struct batch {
	struct art_engine	*e;
	const char		*sid;
	jv			 lines;		/* borrowed */
	struct op		*ops;		/* one a line */
	int			 n;
	struct driven		 was;
};

static void
driven_save(const struct art_engine *e, struct driven *d)
{
	d->nsids = e->nsids;
	memcpy(d->wakes, e->wakes, sizeof(d->wakes));
	d->wake = e->wake;
}

static void
driven_restore(struct art_engine *e, const struct driven *d)
{
	e->nsids = d->nsids;
	memcpy(e->wakes, d->wakes, sizeof(e->wakes));
	e->wake = d->wake;
}

/*
 * Every line's step and plan, in order, in one transaction.  A line's
 * sessions and timers take effect at once (in memory), as they would
 * after its own commit, so the next line is routed and planned as it
 * would be one at a time; a rerun or an abort puts them back.
 */
static int
batch_txn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct batch *b = ctx;
	struct art_engine *e = b->e;
	struct op *op;
	jv line;
	int i, at, r = 0, effect = 0;

	driven_restore(e, &b->was);
	prompts_unstage(e);
	for (i = 0; i < b->n && r == 0; i++) {
		op = &b->ops[i];
		op->fn = NULL;		/* not run: nothing to hand out */
		line = jv_array_get(jv_copy(b->lines), i);
		if ((at = route(e, t, b->sid, &line, err)) == -2)
			r = -1;
		if (at >= 0) {
			op->sid = e->sids[at];
			op->fn = input_step;
			op->arg = &line;
			r = op_txn(t, op, err);
		}
		jv_free(line);
		if (r == 0 && at >= 0) {
			effect = effect || op_has_effect(op);
			set_wake(e, op->sid, op->wake);
			drive(e, jv_copy(op->adopt), op->wake);
		}
	}
	if (r == 0 && !effect && !e->o.sync_always)
		art_txn_nosync(t);
	return r;
}

/* The batch committed: its lines and events go out, in order. */
static void
batch_out(struct batch *b)
{
	for (int i = 0; i < b->n; i++) {
		if (b->ops[i].fn != NULL) {
			b->e->out = jv_array_concat(b->e->out, b->ops[i].out);
			b->e->events = jv_array_concat(b->e->events,
			    b->ops[i].events);
		} else {
			jv_free(b->ops[i].out);
			jv_free(b->ops[i].events);
		}
		jv_free(b->ops[i].adopt);
	}
}

static void
batch_free(struct batch *b)
{
	for (int i = 0; i < b->n; i++) {
		jv_free(b->ops[i].out);
		jv_free(b->ops[i].events);
		jv_free(b->ops[i].adopt);
	}
}

/* The lines one at a time, each its own transaction, as before batches. */
static int
one_by_one(struct art_engine *e, const char *sid, jv lines,
    struct art_err *err)
{
	int r = 0;

	jv_array_foreach(lines, i, line) {
		if (r == 0)
			r = art_engine_input(e, sid, line, err);
		else
			jv_free(line);
		(void)i;
	}
	jv_free(lines);
	return r;
}

int
art_engine_input_batch(struct art_engine *e, const char *sid, jv lines,
    struct art_err *err)
{
	struct batch b = { e, sid, lines, NULL, 0, { 0, { 0 }, 0 } };
	int i, r;

	b.n = jv_array_length(jv_copy(lines));
	if (b.n <= 1)
		return one_by_one(e, sid, lines, err);
	if ((b.ops = calloc((size_t)b.n, sizeof(*b.ops))) == NULL) {
		jv_free(lines);
		return art_err_set(err, "nomem", "out of memory");
	}
	for (i = 0; i < b.n; i++)
		b.ops[i] = (struct op){ e, NULL, NULL, NULL, NULL, jv_array(),
		    jv_array(), jv_array(), -1, 0, 0 };
	driven_save(e, &b.was);
	r = art_store_write(e->o.store, batch_txn, &b, err);
	if (r == 0) {
		prompts_keep(e);
		batch_out(&b);
	} else {
		prompts_unstage(e);
		batch_free(&b);
		driven_restore(e, &b.was);
	}
	free(b.ops);
	/* A rejected line is refused on its own: so is each of the others. */
	if (r == -1 && art_err_is(err, "reject"))
		return one_by_one(e, sid, lines, err);
	jv_free(lines);
	return r;
}

int
art_engine_tick(struct art_engine *e, struct art_err *err)
{
	int i;

	for (i = 0; i < e->nsids; i++)
		if (run_op(e, e->sids[i], NULL, NULL, err) == -1)
			return -1;
	return 0;
}

struct state_q {
	struct art_engine	*e;
	enum art_engine_state	 st;
};

/*
 * Does an open call wait on something outside the ring: a client tool,
 * a call held for a person, or a sub-agent whose child waits so itself?
 */
static int
outside_call(struct cx *c, const jv *call, int depth)
{
	const char *st = art_json_str(call, "status");
	const char *child = art_json_str(call, "id");
	struct cx sub;
	enum art_engine_state cs;

	if (st == NULL)
		return 0;
	if (strcmp(st, "held") == 0)
		return 1;
	if (kind_of(call) == ART_KIND_CLIENT_TOOL)
		return strcmp(st, "pending") == 0;
	if (kind_of(call) != ART_KIND_SUB_AGENT || strcmp(st, "pending") != 0 ||
	    child == NULL || depth > 2 * SUB_AGENT_DEPTH + 8)
		return 0;
	sub = *c;
	sub.sid = child;
	sub.sum = jv_invalid();
	sub.up = c;
	cs = session_state(&sub, depth + 1);
	jv_free(sub.sum);
	return cs != ART_ENGINE_BUSY;
}

static enum art_engine_state
session_state(struct cx *c, int depth)
{
	struct queue_scan q = { jv_null(), jv_invalid(), 0 };
	jv s = summary(c), live, calls, turn;
	enum art_engine_state st = ART_ENGINE_DONE;
	const char *status, *ts;
	int client = 0, busy = 0;

	if (!jv_is_valid(s))
		return ART_ENGINE_FAILED;
	live = art_json_field(&s, "live");
	busy = jv_get_kind(live) != JV_KIND_NULL;
	jv_free(live);
	if (!busy && scan_queue(c, &q) == 0)
		busy = jv_get_kind(q.first) != JV_KIND_NULL;
	jv_free(q.first);
	calls = open_calls(c, &s);
	jv_array_foreach(calls, i, call) {
		if (outside_call(c, &call, depth))
			client = 1;
		else
			busy = 1;
		jv_free(call);
	}
	jv_free(calls);
	if (busy)
		st = ART_ENGINE_BUSY;
	else if (client || is_parked(c, &s))
		st = ART_ENGINE_PARKED;
	else {
		status = art_json_str(&s, "status");
		turn = turn_record(c, art_json_str(&s, "turn"));
		ts = jv_is_valid(turn) ? art_json_str(&turn, "status") : NULL;
		if (status != NULL && strcmp(status, "running") == 0)
			st = ART_ENGINE_PARKED;
		else if (ts != NULL && strcmp(ts, "failed") == 0)
			st = ART_ENGINE_FAILED;
		jv_free(turn);
	}
	jv_free(s);
	return st;
}

static int
state_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct state_q *q = ctx;
	struct cx c = { q->e, t, err, NULL, 0, jv_null(), jv_null(), -1,
	    jv_invalid(), jv_null(), NULL };
	enum art_engine_state st;
	int i;

	q->st = ART_ENGINE_DONE;
	for (i = 0; i < q->e->nsids; i++) {
		c.sid = q->e->sids[i];
		jv_free(c.sum);
		c.sum = jv_invalid();
		st = session_state(&c, 0);
		/* The first session's own result, unless another is busy. */
		if (i == 0 || st == ART_ENGINE_BUSY)
			q->st = st;
	}
	jv_free(c.sum);
	return 0;
}

enum art_engine_state
art_engine_state(struct art_engine *e, struct art_err *err)
{
	struct state_q q = { e, ART_ENGINE_DONE };

	if (art_store_read(e->o.store, state_fn, &q, err) == -1)
		return ART_ENGINE_FAILED;
	return q.st;
}

/* --- reading a decision back ------------------------------------------ */

struct request_q {
	const char	*sid;
	jv		 out;
};

static int
request_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct request_q *q = ctx;
	struct cx c = { NULL, t, err, q->sid, 0, jv_array(), jv_array(), -1,
	    jv_invalid(), jv_array(), NULL };
	jv s = summary(&c), live, line;
	int r = 0;

	if (!jv_is_valid(s)) {
		r = -1;
		goto out;
	}
	live = art_json_field(&s, "live");
	if (jv_get_kind(live) != JV_KIND_OBJECT) {
		jv_free(live);
		q->out = jv_null();
		goto out;
	}
	line = build_request(&c, &live);
	jv_free(live);
	q->out = jv_is_valid(line) ? art_request_whole(t, &line, err) : line;
	jv_free(line);
	r = jv_is_valid(q->out) ? 0 : -1;
out:
	jv_free(s);
	jv_free(c.sum);
	jv_free(c.out);
	jv_free(c.events);
	jv_free(c.adopt);
	return r;
}

jv
art_engine_request(struct art_store *st, const char *sid, struct art_err *err)
{
	struct request_q q = { sid, jv_invalid() };

	if (art_store_read(st, request_fn, &q, err) == -1) {
		jv_free(q.out);
		return jv_invalid();
	}
	return q.out;
}
