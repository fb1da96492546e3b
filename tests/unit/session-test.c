/* session-test - events folded into views: summary, tree, versions, turns */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "session.h"
#include "tap.h"
#include "testdb.h"
#include "testjv.h"

/* Records each JSON payload in order, in one transaction. */
struct rec {
	const char	*sid;
	const char	**payloads;
};

static int
rec_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct rec *r = ctx;
	const char **p;
	jv v;

	for (p = r->payloads; *p != NULL; p++) {
		v = art_json_parse_str(*p, err);
		if (!jv_is_valid(v) ||
		    art_session_record(t, r->sid, v, NULL, err) == -1)
			return -1;
	}
	return 0;
}

static int
record(struct testdb *db, const char *sid, struct art_err *err, ...)
{
	const char *list[32];
	struct rec r = { sid, list };
	va_list ap;
	int n = 0;

	va_start(ap, err);
	while (n < 31 && (list[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	list[n] = NULL;
	return art_store_write(db->st, rec_fn, &r, err);
}

struct create {
	const char	*sid;
	const char	*agent;
};

static int
create_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct create *c = ctx;

	return art_session_create(t, c->sid, c->agent, jv_null(), jv_array(),
	    err);
}

static int
create(struct testdb *db, const char *sid, struct art_err *err)
{
	struct create c = { sid, "calc" };

	return art_store_write(db->st, create_fn, &c, err);
}

struct show {
	const char	*sid;
	int		 kind;	/* 0 show, 1 get, 2 list */
	jv		 out;
};

static int
show_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct show *s = ctx;

	s->out = s->kind == 0 ? art_session_show(t, s->sid, err) :
	    s->kind == 1 ? art_session_get(t, s->sid, err) :
	    art_session_list(t, err);
	return jv_is_valid(s->out) ? 0 : -1;
}

static jv
show(struct testdb *db, const char *sid, int kind, struct art_err *err)
{
	struct show s = { sid, kind, jv_invalid() };

	art_store_read(db->st, show_fn, &s, err);
	return s.out;
}

/* One field of `show`. */
static jv
field(struct testdb *db, const char *sid, const char *key)
{
	struct art_err err;
	jv s = show(db, sid, 0, &err), v = art_json_field(&s, key);

	jv_free(s);
	return v;
}

#define MSG(id, parent) "{\"type\":\"message.new\",\"message\":{\"id\":\"" \
	id "\",\"role\":\"user\",\"content\":\"x\"},\"parent_id\":" parent "}"
#define STATE(v, anchor) "{\"type\":\"worker.state.updated\",\"state\":" v \
	",\"anchor\":" anchor "}"
#define HEAD(id) "{\"type\":\"head.moved\",\"head_id\":\"" id "\"}"

static void
test_create_records_session_created(void)
{
	struct testdb db;
	struct art_err err;
	jv s;

	testdb_open(&db, 0, 0);
	ok(create(&db, "s", &err) == 0, "a new session is created");
	s = show(&db, "s", 1, &err);
	ok(is_json(s, "{\"id\":\"s\",\"agent_id\":\"calc\",\"created\":"
	    "\"2026-01-02T03:04:05.000Z\",\"status\":\"idle\",\"head\":null,"
	    "\"turn\":null,\"identity\":null,\"ancestry\":[],\"nodes\":0}"),
	    "the summary holds what session.created said");
	ok(create(&db, "s", &err) == -1 && art_err_is(&err, "exists") &&
	    strcmp(err.msg, "session 's' exists") == 0,
	    "a taken id is refused");
	ok(is_json(field(&db, "s", "last_seq"), "1"),
	    "the refused create wrote no event");
	s = show(&db, "nope", 0, &err);
	ok(!jv_is_valid(s) && strcmp(err.msg, "no session 'nope'") == 0,
	    "an unknown session is not_found");
	jv_free(s);
	testdb_close(&db);
}

static void
test_messages_grow_the_tree_and_move_the_head(void)
{
	struct testdb db;
	struct art_err err;

	testdb_open(&db, 0, 0);
	create(&db, "s", &err);
	ok(record(&db, "s", &err, MSG("u1", "null"), MSG("a1", "\"u1\""),
	    MSG("u2", "\"a1\""), NULL) == 0, "three messages recorded");
	ok(is_json(field(&db, "s", "head"), "\"u2\""), "the head follows");
	ok(is_json(field(&db, "s", "nodes"), "3"), "three nodes");
	ok(record(&db, "s", &err, HEAD("u1"), NULL) == 0 &&
	    is_json(field(&db, "s", "head"), "\"u1\""), "head.moved moves it");
	ok(record(&db, "s", &err, MSG("x", "null"), HEAD("nope"), NULL) ==
	    -1 && art_err_is(&err, "not_found"),
	    "a head.moved to an unknown node fails the change");
	ok(is_json(field(&db, "s", "nodes"), "3") &&
	    is_json(field(&db, "s", "last_seq"), "5"),
	    "and nothing of that change was kept");
	ok(record(&db, "nope", &err, MSG("u1", "null"), NULL) == -1 &&
	    art_err_is(&err, "not_found"),
	    "events for an unknown session are refused");
	testdb_close(&db);
}

/*
 * State and config are anchored at the head when written and resolved
 * along the active path: a fork sees the state as of the fork point.
 */
static void
test_state_is_scoped_to_the_branch(void)
{
	struct testdb db;
	struct art_err err;

	testdb_open(&db, 0, 0);
	create(&db, "s", &err);
	record(&db, "s", &err, STATE("{\"n\":0}", "null"), MSG("u1", "null"),
	    STATE("{\"n\":1}", "\"u1\""), MSG("a1", "\"u1\""),
	    STATE("{\"n\":2}", "\"a1\""), NULL);
	ok(is_json(field(&db, "s", "state"), "{\"n\":2}"),
	    "the newest state on the path");
	record(&db, "s", &err, MSG("e1", "\"u1\""), NULL);
	ok(is_json(field(&db, "s", "state"), "{\"n\":1}"),
	    "a fork at u1 sees the state as of u1");
	record(&db, "s", &err, STATE("{\"n\":10}", "\"e1\""), NULL);
	record(&db, "s", &err, HEAD("a1"), NULL);
	ok(is_json(field(&db, "s", "state"), "{\"n\":2}"),
	    "back on the first branch: its own state");
	record(&db, "s", &err, HEAD("e1"), NULL);
	ok(is_json(field(&db, "s", "state"), "{\"n\":10}"),
	    "the second branch kept its own");
	record(&db, "s", &err, HEAD("u1"), STATE("{\"n\":5}", "\"u1\""),
	    HEAD("a1"), NULL);
	ok(is_json(field(&db, "s", "state"), "{\"n\":5}"),
	    "newest by time wins, not deepest: a later write at u1 beats a1's");
	record(&db, "s", &err, "{\"type\":\"agent.updated\",\"config\":"
	    "{\"model\":\"mock/echo\"},\"anchor\":null}", NULL);
	ok(is_json(field(&db, "s", "config"), "{\"model\":\"mock/echo\"}"),
	    "a config with no anchor is on every path");
	testdb_close(&db);
}

struct logq {
	const char	*sid;
	jv		 out;
};

static int
log_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct logq *q = ctx;

	q->out = art_log_read(t, q->sid, 0, 0, err);
	return jv_is_valid(q->out) ? 0 : -1;
}

/* The log of sid mapped through a jq-like projection done by hand. */
static jv
turn_ids(struct testdb *db, const char *sid)
{
	struct logq q = { sid, jv_invalid() };
	struct art_err err;
	jv out = jv_array();

	art_store_read(db->st, log_fn, &q, &err);
	jv_array_foreach(q.out, i, ev) {
		out = jv_array_append(out, art_json_field(&ev, "turn_id"));
		jv_free(ev);
	}
	jv_free(q.out);
	return out;
}

static void
test_turns_set_status_and_stamp_events(void)
{
	struct testdb db;
	struct art_err err;

	testdb_open(&db, 0, 0);
	create(&db, "s", &err);
	record(&db, "s", &err, "{\"type\":\"turn.started\",\"turn_id\":\"t1\"}",
	    MSG("u1", "null"), NULL);
	ok(is_json(field(&db, "s", "status"), "\"running\"") &&
	    is_json(field(&db, "s", "turn"), "\"t1\"") &&
	    is_json(field(&db, "s", "turn_status"), "\"running\""),
	    "a started turn runs");
	record(&db, "s", &err, "{\"type\":\"turn.completed\",\"turn_id\":"
	    "\"t1\",\"data\":\"391\"}", MSG("u2", "\"u1\""), NULL);
	ok(is_json(field(&db, "s", "status"), "\"idle\"") &&
	    is_json(field(&db, "s", "turn"), "\"t1\"") &&
	    is_json(field(&db, "s", "turn_status"), "\"completed\""),
	    "a completed turn leaves the session idle");
	ok(is_json(turn_ids(&db, "s"), "[null,\"t1\",\"t1\",\"t1\",null]"),
	    "events carry the turn running when they were recorded");
	record(&db, "s", &err, "{\"type\":\"turn.started\",\"turn_id\":\"t2\"}",
	    "{\"type\":\"turn.completed\",\"turn_id\":\"t2\",\"error\":\"x\"}",
	    NULL);
	ok(is_json(field(&db, "s", "turn_status"), "\"failed\""),
	    "a turn that completed with an error failed");
	ok(record(&db, "s", &err, "{\"type\":\"turn.completed\",\"turn_id\":"
	    "\"t9\"}", NULL) == -1, "completing an unknown turn is refused");
	testdb_close(&db);
}

static int
calls_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	static const char *const calls[][2] = {
		{ "c1", "pending" }, { "c2", "completed" }, { "c3", "failed" },
		{ "c4", "retry_scheduled" }, { "c5", "queued" },
	};
	size_t i;
	jv c;

	(void)ctx;
	for (i = 0; i < 5; i++) {
		c = jv_object_set(jv_object(), jv_string("id"),
		    jv_string(calls[i][0]));
		c = jv_object_set(c, jv_string("status"), jv_string(calls[i][1]));
		if (art_store_put(t, ART_DB_CALLS, "s", calls[i][0], 2, c,
		    err) == -1)
			return -1;
	}
	return 0;
}

static void
test_show_lists_only_open_calls(void)
{
	struct testdb db;
	struct art_err err;
	jv ids = jv_array(), calls;

	testdb_open(&db, 0, 0);
	create(&db, "s", &err);
	art_store_write(db.st, calls_fn, NULL, &err);
	calls = field(&db, "s", "calls");
	jv_array_foreach(calls, i, c) {
		ids = jv_array_append(ids, art_json_field(&c, "id"));
		jv_free(c);
	}
	jv_free(calls);
	ok(is_json(ids, "[\"c1\",\"c4\",\"c5\"]"),
	    "pending, retry_scheduled and queued calls are open");
	testdb_close(&db);
}

static int
remove_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	return art_session_remove(t, ctx, err);
}

static void
test_list_and_remove(void)
{
	struct testdb db;
	struct art_err err;
	jv all, ids = jv_array();

	testdb_open(&db, 0, 0);
	create(&db, "b", &err);
	create(&db, "a", &err);
	create(&db, "ab", &err);
	record(&db, "a", &err, MSG("u1", "null"), STATE("1", "\"u1\""), NULL);
	all = show(&db, NULL, 2, &err);
	jv_array_foreach(all, i, x) {
		ids = jv_array_append(ids, art_json_field(&x, "id"));
		jv_free(x);
	}
	jv_free(all);
	ok(is_json(ids, "[\"a\",\"ab\",\"b\"]"), "list: every session, by id");
	ok(art_store_write(db.st, remove_fn, "a", &err) == 0, "a removed");
	all = show(&db, "a", 0, &err);
	ok(!jv_is_valid(all) && art_err_is(&err, "not_found"), "a is gone");
	jv_free(all);
	ok(is_json(turn_ids(&db, "a"), "[]"), "its log is gone");
	ok(is_json(field(&db, "ab", "last_seq"), "1"), "ab is untouched");
	ok(art_store_write(db.st, remove_fn, "a", &err) == -1 &&
	    art_err_is(&err, "not_found"), "removing it again: not_found");
	ok(create(&db, "a", &err) == 0 &&
	    is_json(field(&db, "a", "state"), "null") &&
	    is_json(field(&db, "a", "nodes"), "0"),
	    "a new session of the same id starts empty");
	testdb_close(&db);
}

/* Folds a log into another store's views, as a replay would. */
struct fold {
	jv	events;
};

static int
fold_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct fold *f = ctx;
	unsigned char key[8];
	int64_t seq;

	jv_array_foreach(f->events, i, ev) {
		art_json_get_int(&ev, "seq", 1, &seq, err);
		art_be64_put(key, (uint64_t)seq);
		if (art_store_add(t, ART_DB_EVENTS, "s", key, 8, jv_copy(ev),
		    err) == -1 || art_session_apply(t, &ev, err) == -1) {
			jv_free(ev);
			return -1;
		}
		jv_free(ev);
	}
	return 0;
}

static void
test_views_rebuilt_from_the_log_equal_the_live_ones(void)
{
	struct testdb live, again;
	struct logq q = { "s", jv_invalid() };
	struct fold f;
	struct art_err err;
	jv a, b;

	testdb_open(&live, 0, 0);
	testdb_open(&again, 0, 0);
	create(&live, "s", &err);
	record(&live, "s", &err, "{\"type\":\"turn.started\",\"turn_id\":\"t\"}",
	    MSG("u1", "null"), STATE("{\"k\":1}", "\"u1\""), MSG("a1", "\"u1\""),
	    MSG("e1", "\"u1\""), STATE("{\"k\":2}", "\"e1\""), HEAD("a1"),
	    "{\"type\":\"agent.updated\",\"config\":{\"model\":\"m\"},"
	    "\"anchor\":null}", "{\"type\":\"turn.completed\",\"turn_id\":"
	    "\"t\",\"data\":null}", NULL);
	art_store_read(live.st, log_fn, &q, &err);
	f.events = q.out;
	ok(art_store_write(again.st, fold_fn, &f, &err) == 0,
	    "the log folds into an empty store");
	jv_free(f.events);
	a = show(&live, "s", 0, &err);
	b = show(&again, "s", 0, &err);
	ok(art_json_equal(&a, &b), "show is the same from either store");
	jv_free(a);
	jv_free(b);
	record(&live, "s", &err, HEAD("e1"), NULL);
	record(&again, "s", &err, HEAD("e1"), NULL);
	ok(is_json(field(&again, "s", "state"), "{\"k\":2}") &&
	    is_json(field(&live, "s", "state"), "{\"k\":2}"),
	    "and so is the state of the other branch");
	testdb_close(&live);
	testdb_close(&again);
}

/*
 * Another process grows the map past the size this one opened with: the
 * next transaction here adopts the new size (MDB_MAP_RESIZED).
 */
static void
test_a_map_grown_by_another_process_is_adopted(void)
{
	struct testdb db;
	struct art_err err;
	const char *bd = getenv("top_builddir");
	char cmd[1024];

	testdb_open(&db, 1u << 20, 0);
	create(&db, "s", &err);
	snprintf(cmd, sizeof(cmd), "%s/tests/helpers/append-events '%s' s 40 "
	    "100000", bd != NULL ? bd : ".", db.dir);
	ok(system(cmd) == 0, "another process appends 4 MB");
	ok(is_json(field(&db, "s", "last_seq"), "41"),
	    "this process reads what it wrote");
	ok(record(&db, "s", &err, MSG("u1", "null"), NULL) == 0 &&
	    is_json(field(&db, "s", "last_seq"), "42"),
	    "and writes after it");
	testdb_close(&db);
}

/*
 * Summaries are kept from one transaction to the next (store.c, kept)
 * only while no other process commits: one that does is read afresh.
 */
static void
test_another_writer_is_never_overwritten_from_a_kept_summary(void)
{
	struct testdb db;
	struct art_err err;
	const char *bd = getenv("top_builddir");
	char cmd[1024];

	testdb_open(&db, 0, 0);
	create(&db, "s", &err);
	ok(record(&db, "s", &err, MSG("u1", "null"), NULL) == 0 &&
	    is_json(field(&db, "s", "head"), "\"u1\""), "this process: u1");
	snprintf(cmd, sizeof(cmd), "%s/tests/helpers/append-events '%s' s 2 "
	    "msg", bd != NULL ? bd : ".", db.dir);
	ok(system(cmd) == 0, "another process: m1 and m2 under it");
	ok(is_json(field(&db, "s", "head"), "\"m2\"") &&
	    is_json(field(&db, "s", "nodes"), "3"), "read: the other's head");
	ok(record(&db, "s", &err, MSG("u2", "\"m2\""), NULL) == 0 &&
	    is_json(field(&db, "s", "nodes"), "4") &&
	    is_json(field(&db, "s", "head"), "\"u2\""),
	    "written after it: nothing of it lost");
	testdb_close(&db);
}

int
main(void)
{
	test_create_records_session_created();
	test_messages_grow_the_tree_and_move_the_head();
	test_state_is_scoped_to_the_branch();
	test_turns_set_status_and_stamp_events();
	test_show_lists_only_open_calls();
	test_list_and_remove();
	test_views_rebuilt_from_the_log_equal_the_live_ones();
	test_a_map_grown_by_another_process_is_adopted();
	test_another_writer_is_never_overwritten_from_a_kept_summary();
	return tap_done();
}
