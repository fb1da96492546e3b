/* views.c - the engine's events folded into calls, queue and interrupts
 *
 * The log is the truth; these views make the engine's reads cheap.  Each
 * function here reads one event and changes only what that event says,
 * so folding a log from the start gives the live views again.
 */
#include "views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "outbox.h"
#include "price.h"

void
art_views_queue_key(unsigned char key[ART_QUEUE_KEYLEN], int priority,
    int64_t seq)
{
	key[0] = (unsigned char)priority;
	art_be64_put(key + 1, (uint64_t)seq);
}

static jv
get_call(struct art_txn *t, const char *sid, const char *id,
    struct art_err *err)
{
	return art_store_get(t, ART_DB_CALLS, sid, id, strlen(id), err);
}

static int
put_call(struct art_txn *t, const char *sid, const char *id, jv call,
    struct art_err *err)
{
	return art_store_put(t, ART_DB_CALLS, sid, id, strlen(id), call, err);
}

/* Copies the named fields of p into c. */
static jv
copy_fields(jv c, const jv *p, const char *const *keys)
{
	jv v;

	for (; *keys != NULL; keys++) {
		v = art_json_field(p, *keys);
		if (jv_get_kind(v) != JV_KIND_NULL)
			c = jv_object_set(c, jv_string(*keys), v);
		else
			jv_free(v);
	}
	return c;
}

/* *.call.requested: a new call, or a known one queued again to retry. */
/*
 * A call made counts once in its turn, whatever its attempts: the turn's
 * "llm_calls_made" and "tool_calls_made" are what max_loops and
 * max_tool_calls hold it to.
 */
static int
turn_count(struct art_txn *t, const char *sid, const jv *ev, const char *key,
    struct art_err *err)
{
	const char *tid = art_json_str(ev, "turn_id");
	jv turn;
	int64_t n = 0;

	if (tid == NULL)
		return 0;
	turn = art_store_get(t, ART_DB_TURNS, sid, tid, strlen(tid), err);
	if (jv_get_kind(turn) != JV_KIND_OBJECT) {
		jv_free(turn);
		return jv_is_valid(turn) || art_err_is(err, "not_found") ? 0 :
		    -1;
	}
	art_json_get_int(&turn, key, 0, &n, NULL);
	turn = jv_object_set(turn, jv_string(key), jv_number((double)n + 1));
	return art_store_put(t, ART_DB_TURNS, sid, tid, strlen(tid), turn, err);
}

static int
call_requested(struct art_txn *t, const char *sid, const jv *ev,
    const jv *p, const char *kind, struct art_err *err)
{
	static const char *const keys[] = { "attempt", "anchor", "handler",
	    "stream", "retry", "mock", "name", "arguments",
	    "decision_id", "format", "providers", "fallback", "input_error",
	    "output_schema", "hold", "builtin", "ask", "session_id", "agent_id",
	    "tool_call_id", "security", NULL };
	const char *id = art_json_str(p, "id");
	jv c, req;

	if (id == NULL)
		return art_err_set(err, "bad_field", "call event without id");
	c = get_call(t, sid, id, err);
	if (!jv_is_valid(c)) {
		jv_free(c);
		c = jv_object_set(jv_object(), jv_string("id"), jv_string(id));
		c = jv_object_set(c, jv_string("kind"), jv_string(kind));
		c = jv_object_set(c, jv_string("requested_at"),
		    art_json_field(ev, "occurred_at"));
		c = jv_object_set(c, jv_string("turn_id"),
		    art_json_field(ev, "turn_id"));
		if (strcmp(kind, "sub_agent") != 0 && turn_count(t, sid, ev,
		    strcmp(kind, "llm_call") == 0 ? "llm_calls_made" :
		    "tool_calls_made", err) == -1) {
			jv_free(c);
			return -1;
		}
	}
	c = copy_fields(c, p, keys);
	c = jv_object_set(c, jv_string("status"), jv_string("queued"));
	c = jv_object_delete(c, jv_string("next_at"));
	c = jv_object_delete(c, jv_string("deadline"));
	/*
	 * A model call's prompt is the whole transcript: it is kept apart,
	 * written once, so the call's many status changes stay small.
	 */
	req = art_json_field(p, "request");
	/* Its model, where a status says what the call is on. */
	if (jv_get_kind(req) == JV_KIND_OBJECT)
		c = art_json_set_some(c, "model", art_json_field(&req,
		    "model"));
	if (jv_get_kind(req) != JV_KIND_NULL && art_store_put(t,
	    ART_DB_REQUESTS, sid, id, strlen(id), req, err) == -1) {
		jv_free(c);
		return -1;
	} else if (jv_get_kind(req) == JV_KIND_NULL)
		jv_free(req);
	return put_call(t, sid, id, c, err);
}

/* Any later step of a call: a status and the fields the event carries. */
static int
call_step(struct art_txn *t, const char *sid, const jv *ev, const jv *p,
    const char *status, struct art_err *err)
{
	static const char *const keys[] = { "deadline", "response", "result",
	    "error", "retryable", "code", "next_at", "interrupt_id", "approved",
	    "message", "usage", "cost", NULL };
	const char *id = art_json_str(p, "id");
	jv c, first;

	if (id == NULL)
		return art_err_set(err, "bad_field", "call event without id");
	c = get_call(t, sid, id, err);
	if (!jv_is_valid(c))
		return -1;
	c = copy_fields(c, p, keys);
	c = jv_object_set(c, jv_string("status"), jv_string(status));
	if (strcmp(status, "pending") == 0) {
		c = jv_object_set(c, jv_string("dispatched_at"),
		    art_json_field(ev, "occurred_at"));
		first = art_json_field(&c, "started_at");
		if (jv_get_kind(first) == JV_KIND_NULL)
			c = jv_object_set(c, jv_string("started_at"),
			    art_json_field(ev, "occurred_at"));
		jv_free(first);
	} else
		c = jv_object_set(c, jv_string("settled_at"),
		    art_json_field(ev, "occurred_at"));
	return put_call(t, sid, id, c, err);
}

static int
call_errored(struct art_txn *t, const char *sid, const jv *ev, const jv *p,
    struct art_err *err)
{
	jv next = art_json_field(p, "next_at");
	int retry = jv_get_kind(next) != JV_KIND_NULL;

	jv_free(next);
	return call_step(t, sid, ev, p, retry ? "retry_scheduled" : "failed",
	    err);
}

/* Sums every number of add into the object acc, key by key. */
static jv
sum_numbers(jv acc, jv add)
{
	jv cur;

	if (jv_get_kind(add) != JV_KIND_OBJECT) {
		jv_free(add);
		return acc;
	}
	jv_object_foreach(add, k, v) {
		if (jv_get_kind(v) == JV_KIND_NUMBER) {
			cur = jv_object_get(jv_copy(acc), jv_copy(k));
			acc = jv_object_set(acc, k, jv_number(jv_number_value(v) +
			    (jv_get_kind(cur) == JV_KIND_NUMBER ?
			    jv_number_value(cur) : 0)));
			jv_free(cur);
		} else
			jv_free(k);
		jv_free(v);
	}
	jv_free(add);
	return acc;
}

/* Adds two costs (consumed), decimal strings of dollars, exactly. */
static jv
add_cost(jv a, jv b)
{
	jv sum = art_prices_sum(&a, &b);

	jv_free(a);
	jv_free(b);
	return sum;
}

/*
 * A completed model call adds its usage and cost to its turn, and counts
 * as one model call; a finished sub-agent adds its child turn's totals
 * (from holds them: the response, or the event itself).
 */
static int
turn_usage(struct art_txn *t, const char *sid, const jv *ev, const jv *from,
    int llm, struct art_err *err)
{
	const char *tid = art_json_str(ev, "turn_id");
	jv turn, usage;
	int64_t n = 0;

	if (tid == NULL)
		return 0;
	turn = art_store_get(t, ART_DB_TURNS, sid, tid, strlen(tid), err);
	if (!jv_is_valid(turn)) {
		jv_free(turn);
		return 0;
	}
	usage = art_json_field(&turn, "usage");
	if (jv_get_kind(usage) != JV_KIND_OBJECT) {
		jv_free(usage);
		usage = jv_object();
	}
	turn = jv_object_set(turn, jv_string("usage"), sum_numbers(usage,
	    art_json_field(from, "usage")));
	turn = jv_object_set(turn, jv_string("cost"), add_cost(
	    art_json_field(&turn, "cost"), art_json_field(from, "cost")));
	if (llm) {
		art_json_get_int(&turn, "llm_calls", 0, &n, NULL);
		turn = jv_object_set(turn, jv_string("llm_calls"),
		    jv_number(n + 1));
	} else {
		jv sub = art_json_field(&turn, "sub_agent_cost");

		turn = jv_object_set(turn, jv_string("sub_agent_cost"),
		    add_cost(sub, art_json_field(from, "cost")));
	}
	return art_store_put(t, ART_DB_TURNS, sid, tid, strlen(tid), turn, err);
}

static int calls_step(struct art_txn *, const char *, const jv *,
    const jv *, const char *, struct art_err *);

/*
 * The summary's "open" object lists the calls not yet settled ({id:
 * kind}), so planning reads those and never scans every call.
 */
static void
track_open(jv *s, const jv *p, const char *kind, int open)
{
	const char *id = art_json_str(p, "id");
	jv o = art_json_field(s, "open");

	if (jv_get_kind(o) != JV_KIND_OBJECT) {
		jv_free(o);
		o = jv_object();
	}
	if (id != NULL)
		o = open ? jv_object_set(o, jv_string(id), jv_string(kind)) :
		    art_json_delete(o, id);
	*s = jv_object_set(*s, jv_string("open"), o);
}

/*
 * A call event's kind and step: llm.call.STEP, tool.call.STEP and
 * sub_agent.STEP (call.voided names no kind: it is the caller's).
 */
static const char *
call_kind(const char *type, const char **step)
{
	if (strncmp(type, "llm.call.", 9) == 0)
		return *step = type + 9, "llm_call";
	if (strncmp(type, "tool.call.", 10) == 0)
		return *step = type + 10, "tool_call";
	if (strncmp(type, "sub_agent.", 10) == 0)
		return *step = type + 10, "sub_agent";
	return *step = type, NULL;
}

/*
 * A call settled: off the open list, and a tool call's outbox entries
 * (outbox.h) are done with.
 */
static int
closed(struct art_txn *t, const char *sid, jv *s, const jv *p,
    const char *kind, struct art_err *err)
{
	const char *id = art_json_str(p, "id");

	track_open(s, p, kind, 0);
	if (id == NULL || (kind != NULL && strcmp(kind, "tool_call") != 0))
		return 0;
	return art_outbox_clear(t, sid, id, err);
}

static int
calls_apply(struct art_txn *t, const char *sid, jv *s, const jv *ev,
    const jv *p, const char *type, struct art_err *err)
{
	int r = calls_step(t, sid, ev, p, type, err);
	const char *step, *kind = call_kind(type, &step);
	jv next;

	if (r == -1)
		return -1;
	if (strcmp(step, "requested") == 0)
		track_open(s, p, kind, 1);
	else if (strcmp(step, "completed") == 0 ||
	    strcmp(type, "call.voided") == 0)
		r = closed(t, sid, s, p, kind, err);
	else if (strcmp(step, "errored") == 0) {
		next = art_json_field(p, "next_at");
		if (jv_get_kind(next) == JV_KIND_NULL)
			r = closed(t, sid, s, p, kind, err);
		jv_free(next);
	}
	return r;
}

static int
calls_step(struct art_txn *t, const char *sid, const jv *ev, const jv *p,
    const char *type, struct art_err *err)
{
	const char *step, *kind = call_kind(type, &step);
	int r;

	if (strcmp(type, "call.voided") == 0)
		return call_step(t, sid, ev, p, "failed", err);
	if (strcmp(step, "requested") == 0)
		return call_requested(t, sid, ev, p, kind, err);
	if (strcmp(step, "dispatched") == 0)
		return call_step(t, sid, ev, p, "pending", err);
	/* A gated call waits for a person; approved, it is queued again. */
	if (strcmp(step, "held") == 0)
		return call_step(t, sid, ev, p, "held", err);
	if (strcmp(step, "approved") == 0)
		return call_step(t, sid, ev, p, "queued", err);
	/* A child's first message, kept until the child is opened. */
	if (strcmp(step, "messaged") == 0) {
		const char *id = art_json_str(p, "id");
		jv c = id != NULL ? get_call(t, sid, id, err) : jv_invalid();

		if (!jv_is_valid(c))
			return id != NULL ? -1 : art_err_set(err, "bad_field",
			    "call event without id");
		c = jv_object_set(c, jv_string("message"), art_json_field(p,
		    "message"));
		return put_call(t, sid, id, c, err);
	}
	if (strcmp(step, "completed") == 0) {
		jv resp = art_json_field(p, "response");

		if (call_step(t, sid, ev, p, "completed", err) == -1) {
			jv_free(resp);
			return -1;
		}
		r = strcmp(kind, "tool_call") == 0 ? 0 : turn_usage(t, sid, ev,
		    strcmp(kind, "llm_call") == 0 ? &resp : p,
		    strcmp(kind, "llm_call") == 0, err);
		jv_free(resp);
		return r;
	}
	if (strcmp(step, "errored") == 0)
		return call_errored(t, sid, ev, p, err);
	return 0;
}

struct find {
	const char	*id;
	unsigned char	 key[ART_QUEUE_KEYLEN];
	int		 found;
};

static int
find_fn(const void *sub, size_t sublen, jv v, void *ctx, struct art_err *err)
{
	struct find *f = ctx;
	const char *id = art_json_str(&v, "id");

	(void)err;
	if (id != NULL && strcmp(id, f->id) == 0 &&
	    sublen == ART_QUEUE_KEYLEN) {
		memcpy(f->key, sub, sublen);
		f->found = 1;
	}
	jv_free(v);
	return f->found;
}

/* Takes decision id off the queue, if it is there. */
static int
unqueue(struct art_txn *t, const char *sid, const char *id,
    struct art_err *err)
{
	struct find f = { id, { 0 }, 0 };

	if (art_store_scan(t, ART_DB_PENDING, sid, NULL, 0, NULL, 0, 0,
	    find_fn, &f, err) == -1)
		return -1;
	if (f.found && art_store_del(t, ART_DB_PENDING, sid, f.key,
	    ART_QUEUE_KEYLEN, err) == -1)
		return -1;
	return 0;
}

static int
decision_queued(struct art_txn *t, const char *sid, const jv *ev,
    const jv *p, struct art_err *err)
{
	unsigned char key[ART_QUEUE_KEYLEN];
	int64_t seq = 0, prio = 1;
	jv q = jv_copy(*p);

	art_json_get_int(ev, "seq", 1, &seq, NULL);
	art_json_get_int(p, "priority", 0, &prio, NULL);
	q = jv_object_delete(q, jv_string("type"));
	q = jv_object_set(q, jv_string("turn_id"), art_json_field(ev,
	    "turn_id"));
	q = jv_object_set(q, jv_string("queued_seq"), jv_number(seq));
	art_views_queue_key(key, (int)prio, seq);
	return art_store_put(t, ART_DB_PENDING, sid, key, sizeof(key), q, err);
}

/* The live decision: one per session, out in the ring. */
static int
decision_dispatched(struct art_txn *t, const char *sid, jv *s, const jv *ev,
    const jv *p, struct art_err *err)
{
	const char *id = art_json_str(p, "id");
	jv live = jv_copy(*p);

	if (id == NULL || unqueue(t, sid, id, err) == -1) {
		jv_free(live);
		return id == NULL ? art_err_set(err, "bad_field",
		    "decision event without id") : -1;
	}
	live = jv_object_delete(live, jv_string("type"));
	live = jv_object_set(live, jv_string("dispatched_at"),
	    art_json_field(ev, "occurred_at"));
	*s = jv_object_set(*s, jv_string("live"), live);
	return 0;
}

/* A live decision that ended, or a queued one dropped. */
static int
decision_ended(struct art_txn *t, const char *sid, jv *s, const jv *p,
    struct art_err *err)
{
	const char *id = art_json_str(p, "id"), *lid;
	jv live = art_json_field(s, "live");
	int retryable = 0;

	art_json_get_bool(p, "retryable", 0, &retryable, NULL);
	lid = art_json_str(&live, "id");
	if (id != NULL && lid != NULL && strcmp(id, lid) == 0 && !retryable)
		*s = jv_object_set(*s, jv_string("live"), jv_null());
	jv_free(live);
	return id != NULL ? unqueue(t, sid, id, err) : 0;
}

static int
interrupts_apply(jv *s, const jv *ev, const jv *p, int opened)
{
	const char *id = art_json_str(p, "interrupt_id");
	jv all = art_json_field(s, "interrupts"), it;

	if (id == NULL) {
		jv_free(all);
		return 0;
	}
	if (jv_get_kind(all) != JV_KIND_OBJECT) {
		jv_free(all);
		all = jv_object();
	}
	if (opened) {
		it = jv_copy(*p);
		it = jv_object_delete(it, jv_string("type"));
		it = jv_object_set(it, jv_string("opened_at"),
		    art_json_field(ev, "occurred_at"));
		all = jv_object_set(all, jv_string(id), it);
	} else
		all = jv_object_delete(all, jv_string(id));
	*s = jv_object_set(*s, jv_string("interrupts"), all);
	return 0;
}

/*
 * The summary's "mcp": per server an agent's mcp_servers names, what
 * the log says of its tools: {decision, deadline} once tools.requested
 * asked for them, then {decision, tools} or {decision, error} as its
 * tools.listed answered (engine-mcp.c).  A later tools.listed (the
 * server's list changed) replaces the tools.
 */
static int
mcp_apply(jv *s, const jv *p, const char *type)
{
	jv mcp = art_json_field(s, "mcp"), e, servers;
	const char *server;

	if (jv_get_kind(mcp) != JV_KIND_OBJECT) {
		jv_free(mcp);
		mcp = jv_object();
	}
	if (strcmp(type, "tools.requested") == 0) {
		servers = art_json_field(p, "servers");
		if (jv_get_kind(servers) == JV_KIND_ARRAY)
			jv_array_foreach(servers, i, k) {
				e = jv_object_set(jv_object(),
				    jv_string("decision"),
				    art_json_field(p, "decision"));
				e = jv_object_set(e, jv_string("deadline"),
				    art_json_field(p, "deadline"));
				if (jv_get_kind(k) == JV_KIND_STRING)
					mcp = jv_object_set(mcp, k, e);
				else {
					jv_free(k);
					jv_free(e);
				}
				(void)i;
			}
		jv_free(servers);
	} else if ((server = art_json_str(p, "server")) != NULL) {
		e = art_json_field(&mcp, server);
		if (jv_get_kind(e) != JV_KIND_OBJECT) {
			jv_free(e);
			e = jv_object();
		}
		e = jv_object_delete(e, jv_string("deadline"));
		e = jv_object_delete(e, jv_string("tools"));
		e = jv_object_delete(e, jv_string("error"));
		if (jv_object_has(jv_copy(*p), jv_string("error")))
			e = jv_object_set(e, jv_string("error"),
			    art_json_field(p, "error"));
		else
			e = jv_object_set(e, jv_string("tools"),
			    art_json_field(p, "tools"));
		mcp = jv_object_set(mcp, jv_string(server), e);
	}
	*s = jv_object_set(*s, jv_string("mcp"), mcp);
	return 0;
}

static int
fold(struct art_txn *t, const char *sid, jv *s, const jv *ev, const jv *p,
    const char *type, struct art_err *err)
{
	if (strncmp(type, "llm.call.", 9) == 0 ||
	    strncmp(type, "tool.call.", 10) == 0 ||
	    strncmp(type, "sub_agent.", 10) == 0 ||
	    strcmp(type, "call.voided") == 0)
		return calls_apply(t, sid, s, ev, p, type, err);
	if (strcmp(type, "decision.queued") == 0)
		return decision_queued(t, sid, ev, p, err);
	if (strcmp(type, "decision.dispatched") == 0)
		return decision_dispatched(t, sid, s, ev, p, err);
	if (strcmp(type, "decision.completed") == 0 ||
	    strcmp(type, "decision.errored") == 0 ||
	    strcmp(type, "decision.dropped") == 0)
		return decision_ended(t, sid, s, p, err);
	if (strcmp(type, "tools.requested") == 0 ||
	    strcmp(type, "tools.listed") == 0)
		return mcp_apply(s, p, type);
	if (strcmp(type, "session.interrupted") == 0)
		return interrupts_apply(s, ev, p, 1);
	if (strcmp(type, "session.interrupt_resumed") == 0 ||
	    strcmp(type, "session.interrupt_cancelled") == 0)
		return interrupts_apply(s, ev, p, 0);
	return 0;
}

jv
art_views_apply(struct art_txn *t, const char *sid, jv s, const jv *ev,
    const jv *p, const char *type, struct art_err *err)
{
	if (fold(t, sid, &s, ev, p, type, err) == -1) {
		jv_free(s);
		return jv_invalid();
	}
	return s;
}
