/* reconcile-fuzz - a client.messages view written into a real store
 *
 * Once per process a store is opened in a temporary directory (removed
 * at exit) with session "s", whose tree is u1 - a1 - u2 - t0 (a tool
 * message answering call c1) and t9 (c1 again, off the path), head t0.
 * Each input is a view, as a client.messages line carries it: checked
 * as the engine checks one, normalized, and applied in a write
 * transaction that is then aborted, so every input meets the same tree.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "json.h"
#include "reconcile.h"
#include "session.h"
#include "../unit/testdb.h"

static struct testdb db;
static struct art_ids ids;
static int ready;

static const char *const setup[] = {
	"{\"type\":\"message.new\",\"message\":{\"id\":\"u1\",\"role\":"
	    "\"user\",\"content\":\"to Paris\"},\"parent_id\":null}",
	"{\"type\":\"message.new\",\"message\":{\"id\":\"a1\",\"role\":"
	    "\"assistant\",\"content\":\"booked\",\"tool_calls\":[{\"id\":"
	    "\"c1\",\"type\":\"function\",\"function\":{\"name\":\"calc\","
	    "\"arguments\":\"{}\"}}]},\"parent_id\":\"u1\"}",
	"{\"type\":\"message.new\",\"message\":{\"id\":\"u2\",\"role\":"
	    "\"user\",\"content\":\"and back\"},\"parent_id\":\"a1\"}",
	"{\"type\":\"message.new\",\"message\":{\"id\":\"t0\",\"role\":"
	    "\"tool\",\"tool_call_id\":\"c1\",\"content\":\"ok\"},"
	    "\"parent_id\":\"u2\"}",
	"{\"type\":\"message.new\",\"message\":{\"id\":\"t9\",\"role\":"
	    "\"tool\",\"tool_call_id\":\"c1\",\"content\":\"ok\"},"
	    "\"parent_id\":\"a1\"}",
	"{\"type\":\"head.moved\",\"head_id\":\"t0\"}",
	NULL
};

struct apply {
	const jv	*view;
	struct art_txn	*t;
	struct art_err	*err;
	int		 after;		/* apply_after from the head */
};

static int
setup_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	const char *const *p;
	jv v;

	(void)ctx;
	if (art_session_create(t, "s", "calc", jv_null(), jv_array(),
	    err) == -1)
		return -1;
	for (p = setup; *p != NULL; p++) {
		v = art_json_parse_str(*p, err);
		if (!jv_is_valid(v) ||
		    art_session_record(t, "s", v, NULL, err) == -1)
			return -1;
	}
	return 0;
}

static void
teardown(void)
{
	testdb_close(&db);
}

static void
open_once(void)
{
	struct art_err err;

	if (ready)
		return;
	testdb_open(&db, 0, 0);
	if (art_ids_init(&ids, &db.clock, "reconcile-fuzz", &err) == -1 ||
	    art_store_write(db.st, setup_fn, NULL, &err) == -1) {
		fprintf(stderr, "reconcile-fuzz: set up: %s\n", err.msg);
		exit(1);
	}
	atexit(teardown);
	ready = 1;
}

static int
mint_cb(void *ctx, char *buf)
{
	(void)ctx;
	return art_ids_v7(&ids, buf);
}

static int
record_cb(void *ctx, jv payload)
{
	struct apply *a = ctx;

	return art_session_record(a->t, "s", payload, NULL, a->err) == -1 ?
	    -1 : 0;
}

/* Writes the view as the engine would, then aborts the write. */
static int
apply_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct apply *a = ctx;
	struct art_reconcile_ops ops = { mint_cb, record_cb, a };
	jv norm;
	int news;

	a->t = t;
	a->err = err;
	norm = art_reconcile_normalize(t, "s", a->view, "t0", err);
	if (!jv_is_valid(norm))
		return -1;
	news = art_reconcile_news_from(t, "s", &norm, err);
	if (news < 0 || news > jv_array_length(jv_copy(norm)))
		abort();
	if (a->after)
		(void)art_reconcile_apply_after(t, "s", &norm, "t0", "t0",
		    &ops, err);
	else
		(void)art_reconcile_apply(t, "s", &norm, "t0", &ops, err);
	jv_free(norm);
	return art_err_set(err, "fuzz", "abort the write");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct apply a = { NULL, NULL, NULL, 0 };
	struct art_err err;
	jv view;

	open_once();
	view = art_json_parse((const char *)data, size, &err);
	if (!jv_is_valid(view))
		return 0;
	if (art_reconcile_check(&view, &err) == 0) {
		a.view = &view;
		art_store_write(db.st, apply_fn, &a, &err);
		a.after = 1;
		art_store_write(db.st, apply_fn, &a, &err);
	}
	jv_free(view);
	return 0;
}
