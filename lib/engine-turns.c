/* engine-turns.c - inputs, and a turn: begun, ended, what it waits on
 *
 * Each bus line is one input (eng_dispatch_input): client messages and
 * actions, resumes, settles, decision responses and errors, and our own
 * requests come back round the ring unanswered.  A client message begins
 * a turn; done, a failure or a cancel ends it; what the session is doing
 * then says whether the ring has work left (art_engine_state).
 */
#include "engine-int.h"

#include <stdio.h>
#include <string.h>

#include "json.h"
#include "ndjson.h"
#include "utf8.h"
#include "reconcile.h"
#include "session.h"

/* Calls streaming at once whose first token is remembered, at most. */
#define FIRST_TOKENS_MAX	4096

static int	outside_call(struct cx *c, const jv *call, int depth);

/* An error event: the line (borrowed, may be NULL) quoted in part. */
int
eng_rec_error(struct cx *c, const char *code, const char *message,
    const jv *line)
{
	jv p = set(set(obj("error"), "code", jv_string(code)), "message",
	    jv_string(message)), text;
	const char *s;
	int n;

	if (line != NULL) {
		/* The quote is redacted as the input would have been. */
		text = eng_scan_quiet(c, jv_dump_string(jv_copy(*line), 0));
		s = jv_string_value(text);
		n = (int)strlen(s) > 256 ? 256 : (int)strlen(s);
		p = set(p, "input", jv_string_sized(s, art_utf8_whole(s,
		    (size_t)n)));
		jv_free(text);
	}
	return eng_rec(c, p);
}

/* A new turn, unless one runs; a completed turn_id runs nothing. */
static int
begin_turn(struct cx *c, const jv *line, int *skip)
{
	char tid[ART_ID_MAX + 1];
	const char *given = art_json_str(line, "turn_id"), *st;
	jv s = eng_summary(c), turn, stream;

	*skip = 0;
	if (!jv_is_valid(s))
		return -1;
	st = art_json_str(&s, "status");
	if (st != NULL && strcmp(st, "running") == 0) {
		snprintf(tid, sizeof(tid), "%s", art_json_str(&s, "turn"));
		jv_free(s);
		*skip = 1;
		return eng_rec_error(c, "turn_already_active", tid, line);
	}
	jv_free(s);
	if (given != NULL) {
		if (!art_id_is_valid(given))
			return *skip = 1, eng_rec_error(c, "bad_input",
			    "bad turn_id", line);
		turn = eng_turn_record(c, given);
		if (!jv_is_valid(turn))
			return -1;
		if (jv_get_kind(turn) != JV_KIND_NULL) {
			/* Done before: report it again, run nothing. */
			int r;
			jv p = set(obj("turn.completed"), "turn_id",
			    jv_string(given));

			p = set(p, "data", art_json_field(&turn, "data"));
			p = set_some(p, "error", art_json_field(&turn, "error"));
			p = set_some(p, "code", art_json_field(&turn, "code"));
			p = set(p, "usage", art_json_field(&turn, "usage"));
			p = set(p, "cost", art_json_field(&turn, "cost"));
			p = set(p, "llm_calls", art_json_field(&turn,
			    "llm_calls"));
			r = eng_project_completion(c, NULL, &p);
			jv_free(p);
			jv_free(turn);
			*skip = r == 0;
			return r;
		}
		jv_free(turn);
		snprintf(tid, sizeof(tid), "%s", given);
	} else if (eng_mint(c, tid) == -1)
		return -1;
	s = set(obj("turn.started"), "turn_id", jv_string(tid));
	/* The client's stream: this turn's model calls, streamed or not. */
	stream = art_json_field(line, "stream");
	if (jv_get_kind(stream) == JV_KIND_TRUE ||
	    jv_get_kind(stream) == JV_KIND_FALSE)
		s = set(s, "stream", stream);
	else
		jv_free(stream);
	return eng_rec(c, s);
}

/*
 * Does the tool message m (borrowed) answer a pending client-handled
 * call?  1 yes, its id (borrowed from m) in *id; 0 no; -1 when the store
 * fails.
 */
static int
answers_client_call(struct cx *c, const jv *m, const char **id)
{
	const char *role = art_json_str(m, "role"), *status;
	jv call;
	int yes;

	*id = art_json_str(m, "tool_call_id");
	if (role == NULL || strcmp(role, "tool") != 0 || *id == NULL)
		return 0;
	call = eng_get(c, ART_DB_CALLS, c->sid, *id);
	if (!jv_is_valid(call))
		return -1;
	status = art_json_str(&call, "status");
	yes = jv_get_kind(call) == JV_KIND_OBJECT &&
	    eng_kind_of(&call) == ART_KIND_CLIENT_TOOL && status != NULL &&
	    strcmp(status, "pending") == 0;
	jv_free(call);
	return yes;
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
	int n = jv_array_length(jv_copy(*view)), i, r = 0, yes;
	const char *id;
	jv m, done = jv_object();

	if (news < 0 || news >= n) {
		jv_free(done);
		return news < 0 ? -1 : 0;
	}
	for (i = news; i < n; i++) {
		m = jv_array_get(jv_copy(*view), i);
		yes = answers_client_call(c, &m, &id);
		jv_free(m);
		if (yes != 1) {
			jv_free(done);
			return yes;
		}
	}
	for (i = news; i < n && r == 0; i++) {
		struct settle st;
		jv seen;

		m = jv_array_get(jv_copy(*view), i);
		if ((yes = answers_client_call(c, &m, &id)) == -1)
			r = -1;
		seen = yes == 1 ? jv_object_get(jv_copy(done),
		    jv_string(id)) : jv_invalid();
		if (yes == 1 && !jv_is_valid(seen)) {
			/* The first answer to a call wins. */
			done = jv_object_set(done, jv_string(id), jv_true());
			memset(&st, 0, sizeof(st));
			st.id = id;
			st.ok = 1;
			st.value = art_json_field(&m, "content");
			st.code = jv_null();
			r = eng_settle(c, &st, "tool.result", line);
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
int
eng_waits_outside(struct cx *c)
{
	jv s = eng_summary(c), live, calls, all;
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
		calls = eng_open_calls(c, &s);
		jv_array_foreach(calls, i, call) {
			if (!outside_call(c, &call, 0))
				r = 0;
			n++;
			jv_free(call);
		}
		jv_free(calls);
	}
	if (r == 1 && !jv_is_valid(all = eng_queued(c)))
		r = -1;
	else if (r == 1) {
		if (jv_array_length(jv_copy(all)) > 0)
			r = 0;
		jv_free(all);
	}
	if (r == 1 && n == 0)
		r = eng_is_parked(c, &s);
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

	if (n == 0 || (r = eng_waits_outside(c)) != 1)
		return n == 0 ? 0 : r;
	if (eng_head(c, h, sizeof(h)) == -1)
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
	jv s = eng_summary(c), it;
	char msg[600];

	if (!jv_is_valid(s))
		return -1;
	it = eng_parking(c, &s);
	jv_free(s);
	if (jv_get_kind(it) == JV_KIND_NULL)
		return 0;
	snprintf(msg, sizeof(msg), "the branch is parked on interrupt %s "
	    "(%.300s); resume it first (interrupt.resume, or agentrt-session "
	    "run --resume %s)", art_json_str(&it, "interrupt_id"),
	    art_json_str(&it, "reason") != NULL ? art_json_str(&it, "reason") :
	    "no reason", art_json_str(&it, "interrupt_id"));
	jv_free(it);
	return eng_rec_error(c, "interrupted", msg, line) == -1 ? -1 : 1;
}

int
eng_input_message(struct cx *c, const jv *line, const char *type)
{
	jv m = art_json_field(line, strcmp(type, "client.message") == 0 ?
	    "message" : "messages"), tr, view, client;
	const char *block;
	char why[300];
	int skip, r;

	view = strcmp(type, "client.message") == 0 ?
	    jv_array_append(jv_array(), jv_copy(m)) : jv_copy(m);
	r = art_reconcile_check(&view, c->err);
	jv_free(view);
	if (r == -1) {
		jv_free(m);
		return eng_rec_error(c, "bad_input", c->err->msg, line);
	}
	if (strcmp(type, "client.messages") == 0) {
		char h[ART_ID_MAX + 1];

		if (eng_head(c, h, sizeof(h)) == -1 ||
		    !jv_is_valid(m = eng_normalized(c, m, h)))
			return -1;
	}
	if (strcmp(type, "client.messages") == 0 &&
	    (r = client_answers(c, &m, line)) != 0) {
		jv_free(m);
		return r < 0 ? -1 : 0;
	}
	if (strcmp(type, "client.messages") == 0 &&
	    (r = escapes_park(c, &m)) != 0) {
		if (r < 0 || !jv_is_valid(m = eng_scan_input(c, m, &block))) {
			jv_free(m);
			return -1;
		}
		if (block != NULL) {
			jv_free(m);
			snprintf(why, sizeof(why), "the client's "
			    "messages matched security pattern %s", block);
			return eng_rec_error(c, "blocked", why, NULL);
		}
		tr = set_some(set(obj(type), "messages", m), "client",
		    art_json_field(line, "client"));
		return eng_queue_decision(c, tr, 1, set(jv_object(), "escapes",
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
	/* Scanned in the turn, before anything of it is kept. */
	if (!jv_is_valid(m = eng_scan_input(c, m, &block)))
		return -1;
	if (block != NULL) {
		jv_free(m);
		snprintf(why, sizeof(why), "the user's message "
		    "matched security pattern %s", block);
		return eng_stop_turn(c, "blocked", jv_null(), why);
	}
	tr = set(obj(type), strcmp(type, "client.message") == 0 ? "message" :
	    "messages", m);
	client = art_json_field(line, "client");
	tr = set_some(tr, "client", client);
	return eng_queue_decision(c, tr, 1, jv_null());
}

static int
input_action(struct cx *c, const jv *line)
{
	const char *name = art_json_str(line, "name");

	if (name == NULL)
		return eng_rec_error(c, "bad_input", "client.action has no "
		    "name", line);
	/* The client's turn_id (AG-UI's runId) goes with its request. */
	return eng_queue_decision(c, set_some(set(obj("client.action"), "name",
	    jv_string(name)), "args", art_json_field(line, "args")), 1,
	    set_some(jv_object(), "client_turn_id", art_json_field(line,
	    "turn_id")));
}

static int
input_resume(struct cx *c, const jv *line)
{
	const char *id = art_json_str(line, "interrupt_id");
	jv s = eng_summary(c), all, it, payload;
	char why[400];
	int parked, r;

	if (!jv_is_valid(s))
		return -1;
	all = art_json_field(&s, "interrupts");
	it = id != NULL && jv_get_kind(all) == JV_KIND_OBJECT ?
	    jv_object_get(jv_copy(all), jv_string(id)) : jv_invalid();
	parked = eng_is_parked(c, &s);
	jv_free(all);
	jv_free(s);
	if (!jv_is_valid(it)) {
		char msg[300];

		jv_free(it);
		snprintf(msg, sizeof(msg), id != NULL ? "no open interrupt '%s' "
		    "(unknown, or already resumed): nothing done" :
		    "interrupt.resume has no interrupt_id%s", id != NULL ? id :
		    "");
		return eng_rec_error(c, "no_interrupt", msg, line);
	}
	payload = art_json_field(line, "payload");
	r = eng_answer_hold(c, &it, &payload, id, 0, why, sizeof(why));
	if (r != 0) {
		/* 1: the answer does not fit the question; it stays open. */
		jv_free(it);
		jv_free(payload);
		return r == 1 ? eng_rec_error(c, "bad_input", why, line) : -1;
	}
	r = eng_rec(c, set(set(obj("session.interrupt_resumed"), "interrupt_id",
	    jv_string(id)), "payload", jv_copy(payload)));
	if (r == 0)
		r = eng_answer_hold(c, &it, &payload, id, 1, why, sizeof(why));
	jv_free(payload);
	if (r == -1 || !parked) {
		jv_free(it);
		return r;
	}
	return eng_queue_decision(c, set_some(set(obj("interrupt.resumed"),
	    "interrupt_id", jv_string(id)), "payload", art_json_field(line,
	    "payload")), 0, set(jv_object(), "interrupt", it));
}

static int
input_settle(struct cx *c, const jv *line, const char *type)
{
	struct settle st;

	if (eng_read_settle(line, type, &st, c->err) == -1 || st.id == NULL) {
		eng_settle_release(&st);
		return eng_rec_error(c, "bad_input", st.id == NULL ? "settle "
		    "has no id" : c->err->msg, line);
	}
	return eng_settle(c, &st, type, line);
}

static int
input_response(struct cx *c, const jv *line)
{
	const char *id = art_json_str(line, "decision_id"), *lid;
	jv s = eng_summary(c), live;
	int r;

	if (!jv_is_valid(s))
		return -1;
	live = art_json_field(&s, "live");
	lid = art_json_str(&live, "id");
	jv_free(s);
	if (id == NULL || lid == NULL || strcmp(id, lid) != 0) {
		jv_free(live);
		return eng_rec_error(c, "stale_response", id != NULL ? id :
		    "decision.response has no decision_id", line);
	}
	r = eng_apply_response(c, &live, line);
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
	jv s = eng_summary(c), live, ev;
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
	r = eng_rec(c, ev);
	if (r == 0 && again)
		r = eng_redeliver(c, &live);
	else if (r == 0) {
		snprintf(why, sizeof(why), "decision '%s' failed%s: %.400s", id,
		    retry ? " too often" : "", e);
		r = eng_fail_run(c, why);
	}
	jv_free(live);
	return r;
}

/*
 * A request of ours came round the ring unanswered: the stage that takes
 * it is missing.  No answer will ever come, so the turn fails (code
 * "no_stage") naming the stage, rather than the model reading a result
 * that no tool gave.
 */
static int
no_stage(struct cx *c, const char *did, const char *msg)
{
	int r = 0;

	if (did != NULL)
		r = eng_rec(c, set(set(set(set(obj("decision.errored"), "id",
		    jv_string(did)), "error", jv_string(msg)), "retryable",
		    jv_false()), "code", jv_string("no_stage")));
	return r == 0 ? eng_stop_turn(c, "no_stage", jv_null(), msg) : r;
}

static int
input_unanswered(struct cx *c, const jv *line)
{
	const char *id = art_json_str(line, "decision_id"), *lid, *tt, *cid;
	jv s = eng_summary(c), live, tr;
	char msg[400];
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
	cid = art_json_str(&tr, "id");
	if (tt != NULL && strcmp(tt, "tool.execute") == 0)
		snprintf(msg, sizeof(msg), "no agentrt-tool in the ring: the "
		    "decision.request for tool call %s ('%.100s') came back "
		    "unanswered", cid != NULL ? cid : "?",
		    art_json_str(&tr, "name") != NULL ? art_json_str(&tr,
		    "name") : "?");
	else if (tt != NULL && strcmp(tt, "llm.execute") == 0)
		snprintf(msg, sizeof(msg), "no agentrt-llm in the ring: the "
		    "decision.request for model call %s came back unanswered",
		    cid != NULL ? cid : "?");
	else if (tt != NULL && strcmp(tt, "client.action") == 0)
		/* The standard agent proposes nothing for one: not a stage
		 * missing, but an answerer. */
		snprintf(msg, sizeof(msg), "a client.action ('%.100s') needs "
		    "a worker or a jq program to answer it (agentrt-decide "
		    "--exec, --url or --jq): the standard agent does nothing "
		    "with one, so decision.request %s came back unanswered",
		    art_json_str(&tr, "name") != NULL ? art_json_str(&tr,
		    "name") : "?", id);
	else
		snprintf(msg, sizeof(msg), "no agentrt-decide in the ring: the "
		    "decision.request %s (trigger %.100s) came back unanswered",
		    id, tt != NULL ? tt : "?");
	r = no_stage(c, id, msg);
	jv_free(tr);
	jv_free(live);
	return r;
}

/*
 * A token event (consumed) with its place: "index", the call's tokens
 * shown before it (0, 1, 2, ...: a client orders the deltas of one reply
 * by it), and the turn it is of, which a recorded event carries too.
 */
static jv
token_place(struct cx *c, const char *id, jv ce)
{
	jv n = id != NULL ? jv_object_get(jv_copy(c->e->token_index),
	    jv_string(id)) : jv_invalid(), s;
	double at = jv_get_kind(n) == JV_KIND_NUMBER ? jv_number_value(n) : 0;

	jv_free(n);
	if (id != NULL) {
		if (at == 0 && jv_object_length(jv_copy(c->e->token_index)) >=
		    FIRST_TOKENS_MAX) {
			jv_free(c->e->token_index);
			c->e->token_index = jv_object();
		}
		c->e->token_index = jv_object_set(c->e->token_index,
		    jv_string(id), jv_number(at + 1));
		ce = set(ce, "index", jv_number(at));
	}
	if (jv_is_valid(s = eng_summary(c)))
		ce = set_some(ce, "turn_id", art_json_field(&s, "turn"));
	jv_free(s);
	return ce;
}

/* An llm.request came back: no model stage took it. */
static int
input_unanswered_llm(struct cx *c, const jv *line)
{
	const char *id = art_json_str(line, "id"), *st;
	int64_t attempt = 0, now = 0;
	char msg[300];
	jv call;
	int open;

	if (id == NULL)
		return 0;
	call = eng_get_call(c, id);
	st = art_json_str(&call, "status");
	art_json_get_int(line, "attempt", 0, &attempt, NULL);
	art_json_get_int(&call, "attempt", 0, &now, NULL);
	open = jv_is_valid(call) && st != NULL && strcmp(st, "pending") == 0 &&
	    (attempt == 0 || attempt == now);
	jv_free(call);
	if (!open)
		return 0;	/* an old attempt's: already dealt with */
	snprintf(msg, sizeof(msg), "no agentrt-llm in the ring: the "
	    "llm.request for call %s came back unanswered", id);
	return no_stage(c, NULL, msg);
}

static void
input_delta(struct cx *c, const jv *line)
{
	const char *id = art_json_str(line, "id");
	jv d = art_json_field(line, "delta"), ce = obj("token"), seen;

	if (id != NULL) {
		seen = jv_object_get(jv_copy(c->e->first_token), jv_string(id));
		/* Calls whose metrics never came (failed, voided): forget. */
		if (!jv_is_valid(seen) && jv_object_length(jv_copy(
		    c->e->first_token)) >= FIRST_TOKENS_MAX) {
			jv_free(c->e->first_token);
			c->e->first_token = jv_object();
		}
		if (!jv_is_valid(seen))
			c->e->first_token = jv_object_set(c->e->first_token,
			    jv_string(id), jv_number((double)c->now));
		jv_free(seen);
	}
	ce = set(ce, "id", art_json_field(line, "id"));
	d = eng_scan_delta(c, id, d);
	if (jv_get_kind(d) == JV_KIND_NULL) {
		jv_free(ce);	/* held back, or nothing to show */
		return;
	}
	if (jv_get_kind(d) == JV_KIND_OBJECT) {
		jv_object_foreach(d, k, v)
			ce = jv_object_set(ce, k, v);
	}
	jv_free(d);
	eng_publish(c, NULL, token_place(c, id, ce));
}

/*
 * A client input addressed to another agent than the session's (seed
 * ClientInput.agent_id) is refused: 1 when it was (the error recorded),
 * 0 when it is this session's, -1 on a store failure.
 */
static int
foreign_agent(struct cx *c, const jv *line, const char *type)
{
	const char *got = art_json_str(line, "agent_id"), *want;
	char msg[300];
	jv s;

	if (got == NULL || strncmp(type, "client.", 7) != 0)
		return 0;
	if (!jv_is_valid(s = eng_summary(c)))
		return -1;
	want = art_json_str(&s, "agent_id");
	if (want == NULL || strcmp(got, want) == 0) {
		jv_free(s);
		return 0;
	}
	snprintf(msg, sizeof(msg), "%s is for agent '%s', not this session's "
	    "agent '%s'", type, got, want);
	jv_free(s);
	return eng_rec_error(c, "agent_mismatch", msg, line) == -1 ? -1 : 1;
}

/*
 * A tool.progress line: published on --events as it came, never recorded,
 * as a token delta is not: it is news while the call runs, and the
 * call's result is what the log keeps.  Its message is redacted first.
 */
static void
input_progress(struct cx *c, const jv *line)
{
	static const char *const keys[] = { "id", "progress", "total", NULL };
	jv ce = obj("tool.progress"), v, msg;
	int i;

	for (i = 0; keys[i] != NULL; i++) {
		v = art_json_field(line, keys[i]);
		ce = set_some(ce, keys[i], v);
	}
	msg = art_json_field(line, "message");
	if (jv_get_kind(msg) == JV_KIND_STRING)
		ce = set_some(ce, "message", eng_scan_quiet(c, msg));
	else
		jv_free(msg);
	eng_publish(c, NULL, ce);
}

/* Every line type eng_dispatch_input() takes. */
static const char *const input_types[] = {
	"client.message", "client.messages", "client.action",
	"interrupt.resume", "tool.result", "tool.error", "llm.result",
	"llm.error", "decision.response", "decision.error",
	"decision.request", "llm.request", "tools.listed", "tools.list",
	"llm.token.delta", "tool.progress", "error", NULL
};

bool
art_engine_takes(const char *type)
{
	int i;

	for (i = 0; type != NULL && input_types[i] != NULL; i++)
		if (strcmp(type, input_types[i]) == 0)
			return true;
	return false;
}

int
eng_dispatch_input(struct cx *c, const jv *line)
{
	const char *type = art_json_str(line, "type");
	struct art_err err;
	char msg[200];
	int r;

	if (type == NULL)
		return eng_rec_error(c, "no_type", "line has no string "
		    "\"type\"", line);
	/* "llm.request\u0000x" is no llm.request: never a match, never silence. */
	if (art_ndjson_check_type(line, &err) == -1)
		return eng_rec_error(c, err.code, err.msg, line);
	if ((r = foreign_agent(c, line, type)) != 0)
		return r < 0 ? -1 : 0;
	if (strcmp(type, "client.message") == 0 ||
	    strcmp(type, "client.messages") == 0)
		return eng_input_message(c, line, type);
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
	if (strcmp(type, "tools.listed") == 0 ||
	    strcmp(type, "tools.list") == 0)
		return eng_mcp_listed(c, line);
	if (strcmp(type, "llm.token.delta") == 0) {
		input_delta(c, line);
		return 0;
	}
	if (strcmp(type, "tool.progress") == 0) {
		input_progress(c, line);
		return 0;
	}
	if (strcmp(type, "error") == 0) {
		jv p = jv_copy(*line);

		p = jv_object_delete(p, jv_string("session_id"));
		if (art_json_str(&p, "code") == NULL)
			p = set(p, "code", jv_string("error"));
		return eng_rec(c, p);
	}
	snprintf(msg, sizeof(msg), "unknown line type '%.100s'", type);
	return eng_rec_error(c, "unknown_type", msg, line);
}

/* --- ending a turn -------------------------------------------------- */

/* p (consumed) with turn tid's totals; jv_invalid() if the store fails. */
static jv
turn_totals(struct cx *c, jv p, const char *tid)
{
	jv turn = eng_turn_record(c, tid);

	if (!jv_is_valid(turn)) {
		jv_free(p);
		return turn;
	}
	p = set(p, "usage", art_json_field(&turn, "usage"));
	p = set(p, "cost", art_json_field(&turn, "cost"));
	p = set(p, "llm_calls", art_json_field(&turn, "llm_calls"));
	jv_free(turn);
	return p;
}

/*
 * Ends the running turn (error: failed; code, may be NULL, says why in a
 * word: a limit's name, "blocked") and marks the session done.
 */
static int
end_turn(struct cx *c, jv data, jv error, const char *code)
{
	jv s = eng_summary(c), p, pv = jv_invalid(), reason;
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
	parent = eng_parent_of(&s);
	if (st != NULL && strcmp(st, "running") == 0 && tid != NULL) {
		p = set(obj("turn.completed"), "turn_id", jv_string(tid));
		p = set(p, "data", jv_copy(data));
		p = set_some(p, "error", jv_copy(error));
		if (code != NULL && jv_get_kind(error) != JV_KIND_NULL)
			p = set(p, "code", jv_string(code));
		reason = eng_auto_reason(c, tid);
		p = jv_is_valid(reason) ? set_some(p, "reason", reason) :
		    (jv_free(p), jv_invalid());
		if (jv_is_valid(p))
			p = turn_totals(c, p, tid);
		d.usage = art_json_field(&p, "usage");
		d.cost = art_json_field(&p, "cost");
		r = jv_is_valid(p) ? eng_rec(c, p) : -1;
		/* A sub-agent's turn answers the call that started it. */
		if (r == 0 && parent != NULL && (pv = art_session_get(c->t,
		    parent, NULL), jv_is_valid(pv))) {
			d.child = c->sid;
			d.data = data;
			d.error = error;
			r = eng_with_session(c, parent, eng_child_done_step,
			    &d);
		}
		jv_free(pv);
	}
	jv_free(d.usage);
	jv_free(d.cost);
	jv_free(data);
	jv_free(error);
	jv_free(s);
	return r == -1 ? -1 : eng_rec(c, obj("session.done"));
}

int
eng_end_turn(struct cx *c, jv data, jv error)
{
	return end_turn(c, data, error, NULL);
}

/*
 * A terminal failure: void open work, drop the queue, fail the turn with
 * why, and code (may be NULL) on its turn.completed.
 */
int
eng_stop_turn(struct cx *c, const char *code, jv data, const char *why)
{
	jv s = eng_summary(c), calls, all;
	int r = 0;

	if (!jv_is_valid(s))
		return -1;
	calls = eng_open_calls(c, &s);
	jv_free(s);
	jv_array_foreach(calls, i, call) {
		if (r == 0)
			r = eng_void_call(c, &call);
		jv_free(call);
	}
	jv_free(calls);
	if (r == 0 && !jv_is_valid(all = eng_queued(c)))
		r = -1;
	else if (r == 0) {
		jv_array_foreach(all, i, e) {
			if (r == 0)
				r = eng_rec(c, set(obj("decision.dropped"),
				    "id", art_json_field(&e, "id")));
			jv_free(e);
		}
		jv_free(all);
	}
	if (r == -1) {
		jv_free(data);
		return -1;
	}
	return end_turn(c, data, jv_string(why), code);
}

int
eng_fail_run(struct cx *c, const char *why)
{
	return eng_stop_turn(c, NULL, jv_null(), why);
}

/* --- what a session is doing ---------------------------------------- */

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
	if (eng_kind_of(call) == ART_KIND_CLIENT_TOOL)
		return strcmp(st, "pending") == 0;
	if (eng_kind_of(call) != ART_KIND_SUB_AGENT ||
	    strcmp(st, "pending") != 0 || child == NULL ||
	    depth > 2 * SUB_AGENT_DEPTH + 8)
		return 0;
	sub = *c;
	sub.sid = child;
	sub.sum = jv_invalid();
	sub.up = c;
	cs = eng_session_state(&sub, depth + 1);
	jv_free(sub.sum);
	return cs != ART_ENGINE_BUSY;
}

enum art_engine_state
eng_session_state(struct cx *c, int depth)
{
	struct queue_scan q = { jv_null(), jv_invalid(), 0 };
	jv s = eng_summary(c), live, calls, turn;
	enum art_engine_state st = ART_ENGINE_DONE;
	const char *status, *ts;
	int client = 0, busy = 0;

	if (!jv_is_valid(s))
		return ART_ENGINE_FAILED;
	live = art_json_field(&s, "live");
	busy = jv_get_kind(live) != JV_KIND_NULL;
	jv_free(live);
	if (!busy && eng_scan_queue(c, &q) == 0)
		busy = jv_get_kind(q.first) != JV_KIND_NULL;
	jv_free(q.first);
	calls = eng_open_calls(c, &s);
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
	else if (client || eng_is_parked(c, &s))
		st = ART_ENGINE_PARKED;
	else {
		status = art_json_str(&s, "status");
		turn = eng_turn_record(c, art_json_str(&s, "turn"));
		ts = art_json_str(&turn, "status");
		if (!jv_is_valid(turn))
			st = ART_ENGINE_FAILED;	/* as for a summary unread */
		else if (status != NULL && strcmp(status, "running") == 0)
			st = ART_ENGINE_PARKED;
		else if (ts != NULL && strcmp(ts, "failed") == 0)
			st = ART_ENGINE_FAILED;
		jv_free(turn);
	}
	jv_free(s);
	return st;
}
