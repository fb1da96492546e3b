/* session.c - a session: its log folded into views, and what reads them */
#include "session.h"

#include <string.h>
#include <strings.h>

#include "json.h"
#include "log.h"
#include "parts.h"
#include "tree.h"
#include "views.h"

static int
no_session(const char *sid, struct art_err *err)
{
	return art_err_set(err, "not_found", "no session '%s'", sid);
}

jv
art_session_get(struct art_txn *t, const char *sid, struct art_err *err)
{
	jv s = art_store_get(t, ART_DB_SESSIONS, sid, NULL, 0, err);

	if (!jv_is_valid(s) && art_err_is(err, "not_found"))
		no_session(sid, err);
	return s;
}

static int
put_summary(struct art_txn *t, const char *sid, jv summary,
    struct art_err *err)
{
	return art_store_put(t, ART_DB_SESSIONS, sid, NULL, 0, summary, err);
}

static int
tool_node_fn(const void *sub, size_t sublen, jv v, void *ctx,
    struct art_err *err)
{
	jv *out = ctx;
	const char *s = sub, *nul = memchr(s, '\0', sublen);

	(void)err;
	jv_free(v);
	if (nul != NULL)
		*out = jv_array_append(*out, jv_string_sized(nul + 1,
		    (int)(sublen - (size_t)(nul + 1 - s))));
	return 0;
}

/* Sub-key of a version: kind, anchor ("" for none), NUL, be64 seq. */
static size_t
version_key(unsigned char *k, size_t cap, enum art_version kind,
    const char *anchor, int64_t seq)
{
	size_t n = anchor != NULL ? strlen(anchor) : 0;

	if (n + 10 > cap)
		return 0;
	k[0] = (unsigned char)kind;
	memcpy(k + 1, anchor != NULL ? anchor : "", n);
	k[1 + n] = '\0';
	if (seq >= 0)
		art_be64_put(k + 2 + n, (uint64_t)seq);
	return n + 2 + (seq >= 0 ? 8 : 0);
}

struct best {
	int64_t		seq;
	unsigned char	key[512];
	size_t		len;		/* 0: none yet */
	int64_t		max;		/* no version after it; -1: none */
};

/* Scans an anchor's versions newest first for the first one up to max. */
static int
upto_fn(const void *sub, size_t sublen, jv v, void *ctx, struct art_err *err)
{
	struct best *b = ctx;
	int64_t seq;

	(void)err;
	jv_free(v);
	if (sublen < 8 || sublen > sizeof(b->key))
		return 0;
	seq = (int64_t)art_be64_get((const unsigned char *)sub + sublen - 8);
	if (seq > b->max)
		return 0;
	if (seq > b->seq) {
		memcpy(b->key, sub, sublen);
		b->len = sublen;
		b->seq = seq;
	}
	return 1;
}

/* The newest version at one anchor, if newer than b's: keys only. */
static int
best_at(struct art_txn *t, const char *sid, enum art_version kind,
    const char *anchor, struct best *b, struct art_err *err)
{
	unsigned char k[512], last[512];
	size_t n = version_key(k, sizeof(k), kind, anchor, -1), ln;
	int64_t seq;
	int r;

	if (n == 0)
		return 0;
	ln = sizeof(last);
	if ((r = art_store_last(t, ART_DB_VERSIONS, sid, k, n, last, &ln,
	    err)) <= 0)
		return r;
	if (ln != n + 8)
		return 0;
	seq = (int64_t)art_be64_get(last + n);
	if (b->max >= 0 && seq > b->max)
		return art_store_scan(t, ART_DB_VERSIONS, sid, k, n, NULL, 0, 1,
		    upto_fn, b, err) == -1 ? -1 : 0;
	if (seq <= b->seq)
		return 0;
	(void)t, (void)sid;
	memcpy(b->key, last, ln);
	b->len = ln;
	b->seq = seq;
	return 0;
}

/*
 * What the active path resolves to, kept beside the versions under the
 * one-byte key "R": {at: the head it holds for, a, s: [anchor, seq] of
 * the newest agent and state version on that path, or null}.  Moving the
 * head down one node or adding a version at the head updates it in O(1),
 * so a step resolves its config and state without walking the path; any
 * other move works it out again, once.
 */
#define RES_KEY	"R"

static int
res_put(struct art_txn *t, const char *sid, jv res, struct art_err *err)
{
	return art_store_put(t, ART_DB_VERSIONS, sid, RES_KEY, 1, res, err);
}

static jv
res_get(struct art_txn *t, const char *sid)
{
	return art_store_get(t, ART_DB_VERSIONS, sid, RES_KEY, 1, NULL);
}

static int
same_node(const jv *v, const char *id)
{
	if (jv_get_kind(*v) == JV_KIND_NULL)
		return id == NULL;
	return id != NULL && jv_get_kind(*v) == JV_KIND_STRING &&
	    strcmp(jv_string_value(*v), id) == 0;
}

/*
 * The member of the resolution cache that holds kind: its letter.  A
 * cache from before a kind was added lacks the member, and a read of it
 * walks the path instead (resolve_cached).
 */
static jv
res_key(enum art_version kind)
{
	char k[2] = { (char)kind, '\0' };

	return jv_string(k);
}

static int best_path(struct art_txn *, const char *, enum art_version,
    const char *, struct best *, struct art_err *);

/* The newest version of kind on the path to head, as [anchor, seq]. */
static jv
best_entry(struct art_txn *t, const char *sid, enum art_version kind,
    const char *head, struct art_err *err)
{
	struct best b = { .seq = 0, .len = 0, .max = -1 };
	size_t n;

	if (best_path(t, sid, kind, head, &b, err) == -1)
		return jv_invalid();
	if (b.len == 0)
		return jv_null();
	n = strnlen((const char *)b.key + 1, b.len - 1);
	return jv_array_append(jv_array_append(jv_array(), n > 0 ?
	    jv_string_sized((const char *)b.key + 1, (int)n) : jv_null()),
	    jv_number((double)b.seq));
}

/* Works out what the path to head resolves to, and keeps it. */
static int
res_compute(struct art_txn *t, const char *sid, const char *head,
    struct art_err *err)
{
	static const enum art_version kinds[] = { ART_VERSION_AGENT,
	    ART_VERSION_STATE, ART_VERSION_PLAN };
	jv r = jv_object_set(jv_object(), jv_string("at"), head != NULL ?
	    jv_string(head) : jv_null()), e;
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		e = best_entry(t, sid, kinds[i], head, err);
		if (!jv_is_valid(e)) {
			jv_free(r);
			return -1;
		}
		r = jv_object_set(r, res_key(kinds[i]), e);
	}
	return res_put(t, sid, r, err);
}

/* The head moved from where res holds (parent, when it went down one). */
static int
res_moved(struct art_txn *t, const char *sid, const char *parent,
    const char *head, struct art_err *err)
{
	jv res = res_get(t, sid), at;
	int r;

	if (!jv_is_valid(res)) {
		jv_free(res);
		return 0;		/* a session from before the cache */
	}
	at = jv_object_get(jv_copy(res), jv_string("at"));
	/* A cache from before the plan kind: made whole once, here. */
	if (!jv_object_has(jv_copy(res), res_key(ART_VERSION_PLAN)))
		r = res_compute(t, sid, head, err);
	else if (same_node(&at, head))
		r = 0;
	else if (parent != NULL && same_node(&at, parent))
		r = res_put(t, sid, jv_object_set(res, jv_string("at"),
		    jv_string(head)), err), res = jv_null();
	else
		r = res_compute(t, sid, head, err);
	jv_free(at);
	jv_free(res);
	return r;
}

/* A version of kind at anchor, seq, was written. */
static int
res_version(struct art_txn *t, const char *sid, enum art_version kind,
    const char *anchor, int64_t seq, struct art_err *err)
{
	jv res = res_get(t, sid), at, e;
	const char *h;
	int r;

	if (!jv_is_valid(res)) {
		jv_free(res);
		return 0;
	}
	at = jv_object_get(jv_copy(res), jv_string("at"));
	h = jv_get_kind(at) == JV_KIND_STRING ? jv_string_value(at) : NULL;
	if (anchor == NULL || same_node(&at, anchor)) {
		e = jv_array_append(jv_array_append(jv_array(), anchor != NULL ?
		    jv_string(anchor) : jv_null()), jv_number((double)seq));
		r = res_put(t, sid, jv_object_set(res, res_key(kind), e), err);
		res = jv_null();
	} else
		r = res_compute(t, sid, h, err);
	jv_free(at);
	jv_free(res);
	return r;
}

static int
apply_created(struct art_txn *t, const char *sid, const jv *ev,
    const jv *p, struct art_err *err)
{
	jv s = jv_object();

	s = jv_object_set(s, jv_string("id"), jv_string(sid));
	s = jv_object_set(s, jv_string("agent_id"), art_json_field(p,
	    "agent_id"));
	s = jv_object_set(s, jv_string("created"), art_json_field(ev,
	    "occurred_at"));
	s = jv_object_set(s, jv_string("status"), jv_string("idle"));
	s = jv_object_set(s, jv_string("head"), jv_null());
	s = jv_object_set(s, jv_string("turn"), jv_null());
	s = jv_object_set(s, jv_string("identity"), art_json_field(p,
	    "identity"));
	s = jv_object_set(s, jv_string("ancestry"), art_json_field(p,
	    "ancestry"));
	s = jv_object_set(s, jv_string("nodes"), jv_number(0));
	if (art_store_add(t, ART_DB_SESSIONS, sid, NULL, 0, s, err) == -1)
		return art_err_is(err, "exists") ? art_err_set(err, "exists",
		    "session '%s' exists", sid) : -1;
	/* Its tool messages are indexed by call from the start (session.h). */
	if (art_store_put(t, ART_DB_VERSIONS, sid, ART_TOOL_INDEX_MARK, 1,
	    jv_true(), err) == -1)
		return -1;
	return res_compute(t, sid, NULL, err);
}

int
art_session_tool_nodes(struct art_txn *t, const char *sid, const char *tcid,
    jv *out, struct art_err *err)
{
	unsigned char k[512];
	size_t n = strlen(tcid);
	jv mark;

	*out = jv_invalid();
	mark = art_store_get(t, ART_DB_VERSIONS, sid, ART_TOOL_INDEX_MARK, 1,
	    NULL);
	if (!jv_is_valid(mark)) {
		jv_free(mark);
		return 0;
	}
	jv_free(mark);
	if (n + 2 > sizeof(k))
		return 0;
	k[0] = ART_TOOL_INDEX_KIND;
	memcpy(k + 1, tcid, n);
	k[n + 1] = '\0';
	*out = jv_array();
	return art_store_scan(t, ART_DB_VERSIONS, sid, k, n + 2, NULL, 0, 0,
	    tool_node_fn, out, err) == -1 ? -1 : 1;
}

/* A tool message's node, under its call: kind, tool_call_id, NUL, id. */
static int
index_tool(struct art_txn *t, const char *sid, const jv *msg,
    struct art_err *err)
{
	const char *role = art_json_str(msg, "role");
	const char *tcid = art_json_str(msg, "tool_call_id");
	const char *id = art_json_str(msg, "id");
	unsigned char k[512];
	size_t a, b;

	if (role == NULL || strcmp(role, "tool") != 0 || tcid == NULL ||
	    id == NULL)
		return 0;
	a = strlen(tcid);
	b = strlen(id);
	if (a + b + 2 > sizeof(k))
		return 0;
	k[0] = ART_TOOL_INDEX_KIND;
	memcpy(k + 1, tcid, a);
	k[a + 1] = '\0';
	memcpy(k + a + 2, id, b);
	return art_store_put(t, ART_DB_VERSIONS, sid, k, a + b + 2,
	    jv_true(), err);
}

static int
apply_message(struct art_txn *t, const char *sid, jv *s, const jv *p,
    int64_t seq, struct art_err *err)
{
	jv msg = art_json_field(p, "message");
	const char *parent = art_json_str(p, "parent_id");
	int64_t nodes = 0;

	if (jv_get_kind(msg) != JV_KIND_OBJECT) {
		jv_free(msg);
		return art_err_set(err, "bad_field", "message.new: field "
		    "'message': expected object");
	}
	*s = jv_object_set(*s, jv_string("head"), art_json_field(&msg, "id"));
	if (index_tool(t, sid, &msg, err) == -1) {
		jv_free(msg);
		return -1;
	}
	if (art_tree_add(t, sid, msg, parent, seq, err) == -1 ||
	    res_moved(t, sid, parent, art_json_str(s, "head"), err) == -1)
		return -1;
	art_json_get_int(s, "nodes", 0, &nodes, NULL);
	*s = jv_object_set(*s, jv_string("nodes"), jv_number(nodes + 1));
	return 0;
}

static int
apply_head(struct art_txn *t, const char *sid, jv *s, const jv *p,
    struct art_err *err)
{
	const char *head = art_json_str(p, "head_id");
	jv node;

	if (head != NULL) {
		node = art_tree_node(t, sid, head, err);
		if (!jv_is_valid(node))
			return -1;
		jv_free(node);
	}
	*s = jv_object_set(*s, jv_string("head"), head != NULL ?
	    jv_string(head) : jv_null());
	return res_moved(t, sid, NULL, head, err);
}

static int
apply_version(struct art_txn *t, const char *sid, enum art_version kind,
    const jv *p, const char *field, int64_t seq, struct art_err *err)
{
	unsigned char k[512];
	size_t n = version_key(k, sizeof(k), kind, art_json_str(p, "anchor"),
	    seq);

	if (n == 0)
		return art_err_set(err, "bad_field", "anchor too long");
	if (art_store_put(t, ART_DB_VERSIONS, sid, k, n,
	    art_json_field(p, field), err) == -1)
		return -1;
	return res_version(t, sid, kind, art_json_str(p, "anchor"), seq, err);
}

static int
apply_turn(struct art_txn *t, const char *sid, jv *s, const jv *ev,
    const jv *p, int started, struct art_err *err)
{
	const char *tid = art_json_str(p, "turn_id");
	jv turn, e;
	int failed;

	if (tid == NULL)
		return art_err_set(err, "bad_field", "turn event without "
		    "turn_id");
	e = art_json_field(p, "error");
	failed = jv_get_kind(e) != JV_KIND_NULL;
	jv_free(e);
	turn = started ? jv_object() : art_store_get(t, ART_DB_TURNS, sid,
	    tid, strlen(tid), err);
	if (!jv_is_valid(turn))
		return -1;
	turn = jv_object_set(turn, jv_string("turn_id"), jv_string(tid));
	turn = jv_object_set(turn, jv_string("status"), jv_string(started ?
	    "running" : failed ? "failed" : "completed"));
	turn = jv_object_set(turn, jv_string(started ? "started" :
	    "completed"), art_json_field(ev, "occurred_at"));
	if (started)
		turn = art_json_set_some(turn, "stream", art_json_field(p,
		    "stream"));
	if (!started) {
		turn = jv_object_set(turn, jv_string("data"),
		    art_json_field(p, "data"));
		turn = art_json_set_some(turn, "error", art_json_field(p,
		    "error"));
		turn = art_json_set_some(turn, "code", art_json_field(p,
		    "code"));
	}
	*s = jv_object_set(*s, jv_string("turn"), jv_string(tid));
	*s = jv_object_set(*s, jv_string("status"), jv_string(started ?
	    "running" : "idle"));
	*s = jv_object_delete(*s, jv_string("turn_deadline"));
	return art_store_put(t, ART_DB_TURNS, sid, tid, strlen(tid), turn, err);
}

static int
apply_to(struct art_txn *t, const char *sid, jv *s, const jv *ev,
    const jv *p, const char *type, struct art_err *err)
{
	int64_t seq = 0;

	art_json_get_int(ev, "seq", 0, &seq, NULL);
	if (strcmp(type, "message.new") == 0)
		return apply_message(t, sid, s, p, seq, err);
	if (strcmp(type, "head.moved") == 0)
		return apply_head(t, sid, s, p, err);
	if (strcmp(type, "worker.state.updated") == 0)
		return apply_version(t, sid, ART_VERSION_STATE, p, "state",
		    seq, err);
	if (strcmp(type, "agent.updated") == 0)
		return apply_version(t, sid, ART_VERSION_AGENT, p, "config",
		    seq, err);
	if (strcmp(type, "plan.updated") == 0)
		return apply_version(t, sid, ART_VERSION_PLAN, p, "plan", seq,
		    err);
	if (strcmp(type, "turn.started") == 0)
		return apply_turn(t, sid, s, ev, p, 1, err);
	if (strcmp(type, "turn.completed") == 0)
		return apply_turn(t, sid, s, ev, p, 0, err);
	if (strcmp(type, "turn.deadline") == 0) {
		/* max_turn_ms's, where every step's plan reads it. */
		*s = jv_object_set(*s, jv_string("turn_deadline"),
		    art_json_field(p, "deadline"));
		return 0;
	}
	*s = art_views_apply(t, sid, *s, ev, p, type, err);
	if (!jv_is_valid(*s)) {
		*s = jv_null();
		return -1;
	}
	return 0;
}

int
art_session_apply(struct art_txn *t, const jv *ev, struct art_err *err)
{
	const char *sid = art_json_str(ev, "session_id"), *type;
	jv p = art_json_field(ev, "payload"), s;
	int r;

	type = art_json_str(&p, "type");
	if (sid == NULL || type == NULL) {
		jv_free(p);
		return art_err_set(err, "bad_field", "event without "
		    "session_id or payload type");
	}
	if (strcmp(type, "session.created") == 0) {
		r = apply_created(t, sid, ev, &p, err);
		jv_free(p);
		return r;
	}
	s = art_session_get(t, sid, err);
	if (!jv_is_valid(s)) {
		jv_free(p);
		return -1;
	}
	r = apply_to(t, sid, &s, ev, &p, type, err);
	jv_free(p);
	if (r == -1) {
		jv_free(s);
		return -1;
	}
	return put_summary(t, sid, s, err);
}

/* The turn an event belongs to: the one running, or the one it starts. */
static jv
turn_of(const jv *s, const jv *payload)
{
	const char *type = art_json_str(payload, "type");
	const char *st = art_json_str(s, "status");

	if (type != NULL && strcmp(type, "turn.started") == 0)
		return art_json_field(payload, "turn_id");
	if (st != NULL && strcmp(st, "running") == 0)
		return art_json_field(s, "turn");
	return jv_null();
}

int64_t
art_session_record_at(struct art_txn *t, const char *sid, jv payload,
    jv *event, jv *summary, struct art_err *err)
{
	const char *type = art_json_str(&payload, "type");
	int created = type != NULL && strcmp(type, "session.created") == 0;
	jv s, turn, ev, p;
	int64_t seq;
	int r;

	/* The summary is read once: for the turn, then to fold the event. */
	s = created ? jv_null() : art_store_get(t, ART_DB_SESSIONS, sid, NULL,
	    0, NULL);
	if (!jv_is_valid(s)) {
		jv_free(s);
		s = jv_null();
	}
	turn = turn_of(&s, &payload);
	seq = art_log_append(t, sid, payload, jv_get_kind(turn) ==
	    JV_KIND_STRING ? jv_string_value(turn) : NULL, &ev, err);
	jv_free(turn);
	if (seq == -1) {
		jv_free(s);
		return -1;
	}
	if (created || jv_get_kind(s) != JV_KIND_OBJECT) {
		jv_free(s);
		r = art_session_apply(t, &ev, err);
		s = r == 0 && summary != NULL ? art_session_get(t, sid, err) :
		    jv_null();
	} else {
		p = art_json_field(&ev, "payload");
		r = apply_to(t, sid, &s, &ev, &p, art_json_str(&p, "type"), err);
		jv_free(p);
		if (r == 0)
			r = put_summary(t, sid, jv_copy(s), err);
	}
	if (r == -1) {
		jv_free(s);
		jv_free(ev);
		return -1;
	}
	if (summary != NULL)
		*summary = s;
	else
		jv_free(s);
	if (event != NULL)
		*event = ev;
	else
		jv_free(ev);
	return seq;
}

int64_t
art_session_record(struct art_txn *t, const char *sid, jv payload,
    jv *event, struct art_err *err)
{
	return art_session_record_at(t, sid, payload, event, NULL, err);
}

int
art_session_create(struct art_txn *t, const char *sid, const char *agent_id,
    jv identity, jv ancestry, struct art_err *err)
{
	jv p = jv_object();

	p = jv_object_set(p, jv_string("type"), jv_string("session.created"));
	p = jv_object_set(p, jv_string("agent_id"), agent_id != NULL ?
	    jv_string(agent_id) : jv_null());
	p = jv_object_set(p, jv_string("identity"), identity);
	p = jv_object_set(p, jv_string("ancestry"), ancestry);
	return art_session_record(t, sid, p, NULL, err) == -1 ? -1 : 0;
}

/*
 * The newest version seen so far: only its key, so a walk past many
 * versions parses one value, the winner's, at the end.
 */
jv
art_session_resolve(struct art_txn *t, const char *sid,
    enum art_version kind, const char *head, struct art_err *err)
{
	return art_session_resolve_at(t, sid, kind, head, -1, err);
}

/* The newest version of kind (up to b->max) on the path to head. */
static int
best_path(struct art_txn *t, const char *sid, enum art_version kind,
    const char *head, struct best *b, struct art_err *err)
{
	jv ids = art_tree_path_ids(t, sid, head, err);
	int r = best_at(t, sid, kind, NULL, b, err);

	if (!jv_is_valid(ids) || r == -1) {
		jv_free(ids);
		return -1;
	}
	jv_array_foreach(ids, i, id) {
		if (r == 0)
			r = best_at(t, sid, kind, jv_string_value(id), b, err);
		jv_free(id);
	}
	jv_free(ids);
	return r;
}

/* From the cache, when it holds for head and max: 1 done, 0 not. */
static int
resolve_cached(struct art_txn *t, const char *sid, enum art_version kind,
    const char *head, int64_t max_seq, jv *out, struct art_err *err)
{
	jv res = res_get(t, sid), at, e, a, sv;
	unsigned char k[512];
	int64_t seq = 0;
	size_t n;
	int hit = 0;

	if (!jv_is_valid(res)) {
		jv_free(res);
		return 0;
	}
	at = jv_object_get(jv_copy(res), jv_string("at"));
	e = jv_object_get(jv_copy(res), res_key(kind));
	if (same_node(&at, head) && jv_get_kind(e) == JV_KIND_NULL) {
		*out = jv_null();
		hit = 1;
	} else if (same_node(&at, head) && jv_get_kind(e) == JV_KIND_ARRAY) {
		a = jv_array_get(jv_copy(e), 0);
		sv = jv_array_get(jv_copy(e), 1);
		seq = jv_get_kind(sv) == JV_KIND_NUMBER ?
		    (int64_t)jv_number_value(sv) : 0;
		jv_free(sv);
		n = version_key(k, sizeof(k), kind, jv_get_kind(a) ==
		    JV_KIND_STRING ? jv_string_value(a) : NULL, seq);
		if (n > 0 && (max_seq < 0 || seq <= max_seq)) {
			*out = art_store_get(t, ART_DB_VERSIONS, sid, k, n, err);
			hit = 1;
		}
		jv_free(a);
	}
	jv_free(at);
	jv_free(e);
	jv_free(res);
	return hit;
}

jv
art_session_resolve_at(struct art_txn *t, const char *sid,
    enum art_version kind, const char *head, int64_t max_seq,
    struct art_err *err)
{
	struct best b = { .seq = 0, .len = 0, .max = max_seq };
	jv out;

	if (resolve_cached(t, sid, kind, head, max_seq, &out, err))
		return out;
	if (best_path(t, sid, kind, head, &b, err) == -1)
		return jv_invalid();
	return b.len > 0 ? art_store_get(t, ART_DB_VERSIONS, sid, b.key, b.len,
	    err) : jv_null();
}

static int
open_call_fn(const void *sub, size_t sublen, jv v, void *ctx,
    struct art_err *err)
{
	const char *st = art_json_str(&v, "status");
	jv *calls = ctx;

	(void)sub, (void)sublen, (void)err;
	if (st != NULL && (strcmp(st, "completed") == 0 ||
	    strcmp(st, "failed") == 0))
		jv_free(v);
	else
		*calls = jv_array_append(*calls, v);
	return 0;
}

/* Adds the resolved parts to a summary; -1 with err on failure. */
static int
resolve_all(struct art_txn *t, const char *sid, jv *s, struct art_err *err)
{
	const char *head = art_json_str(s, "head"), *tid;
	jv calls = jv_array(), v, turn = jv_null();
	int64_t last;

	if ((last = art_log_last_seq(t, sid, err)) == -1)
		goto fail;
	*s = jv_object_set(*s, jv_string("last_seq"), jv_number(last));
	/* Open interrupts: {} when none, never missing. */
	v = art_json_field(s, "interrupts");
	*s = jv_object_set(*s, jv_string("interrupts"), jv_get_kind(v) ==
	    JV_KIND_OBJECT ? v : (jv_free(v), jv_object()));
	if (!jv_is_valid(v = art_session_resolve(t, sid, ART_VERSION_AGENT,
	    head, err)))
		goto fail;
	*s = jv_object_set(*s, jv_string("config"), v);
	if (!jv_is_valid(v = art_session_resolve(t, sid, ART_VERSION_STATE,
	    head, err)))
		goto fail;
	*s = jv_object_set(*s, jv_string("state"), v);
	/* An autonomous turn's plan, as the active path resolves it. */
	if (!jv_is_valid(v = art_session_resolve(t, sid, ART_VERSION_PLAN,
	    head, err)))
		goto fail;
	*s = jv_object_set(*s, jv_string("plan"), v);
	if (art_store_scan(t, ART_DB_CALLS, sid, NULL, 0, NULL, 0, 0,
	    open_call_fn, &calls, err) == -1)
		goto fail;
	*s = jv_object_set(*s, jv_string("calls"), calls);
	if ((tid = art_json_str(s, "turn")) != NULL) {
		turn = art_store_get(t, ART_DB_TURNS, sid, tid, strlen(tid), err);
		if (!jv_is_valid(turn))
			return -1;
	}
	*s = jv_object_set(*s, jv_string("turn_status"), art_json_field(&turn,
	    "status"));
	jv_free(turn);
	return 0;
fail:
	jv_free(calls);
	return -1;
}

jv
art_session_show(struct art_txn *t, const char *sid, struct art_err *err)
{
	jv s = art_session_get(t, sid, err);

	if (!jv_is_valid(s))
		return s;
	if (resolve_all(t, sid, &s, err) == -1) {
		jv_free(s);
		return jv_invalid();
	}
	return s;
}

static int
list_fn(const void *sub, size_t sublen, jv v, void *ctx, struct art_err *err)
{
	jv *all = ctx;

	(void)sub, (void)sublen, (void)err;
	*all = jv_array_append(*all, v);
	return 0;
}

/*
 * By creation time, then id: an id given with --id or --as (a copy keeps
 * its original's session.created) says nothing of when a session was
 * made.  "created" is RFC 3339 with milliseconds in UTC, one width, so
 * its strings sort as its times do.
 */
jv
art_session_list(struct art_txn *t, struct art_err *err)
{
	jv all = jv_array(), keys = jv_array();

	if (art_store_scan(t, ART_DB_SESSIONS, NULL, NULL, 0, NULL, 0, 0,
	    list_fn, &all, err) == -1) {
		jv_free(all);
		jv_free(keys);
		return jv_invalid();
	}
	jv_array_foreach(all, i, s) {
		keys = jv_array_append(keys, JV_ARRAY(art_json_field(&s,
		    "created"), art_json_field(&s, "id")));
		jv_free(s);
	}
	return jv_sort(all, keys);
}

int
art_session_remove(struct art_txn *t, const char *sid, struct art_err *err)
{
	jv s = art_session_get(t, sid, err);

	if (!jv_is_valid(s))
		return -1;
	jv_free(s);
	return art_store_del_session(t, sid, err) == -1 ? -1 : 0;
}

/* --- what ls shows --------------------------------------------------- */

/* A message's text: its content's, parts joined (art_parts_join). */
static jv
message_text(const jv *node)
{
	jv m = art_json_field(node, "message"), c, text;

	c = art_json_field(&m, "content");
	text = art_parts_join(&c);
	jv_free(c);
	jv_free(m);
	return text;
}

/* The first user message's text, found in node order (ids are v7). */
static int
first_user_fn(const void *sub, size_t sublen, jv v, void *ctx,
    struct art_err *err)
{
	jv *title = ctx, m = art_json_field(&v, "message");
	const char *role = art_json_str(&m, "role");
	int found = role != NULL && strcmp(role, "user") == 0;

	(void)sub, (void)sublen, (void)err;
	if (found) {
		jv_free(*title);
		*title = message_text(&v);
	}
	jv_free(m);
	jv_free(v);
	return found;
}

/* text (consumed)'s first line, cut to max bytes at a character's end. */
static jv
cut_title(jv text, size_t max)
{
	const char *s;
	size_t n;
	jv out;

	if (jv_get_kind(text) != JV_KIND_STRING)
		return (jv_free(text), jv_null());
	s = jv_string_value(text);
	s += strspn(s, " \t\r\n");
	n = strcspn(s, "\r\n");
	if (n <= max) {
		out = jv_string_sized(s, (int)n);
		jv_free(text);
		return out;
	}
	/* Back to the start of a UTF-8 character. */
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	out = jv_string_append_str(jv_string_sized(s, (int)n), "\u2026");
	jv_free(text);
	return out;
}

jv
art_session_row(struct art_txn *t, const jv *s, struct art_err *err)
{
	static const char *const keys[] = { "id", "agent_id", "created",
	    "status", "head", "turn" };
	const char *sid = art_json_str(s, "id"), *st;
	jv row = jv_object(), title = jv_null(), last, ints, ev;
	int64_t seq;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		row = jv_object_set(row, jv_string(keys[i]),
		    art_json_field(s, keys[i]));
	if (sid == NULL)
		return row;
	ints = art_json_field(s, "interrupts");
	st = art_json_str(s, "status");
	if (st != NULL && strcmp(st, "running") == 0 &&
	    jv_get_kind(ints) == JV_KIND_OBJECT &&
	    jv_object_length(jv_copy(ints)) > 0)
		row = jv_object_set(row, jv_string("status"),
		    jv_string("parked"));
	jv_free(ints);
	if (art_store_scan(t, ART_DB_NODES, sid, NULL, 0, NULL, 0, 0,
	    first_user_fn, &title, err) == -1 ||
	    (seq = art_log_last_seq(t, sid, err)) == -1) {
		jv_free(title);
		jv_free(row);
		return jv_invalid();
	}
	row = jv_object_set(row, jv_string("title"), cut_title(title,
	    ART_SESSION_TITLE_MAX));
	last = seq > 0 ? art_log_read(t, sid, (uint64_t)seq - 1, 1, err) :
	    jv_array();
	if (!jv_is_valid(last)) {
		jv_free(row);
		return last;
	}
	ev = jv_array_length(jv_copy(last)) > 0 ? jv_array_get(jv_copy(last),
	    0) : jv_null();
	row = jv_object_set(row, jv_string("updated"), art_json_field(&ev,
	    "occurred_at"));
	jv_free(ev);
	jv_free(last);
	return row;
}

struct mention {
	const char	*text;
	int		 found;
};

/* strcasestr(3), ASCII only, for any libc. */
static int
has_text(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay != '\0'; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return 1;
	return n == 0;
}

static int
mention_fn(const void *sub, size_t sublen, jv v, void *ctx,
    struct art_err *err)
{
	struct mention *m = ctx;
	jv text = message_text(&v);

	(void)sub, (void)sublen, (void)err;
	m->found = jv_get_kind(text) == JV_KIND_STRING &&
	    has_text(jv_string_value(text), m->text);
	jv_free(text);
	jv_free(v);
	return m->found;
}

int
art_session_mentions(struct art_txn *t, const char *sid, const char *text,
    struct art_err *err)
{
	struct mention m = { text, 0 };

	if (art_store_scan(t, ART_DB_NODES, sid, NULL, 0, NULL, 0, 0,
	    mention_fn, &m, err) == -1)
		return -1;
	return m.found;
}
