/* engine-sub.c - sub-agents: a child session opened, finished, cancelled
 *
 * A sub-agent call's id is its child session's id.  Going out, the call
 * opens the child (created, claimed and driven by this engine); the
 * child's turn ending settles the call in the parent; a voided call
 * cancels the child, and so on down.  Each of these runs in the other
 * session inside the same transaction (eng_with_session).
 */
#include "engine-int.h"

#include <string.h>

#include "json.h"
#include "session.h"
#include "spawn.h"

/*
 * The pid of another process that drives sid and lives, 0 when there is
 * none, or -1 when the store fails.
 */
int64_t
eng_driver_of(struct cx *c, const char *sid)
{
	jv d = eng_get(c, ART_DB_DRIVERS, sid, NULL);
	int64_t pid = 0;

	if (!jv_is_valid(d))
		return -1;
	art_json_get_int(&d, "pid", 0, &pid, NULL);
	jv_free(d);
	return pid != 0 && pid != c->e->o.pid && art_spawn_alive((long)pid) ? pid : 0;
}

int64_t
eng_other_driver(struct cx *c)
{
	return eng_driver_of(c, c->sid);
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
		    c->err) == -1 || eng_claim(c) == -1)
			return -1;
		eng_adopt(c, c->sid);
		if (eng_queue_decision(c, obj("session.start"), 1,
		    set(jv_object(), "agent_file", jv_copy(co->file))) == -1)
			return -1;
		m = art_json_field(co->call, "message");
		r = jv_get_kind(m) == JV_KIND_OBJECT ? eng_deliver(c, &m) : 0;
		jv_free(m);
		return r;
	}
	if (eng_claim(c) == -1)
		return -1;
	eng_adopt(c, c->sid);
	return 0;
}

/* The session's ancestry with itself appended: its child's. */
static jv
child_ancestry(struct cx *c)
{
	jv s = eng_summary(c), a;

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
const char *
eng_parent_of(const jv *s)
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
int
eng_open_child(struct cx *c, const jv *call)
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
		parent = eng_parent_of(&cs);
		mine = parent != NULL && strcmp(parent, c->sid) == 0;
		jv_free(cs);
		if (!mine)
			return eng_refuse_call(c, call, jv_string_fmt("cannot "
			    "start sub-agent %s: session %s exists and is not "
			    "this session's child", agent, child));
	} else {
		jv_free(cs);
		co.file = c->e->o.load_agent(c->e->o.agent_ctx, agent, &lerr);
		if (!jv_is_valid(co.file)) {
			jv_free(co.file);
			return eng_refuse_call(c, call, jv_string_fmt("cannot "
			    "start sub-agent %s: %s", agent, lerr.msg));
		}
	}
	if ((pid = eng_driver_of(c, child)) == -1) {
		jv_free(co.file);
		return -1;
	}
	if (pid != 0) {
		struct settle st = { child, 0, 0, jv_string_fmt("sub-agent "
		    "session %s is driven by process %lld", child,
		    (long long)pid), 1, jv_null(), 0, 1, jv_null() };

		jv_free(co.file);
		r = eng_call_failed(c, call, &st, eng_finished_for(call));
		eng_settle_release(&st);
		return r;
	}
	co.ancestry = child_ancestry(c);
	s = eng_summary(c);
	co.identity = jv_is_valid(s) ? art_json_field(&s, "identity") :
	    jv_null();
	jv_free(s);
	r = jv_is_valid(co.ancestry) ? eng_with_session(c, child,
	    child_open_step, &co) : -1;
	jv_free(co.file);
	jv_free(co.ancestry);
	jv_free(co.identity);
	return r;
}

/* In the parent: the child's turn ended; its result folds in. */
int
eng_child_done_step(struct cx *c, void *arg)
{
	struct child_done *d = arg;
	jv call = eng_get(c, ART_DB_CALLS, c->sid, d->child), p, fin;
	const char *st = art_json_str(&call, "status");
	int r;

	if (!jv_is_valid(call))
		return -1;
	if (eng_kind_of(&call) != ART_KIND_SUB_AGENT || st == NULL ||
	    strcmp(st, "pending") != 0) {
		jv_free(call);
		return 0;	/* voided, or not a delegation of ours */
	}
	if (jv_get_kind(d->error) != JV_KIND_NULL) {
		r = eng_refuse_call(c, &call, jv_string_fmt("sub-agent %s "
		    "failed: %s", art_json_str(&call, "agent_id"), jv_get_kind(
		    d->error) == JV_KIND_STRING ? jv_string_value(d->error) :
		    "error"));
		jv_free(call);
		return r;
	}
	fin = eng_finished_for(&call);
	p = eng_call_event(&call, "completed");
	p = set(p, "result", eng_as_text(jv_copy(d->data)));
	p = set_some(p, "usage", jv_copy(d->usage));
	p = set_some(p, "cost", jv_copy(d->cost));
	jv_free(call);
	if (eng_rec(c, p) == -1) {
		jv_free(fin);
		return -1;
	}
	fin = set(fin, "ok", jv_true());
	fin = set(fin, "result", eng_as_text(jv_copy(d->data)));
	return eng_queue_decision(c, fin, 1, jv_null());
}

/* In a child whose delegation was voided: everything stops. */
int
eng_cancel_step(struct cx *c, void *arg)
{
	const char *why = arg, *st;
	jv s = eng_summary(c), live, open, all, intr;
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
	if (jv_get_kind(live) == JV_KIND_OBJECT && eng_rec(c, set(
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
				r = eng_rec(c, set(set(obj(
				    "session.interrupt_cancelled"),
				    "interrupt_id", jv_copy(k)), "reason",
				    jv_string(why)));
			jv_free(k);
			jv_free(it);
		}
	}
	jv_free(intr);
	if (r == 0 && !work) {
		if (!jv_is_valid(all = eng_queued(c)))
			return -1;
		work = jv_array_length(jv_copy(all)) > 0;
		jv_free(all);
	}
	return r == -1 ? -1 : work ? eng_fail_run(c, why) : 0;
}
