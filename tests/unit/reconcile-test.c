/* reconcile-test - a view written into the message tree (PROTOCOL-NOTES §3) */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "json.h"
#include "log.h"
#include "reconcile.h"
#include "session.h"
#include "tap.h"
#include "testdb.h"
#include "testjv.h"
#include "tree.h"

struct rig {
	struct testdb	 db;
	struct art_ids	 ids;
	struct art_txn	*t;		/* the write in progress */
	struct art_err	*err;		/* its err, which the ops share */
	int		 fail_at;	/* record number that fails; 0 none */
	int		 records;
};

static int
mint_cb(void *ctx, char *buf)
{
	struct rig *r = ctx;

	return art_ids_v7(&r->ids, buf);
}

static int
record_cb(void *ctx, jv payload)
{
	struct rig *r = ctx;

	if (r->fail_at > 0 && ++r->records >= r->fail_at) {
		jv_free(payload);
		return art_err_set(r->err, "store", "record:"
		    " failed on purpose");
	}
	return art_session_record(r->t, "s", payload, NULL, r->err) == -1 ?
	    -1 : 0;
}

static int
rec_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	const char **p;
	jv v;

	for (p = ctx; *p != NULL; p++) {
		v = art_json_parse_str(*p, err);
		if (!jv_is_valid(v) ||
		    art_session_record(t, "s", v, NULL, err) == -1)
			return -1;
	}
	return 0;
}

static int
create_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	(void)ctx;
	return art_session_create(t, "s", "calc", jv_null(), jv_array(), err);
}

/* Records the payloads (NULL-terminated) in one transaction. */
static int
record(struct rig *r, ...)
{
	const char *list[16];
	struct art_err err;
	va_list ap;
	int n = 0;

	va_start(ap, r);
	while (n < 15 && (list[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	list[n] = NULL;
	return art_store_write(r->db.st, rec_fn, list, &err);
}

#define MSG(id, role, content, parent) "{\"type\":\"message.new\"," \
	"\"message\":{\"id\":\"" id "\",\"role\":\"" role "\",\"content\":\"" \
	content "\"},\"parent_id\":" parent "}"

/* A store with session "s" whose tree is  u1 - a1 - u2  (head u2). */
static void
rig_open(struct rig *r)
{
	struct art_err err;

	memset(r, 0, sizeof(*r));
	testdb_open(&r->db, 0, 0);
	if (art_ids_init(&r->ids, &r->db.clock, "reconcile-test", &err) == -1 ||
	    art_store_write(r->db.st, create_fn, NULL, &err) == -1 ||
	    record(r, MSG("u1", "user", "to Paris", "null"),
	    MSG("a1", "assistant", "booked", "\"u1\""),
	    MSG("u2", "user", "and back", "\"a1\""), NULL) == -1) {
		fprintf(stderr, "reconcile-test: setup failed\n");
		exit(99);
	}
}

static void
rig_close(struct rig *r)
{
	testdb_close(&r->db);
}

struct apply {
	struct rig	*r;
	const char	*view;
	int		 written;
};

static int
apply_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct apply *a = ctx;
	struct art_reconcile_ops ops = { mint_cb, record_cb, a->r };
	jv view = art_json_parse_str(a->view, err), s;
	char head[ART_ID_MAX + 1] = "";
	const char *h;

	s = art_session_get(t, "s", err);
	if (!jv_is_valid(view) || !jv_is_valid(s)) {
		jv_free(view);
		jv_free(s);
		return -1;
	}
	if ((h = art_json_str(&s, "head")) != NULL)
		snprintf(head, sizeof(head), "%s", h);
	jv_free(s);
	a->r->t = t;
	a->r->err = err;
	a->written = art_reconcile_apply(t, "s", &view, *head != '\0' ? head :
	    NULL, &ops, err);
	a->r->t = NULL;
	a->r->err = NULL;
	jv_free(view);
	return a->written == -1 ? -1 : 0;
}

/* Applies the view (JSON text); returns the count written, or -1. */
static int
apply(struct rig *r, const char *view)
{
	struct apply a = { r, view, -1 };
	struct art_err err;

	if (art_store_write(r->db.st, apply_fn, &a, &err) == -1)
		return -1;
	return a.written;
}

struct q {
	int	 what;	/* 0 summary, 1 active path, 2 log, 3 news_from */
	const char *view;
	int64_t	 after;
	jv	 out;
	int	 n;
};

static int
q_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct q *q = ctx;
	jv s, v;

	switch (q->what) {
	case 0:
		q->out = art_session_get(t, "s", err);
		break;
	case 1:
		s = art_session_get(t, "s", err);
		q->out = art_tree_path(t, "s", art_json_str(&s, "head"), err);
		jv_free(s);
		break;
	case 2:
		q->out = art_log_read(t, "s", (uint64_t)q->after, 0, err);
		break;
	case 3:
		v = art_json_parse_str(q->view, err);
		q->n = art_reconcile_news_from(t, "s", &v, err);
		jv_free(v);
		q->out = jv_null();
		break;
	case 4:
		v = art_json_parse_str(q->view, err);
		s = art_session_get(t, "s", err);
		q->out = art_reconcile_normalize(t, "s", &v, art_json_str(&s,
		    "head"), err);
		jv_free(s);
		jv_free(v);
		break;
	}
	return jv_is_valid(q->out) ? 0 : -1;
}

static jv
query(struct rig *r, int what, int64_t after)
{
	struct q q = { what, NULL, after, jv_invalid(), 0 };
	struct art_err err;

	art_store_read(r->db.st, q_fn, &q, &err);
	return q.out;
}

static jv
summary_field(struct rig *r, const char *key)
{
	jv s = query(r, 0, 0), v = art_json_field(&s, key);

	jv_free(s);
	return v;
}

static int64_t
last_seq(struct rig *r)
{
	return jv_array_length(query(r, 2, 0));
}

/* The active path with each node's field key, e.g. ids or contents. */
static jv
path_of(struct rig *r, const char *key)
{
	jv path = query(r, 1, 0), out = jv_array();

	jv_array_foreach(path, i, m) {
		out = jv_array_append(out, art_json_field(&m, key));
		jv_free(m);
	}
	jv_free(path);
	return out;
}

/* The types of the events recorded after seq. */
static jv
types_after(struct rig *r, int64_t after)
{
	jv log = query(r, 2, after), out = jv_array(), p;

	jv_array_foreach(log, i, ev) {
		p = art_json_field(&ev, "payload");
		out = jv_array_append(out, art_json_field(&p, "type"));
		jv_free(p);
		jv_free(ev);
	}
	jv_free(log);
	return out;
}

/* The i-th event after seq's payload. */
static jv
payload_after(struct rig *r, int64_t after, int i)
{
	jv log = query(r, 2, after), ev = jv_array_get(log, i);
	jv p = jv_is_valid(ev) ? art_json_field(&ev, "payload") : jv_null();

	jv_free(ev);
	return p;
}

static const char *
str_at(const jv *a, int i, char *buf, size_t n)
{
	jv v = jv_array_get(jv_copy(*a), i);

	snprintf(buf, n, "%s", jv_get_kind(v) == JV_KIND_STRING ?
	    jv_string_value(v) : "");
	jv_free(v);
	return buf;
}

static int
news_from(struct rig *r, const char *view)
{
	struct q q = { 3, view, 0, jv_invalid(), -2 };
	struct art_err err;

	art_store_read(r->db.st, q_fn, &q, &err);
	jv_free(q.out);
	return q.n;
}

#define U1 "{\"id\":\"u1\",\"role\":\"user\",\"content\":\"to Paris\"}"
#define A1 "{\"id\":\"a1\",\"role\":\"assistant\",\"content\":\"booked\"}"
#define U2 "{\"id\":\"u2\",\"role\":\"user\",\"content\":\"and back\"}"

static void
test_a_resend_of_known_ids_writes_nothing(void)
{
	struct rig r;
	int64_t seq;

	rig_open(&r);
	seq = last_seq(&r);
	ok(apply(&r, "[" U1 "," A1 "," U2 "]") == 0, "nothing written");
	ok(last_seq(&r) == seq, "no event recorded, not even head.moved");
	ok(is_json(summary_field(&r, "head"), "\"u2\""), "the head stays");
	ok(apply(&r, "[{\"id\":\"u1\",\"role\":\"user\",\"content\":\"other\"},"
	    A1 "," U2 "]") == 0 && last_seq(&r) == seq,
	    "matching is by id only, never content");
	rig_close(&r);
}

static void
test_an_id_less_message_after_the_path_is_appended(void)
{
	struct rig r;
	int64_t seq;
	char id[ART_ID_MAX + 1];
	jv ids, p;

	rig_open(&r);
	seq = last_seq(&r);
	ok(apply(&r, "[" U1 "," A1 "," U2 ",{\"role\":\"user\",\"content\":"
	    "\"on Friday\"}]") == 1, "one message written");
	ok(is_json(types_after(&r, seq), "[\"message.new\"]"),
	    "as one message.new");
	ids = path_of(&r, "id");
	str_at(&ids, 3, id, sizeof(id));
	ok(jv_array_length(jv_copy(ids)) == 4 && art_uuid_parse(id,
	    (unsigned char[16]){ 0 }) == 0, "under u2, with a minted id (%s)",
	    id);
	jv_free(ids);
	p = summary_field(&r, "head");
	ok(jv_get_kind(p) == JV_KIND_STRING && strcmp(jv_string_value(p), id) ==
	    0, "the head moves to the new node");
	jv_free(p);
	ok(is_json(path_of(&r, "content"), "[\"to Paris\",\"booked\","
	    "\"and back\",\"on Friday\"]"), "the path ends with it");
	p = payload_after(&r, seq, 0);
	ok(is_json(art_json_field(&p, "parent_id"), "\"u2\""),
	    "message.new names u2 as parent");
	jv_free(p);
	rig_close(&r);
}

/* The worked example: path u1 - a1 - u2, the client edits after u1. */
static void
test_an_edit_forks_under_the_last_known_message(void)
{
	struct rig r;
	char e1[ART_ID_MAX + 1];
	jv ids;

	rig_open(&r);
	ok(apply(&r, "[" U1 ",{\"role\":\"user\",\"content\":\"LA instead\"}]")
	    == 1, "the edit is written");
	ids = path_of(&r, "id");
	str_at(&ids, 1, e1, sizeof(e1));
	jv_free(ids);
	ok(is_json(path_of(&r, "content"), "[\"to Paris\",\"LA instead\"]"),
	    "the active path is u1, e1");
	ok(is_json(summary_field(&r, "nodes"), "4"),
	    "the a1 - u2 branch stays in the tree");
	ok(strcmp(e1, "u1") != 0 && strcmp(e1, "a1") != 0 && *e1 != '\0',
	    "e1 has a fresh id");
	rig_close(&r);
}

static void
test_news_never_stops(void)
{
	struct rig r;
	char x[ART_ID_MAX + 1], a[ART_ID_MAX + 1];
	int64_t seq;
	jv ids, p;

	rig_open(&r);
	seq = last_seq(&r);
	ok(apply(&r, "[" U1 ",{\"id\":\"x1\",\"role\":\"user\",\"content\":"
	    "\"Rome\"}," A1 "]") == 2, "two messages written");
	ids = path_of(&r, "id");
	str_at(&ids, 1, x, sizeof(x));
	str_at(&ids, 2, a, sizeof(a));
	jv_free(ids);
	ok(strcmp(x, "x1") == 0, "an unknown id is kept");
	ok(*a != '\0' && strcmp(a, "a1") != 0,
	    "a known id after news is re-recorded under a fresh id (%s)", a);
	ok(is_json(path_of(&r, "content"), "[\"to Paris\",\"Rome\","
	    "\"booked\"]"), "the new branch is a chain: u1, x1, a1'");
	p = payload_after(&r, seq, 1);
	ok(is_json(art_json_field(&p, "parent_id"), "\"x1\""),
	    "the copy hangs under x1, not a graft onto the old a1");
	jv_free(p);
	ok(is_json(summary_field(&r, "nodes"), "5"), "the old a1 is untouched");
	rig_close(&r);
}

static void
test_a_shorter_view_moves_the_head_only(void)
{
	struct rig r;
	int64_t seq;

	rig_open(&r);
	seq = last_seq(&r);
	ok(apply(&r, "[" U1 "," A1 "]") == 0, "nothing written");
	ok(is_json(types_after(&r, seq), "[\"head.moved\"]"),
	    "one head.moved recorded");
	ok(is_json(payload_after(&r, seq, 0), "{\"type\":\"head.moved\","
	    "\"head_id\":\"a1\"}"), "naming the view's last message");
	ok(is_json(summary_field(&r, "head"), "\"a1\""), "the head is a1");
	ok(is_json(summary_field(&r, "nodes"), "3"), "no node was removed");
	seq = last_seq(&r);
	ok(apply(&r, "[" U1 "," A1 "," U2 "]") == 0 &&
	    is_json(types_after(&r, seq), "[\"head.moved\"]") &&
	    is_json(summary_field(&r, "head"), "\"u2\""),
	    "a resend of the longer branch switches back to it");
	rig_close(&r);
}

static void
test_an_empty_view_does_nothing(void)
{
	struct rig r;
	int64_t seq;

	rig_open(&r);
	seq = last_seq(&r);
	ok(apply(&r, "[]") == 0, "nothing written");
	ok(last_seq(&r) == seq, "no event at all");
	ok(is_json(summary_field(&r, "head"), "\"u2\""), "the head stays");
	rig_close(&r);
}

static void
test_a_view_sharing_no_prefix_forks_at_the_root(void)
{
	struct rig r;
	int64_t seq;
	jv p;

	rig_open(&r);
	seq = last_seq(&r);
	ok(apply(&r, "[{\"id\":\"z1\",\"role\":\"user\",\"content\":\"hello\"},"
	    "{\"role\":\"assistant\",\"content\":\"hi\"}]") == 2,
	    "both messages written");
	p = payload_after(&r, seq, 0);
	ok(is_json(art_json_field(&p, "parent_id"), "null"),
	    "the first is a new root");
	jv_free(p);
	ok(is_json(path_of(&r, "content"), "[\"hello\",\"hi\"]"),
	    "the active path is the new tree");
	ok(is_json(summary_field(&r, "nodes"), "5"), "the old tree remains");
	rig_close(&r);
}

static void
test_a_first_view_builds_the_tree(void)
{
	struct rig r;
	struct art_err err;

	memset(&r, 0, sizeof(r));
	testdb_open(&r.db, 0, 0);
	art_ids_init(&r.ids, &r.db.clock, "reconcile-test", &err);
	art_store_write(r.db.st, create_fn, NULL, &err);
	ok(apply(&r, "[]") == 0 && last_seq(&r) == 1,
	    "an empty view on an empty tree records nothing");
	ok(apply(&r, "[{\"role\":\"system\",\"content\":\"be brief\"},"
	    "{\"id\":\"u1\",\"role\":\"user\",\"content\":\"hi\"}]") == 2,
	    "a first view writes every message");
	ok(is_json(path_of(&r, "role"), "[\"system\",\"user\"]"),
	    "in order, as a chain");
	rig_close(&r);
}

static void
test_a_failed_record_fails_the_apply(void)
{
	struct rig r;

	rig_open(&r);
	r.fail_at = 2;
	ok(apply(&r, "[" U1 ",{\"role\":\"user\",\"content\":\"a\"},"
	    "{\"role\":\"user\",\"content\":\"b\"}]") == -1,
	    "the second write fails: -1");
	r.fail_at = 0;
	r.records = 0;
	ok(is_json(summary_field(&r, "nodes"), "3"),
	    "and the aborted transaction kept nothing");
	r.fail_at = 1;
	ok(apply(&r, "[" U1 "]") == -1, "a failed head.moved fails it too");
	r.fail_at = 0;
	r.records = 0;
	ok(is_json(summary_field(&r, "head"), "\"u2\""), "the head stays");
	rig_close(&r);
}

static void
test_news_from_is_the_first_unknown_index(void)
{
	struct rig r;

	rig_open(&r);
	ok(news_from(&r, "[" U1 "," A1 "," U2 "]") == 3, "all known:"
	    " the length");
	ok(news_from(&r, "[" U1 ",{\"role\":\"user\",\"content\":\"x\"}]") == 1,
	    "an id-less message is news");
	ok(news_from(&r, "[" U1 ",{\"id\":\"x1\",\"role\":\"user\"}," A1 "]") ==
	    1, "an unknown id is news, and a known id after it does not count");
	ok(news_from(&r, "[]") == 0, "an empty view: 0");
	ok(news_from(&r, "[{\"id\":\"nope\",\"role\":\"user\"}]") == 0,
	    "no known prefix: 0");
	ok(news_from(&r, "[" U2 "]") == 1,
	    "a known id anywhere in the tree counts, not only the path's");
	rig_close(&r);
}

/* The ids of view once normalised, as compact JSON text. */
static int
normalized_ids(struct rig *r, const char *view, const char *want)
{
	struct q q = { 4, view, 0, jv_invalid(), 0 };
	struct art_err err;
	jv ids = jv_array();

	if (art_store_read(r->db.st, q_fn, &q, &err) == -1)
		return 0;
	jv_array_foreach(q.out, i, m) {
		ids = jv_array_append(ids, art_json_field(&m, "id"));
		jv_free(m);
	}
	jv_free(q.out);
	return is_json(ids, want);
}

#define TOOL(id, call, parent) "{\"type\":\"message.new\",\"message\":" \
	"{\"id\":\"" id "\",\"role\":\"tool\",\"tool_call_id\":\"" call \
	"\",\"content\":\"ok\"},\"parent_id\":\"" parent "\"}"
#define HEAD(id) "{\"type\":\"head.moved\",\"head_id\":\"" id "\"}"

static void
test_a_tool_message_takes_the_node_of_its_call(void)
{
	struct rig r;

	rig_open(&r);
	/* Call c1 answered twice: t0 on the path, t9 (later) off it. */
	ok(record(&r, TOOL("t0", "c1", "u2"), TOOL("t9", "c1", "a1"),
	    HEAD("t0"), NULL) == 0, "set up");
	ok(normalized_ids(&r, "[" U1 "," A1 "," U2 ",{\"role\":\"tool\","
	    "\"tool_call_id\":\"c1\",\"content\":\"ok\"}]",
	    "[\"u1\",\"a1\",\"u2\",\"t0\"]"),
	    "an id-less answer takes the node on the path");
	ok(normalized_ids(&r, "[{\"id\":\"zz\",\"role\":\"tool\","
	    "\"tool_call_id\":\"c1\"}]", "[\"t0\"]"),
	    "so does one with an id the tree does not know");
	ok(normalized_ids(&r, "[{\"id\":\"t9\",\"role\":\"tool\","
	    "\"tool_call_id\":\"c1\"}]", "[\"t9\"]"),
	    "a known id is kept");
	ok(normalized_ids(&r, "[{\"role\":\"tool\",\"tool_call_id\":\"c2\"},"
	    "{\"role\":\"user\",\"tool_call_id\":\"c1\"},{\"role\":\"tool\"}]",
	    "[null,null,null]"),
	    "an unanswered call, a user message, no call id: untouched");
	ok(record(&r, HEAD("u2"), NULL) == 0 &&
	    normalized_ids(&r, "[{\"role\":\"tool\",\"tool_call_id\":\"c1\"}]",
	    "[\"t9\"]"), "off the path, the latest recorded answer");
	ok(news_from(&r, "[" U1 "," A1 "," U2 ",{\"id\":\"t0\",\"role\":"
	    "\"tool\"}]") == 4, "and so the view reads as a resend");
	rig_close(&r);
}

static void
test_check_refuses_what_is_not_a_view(void)
{
	static const struct {
		const char *view, *why;
		int ok;
	} cases[] = {
		{ "[]", "an empty array", 0 },
		{ "[{\"role\":\"user\"},{\"role\":\"assistant\",\"id\":\"a:"
		    "1\"},"
		    "{\"role\":\"tool\",\"id\":null},{\"role\":\"system\"}]",
		    "every role, ids absent, null or well-formed", 0 },
		{ "{}", "an object", -1 },
		{ "null", "null", -1 },
		{ "\"u1\"", "a string", -1 },
		{ "[1]", "a number in the array", -1 },
		{ "[[]]", "an array in the array", -1 },
		{ "[{\"content\":\"x\"}]", "a message without a role", -1 },
		{ "[{\"role\":\"robot\"}]", "an unknown role", -1 },
		{ "[{\"role\":7}]", "a role that is not a string", -1 },
		{ "[{\"role\":\"user\",\"id\":7}]", "a numeric id", -1 },
		{ "[{\"role\":\"user\",\"id\":\"\"}]", "an empty id", -1 },
		{ "[{\"role\":\"user\",\"id\":\"a b\"}]", "an id with a space",
		    -1 },
		{ "[{\"role\":\"user\",\"id\":\"-x\"}]", "an id like an option",
		    -1 },
	};
	struct art_err err;
	size_t i;
	jv v;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = art_json_parse_str(cases[i].view, &err);
		err.code = NULL;
		ok(art_reconcile_check(&v, &err) == cases[i].ok &&
		    (cases[i].ok == 0 || art_err_is(&err, "bad_response")),
		    "%s: %s", cases[i].ok == 0 ? "accepted" : "refused",
		    cases[i].why);
		jv_free(v);
	}
	v = art_json_parse_str("[{\"role\":\"user\"},{\"role\":\"nobody\"}]",
	    &err);
	ok(art_reconcile_check(&v, &err) == -1 &&
	    strncmp(err.msg, "messages[1]", 11) == 0,
	    "the message names the index: %s", err.msg);
	jv_free(v);
}

int
main(void)
{
	test_a_resend_of_known_ids_writes_nothing();
	test_an_id_less_message_after_the_path_is_appended();
	test_an_edit_forks_under_the_last_known_message();
	test_news_never_stops();
	test_a_shorter_view_moves_the_head_only();
	test_an_empty_view_does_nothing();
	test_a_view_sharing_no_prefix_forks_at_the_root();
	test_a_first_view_builds_the_tree();
	test_a_failed_record_fails_the_apply();
	test_news_from_is_the_first_unknown_index();
	test_check_refuses_what_is_not_a_view();
	test_a_tool_message_takes_the_node_of_its_call();
	return tap_done();
}
