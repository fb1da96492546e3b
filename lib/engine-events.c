/* engine-events.c - recording an event, and what clients see of it
 *
 * Every event a step records goes through eng_rec(), which projects it:
 * client events are a projection of what was recorded, never made up
 * beside it, so a client is told nothing the log does not hold.
 */
#include "engine-int.h"

#include <string.h>

#include "answer.h"
#include "json.h"
#include "schema.h"
#include "session.h"
#include "utf8.h"

/*
 * A sub-agent's session names its parent and the root of its tree on
 * every event, so a client that reads them all from one stream knows
 * whose each is (its ancestry: the root first, the parent last).
 */
static jv
with_lineage(struct cx *c, jv ce)
{
	jv s = eng_summary(c), a;
	int n;

	if (!jv_is_valid(s)) {
		jv_free(s);
		return ce;
	}
	a = art_json_field(&s, "ancestry");
	jv_free(s);
	n = jv_get_kind(a) == JV_KIND_ARRAY ? jv_array_length(jv_copy(a)) : 0;
	if (n > 0) {
		ce = set(ce, "parent_session_id", jv_array_get(jv_copy(a),
		    n - 1));
		ce = set(ce, "root_session_id", jv_array_get(jv_copy(a), 0));
	}
	jv_free(a);
	return ce;
}

void
eng_publish(struct cx *c, const jv *ev, jv ce)
{
	ce = with_lineage(c, set(ce, "session_id", jv_string(c->sid)));
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
	eng_publish(c, ev, set(obj("status"), "status", jv_string(status)));
}

/*
 * A call dispatched (p, borrowed): thinking or acting, with a detail
 * saying on what: "model M" or "tool NAME", and "attempt N" after a
 * first; and the call's id and attempt.
 */
static void
dispatched_event(struct cx *c, const jv *ev, const jv *p, const char *status)
{
	const char *id = art_json_str(p, "id"), *what;
	jv call = id != NULL ? eng_get(c, ART_DB_CALLS, c->sid, id) : jv_null(),
	    e, detail;
	int64_t attempt = 1;

	art_json_get_int(p, "attempt", 0, &attempt, NULL);
	what = art_json_str(&call, "name");
	detail = what != NULL ? jv_string_fmt("tool %s", what) :
	    (what = art_json_str(&call, "model")) != NULL ?
	    jv_string_fmt("model %s", what) : jv_string(status);
	if (attempt > 1)
		detail = jv_string_concat(detail, jv_string_fmt(", attempt %lld",
		    (long long)attempt));
	e = set(obj("status"), "status", jv_string(status));
	e = set(e, "detail", detail);
	e = set_some(e, "call_id", art_json_field(p, "id"));
	e = set(e, "attempt", jv_number((double)attempt));
	eng_publish(c, ev, e);
	jv_free(call);
}

/*
 * Milliseconds from the call's dispatch to now (null when it has none),
 * or jv_invalid() when the store fails.
 */
static jv
call_ms(struct cx *c, const char *id)
{
	jv call = eng_get(c, ART_DB_CALLS, c->sid, id);
	int64_t at = eng_ms_of(&call, "dispatched_at");

	if (!jv_is_valid(call))
		return call;
	jv_free(call);
	return at >= 0 ? jv_number((double)(c->now - at)) : jv_null();
}

/* Turn tid's record: jv_null() when there is none or tid is NULL. */
jv
eng_turn_record(struct cx *c, const char *tid)
{
	return tid != NULL ? eng_get(c, ART_DB_TURNS, c->sid, tid) : jv_null();
}

int
eng_project_completion(struct cx *c, const jv *ev, const jv *p)
{
	jv turn = eng_turn_record(c, art_json_str(p, "turn_id")), ce, error;
	int64_t started = eng_ms_of(&turn, "started");
	int failed;

	if (!jv_is_valid(turn))
		return -1;
	error = art_json_field(p, "error");
	failed = jv_get_kind(error) != JV_KIND_NULL;
	ce = set(obj("completion"), "text", art_json_field(p, "data"));
	ce = set(ce, "usage", art_json_field(p, "usage"));
	ce = set(ce, "cost", art_json_field(p, "cost"));
	ce = set(ce, "loop_iterations", art_json_field(p, "llm_calls"));
	ce = set(ce, "duration_ms", started >= 0 ?
	    jv_number((double)(c->now - started)) : jv_null());
	ce = set_some(ce, "error", jv_copy(error));
	ce = set_some(ce, "code", art_json_field(p, "code"));
	ce = set_some(ce, "reason", art_json_field(p, "reason"));
	if (ev == NULL)		/* a turn reported again: name it */
		ce = set(ce, "turn_id", art_json_field(p, "turn_id"));
	eng_publish(c, ev, ce);
	status_event(c, ev, failed ? "error" : "complete");
	eng_publish(c, ev, set(obj("turn.finished"), "status",
	    jv_string(failed ? "failed" : "completed")));
	jv_free(error);
	jv_free(turn);
	return 0;
}

static int
project_tool_result(struct cx *c, const jv *ev, const jv *p, int ok)
{
	const char *id = art_json_str(p, "id");
	jv ms = id != NULL ? call_ms(c, id) : jv_null(), ce;

	if (!jv_is_valid(ms))
		return -1;
	ce = set(obj("tool_result"), "id", art_json_field(p, "id"));
	ce = set(ce, "name", art_json_field(p, "name"));
	ce = set(ce, ok ? "result" : "error", art_json_field(p,
	    ok ? "result" : "error"));
	/* What the tool said of its failure, beside its words. */
	if (!ok)
		ce = set_some(ce, "detail", art_json_field(p, "detail"));
	ce = set(ce, "duration_ms", ms);
	eng_publish(c, ev, ce);
	return 0;
}

static int
project_metrics(struct cx *c, const jv *ev, const jv *p)
{
	const char *id = art_json_str(p, "id");
	jv total = id != NULL ? call_ms(c, id) : jv_null(), resp, ce, first;

	if (!jv_is_valid(total))
		return -1;
	resp = art_json_field(p, "response");
	ce = set(obj("metrics"), "id", art_json_field(p, "id"));
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
	/* The call is over: its first token's time goes with it. */
	if (id != NULL && jv_object_has(jv_copy(c->e->first_token),
	    jv_string(id)))
		c->e->first_token = art_json_delete(c->e->first_token, id);
	if (id != NULL && jv_object_has(jv_copy(c->e->token_index),
	    jv_string(id)))
		c->e->token_index = art_json_delete(c->e->token_index, id);
	ce = set(ce, "total_ms", total);
	eng_publish(c, ev, ce);
	jv_free(resp);
	return 0;
}

/*
 * A failed attempt as an error event.  A call's event carries the call's
 * own code, the one agentrt-llm or the tool gave (provider_error,
 * rate_limited, deadline_exceeded, ...), so a client reads one name for
 * one failure; what (decision_error, or a call's code when it gave none)
 * is the rest.
 */
static void
project_errored(struct cx *c, const jv *ev, const jv *p, const char *what)
{
	jv own = art_json_field(p, "code"), ce;
	jv next = art_json_field(p, "next_at"), again;

	if (strcmp(what, "decision_error") == 0 ||
	    jv_get_kind(own) != JV_KIND_STRING) {
		jv_free(own);
		own = jv_string(what);
	}
	ce = set(obj("error"), "code", own);

	ce = set(ce, "id", art_json_field(p, "id"));
	ce = set(ce, "message", art_json_field(p, "error"));
	/* A call retries at next_at; a decision is sent again at once. */
	again = art_json_field(p, "retryable");
	ce = set(ce, "retrying", jv_get_kind(next) != JV_KIND_NULL ||
	    (strcmp(what, "decision_error") == 0 &&
	    jv_get_kind(again) == JV_KIND_TRUE) ? jv_true() : jv_false());
	/*
	 * The runtime API's names: whether the failure is one to try
	 * again (the one who failed says; retrying says whether this turn
	 * does), and what the provider or the tool said of it.
	 */
	ce = set(ce, "retryable", jv_get_kind(again) == JV_KIND_TRUE ?
	    jv_true() : jv_false());
	ce = set_some(ce, "detail", art_json_field(p, "detail"));
	jv_free(next);
	jv_free(again);
	eng_publish(c, ev, ce);
}

/* One warning event per entry of warnings (borrowed). */
static void
publish_warnings(struct cx *c, const jv *ev, const jv *warnings)
{
	const char *part;

	if (jv_get_kind(*warnings) != JV_KIND_ARRAY)
		return;
	jv_array_foreach(*warnings, i, w) {
		part = art_json_str(&w, "part");
		eng_publish(c, ev, set(set(set(obj("warning"), "code",
		    jv_string(part != NULL && strcmp(part, "answer") == 0 ?
		    "answer_invalid" : "answer_cap")), "part",
		    art_json_field(&w, "part")), "message",
		    art_json_field(&w, "message")));
		jv_free(w);
		(void)i;
	}
}

/*
 * A recorded message (m, borrowed) that carries a structured answer: its
 * structured_answer event, held to the seed's caps again (whoever wrote
 * the message), after the warnings of what the caps dropped.
 */
static void
project_answer(struct cx *c, const jv *ev, const jv *m)
{
	jv ans = art_json_field(m, "structured_answer"), w, more, ce, schema;
	struct art_err err;
	int bad;

	w = art_json_field(m, "answer_warnings");
	publish_warnings(c, ev, &w);
	jv_free(w);
	if (jv_get_kind(ans) == JV_KIND_NULL) {
		jv_free(ans);
		return;
	}
	/* Whoever wrote the message (a client's view, a worker), only an
	 * answer in the seed's shape is shown, as one. */
	schema = art_answer_schema();
	bad = art_schema_validate(&schema, &ans, &err) == -1;
	jv_free(schema);
	if (bad) {
		jv_free(ans);
		eng_publish(c, ev, set(set(obj("warning"), "code",
		    jv_string("answer_invalid")), "message", jv_string_fmt(
		    "structured answer: %s; not shown", err.msg)));
		return;
	}
	ans = art_answer_cap(ans, &more);
	publish_warnings(c, ev, &more);
	jv_free(more);
	ce = set(obj("structured_answer"), "id", art_json_field(m, "id"));
	jv_object_foreach(ans, k, v)
		ce = jv_object_set(ce, k, v);
	jv_free(ans);
	eng_publish(c, ev, ce);
}

#define ARGS_SUMMARY_MAX	200

/*
 * What a client is shown of a gated call's arguments: args_summary, the
 * runtime API's "sanitized, human-readable summary", never the raw
 * intent: the arguments' JSON text screened as client input is and cut
 * to ARGS_SUMMARY_MAX bytes (whole characters, "..." after).  The
 * interrupt's payload (p's, borrowed) with it in place of arguments.
 */
static jv
gated_payload(struct cx *c, const jv *p)
{
	jv pl = art_json_field(p, "payload"), args, text, cut;
	const char *s;
	size_t n;

	if (jv_get_kind(pl) != JV_KIND_OBJECT)
		return pl;
	args = art_json_field(&pl, "arguments");
	if (jv_get_kind(args) == JV_KIND_NULL)
		return pl;
	text = eng_scan_quiet(c, jv_get_kind(args) == JV_KIND_STRING ? args :
	    jv_dump_string(args, 0));
	s = jv_string_value(text);
	n = strlen(s);
	if (n > ARGS_SUMMARY_MAX) {
		n = art_utf8_back(s, ARGS_SUMMARY_MAX);
		cut = jv_string_append_str(jv_string_sized(s, (int)n), "...");
		jv_free(text);
		text = cut;
	}
	pl = jv_object_delete(pl, jv_string("arguments"));
	return set(pl, "args_summary", text);
}

/*
 * What a client sees of a recorded event; most events show nothing.  -1
 * when the store fails.
 */
static int
project(struct cx *c, const jv *ev)
{
	jv p = art_json_field(ev, "payload");
	const char *type = art_json_str(&p, "type");
	jv next;
	int r = 0;

	if (type == NULL)
		;
	else if (strcmp(type, "turn.started") == 0)
		eng_publish(c, ev, obj("turn.started"));
	else if (strcmp(type, "message.new") == 0) {
		jv m = art_json_field(&p, "message");

		eng_publish(c, ev, set(set(obj("message"), "message",
		    jv_copy(m)), "parent_id", art_json_field(&p, "parent_id")));
		project_answer(c, ev, &m);
		jv_free(m);
	}
	else if (strcmp(type, "llm.call.dispatched") == 0)
		dispatched_event(c, ev, &p, "thinking");
	else if (strcmp(type, "tool.call.requested") == 0)
		eng_publish(c, ev, set(set(set(set(obj("tool_call"), "id",
		    art_json_field(&p, "id")), "name", art_json_field(&p,
		    "name")), "arguments", art_json_field(&p, "arguments")),
		    "handler", art_json_field(&p, "handler")));
	else if (strcmp(type, "tool.call.dispatched") == 0)
		dispatched_event(c, ev, &p, "acting");
	else if (strcmp(type, "tool.call.completed") == 0)
		r = project_tool_result(c, ev, &p, 1);
	else if (strcmp(type, "tool.call.errored") == 0) {
		next = art_json_field(&p, "next_at");
		if (jv_get_kind(next) == JV_KIND_NULL)
			r = project_tool_result(c, ev, &p, 0);
		else
			project_errored(c, ev, &p, "tool_error");
		jv_free(next);
	} else if (strcmp(type, "llm.call.completed") == 0)
		r = project_metrics(c, ev, &p);
	else if (strcmp(type, "llm.call.errored") == 0)
		project_errored(c, ev, &p, "provider_error");
	else if (strcmp(type, "decision.errored") == 0)
		project_errored(c, ev, &p, "decision_error");
	else if (strcmp(type, "session.interrupted") == 0)
		eng_publish(c, ev, set(set(set(set(obj("status"), "status",
		    jv_string("suspended")), "interrupt_id", art_json_field(&p,
		    "interrupt_id")), "reason", art_json_field(&p, "reason")),
		    "payload", gated_payload(c, &p)));
	else if (strcmp(type, "turn.completed") == 0)
		r = eng_project_completion(c, ev, &p);
	else if (strcmp(type, "security") == 0 ||
	    strcmp(type, "decomposition") == 0 || strcmp(type, "todo") == 0 ||
	    strcmp(type, "step_progress") == 0)
		eng_publish(c, ev, jv_copy(p));
	else if (strcmp(type, "error") == 0)
		eng_publish(c, ev, set(set(obj("error"), "code",
		    art_json_field(&p, "code")), "message", art_json_field(&p,
		    "message")));
	jv_free(p);
	return r;
}

/* Records payload (consumed) in the step's session and projects it. */
int
eng_rec(struct cx *c, jv payload)
{
	jv ev;
	int r;

	jv_free(c->sum);	/* every event may change the summary */
	c->sum = jv_invalid();
	if (art_session_record_at(c->t, c->sid, payload, &ev, &c->sum,
	    c->err) == -1) {
		c->sum = jv_invalid();
		return -1;
	}
	r = project(c, &ev);
	jv_free(ev);
	return r;
}
