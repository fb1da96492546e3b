/* engine.c - the engine: inputs in, decisions and calls out, all recorded
 *
 * Each public entry point runs one write transaction through
 * art_store_write().  Inside it a struct cx gathers the lines and client
 * events the step produces; they reach the engine's outboxes only after
 * the commit, and a transaction that is rerun (the map grew) starts them
 * afresh.  A step that finds its input bad after it began writing aborts
 * with err code "reject"; the entry point then records only the rejection
 * in a second transaction, so a half-applied response never lands.
 *
 * This file is the public side: the engine and the sessions it drives, a
 * step run as a transaction (run_op), claiming a session and recovering
 * what its last driver left, checkout and cancel, and the input entry
 * points.  engine-int.h says where the steps themselves live.
 */
#include "engine.h"

#include "engine-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "session.h"
#include "tree.h"

static int	start_step(struct cx *c, void *arg);
static int	checkout_step(struct cx *c, void *arg);
static int	cancel_op(struct cx *c, void *arg);
static int	recover(struct cx *c);
static int	room(struct art_engine *e, int n, struct art_err *err);

struct art_engine *
art_engine_new(const struct art_engine_opts *o)
{
	struct art_engine *e = calloc(1, sizeof(*e));
	int i;

	if (e == NULL)
		return NULL;
	e->o = *o;
	e->out = jv_array();
	e->events = jv_array();
	e->prompts = jv_object();
	e->prompt_stage = jv_object();
	for (i = 0; i < ENG_SEC_CACHE; i++)
		e->sec_key[i] = jv_null();
	e->streams = jv_object();
	e->stream_stage = jv_object();
	e->first_token = jv_object();
	e->token_index = jv_object();
	e->cfg_last = jv_null();
	e->cfg_tools = jv_null();
	e->wake = -1;
	if (room(e, 0, NULL) == -1) {
		art_engine_free(e);
		return NULL;
	}
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
	jv_free(e->token_index);
	jv_free(e->prompts);
	jv_free(e->prompt_stage);
	jv_free(e->cfg_last);
	jv_free(e->cfg_tools);
	eng_scan_free(e);
	free(e->sids);
	free(e->wakes);
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

/* --- the sessions driven -------------------------------------------- */

/* Room for n sessions and the slot kept free: 0, or -1 (err "nomem"). */
static int
room(struct art_engine *e, int n, struct art_err *err)
{
	size_t had = e->wcap;

	if (art_grow(&e->sids, &e->cap, (size_t)n + 1, sizeof(*e->sids)) ==
	    -1 || art_grow(&e->wakes, &e->wcap, (size_t)n + 1,
	    sizeof(*e->wakes)) == -1)
		return art_err_set(err, "nomem", "out of memory");
	for (; had < e->wcap; had++)
		e->wakes[had] = -1;
	return 0;
}

/* A session's next timer, and so the engine's: the earliest of all. */
static void
set_wake(struct art_engine *e, const char *sid, int64_t wake)
{
	int i, n = e->nsids;

	for (i = 0; i < e->nsids; i++)
		if (strcmp(e->sids[i], sid) == 0)
			break;
	/* i == nsids: the session being started, in the slot kept free. */
	e->wakes[i] = wake;
	if (i == e->nsids)
		n++;
	e->wake = -1;
	for (i = 0; i < n; i++)
		if (e->wakes[i] >= 0 && (e->wake < 0 || e->wakes[i] < e->wake))
			e->wake = e->wakes[i];
}

/*
 * Sessions a step started driving (sub-agents, message.send targets)
 * join the ring's sessions; sids (consumed) may repeat or be known.  -1
 * (err "nomem") when there is no room for one; e->sids may move.
 */
static int
drive(struct art_engine *e, jv sids, int64_t wake, struct art_err *err)
{
	int i, r = 0;

	jv_array_foreach(sids, k, sid) {
		for (i = 0; i < e->nsids; i++)
			if (strcmp(e->sids[i], jv_string_value(sid)) == 0)
				break;
		if (r == 0 && i == e->nsids &&
		    (r = room(e, e->nsids + 1, err)) == 0) {
			snprintf(e->sids[e->nsids], sizeof(e->sids[0]), "%s",
			    jv_string_value(sid));
			set_wake(e, e->sids[e->nsids], wake);
			e->nsids++;
		}
		jv_free(sid);
		(void)k;
	}
	jv_free(sids);
	return r;
}

static int
run_op(struct art_engine *e, const char *sid, int (*fn)(struct cx *, void *),
    void *arg, struct art_err *err)
{
	int quiet = fn == checkout_step || fn == cancel_op;
	struct op op = { e, sid, fn, arg, NULL, jv_array(), jv_array(),
	    jv_array(), -1, quiet, quiet || fn == start_step };
	char why[sizeof(err->msg)];
	int r;

	r = art_store_write(e->o.store, eng_op_write, &op, err);
	if (r == -1 && art_err_is(err, "reject")) {
		snprintf(why, sizeof(why), "%s", err->msg);
		op.fn = eng_reject_step;
		op.arg = why;
		r = art_store_write(e->o.store, eng_op_write, &op, err);
	}
	if (r == 0) {
		eng_prompts_keep(e);
		e->out = jv_array_concat(e->out, op.out);
		e->events = jv_array_concat(e->events, op.events);
		set_wake(e, sid, op.wake);
		r = drive(e, op.adopt, op.wake, err);
	} else {
		eng_prompts_unstage(e);
		jv_free(op.out);
		jv_free(op.events);
		jv_free(op.adopt);
	}
	return r;
}

/* --- claim and recovery --------------------------------------------- */

struct start {
	const char	*agent;
	jv		 file;		/* the agent file's config */
	int		 create;	/* 1: make the session; 2: only start it */
	const jv	*first;		/* a client line to take with it, or NULL */
};

/* Takes the session over; err code "busy" when its driver still lives. */
int
eng_claim(struct cx *c)
{
	int64_t pid = eng_other_driver(c);
	jv d;

	if (pid == -1)
		return -1;
	if (pid != 0)
		return art_err_set(c->err, "busy", "session '%s' is driven by "
		    "process %lld", c->sid, (long long)pid);
	d = set(jv_object(), "pid", jv_number((double)c->e->o.pid));
	d = set(d, "since", eng_iso(c->now));
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
	if (!waits && id != NULL && jv_is_valid(all = eng_queued(c))) {
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

static int
adopt_step(struct cx *c, void *arg)
{
	(void)arg;
	if (eng_claim(c) == -1)
		return -1;
	eng_adopt(c, c->sid);
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
	int64_t pid = 0;
	jv cs;
	int r = 0;

	if (child == NULL || (pid = eng_driver_of(c, child)) != 0)
		return pid < 0 ? -1 : 0;
	cs = art_session_get(c->t, child, NULL);
	if (jv_is_valid(cs))
		r = eng_with_session(c, child, adopt_step, NULL);
	jv_free(cs);
	return r;
}

/*
 * A driver that died left its work where it was: the live decision goes
 * out again, a worker tool call that was out goes out again as the same
 * attempt (the tool stage's outbox answers it, or says it was
 * interrupted, and runs it only if it never started), and model calls
 * that were out fail retryably (their answers went down with the old
 * ring), so each is retried as its policy allows.
 */
static int
recover(struct cx *c)
{
	jv s = eng_summary(c), live, calls;
	int r = 0;

	if (!jv_is_valid(s))
		return -1;
	live = art_json_field(&s, "live");
	calls = eng_open_calls(c, &s);
	jv_free(s);
	if (jv_get_kind(live) == JV_KIND_OBJECT) {
		r = eng_rec(c, set(set(set(obj("decision.errored"), "id",
		    art_json_field(&live, "id")), "error", jv_string("dispatch "
		    "lost on engine restart")), "retryable", jv_true()));
		if (r == 0)
			r = eng_redeliver(c, &live);
	}
	jv_array_foreach(calls, i, call) {
		const char *st = art_json_str(&call, "status");

		if (r == 0 && st != NULL && strcmp(st, "pending") == 0 &&
		    eng_kind_of(&call) == ART_KIND_SUB_AGENT)
			r = adopt_child(c, art_json_str(&call, "id"));
		else if (r == 0 && st != NULL && strcmp(st, "pending") == 0 &&
		    eng_kind_of(&call) == ART_KIND_TOOL &&
		    !execute_waits(c, &live, art_json_str(&call, "id")))
			r = eng_execute_again(c, &call);
		else if (r == 0 && st != NULL && strcmp(st, "pending") == 0 &&
		    eng_kind_of(&call) != ART_KIND_CLIENT_TOOL &&
		    !execute_waits(c, &live, art_json_str(&call, "id")))
			r = eng_fail_call(c, &call, "dispatch lost on engine "
			    "restart", NULL);
		jv_free(call);
	}
	jv_free(calls);
	jv_free(live);
	return r;
}

/*
 * Another run made the session between our look and our write (two rings
 * started on one -s id): it drives the session now, so say which process
 * does, as for a session found driven.
 */
static int
raced(struct cx *c)
{
	int64_t pid = eng_other_driver(c);

	if (pid > 0)
		return art_err_set(c->err, "busy", "session '%s' is driven by "
		    "process %lld", c->sid, (long long)pid);
	return -1;	/* its maker is gone: "exists" says it all */
}

static int
start_step(struct cx *c, void *arg)
{
	struct start *st = arg;
	jv trigger;

	if (st->create) {
		if (st->create == 1 && art_session_create(c->t, c->sid,
		    st->agent, jv_null(), jv_array(), c->err) == -1)
			return art_err_is(c->err, "exists") ? raced(c) : -1;
		trigger = obj("session.start");
		if (eng_claim(c) == -1 || eng_queue_decision(c, trigger, 1,
		    set(jv_object(), "agent_file", jv_copy(st->file))) == -1)
			return -1;
		/* The user's first words are in the commit that makes it. */
		return st->first != NULL ? eng_dispatch_input(c, st->first) : 0;
	}
	if (eng_claim(c) == -1)
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
	return art_engine_start_with(e, sid, agent, jv_null(), out, err);
}

/* Is line a client's message, which a new session may be made with? */
static bool
first_line(const jv *line)
{
	const char *type = art_json_str(line, "type"), *named;

	if (type == NULL || (strcmp(type, "client.message") != 0 &&
	    strcmp(type, "client.messages") != 0))
		return false;
	named = art_json_str(line, "session_id");
	return named == NULL;
}

/*
 * What starting *sid needs: a slot, its id (minted into id when *sid is
 * NULL), and the agent file of a session that is new (st->create 1) or
 * made but never run (2).  -1 with err, nothing loaded.
 */
static int
start_load(struct art_engine *e, const char **sid, char *id,
    struct exists *x, struct start *st, struct art_err *err)
{
	if (room(e, e->nsids + 1, err) == -1)
		return -1;
	if (*sid == NULL) {
		if (art_ids_v7(e->o.ids, id) == -1)
			return art_err_set(err, "ids", "cannot mint an id");
		*sid = id;
	} else {
		x->sid = *sid;
		if (art_store_read(e->o.store, exists_fn, x, err) == -1)
			return -1;
	}
	if (!x->found) {
		if (st->agent == NULL)
			return art_err_set(err, "not_found", "no session '%s'",
			    *sid);
		st->create = 1;
	} else if (x->unstarted[0] != '\0') {
		/* Its first run starts it, with the agent it was made for. */
		st->agent = x->unstarted;
		st->create = 2;
	} else
		return 0;
	st->file = e->o.load_agent(e->o.agent_ctx, st->agent, err);
	if (!jv_is_valid(st->file)) {
		jv_free(st->file);
		st->file = jv_null();
		return -1;
	}
	return 0;
}

int
art_engine_start_with(struct art_engine *e, const char *sid,
    const char *agent, jv first, char *out, struct art_err *err)
{
	struct start st = { agent, jv_null(), 0, NULL };
	struct exists x = { NULL, 0, "" };
	char id[ART_ID_BUFSZ];
	int r, i;

	if (start_load(e, &sid, id, &x, &st, err) == -1) {
		jv_free(first);
		return -1;
	}
	if (st.create && first_line(&first))
		st.first = &first;
	/* Its slot first: the children it adopts take the next ones. */
	i = e->nsids++;
	snprintf(e->sids[i], sizeof(e->sids[0]), "%s", sid);
	r = run_op(e, e->sids[i], start_step, &st, err);
	jv_free(st.file);
	if (r == -1) {
		e->nsids--;
		jv_free(first);
		return -1;
	}
	snprintf(out, ART_ID_MAX + 1, "%s", e->sids[i]);
	if (st.first == NULL && jv_get_kind(first) != JV_KIND_NULL)
		return art_engine_input(e, e->sids[i], first, err);
	jv_free(first);
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

int
art_engine_stop(struct art_engine *e, struct art_err *err)
{
	int r = 0;

	if (e->nsids > 0)
		r = art_store_write(e->o.store, release_fn, e, err);
	e->nsids = 0;
	return r;
}

/* --- checkout and cancel -------------------------------------------- */

/*
 * Is the running turn left with nothing at all: no decision live or
 * queued, no open call?  1 yes, 0 no, -1 on failure.
 */
static int
idle_turn(struct cx *c)
{
	jv s = eng_summary(c), live, open, all;
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
		if (!jv_is_valid(all = eng_queued(c)))
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

	if (eng_head(c, old, sizeof(old)) == -1)
		return -1;
	if ((pid = eng_other_driver(c)) == -1)
		return -1;
	if (pid != 0)
		return art_err_set(c->err, "busy", "session '%s' is driven by "
		    "process %lld; send it a client.messages view instead",
		    c->sid, (long long)pid);
	n = art_tree_node(c->t, c->sid, node, c->err);
	if (!jv_is_valid(n))
		return -1;
	jv_free(n);
	if (strcmp(old, node) == 0)
		return 0;
	if (eng_rec(c, set(obj("head.moved"), "head_id", jv_string(node))) ==
	    -1 || eng_void_stranded(c, old, 0) == -1)
		return -1;
	/*
	 * A turn that waited on the old branch has nothing left to wait for
	 * and nobody to end it: it ends here, so the next turn can start.
	 */
	if ((r = eng_waits_outside(c)) == 0 && (r = idle_turn(c)) == 1)
		return eng_end_turn(c, jv_null(), jv_string("the head moved "
		    "off the turn's branch"));
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
	int64_t pid = eng_other_driver(c);

	if (pid == -1)
		return -1;
	if (pid != 0)
		return art_err_set(c->err, "busy", "session '%s' is driven by "
		    "process %lld", c->sid, (long long)pid);
	return eng_cancel_step(c, arg);
}

int
art_engine_cancel(struct art_engine *e, const char *sid, const char *why,
    struct art_err *err)
{
	return run_op(e, sid, cancel_op, (void *)why, err);
}

/* --- input ---------------------------------------------------------- */

static int
input_step(struct cx *c, void *arg)
{
	return eng_dispatch_input(c, arg);
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
	int	 nsids;
	int64_t	*wakes;		/* the engine's first nsids + 1 */
	int64_t	 wake;
};

struct batch {
	struct art_engine	*e;
	const char		*sid;
	jv			 lines;		/* borrowed */
	struct op		*ops;		/* one a line */
	int			 n;
	struct driven		 was;
};

static int
driven_save(const struct art_engine *e, struct driven *d, struct art_err *err)
{
	size_t n = (size_t)e->nsids + 1;

	d->nsids = e->nsids;
	if ((d->wakes = calloc(n, sizeof(*d->wakes))) == NULL)
		return art_err_set(err, "nomem", "out of memory");
	memcpy(d->wakes, e->wakes, n * sizeof(*d->wakes));
	d->wake = e->wake;
	return 0;
}

/* The arrays only grow, so the engine's have room for what was saved. */
static void
driven_restore(struct art_engine *e, const struct driven *d)
{
	e->nsids = d->nsids;
	memcpy(e->wakes, d->wakes, ((size_t)d->nsids + 1) *
	    sizeof(*e->wakes));
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
	eng_prompts_unstage(e);
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
			r = eng_op_txn(t, op, err);
		}
		jv_free(line);
		if (r == 0 && at >= 0) {
			effect = effect || eng_op_has_effect(op);
			set_wake(e, op->sid, op->wake);
			r = drive(e, jv_copy(op->adopt), op->wake, err);
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
	struct batch b = { e, sid, lines, NULL, 0, { 0, NULL, 0 } };
	int i, r;

	b.n = jv_array_length(jv_copy(lines));
	if (b.n <= 1)
		return one_by_one(e, sid, lines, err);
	if (driven_save(e, &b.was, err) == -1 || (b.ops = calloc((size_t)b.n,
	    sizeof(*b.ops))) == NULL) {
		free(b.was.wakes);
		jv_free(lines);
		return art_err_set(err, "nomem", "out of memory");
	}
	for (i = 0; i < b.n; i++)
		b.ops[i] = (struct op){ e, NULL, NULL, NULL, NULL, jv_array(),
		    jv_array(), jv_array(), -1, 0, 0 };
	r = art_store_write(e->o.store, batch_txn, &b, err);
	if (r == 0) {
		eng_prompts_keep(e);
		batch_out(&b);
	} else {
		eng_prompts_unstage(e);
		batch_free(&b);
		driven_restore(e, &b.was);
	}
	free(b.ops);
	free(b.was.wakes);
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
	const char		*sid;	/* one session's, or NULL: all driven */
	enum art_engine_state	 st;
};

static int
state_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct state_q *q = ctx;
	struct cx c = { q->e, t, err, NULL, 0, jv_null(), jv_null(), -1,
	    jv_invalid(), jv_null(), NULL, NULL, "" };
	enum art_engine_state st;
	int i;

	q->st = ART_ENGINE_DONE;
	if (q->sid != NULL) {
		c.sid = q->sid;
		q->st = eng_session_state(&c, 0);
		jv_free(c.sum);
		return 0;
	}
	for (i = 0; i < q->e->nsids; i++) {
		c.sid = q->e->sids[i];
		jv_free(c.sum);
		c.sum = jv_invalid();
		st = eng_session_state(&c, 0);
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
	struct state_q q = { e, NULL, ART_ENGINE_DONE };

	if (art_store_read(e->o.store, state_fn, &q, err) == -1)
		return ART_ENGINE_FAILED;
	return q.st;
}

enum art_engine_state
art_engine_session_state(struct art_engine *e, const char *sid,
    struct art_err *err)
{
	struct state_q q = { e, sid, ART_ENGINE_DONE };

	if (art_store_read(e->o.store, state_fn, &q, err) == -1)
		return ART_ENGINE_FAILED;
	return q.st;
}
