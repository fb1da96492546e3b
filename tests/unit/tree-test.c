/* tree-test - the message tree: nodes, parents, depth, the path */
#include <string.h>

#include "json.h"
#include "tap.h"
#include "testdb.h"
#include "testjv.h"
#include "tree.h"

struct add {
	const char	*id;
	const char	*parent;
};

static jv
message(const char *id)
{
	jv m = jv_object();

	m = jv_object_set(m, jv_string("id"), id != NULL ? jv_string(id) :
	    jv_null());
	m = jv_object_set(m, jv_string("role"), jv_string("user"));
	return jv_object_set(m, jv_string("content"), jv_string("hi"));
}

static int
add_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct add *a = ctx;

	return art_tree_add(t, "s", message(a->id), a->parent, 0, err);
}

static int
add(struct testdb *db, const char *id, const char *parent,
    struct art_err *err)
{
	struct add a = { id, parent };

	return art_store_write(db->st, add_fn, &a, err);
}

struct q {
	const char	*id;
	int		 ids;
	jv		 out;
};

static int
path_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct q *q = ctx;

	q->out = q->ids ? art_tree_path_ids(t, "s", q->id, err) :
	    art_tree_path(t, "s", q->id, err);
	return jv_is_valid(q->out) ? 0 : -1;
}

static jv
path_ids(struct testdb *db, const char *id, struct art_err *err)
{
	struct q q = { id, 1, jv_invalid() };

	art_store_read(db->st, path_fn, &q, err);
	return q.out;
}

/*
 *   u1 - a1 - u2
 *      \ e1 - a2
 */
static void
build(struct testdb *db)
{
	struct art_err err;

	add(db, "u1", NULL, &err);
	add(db, "a1", "u1", &err);
	add(db, "u2", "a1", &err);
	add(db, "e1", "u1", &err);
	add(db, "a2", "e1", &err);
}

static void
test_paths_run_from_the_root_to_the_node(void)
{
	struct testdb db;
	struct art_err err;
	struct q q = { "a2", 0, jv_invalid() };

	testdb_open(&db, 0, 0);
	build(&db);
	ok(is_json(path_ids(&db, "u2", &err), "[\"u1\",\"a1\",\"u2\"]"),
	    "the first branch");
	ok(is_json(path_ids(&db, "a2", &err), "[\"u1\",\"e1\",\"a2\"]"),
	    "the second branch shares only the root");
	ok(is_json(path_ids(&db, "u1", &err), "[\"u1\"]"), "a root alone");
	ok(is_json(path_ids(&db, NULL, &err), "[]"), "no head: empty path");
	art_store_read(db.st, path_fn, &q, &err);
	ok(is_json(q.out, "[{\"id\":\"u1\",\"role\":\"user\",\"content\":"
	    "\"hi\"},{\"id\":\"e1\",\"role\":\"user\",\"content\":\"hi\"},"
	    "{\"id\":\"a2\",\"role\":\"user\",\"content\":\"hi\"}]"),
	    "art_tree_path gives the messages themselves");
	testdb_close(&db);
}

struct nq {
	const char	*id;
	jv		 out;
};

static int
node_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct nq *q = ctx;

	q->out = q->id != NULL ? art_tree_node(t, "s", q->id, err) :
	    art_tree_nodes(t, "s", err);
	return jv_is_valid(q->out) ? 0 : -1;
}

static void
test_nodes_know_their_parent_and_depth(void)
{
	struct testdb db;
	struct art_err err;
	struct nq q = { "u2", jv_invalid() };

	testdb_open(&db, 0, 0);
	build(&db);
	art_store_read(db.st, node_fn, &q, &err);
	ok(is_json(jv_object_delete(q.out, jv_string("message")),
	    "{\"parent_id\":\"a1\",\"depth\":3}"), "u2: parent a1, depth 3");
	q.id = "u1";
	art_store_read(db.st, node_fn, &q, &err);
	ok(is_json(jv_object_delete(q.out, jv_string("message")),
	    "{\"parent_id\":null,\"depth\":1}"), "a root: no parent, depth 1");
	q.id = NULL;
	art_store_read(db.st, node_fn, &q, &err);
	ok(jv_array_length(q.out) == 5, "all five nodes are listed");
	testdb_close(&db);
}

static void
test_bad_adds_are_refused(void)
{
	struct testdb db;
	struct art_err err;
	jv p;

	testdb_open(&db, 0, 0);
	build(&db);
	ok(add(&db, "a1", "u1", &err) == -1 && art_err_is(&err, "exists") &&
	    strcmp(err.msg, "message 'a1' exists") == 0,
	    "a known id is refused");
	ok(add(&db, "x", "nope", &err) == -1 &&
	    art_err_is(&err, "not_found") &&
	    strcmp(err.msg, "no message 'nope'") == 0,
	    "an unknown parent is refused");
	ok(add(&db, NULL, "u1", &err) == -1 && art_err_is(&err, "bad_field"),
	    "a message without an id is refused");
	p = path_ids(&db, "x", &err);
	ok(!jv_is_valid(p) && art_err_is(&err, "not_found"),
	    "nothing was written for the refused adds");
	jv_free(p);
	testdb_close(&db);
}

static int
corrupt_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	jv n = jv_object();

	(void)ctx;
	/* u1 claims a1 as its parent: a cycle a walk must not follow. */
	n = jv_object_set(n, jv_string("message"), message("u1"));
	n = jv_object_set(n, jv_string("parent_id"), jv_string("a1"));
	n = jv_object_set(n, jv_string("depth"), jv_number(1));
	return art_store_put(t, ART_DB_NODES, "s", "u1", 2, n, err);
}

static void
test_a_broken_chain_is_an_error_not_a_loop(void)
{
	struct testdb db;
	struct art_err err;
	jv p;

	testdb_open(&db, 0, 0);
	build(&db);
	art_store_write(db.st, corrupt_fn, NULL, &err);
	p = path_ids(&db, "u2", &err);
	ok(!jv_is_valid(p) && art_err_is(&err, "store"),
	    "a cycle is reported: %s", err.msg);
	jv_free(p);
	testdb_close(&db);
}

static void
test_a_deep_chain_reads_whole(void)
{
	struct testdb db;
	struct art_err err;
	char id[32], parent[32] = "";
	int i;
	jv p;

	testdb_open(&db, 0, 0);
	for (i = 0; i < 2000; i++) {
		snprintf(id, sizeof(id), "m%04d", i);
		add(&db, id, i > 0 ? parent : NULL, &err);
		memcpy(parent, id, sizeof(id));
	}
	p = path_ids(&db, "m1999", &err);
	ok(jv_array_length(jv_copy(p)) == 2000, "2000 messages on the path");
	ok(is_json(jv_array_get(jv_copy(p), 0), "\"m0000\"") &&
	    is_json(jv_array_get(jv_copy(p), 1999), "\"m1999\""),
	    "root first, head last");
	jv_free(p);
	testdb_close(&db);
}

int
main(void)
{
	test_paths_run_from_the_root_to_the_node();
	test_nodes_know_their_parent_and_depth();
	test_bad_adds_are_refused();
	test_a_broken_chain_is_an_error_not_a_loop();
	test_a_deep_chain_reads_whole();
	return tap_done();
}
