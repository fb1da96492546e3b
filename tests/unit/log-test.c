/* log-test - the event log: seq from 1, the envelope, bounded reads */
#include <string.h>

#include "json.h"
#include "log.h"
#include "tap.h"
#include "testdb.h"
#include "testjv.h"

struct append {
	const char	*sid;
	const char	*turn;
	int		 n;
	int64_t		 last;
	jv		 event;
	int		 fail;
};

static int
append_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct append *a = ctx;
	int i;

	for (i = 0; i < a->n; i++) {
		jv p = jv_object_set(jv_object(), jv_string("type"),
		    jv_string("test.note"));

		p = jv_object_set(p, jv_string("i"), jv_number(i));
		jv_free(a->event);
		a->last = art_log_append(t, a->sid, p, a->turn, &a->event, err);
		if (a->last == -1)
			return -1;
	}
	return a->fail ? art_err_set(err, "test", "abort") : 0;
}

static int64_t
append(struct testdb *db, const char *sid, int n, const char *turn)
{
	struct append a = { sid, turn, n, 0, jv_null(), 0 };
	struct art_err err;

	if (art_store_write(db->st, append_fn, &a, &err) == -1)
		printf("# append: %s\n", err.msg);
	jv_free(a.event);
	return a.last;
}

struct rd {
	const char	*sid;
	uint64_t	 after;
	size_t		 max;
	jv		 out;
	int64_t		 last;
};

static int
read_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct rd *r = ctx;

	r->out = art_log_read(t, r->sid, r->after, r->max, err);
	r->last = art_log_last_seq(t, r->sid, err);
	return jv_is_valid(r->out) ? 0 : -1;
}

static jv
seqs(struct testdb *db, const char *sid, uint64_t after, size_t max,
    int64_t *last)
{
	struct rd r = { sid, after, max, jv_null(), 0 };
	struct art_err err;
	jv s = jv_array();

	if (art_store_read(db->st, read_fn, &r, &err) == -1) {
		printf("# read: %s\n", err.msg);
		return s;
	}
	jv_array_foreach(r.out, i, ev) {
		s = jv_array_append(s, art_json_field(&ev, "seq"));
		jv_free(ev);
	}
	jv_free(r.out);
	if (last != NULL)
		*last = r.last;
	return s;
}

static void
test_seq_starts_at_one_and_counts_per_session(void)
{
	struct testdb db;
	int64_t last;

	testdb_open(&db, 0, 0);
	ok(append(&db, "s", 3, NULL) == 3, "three appends end at seq 3");
	ok(append(&db, "sx", 2, NULL) == 2, "another session counts alone");
	ok(append(&db, "s", 1, NULL) == 4, "s goes on at 4");
	ok(is_json(seqs(&db, "s", 0, 0, &last), "[1,2,3,4]"),
	    "s reads 1..4 in order");
	ok(last == 4, "last_seq of s is 4");
	ok(is_json(seqs(&db, "sx", 0, 0, &last), "[1,2]") && last == 2,
	    "sx reads 1..2");
	ok(is_json(seqs(&db, "none", 0, 0, &last), "[]") && last == 0,
	    "a session with no log reads nothing, last_seq 0");
	testdb_close(&db);
}

static void
test_reads_start_after_and_stop_at_max(void)
{
	struct testdb db;

	testdb_open(&db, 0, 0);
	append(&db, "s", 300, NULL);
	ok(is_json(seqs(&db, "s", 297, 0, NULL), "[298,299,300]"),
	    "after 297: the last three");
	ok(is_json(seqs(&db, "s", 10, 3, NULL), "[11,12,13]"),
	    "max bounds a read");
	ok(is_json(seqs(&db, "s", 300, 5, NULL), "[]"),
	    "after the last: nothing");
	ok(is_json(seqs(&db, "s", 255, 2, NULL), "[256,257]"),
	    "keys sort numerically across a byte boundary");
	testdb_close(&db);
}

static void
test_the_envelope_carries_session_seq_time_turn_payload(void)
{
	struct testdb db;
	struct append a = { "s", "t1", 1, 0, jv_null(), 0 };
	struct art_err err;

	testdb_open(&db, 0, 0);
	art_store_write(db.st, append_fn, &a, &err);
	ok(is_json(a.event, "{\"session_id\":\"s\",\"seq\":1,"
	    "\"occurred_at\":\"2026-01-02T03:04:05.000Z\",\"turn_id\":\"t1\","
	    "\"payload\":{\"type\":\"test.note\",\"i\":0}}"),
	    "the event names its session, seq, pinned time, turn and payload");
	a.turn = NULL;
	a.event = jv_null();
	art_store_write(db.st, append_fn, &a, &err);
	ok(is_json(art_json_field(&a.event, "turn_id"), "null"),
	    "no turn: no turn_id field");
	jv_free(a.event);
	testdb_close(&db);
}

static void
test_an_aborted_change_consumes_no_seq(void)
{
	struct testdb db;
	struct append a = { "s", NULL, 2, 0, jv_null(), 1 };
	struct art_err err;

	testdb_open(&db, 0, 0);
	append(&db, "s", 1, NULL);
	ok(art_store_write(db.st, append_fn, &a, &err) == -1,
	    "the change fails");
	jv_free(a.event);
	ok(append(&db, "s", 1, NULL) == 2, "the next append is seq 2");
	ok(is_json(seqs(&db, "s", 0, 0, NULL), "[1,2]"), "no gap in the log");
	testdb_close(&db);
}

int
main(void)
{
	test_seq_starts_at_one_and_counts_per_session();
	test_reads_start_after_and_stop_at_max();
	test_the_envelope_carries_session_seq_time_turn_payload();
	test_an_aborted_change_consumes_no_seq();
	return tap_done();
}
