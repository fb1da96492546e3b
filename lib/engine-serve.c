/* engine-serve.c - an engine that stays up: sessions taken on and let go
 *
 * agentrt-session serve drives whichever sessions its input names.  A
 * line for a session it does not drive places it (art_engine_place):
 * the session's root is taken over first, so its running children come
 * with it as with run -s, then the session itself, made new when a
 * client line names its agent.  At start the store's orphans (work in
 * flight whose driver is gone) are found in one read transaction.  A
 * session with nothing in flight is let go (art_engine_release_idle),
 * so what the engine holds is what is running, not what it has seen.
 */
#include "engine.h"

#include "engine-int.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "session.h"

/* The index of sid in e->sids, or -1. */
static int
driven_at(const struct art_engine *e, const char *sid)
{
	int i;

	for (i = 0; i < e->nsids; i++)
		if (strcmp(e->sids[i], sid) == 0)
			return i;
	return -1;
}

int
art_engine_driven(const struct art_engine *e)
{
	return e->nsids;
}

bool
art_engine_drives(const struct art_engine *e, const char *sid)
{
	return sid != NULL && driven_at(e, sid) >= 0;
}

/* --- placing a line ------------------------------------------------- */

struct look {
	const char	*sid;
	int		 found;
	char		 root[ART_ID_MAX + 1];	/* ancestry's first, or "" */
};

static int
look_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct look *l = ctx;
	jv s = art_session_get(t, l->sid, NULL), a, root;

	(void)err;
	l->found = jv_is_valid(s);
	a = l->found ? art_json_field(&s, "ancestry") : jv_null();
	if (jv_get_kind(a) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(a)) > 0) {
		root = jv_array_get(jv_copy(a), 0);
		if (jv_get_kind(root) == JV_KIND_STRING)
			snprintf(l->root, sizeof(l->root), "%s",
			    jv_string_value(root));
		jv_free(root);
	}
	jv_free(a);
	jv_free(s);
	return 0;
}

/* Is err a refusal of the line (1), or a failure of the store (0)? */
static int
refusal(const struct art_err *err)
{
	static const char *const codes[] = { "no_session", "bad_session",
	    "unknown_session", "not_found", "no_agent", "bad_agent", "busy",
	    "exists", NULL };
	int i;

	for (i = 0; codes[i] != NULL; i++)
		if (art_err_is(err, codes[i]))
			return 1;
	return 0;
}

int
art_engine_place(struct art_engine *e, const char *sid, const char *type,
    const char *agent, struct art_err *err)
{
	struct look l = { sid, 0, "" };
	struct art_err lerr;
	char out[ART_ID_MAX + 1];

	if (sid == NULL)
		return art_err_set(err, "no_session", "the line names no "
		    "session_id"), 1;
	if (!art_id_is_valid(sid))
		return art_err_set(err, "bad_session", "bad session_id: use "
		    "1-%d letters, digits, '.', '_', ':' or '-'",
		    ART_ID_MAX), 1;
	if (driven_at(e, sid) >= 0)
		return 0;
	if (art_store_read(e->o.store, look_fn, &l, err) == -1)
		return -1;
	/* A sub-agent comes with its root, as run -s ROOT brings it. */
	if (l.found && l.root[0] != '\0' && driven_at(e, l.root) < 0 &&
	    art_engine_start(e, l.root, NULL, out, &lerr) == -1 &&
	    !refusal(&lerr)) {
		*err = lerr;
		return -1;
	}
	if (driven_at(e, sid) >= 0)
		return 0;
	if (!l.found && (type == NULL || strncmp(type, "client.", 7) != 0 ||
	    agent == NULL))
		return art_err_set(err, "unknown_session", "no session '%s', "
		    "and the line is not a client line naming an agent_id",
		    sid), 1;
	if (art_engine_start(e, sid, l.found ? NULL : agent, out, err) == 0)
		return 0;
	return refusal(err) ? 1 : -1;
}

/* --- orphans -------------------------------------------------------- */

struct orphans {
	struct art_engine	*e;
	struct art_txn		*t;
	jv			 out;
};

/* Has the summary s (borrowed) of sid work in flight? */
static int
in_flight(struct art_txn *t, const char *sid, const jv *s,
    struct art_err *err)
{
	const char *st = art_json_str(s, "status");
	jv live = art_json_field(s, "live"), open = art_json_field(s, "open");
	unsigned char sub[64];
	size_t n = sizeof(sub);
	int r;

	r = (st != NULL && strcmp(st, "running") == 0) ||
	    jv_get_kind(live) == JV_KIND_OBJECT ||
	    (jv_get_kind(open) == JV_KIND_OBJECT &&
	    jv_object_length(jv_copy(open)) > 0);
	jv_free(live);
	jv_free(open);
	if (r == 0)	/* a queued decision: one look, no scan */
		r = art_store_last(t, ART_DB_PENDING, sid, NULL, 0, sub, &n,
		    err);
	return r;
}

static int
orphan_fn(const void *key, size_t keylen, jv s, void *ctx,
    struct art_err *err)
{
	struct orphans *o = ctx;
	struct cx c = { o->e, o->t, err, NULL, 0, jv_null(), jv_null(), -1,
	    jv_invalid(), jv_null(), NULL, NULL, "" };
	const char *sid = key;
	int64_t pid;
	int r;

	/* The key is the id and a NUL (no sub-key). */
	if (keylen == 0 || memchr(key, '\0', keylen) == NULL) {
		jv_free(s);
		return 0;
	}
	r = in_flight(o->t, sid, &s, err);
	jv_free(s);
	if (r == 1) {
		c.sid = sid;
		if ((pid = eng_driver_of(&c, sid)) == -1)
			return -1;
		/* Ours counts as gone: a driver with our pid died before. */
		if (pid == 0)
			o->out = jv_array_append(o->out, jv_string(sid));
	}
	jv_free(c.sum);
	return r == -1 ? -1 : 0;
}

static int
orphans_txn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct orphans *o = ctx;

	o->t = t;
	return art_store_scan(t, ART_DB_SESSIONS, NULL, NULL, 0, NULL, 0, 0,
	    orphan_fn, o, err);
}

jv
art_engine_orphans(struct art_engine *e, struct art_err *err)
{
	struct orphans o = { e, NULL, jv_array() };

	if (art_store_read(e->o.store, orphans_txn, &o, err) == -1) {
		jv_free(o.out);
		return jv_invalid();
	}
	return o.out;
}

/* --- letting idle sessions go --------------------------------------- */

struct idle {
	struct art_engine	*e;
	char			*busy;		/* one a driven session */
	char			*go;		/* released */
	int			 n;
};

/* Is any session of sid's ancestry that the engine drives busy? */
static int
busy_above(struct idle *q, const jv *s)
{
	jv a = art_json_field(s, "ancestry");
	int at, r = 0;

	if (jv_get_kind(a) == JV_KIND_ARRAY) {
		jv_array_foreach(a, i, id) {
			if (jv_get_kind(id) == JV_KIND_STRING &&
			    (at = driven_at(q->e, jv_string_value(id))) >= 0 &&
			    q->busy[at])
				r = 1;
			jv_free(id);
			(void)i;
		}
	}
	jv_free(a);
	return r;
}

static int
idle_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct idle *q = ctx;
	struct cx c = { q->e, t, err, NULL, 0, jv_null(), jv_null(), -1,
	    jv_invalid(), jv_null(), NULL, NULL, "" };
	jv s;
	int i;

	for (i = 0; i < q->e->nsids; i++) {
		c.sid = q->e->sids[i];
		jv_free(c.sum);
		c.sum = jv_invalid();
		q->busy[i] = eng_session_state(&c, 0) == ART_ENGINE_BUSY;
	}
	jv_free(c.sum);
	/* Its children with it, when they and every parent are idle. */
	for (i = 0; i < q->e->nsids; i++) {
		if (q->busy[i])
			continue;
		s = art_session_get(t, q->e->sids[i], NULL);
		q->go[i] = !jv_is_valid(s) || !busy_above(q, &s);
		q->n += q->go[i];
		jv_free(s);
	}
	return 0;
}

static int
unclaim_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct idle *q = ctx;
	int i;

	for (i = 0; i < q->e->nsids; i++)
		if (q->go[i] && art_store_del(t, ART_DB_DRIVERS,
		    q->e->sids[i], NULL, 0, err) == -1)
			return -1;
	/* A driver record lost to an OS crash names a dead process. */
	art_txn_nosync(t);
	return 0;
}

/* The released sessions leave e->sids, their timers and prompts. */
static void
compact(struct idle *q)
{
	struct art_engine *e = q->e;
	int i, k = 0;

	e->wake = -1;
	for (i = 0; i < e->nsids; i++) {
		if (q->go[i]) {
			e->prompts = jv_object_delete(e->prompts,
			    jv_string(e->sids[i]));
			continue;
		}
		if (k != i) {
			memcpy(e->sids[k], e->sids[i], sizeof(e->sids[0]));
			e->wakes[k] = e->wakes[i];
		}
		if (e->wakes[k] >= 0 && (e->wake < 0 || e->wakes[k] < e->wake))
			e->wake = e->wakes[k];
		k++;
	}
	for (i = k; i <= e->nsids; i++)
		e->wakes[i] = -1;
	e->nsids = k;
}

int
art_engine_release_idle(struct art_engine *e, struct art_err *err)
{
	struct idle q = { e, NULL, NULL, 0 };
	int r;

	if (e->nsids == 0)
		return 0;
	if ((q.busy = calloc((size_t)e->nsids, 2)) == NULL)
		return art_err_set(err, "nomem", "out of memory");
	q.go = q.busy + e->nsids;
	r = art_store_read(e->o.store, idle_fn, &q, err);
	if (r == 0 && q.n > 0)
		r = art_store_write(e->o.store, unclaim_fn, &q, err);
	if (r == 0 && q.n > 0)
		compact(&q);
	free(q.busy);
	return r == -1 ? -1 : q.n;
}
