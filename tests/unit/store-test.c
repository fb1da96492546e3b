/* store-test - the LMDB store: layout, keys, scans, transactions, the map */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lmdb.h>

#include "json.h"
#include "store.h"
#include "tap.h"
#include "testdb.h"

struct kv {
	const char	*sid;
	const char	*sub;
	jv		 value;
	int		 calls;
	size_t		 big;
};

static int
put_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct kv *c = ctx;

	c->calls++;
	return art_store_put(t, ART_DB_NODES, c->sid, c->sub, strlen(c->sub),
	    jv_copy(c->value), err);
}

static int
add_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct kv *c = ctx;

	return art_store_add(t, ART_DB_NODES, c->sid, c->sub, strlen(c->sub),
	    jv_copy(c->value), err);
}

static int
get_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct kv *c = ctx;

	jv_free(c->value);
	c->value = art_store_get(t, ART_DB_NODES, c->sid, c->sub,
	    strlen(c->sub), err);
	return jv_is_valid(c->value) ? 0 : -1;
}

static int
put_then_fail_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	if (put_fn(t, ctx, err) == -1)
		return -1;
	return art_err_set(err, "test", "changed my mind");
}

static int
big_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct kv *c = ctx;
	char *s = malloc(c->big + 1);
	jv v;

	memset(s, 'x', c->big);
	s[c->big] = '\0';
	v = jv_string(s);
	free(s);
	c->calls++;
	return art_store_put(t, ART_DB_NODES, c->sid, c->sub, strlen(c->sub),
	    v, err);
}

static void
put(struct testdb *db, const char *sid, const char *sub, jv v)
{
	struct kv c = { sid, sub, v, 0, 0 };
	struct art_err err;

	if (art_store_write(db->st, put_fn, &c, &err) == -1)
		printf("# put: %s\n", err.msg);
	jv_free(c.value);
}

/* The value, or jv_invalid() with *err set. */
static jv
get(struct testdb *db, const char *sid, const char *sub, struct art_err *err)
{
	struct kv c = { sid, sub, jv_null(), 0, 0 };

	art_store_read(db->st, get_fn, &c, err);
	return c.value;
}

static void
test_open_makes_a_private_directory(void)
{
	struct testdb db;
	struct stat sb;
	char path[512];

	testdb_open(&db, 0, 0);
	ok(stat(db.dir, &sb) == 0 && (sb.st_mode & 0777) == 0700,
	    "store directory is 0700");
	snprintf(path, sizeof(path), "%s/data.mdb", db.dir);
	ok(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600,
	    "data.mdb is 0600");
	snprintf(path, sizeof(path), "%s/lock.mdb", db.dir);
	ok(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600,
	    "lock.mdb is 0600");
	testdb_close(&db);
}

static void
test_put_get_add_del(void)
{
	struct testdb db;
	struct kv c = { "s", "k", jv_null(), 0, 0 };
	struct art_err err;
	jv v, want = art_json_parse_str("{\"a\":[1,\"two\"]}", &err);

	testdb_open(&db, 0, 0);
	put(&db, "s", "k", jv_copy(want));
	v = get(&db, "s", "k", &err);
	ok(art_json_equal(&v, &want), "a value comes back as it was stored");
	jv_free(v);
	v = get(&db, "s", "nope", &err);
	ok(!jv_is_valid(v) && art_err_is(&err, "not_found"),
	    "a missing key is not_found");
	jv_free(v);
	c.value = jv_number(1);
	ok(art_store_write(db.st, add_fn, &c, &err) == -1 &&
	    art_err_is(&err, "exists"), "add refuses an existing key");
	v = get(&db, "s", "k", &err);
	ok(art_json_equal(&v, &want), "a refused add changes nothing");
	jv_free(v);
	jv_free(c.value);
	jv_free(want);
	testdb_close(&db);
}

static int
del_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	int *r = ctx;

	r[0] = art_store_del(t, ART_DB_NODES, "s", "k", 1, err);
	r[1] = art_store_del(t, ART_DB_NODES, "s", "k", 1, err);
	return 0;
}

static void
test_del_says_whether_it_deleted(void)
{
	struct testdb db;
	struct art_err err;
	int r[2];
	jv v;

	testdb_open(&db, 0, 0);
	put(&db, "s", "k", jv_true());
	art_store_write(db.st, del_fn, r, &err);
	ok(r[0] == 1 && r[1] == 0, "del: 1 when deleted, 0 when absent");
	v = get(&db, "s", "k", &err);
	ok(!jv_is_valid(v), "the deleted key is gone");
	jv_free(v);
	testdb_close(&db);
}

struct collect {
	jv	keys;
	int	stop_after;
};

static int
collect_fn(const void *sub, size_t sublen, jv v, void *ctx,
    struct art_err *err)
{
	struct collect *c = ctx;

	(void)err;
	jv_free(v);
	c->keys = jv_array_append(c->keys, jv_string_sized(sub, (int)sublen));
	return c->stop_after > 0 && jv_array_length(jv_copy(c->keys)) >=
	    c->stop_after ? 1 : 0;
}

struct scan_args {
	const char	*sid, *prefix, *from;
	int		 reverse;
	struct collect	 c;
};

static int
scan_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct scan_args *a = ctx;

	return art_store_scan(t, ART_DB_NODES, a->sid, a->prefix,
	    a->prefix != NULL ? strlen(a->prefix) : 0, a->from,
	    a->from != NULL ? strlen(a->from) : 0, a->reverse, collect_fn,
	    &a->c, err);
}

/* The keys a scan visits, as compact JSON text. */
static char *
scan(struct testdb *db, const char *sid, const char *prefix,
    const char *from, int reverse, int stop_after)
{
	struct scan_args a = { sid, prefix, from, reverse, { jv_array(),
	    stop_after } };
	struct art_err err;
	jv s;
	char *out;

	if (art_store_read(db->st, scan_fn, &a, &err) == -1)
		printf("# scan: %s\n", err.msg);
	s = jv_dump_string(a.c.keys, 0);
	out = strdup(jv_string_value(s));
	jv_free(s);
	return out;
}

static void
check_scan(struct testdb *db, const char *sid, const char *prefix,
    const char *from, int reverse, int stop, const char *want,
    const char *what)
{
	char *got = scan(db, sid, prefix, from, reverse, stop);

	if (!ok(strcmp(got, want) == 0, "%s", what))
		printf("#   got %s, want %s\n", got, want);
	free(got);
}

static void
test_scans_keep_to_their_session_and_prefix(void)
{
	static const char *const keys[] = { "a1", "a2", "b1", "b2", "b3" };
	struct testdb db;
	size_t i;

	testdb_open(&db, 0, 0);
	for (i = 0; i < 5; i++) {
		put(&db, "s", keys[i], jv_null());
		put(&db, "sx", keys[i], jv_null());	/* a sid "s" extends */
	}
	put(&db, "r", "z", jv_null());
	check_scan(&db, "s", NULL, NULL, 0, 0,
	    "[\"a1\",\"a2\",\"b1\",\"b2\",\"b3\"]", "forward: all of s, no sx");
	check_scan(&db, "s", NULL, NULL, 1, 0,
	    "[\"b3\",\"b2\",\"b1\",\"a2\",\"a1\"]", "reverse: all of s");
	check_scan(&db, "s", "b", NULL, 0, 0, "[\"b1\",\"b2\",\"b3\"]",
	    "forward within a prefix");
	check_scan(&db, "s", "b", NULL, 1, 1, "[\"b3\"]",
	    "reverse within a prefix, stopped after one");
	check_scan(&db, "s", "a", NULL, 1, 0, "[\"a2\",\"a1\"]",
	    "reverse within a prefix that is not the last");
	check_scan(&db, "s", NULL, "a2", 0, 0, "[\"b1\",\"b2\",\"b3\"]",
	    "forward starts after 'from'");
	check_scan(&db, "s", NULL, "b2", 1, 0, "[\"b1\",\"a2\",\"a1\"]",
	    "reverse starts before 'from'");
	check_scan(&db, "s", "c", NULL, 0, 0, "[]", "an empty prefix range");
	check_scan(&db, "q", NULL, NULL, 1, 0, "[]",
	    "reverse over a sid before every other");
	check_scan(&db, "zz", NULL, NULL, 1, 0, "[]",
	    "reverse over a sid after every other");
	testdb_close(&db);
}

static int
del_session_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	int64_t *n = ctx;

	*n = art_store_del_session(t, "s", err);
	return *n == -1 ? -1 : 0;
}

static void
test_del_session_removes_one_session_everywhere(void)
{
	struct testdb db;
	struct art_err err;
	int64_t n = 0;
	char *rest;

	testdb_open(&db, 0, 0);
	put(&db, "s", "a", jv_null());
	put(&db, "s", "b", jv_null());
	put(&db, "sx", "a", jv_null());
	art_store_write(db.st, del_session_fn, &n, &err);
	ok(n == 2, "two keys of s deleted (%lld)", (long long)n);
	rest = scan(&db, "sx", NULL, NULL, 0, 0);
	ok(strcmp(rest, "[\"a\"]") == 0, "session sx is untouched");
	free(rest);
	rest = scan(&db, "s", NULL, NULL, 0, 0);
	ok(strcmp(rest, "[]") == 0, "session s has nothing left");
	free(rest);
	testdb_close(&db);
}

static void
test_a_failed_change_writes_nothing(void)
{
	struct testdb db;
	struct kv c = { "s", "k", jv_number(1), 0, 0 };
	struct art_err err;
	jv v;

	testdb_open(&db, 0, 0);
	ok(art_store_write(db.st, put_then_fail_fn, &c, &err) == -1 &&
	    strcmp(err.msg, "changed my mind") == 0,
	    "the callback's error comes back");
	v = get(&db, "s", "k", &err);
	ok(!jv_is_valid(v), "its earlier write was rolled back");
	jv_free(v);
	jv_free(c.value);
	testdb_close(&db);
}

/* Whether v (consumed) is the number n. */
static int
is_json_num(jv v, double n)
{
	int r = jv_get_kind(v) == JV_KIND_NUMBER && jv_number_value(v) == n;

	jv_free(v);
	return r;
}

static int
nosync_put_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	art_txn_nosync(t);
	return put_fn(t, ctx, err);
}

static void
test_an_unsynced_change_is_committed_all_the_same(void)
{
	struct testdb db;
	struct kv a = { "s", "a", jv_number(1), 0, 0 };
	struct kv b = { "s", "b", jv_number(2), 0, 0 };
	struct art_store_opts o = { 0 };
	struct art_err err;
	jv v;

	testdb_open(&db, 0, 0);
	ok(art_store_write(db.st, nosync_put_fn, &a, &err) == 0,
	    "a change that asks for no sync commits");
	v = get(&db, "s", "a", &err);
	ok(is_json_num(v, 1), "and is read back at once");
	ok(art_store_write(db.st, put_fn, &b, &err) == 0,
	    "a synced change after it commits too");
	art_store_close(db.st);
	o.dir = db.dir;
	o.clock = &db.clock;
	ok(art_store_open(&db.st, &o, &err) == 0, "the store opens again");
	ok(is_json_num(get(&db, "s", "a", &err), 1) &&
	    is_json_num(get(&db, "s", "b", &err), 2),
	    "both changes are in it");
	jv_free(a.value);
	jv_free(b.value);
	testdb_close(&db);
}

static void
test_a_full_map_grows_and_the_change_reruns(void)
{
	struct testdb db;
	struct kv c = { "s", "k", jv_null(), 0, 4u << 20 };
	struct art_err err;
	jv v;

	testdb_open(&db, 1u << 20, 64u << 20);
	ok(art_store_mapsize(db.st) == 1u << 20, "the map starts at 1 MiB");
	ok(art_store_write(db.st, big_fn, &c, &err) == 0,
	    "a 4 MiB value fits after growing");
	ok(c.calls > 1, "the change ran again after growing (%d runs)",
	    c.calls);
	ok(art_store_mapsize(db.st) >= 4u << 20, "the map grew to %zu",
	    art_store_mapsize(db.st));
	v = get(&db, "s", "k", &err);
	ok(jv_get_kind(v) == JV_KIND_STRING &&
	    jv_string_length_bytes(jv_copy(v)) == 4 << 20,
	    "the whole value is there");
	jv_free(v);
	testdb_close(&db);
}

static void
test_a_map_at_its_limit_is_store_full(void)
{
	struct testdb db;
	struct kv c = { "s", "k", jv_null(), 0, 2u << 20 };
	struct art_err err;
	jv v;

	testdb_open(&db, 256u << 10, 1u << 20);
	ok(art_store_write(db.st, big_fn, &c, &err) == -1 &&
	    art_err_is(&err, "store_full"), "store_full: %s", err.msg);
	ok(strstr(err.msg, "limit of 1048576 bytes") != NULL,
	    "the message names the limit");
	v = get(&db, "s", "k", &err);
	ok(!jv_is_valid(v) && art_err_is(&err, "not_found"),
	    "nothing of the change was written");
	jv_free(v);
	put(&db, "s", "small", jv_true());
	v = get(&db, "s", "small", &err);
	ok(jv_get_kind(v) == JV_KIND_TRUE, "small writes still work after");
	jv_free(v);
	testdb_close(&db);
}

static int
reopen(const char *dir, int create, struct art_err *err)
{
	struct art_clock clock;
	struct art_store_opts o = { 0 };
	struct art_store *st;

	art_clock_init(&clock, NULL, err);
	o.dir = dir;
	o.clock = &clock;
	o.create = create;
	if (art_store_open(&st, &o, err) == -1)
		return -1;
	art_store_close(st);
	return 0;
}

/* Writes key=val into a raw LMDB environment (db NULL: the main db). */
static void
raw_put(const char *dir, const char *db, const char *key, const char *val)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = { strlen(key), (void *)key }, v = { strlen(val),
	    (void *)val };

	mdb_env_create(&env);
	mdb_env_set_maxdbs(env, 16);
	if (mdb_env_open(env, dir, 0, 0600) != 0 ||
	    mdb_txn_begin(env, NULL, 0, &txn) != 0) {
		printf("# raw_put: cannot open %s\n", dir);
		mdb_env_close(env);
		return;
	}
	mdb_dbi_open(txn, db, db != NULL ? MDB_CREATE : 0, &dbi);
	mdb_put(txn, dbi, &k, &v, 0);
	mdb_txn_commit(txn);
	mdb_env_close(env);
}

static void
test_schema_and_owner_are_checked(void)
{
	struct testdb db;
	struct art_err err;
	char dir[256], path[300];
	FILE *f;

	testdb_open(&db, 0, 0);
	art_store_close(db.st);
	db.st = NULL;
	ok(reopen(db.dir, 0, &err) == 0, "our own store reopens");
	raw_put(db.dir, "meta", "schema", "2");
	ok(reopen(db.dir, 0, &err) == -1 && strstr(err.msg,
	    "schema version 2, this agentrt reads version 1") != NULL,
	    "another schema version is refused: %s", err.msg);
	raw_put(db.dir, "meta", "magic", "mdb-tool");
	ok(reopen(db.dir, 0, &err) == -1 && strstr(err.msg,
	    "not an agentrt store (made by another program)") != NULL,
	    "another program's meta is refused");
	testdb_close(&db);

	snprintf(dir, sizeof(dir), "%s", db.dir);
	mkdir(dir, 0700);
	raw_put(dir, NULL, "key", "value");
	ok(reopen(dir, 0, &err) == -1 && strstr(err.msg,
	    "not an agentrt store (made by another program)") != NULL,
	    "an environment with foreign keys is refused");
	testdb_rm(dir);

	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	if ((f = fopen(path, "w")) != NULL) {
		for (int i = 0; i < 8192; i++)
			fputs("junk junk ", f);
		fclose(f);
	}
	ok(reopen(dir, 0, &err) == -1 && art_err_is(&err, "store") &&
	    strstr(err.msg, "not an agentrt store (") != NULL,
	    "a file that is not LMDB is refused: %s", err.msg);
	testdb_rm(dir);

	ok(reopen(dir, 0, &err) == -1 && art_err_is(&err, "no_store"),
	    "a missing store without create is no_store");
	ok(access(dir, F_OK) == -1 && errno == ENOENT,
	    "and the directory was not made");
}

static void
test_be64_keys_sort_as_numbers(void)
{
	unsigned char a[8], b[8];

	art_be64_put(a, 255);
	art_be64_put(b, 256);
	ok(memcmp(a, b, 8) < 0, "255 sorts before 256");
	ok(art_be64_get(b) == 256, "be64 round-trips");
	art_be64_put(a, UINT64_MAX);
	ok(art_be64_get(a) == UINT64_MAX, "the largest value round-trips");
}

static void
test_find_dir_in_order(void)
{
	struct art_err err;
	char buf[256];
	const char *d;

	ok(strcmp(art_store_find_dir("/a", "/b", "/x", "/h", buf, sizeof(buf),
	    &err), "/a") == 0, "-d wins");
	ok(strcmp(art_store_find_dir("", "/b", "/x", "/h", buf, sizeof(buf),
	    &err), "/b") == 0, "then $AGENTRT_DB");
	ok(strcmp(art_store_find_dir(NULL, NULL, "/x", "/h", buf, sizeof(buf),
	    &err), "/x/agentrt") == 0, "then $XDG_DATA_HOME/agentrt");
	ok(strcmp(art_store_find_dir(NULL, NULL, "rel", "/h", buf,
	    sizeof(buf), &err), "/h/.local/share/agentrt") == 0,
	    "a relative $XDG_DATA_HOME is passed over for $HOME");
	d = art_store_find_dir(NULL, "", NULL, "", buf, sizeof(buf), &err);
	ok(d == NULL && strstr(err.msg, "give -d DIR") != NULL,
	    "nothing to go by is an error saying what to set: %s", err.msg);
}

struct doc_q {
	const char	*sub;
	jv		 value;		/* put when valid, else got */
};

static int
doc_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct doc_q *q = ctx;

	if (jv_is_valid(q->value))
		return art_store_put(t, ART_DB_VERSIONS, "s", q->sub,
		    strlen(q->sub), jv_copy(q->value), err);
	q->value = art_store_get(t, ART_DB_VERSIONS, "s", q->sub,
	    strlen(q->sub), err);
	return jv_is_valid(q->value) ? 0 : -1;
}

/* A value of n strings of 100 bytes: a configuration's size. */
static jv
doc(int n, const char *word)
{
	char s[101];
	jv a = jv_array();
	int i;

	memset(s, 'x', 100);
	s[100] = '\0';
	memcpy(s, word, strlen(word));
	for (i = 0; i < n; i++)
		a = jv_array_append(a, jv_string(s));
	return a;
}

/* Reads sub back; 1 when it is want and parsed parses more values. */
static int
doc_read(struct testdb *db, const char *sub, const jv *want, uint64_t parsed)
{
	struct doc_q q = { sub, jv_invalid() };
	struct art_err err;
	uint64_t before = art_store_parses(db->st);
	int r;

	jv_free(q.value);
	q.value = jv_invalid();
	r = art_store_read(db->st, doc_fn, &q, &err) == 0 &&
	    art_json_equal(&q.value, want) &&
	    art_store_parses(db->st) - before == parsed;
	jv_free(q.value);
	return r;
}

static void
test_a_large_value_read_again_is_parsed_once(void)
{
	struct testdb db;
	struct art_err err;
	jv big = doc(40, "tool"), other = doc(40, "TOOL"), small = doc(1, "x");
	struct doc_q q = { "a", jv_copy(big) };

	testdb_open(&db, 0, 0);
	ok(art_store_write(db.st, doc_fn, &q, &err) == 0, "a config is put");
	jv_free(q.value);
	ok(doc_read(&db, "a", &big, 1), "the first read parses it");
	ok(doc_read(&db, "a", &big, 0), "a second read parses nothing");
	q = (struct doc_q){ "b", jv_copy(big) };
	art_store_write(db.st, doc_fn, &q, &err);
	jv_free(q.value);
	ok(doc_read(&db, "b", &big, 0),
	    "the same bytes under another key are the parsed value again");
	q = (struct doc_q){ "a", jv_copy(other) };
	art_store_write(db.st, doc_fn, &q, &err);
	jv_free(q.value);
	ok(doc_read(&db, "a", &other, 1),
	    "a key rewritten with other bytes of the same length is parsed "
	    "again: the bytes decide, not the key");
	q = (struct doc_q){ "c", jv_copy(small) };
	art_store_write(db.st, doc_fn, &q, &err);
	jv_free(q.value);
	ok(doc_read(&db, "c", &small, 1) && doc_read(&db, "c", &small, 1),
	    "a small value is parsed each time it is read");
	jv_free(big);
	jv_free(other);
	jv_free(small);
	testdb_close(&db);
}

int
main(void)
{
	test_find_dir_in_order();
	test_open_makes_a_private_directory();
	test_put_get_add_del();
	test_del_says_whether_it_deleted();
	test_scans_keep_to_their_session_and_prefix();
	test_del_session_removes_one_session_everywhere();
	test_a_failed_change_writes_nothing();
	test_an_unsynced_change_is_committed_all_the_same();
	test_a_full_map_grows_and_the_change_reruns();
	test_a_map_at_its_limit_is_store_full();
	test_schema_and_owner_are_checked();
	test_be64_keys_sort_as_numbers();
	test_a_large_value_read_again_is_parsed_once();
	return tap_done();
}
