/* store.c - sessions in one LMDB environment
 *
 * Every change runs in one write transaction through art_store_write(),
 * which owns the retry on a full map: LMDB cannot grow a map while a
 * transaction is open, so the transaction is aborted, the map doubled and
 * the change run again from the start.  Views and log are written by the
 * same callback, so a failed change leaves nothing behind.
 *
 * Commits are durable by default: LMDB fdatasyncs the data file and
 * writes the meta page through a descriptor opened O_DSYNC.  A change
 * whose fn calls art_txn_nosync() is committed with MDB_NOSYNC set just
 * for that commit: its pages reach the OS page cache (so a process killed
 * with kill -9 loses nothing) but not the disk.  The next durable commit
 * fdatasyncs the whole data file, which makes every earlier unsynced
 * commit durable with it.  The environment is never opened MDB_NOSYNC or
 * MDB_WRITEMAP; only this one flag is flipped, around one commit.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <lmdb.h>

#include "json.h"

#define MAX_KEY		511	/* LMDB's default key limit */
#define MAGIC		"agentrt"

static const char *const dbnames[ART_DB__COUNT] = {
	"sessions", "events", "nodes", "calls", "turns", "versions", "pending",
	"drivers", "requests", "outbox",
};

/* Nodes never change once written: their parsed values are kept here. */
#define CACHE_MAX	200000

/*
 * Large values read again and again (an agent's configuration: forty
 * tools' schemas and a system prompt, read by every step) are parsed once:
 * the last DOCS_MAX values of DOC_MIN to DOC_MAX bytes art_store_get
 * read (not a scan's, not a node: those have their own cache) are kept
 * beside their bytes, and a value whose bytes are the same is the parsed
 * one again.
 * The bytes, not the key, decide, so nothing kept can go stale: another
 * process's write, a deleted session, an aborted transaction all change
 * the bytes read or leave them as they were.
 */
#define DOCS_MAX	16
#define DOC_MIN		2048
#define DOC_MAX		(1u << 20)

struct doc {
	char	*raw;		/* the value's bytes; NULL: an empty slot */
	size_t	 len;
	jv	 val;
};

struct art_store {
	MDB_env			*env;
	jv			 cache;		/* raw key -> parsed node */
	int			 ncache;
	char			*dir;
	size_t			 map_max;
	const struct art_clock	*clock;
	MDB_dbi			 meta;
	MDB_dbi			 dbi[ART_DB__COUNT];
	int			 unsynced;	/* a commit not yet on disk */
	size_t			 map_size;	/* the map's, when last known */
	/*
	 * The summaries the last write transaction read or wrote, as they
	 * stand in the snapshot kept_id: a transaction that begins on that
	 * snapshot (no other process committed since) starts from them
	 * instead of parsing them again.  jv_null() when none.
	 */
	jv			 kept;
	size_t			 kept_id;
	struct doc		 docs[DOCS_MAX];
	unsigned		 ndoc;		/* the next slot to take */
	uint64_t		 parses;	/* values parsed (art_store_parses) */
};

struct art_txn {
	struct art_store	*st;
	MDB_txn			*txn;
	int			 nosync;	/* commit without a sync */
	/*
	 * A write transaction's own view of the values it read or wrote
	 * in the databases a step reads again and again (a session's
	 * summary, its calls): raw key -> parsed value.  No other process
	 * writes while it is open, so it is exact; it ends with the
	 * transaction.  jv_null() in a read transaction.
	 */
	jv			 mine;
};

static int
is_mine(const struct art_txn *t, enum art_db db)
{
	return jv_get_kind(t->mine) == JV_KIND_OBJECT &&
	    (db == ART_DB_SESSIONS || db == ART_DB_CALLS);
}

/* What t starts from: the kept summaries if they are of its snapshot. */
static jv
mine_from(struct art_store *st, size_t snapshot)
{
	if (jv_get_kind(st->kept) == JV_KIND_OBJECT && st->kept_id == snapshot)
		return jv_copy(st->kept);
	return jv_object();
}

/* t committed: its summaries are those of the snapshot it made. */
static void
keep_mine(struct art_store *st, const struct art_txn *t, size_t id)
{
	MDB_envinfo info;
	jv kept = jv_object();

	jv_free(st->kept);
	st->kept = jv_null();
	if (mdb_env_info(st->env, &info) != 0 || (info.me_last_txnid != id &&
	    info.me_last_txnid + 1 != id)) {
		jv_free(kept);
		return;
	}
	jv_object_foreach(t->mine, k, v) {
		if (jv_string_value(k)[0] == '0' + ART_DB_SESSIONS)
			kept = jv_object_set(kept, k, v);
		else {
			jv_free(k);
			jv_free(v);
		}
	}
	st->kept = kept;
	st->kept_id = info.me_last_txnid;
}

static jv
mine_key(enum art_db db, const MDB_val *k)
{
	char tag = (char)('0' + db);

	return jv_string_append_buf(jv_string_sized(&tag, 1), k->mv_data,
	    (int)k->mv_size);
}

void
art_be64_put(unsigned char out[8], uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		out[i] = (unsigned char)(v & 0xff);
}

uint64_t
art_be64_get(const unsigned char in[8])
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | in[i];
	return v;
}

/* mkdir -p, new directories 0700. */
static int
make_dirs(const char *dir, struct art_err *err)
{
	char path[4096], *p;
	struct stat sb;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return art_err_set(err, "store", "store directory name too long");
	for (p = path + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(path, 0700) == -1 && errno != EEXIST)
			return art_err_set(err, "store", "create store "
			    "directory '%s': %s", path, strerror(errno));
		*p = c;
		if (c == '\0')
			break;
	}
	if (stat(dir, &sb) == -1 || !S_ISDIR(sb.st_mode))
		return art_err_set(err, "store", "open store '%s': not a "
		    "directory", dir);
	return 0;
}

/*
 * A write LMDB could not make because the file system is full.  LMDB
 * passes ENOSPC on, but a write that got only part of its bytes down (the
 * usual way a disk fills) it reports as EIO, so an EIO on a file system
 * with less free space than LMDB writes at once is taken for the same.
 */
#define FULL_SLACK	((unsigned long long)1 << 20)

static int
is_full(const struct art_store *st, int rc)
{
	struct statvfs vfs;

	if (rc == ENOSPC || rc == EDQUOT)
		return 1;
	return rc == EIO && statvfs(st->dir, &vfs) == 0 &&
	    (unsigned long long)vfs.f_bavail * vfs.f_frsize < FULL_SLACK;
}

/* A failed write (what: "commit", a database's name), as err. */
static int
write_fail(const struct art_store *st, struct art_err *err, const char *what,
    int rc)
{
	if (is_full(st, rc))
		return art_err_set(err, "no_space", "%s to store '%s': %s",
		    what, st->dir, rc == EDQUOT ? "disk quota exceeded" :
		    "no space left on device");
	return art_err_set(err, "store", "%s to '%s': %s", what, st->dir,
	    mdb_strerror(rc));
}

static int
lmdb_fail(struct art_store *st, struct art_err *err, const char *what, int rc)
{
	if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH)
		return art_err_set(err, "store", "open store '%s': not an "
		    "agentrt store (%s)", st->dir, mdb_strerror(rc));
	return art_err_set(err, "store", "%s store '%s': %s", what, st->dir,
	    mdb_strerror(rc));
}

static int
get_meta(MDB_txn *txn, MDB_dbi dbi, const char *key, char *out, size_t n)
{
	MDB_val k = { strlen(key), (void *)key }, v;

	if (mdb_get(txn, dbi, &k, &v) != 0 || v.mv_size >= n)
		return -1;
	memcpy(out, v.mv_data, v.mv_size);
	out[v.mv_size] = '\0';
	return 0;
}

static int
put_meta(MDB_txn *txn, MDB_dbi dbi, const char *key, const char *val)
{
	MDB_val k = { strlen(key), (void *)key }, v = { strlen(val),
	    (void *)val };

	return mdb_put(txn, dbi, &k, &v, 0);
}

/* The meta database exists: is it ours, and of our schema? */
static int
check_meta(struct art_store *st, MDB_txn *txn, struct art_err *err)
{
	char magic[32], schema[32];

	if (get_meta(txn, st->meta, "magic", magic, sizeof(magic)) == -1 ||
	    strcmp(magic, MAGIC) != 0)
		return art_err_set(err, "store", "open store '%s': not an "
		    "agentrt store (made by another program)", st->dir);
	if (get_meta(txn, st->meta, "schema", schema, sizeof(schema)) == -1)
		return art_err_set(err, "store", "open store '%s': no schema "
		    "version", st->dir);
	if (atoi(schema) != ART_STORE_SCHEMA)
		return art_err_set(err, "store", "open store '%s': schema "
		    "version %s, this agentrt reads version %d", st->dir,
		    schema, ART_STORE_SCHEMA);
	return 0;
}

/* Opens every database in txn; 1 when one is missing, -1 on failure. */
static int
open_dbis(struct art_store *st, MDB_txn *txn, unsigned flags,
    struct art_err *err)
{
	int i, rc;

	for (i = 0; i < ART_DB__COUNT; i++) {
		rc = mdb_dbi_open(txn, dbnames[i], flags, &st->dbi[i]);
		if (rc == MDB_NOTFOUND)
			return 1;
		if (rc != 0)
			return lmdb_fail(st, err, "open", rc);
	}
	return 0;
}

/* Creates the layout in a new environment, or checks the one there. */
static int
init_layout(struct art_store *st, struct art_err *err)
{
	MDB_txn *txn;
	MDB_dbi main;
	MDB_stat ms;
	char v[16];
	int rc;

	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		return lmdb_fail(st, err, "open", rc);
	rc = mdb_dbi_open(txn, "meta", 0, &st->meta);
	if (rc == MDB_NOTFOUND) {
		/* A fresh environment has nothing at all in its main db. */
		if ((rc = mdb_dbi_open(txn, NULL, 0, &main)) != 0 ||
		    (rc = mdb_stat(txn, main, &ms)) != 0)
			goto lmdb;
		if (ms.ms_entries > 0) {
			mdb_txn_abort(txn);
			return art_err_set(err, "store", "open store '%s': not "
			    "an agentrt store (made by another program)",
			    st->dir);
		}
		snprintf(v, sizeof(v), "%d", ART_STORE_SCHEMA);
		if ((rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &st->meta)) ||
		    (rc = put_meta(txn, st->meta, "magic", MAGIC)) ||
		    (rc = put_meta(txn, st->meta, "schema", v)))
			goto lmdb;
	} else if (rc != 0)
		goto lmdb;
	else if (check_meta(st, txn, err) == -1) {
		mdb_txn_abort(txn);
		return -1;
	}
	if (open_dbis(st, txn, MDB_CREATE, err) != 0) {
		mdb_txn_abort(txn);
		return -1;
	}
	if ((rc = mdb_txn_commit(txn)) != 0)
		return lmdb_fail(st, err, "create", rc);
	return 0;
lmdb:
	mdb_txn_abort(txn);
	if (rc == MDB_MAP_FULL)
		return art_err_set(err, "store_full", "create store '%s': the "
		    "map is too small", st->dir);
	return lmdb_fail(st, err, "open", rc);
}

/*
 * The usual case, an existing store of ours, needs only a read
 * transaction (committed, so the database handles stay open).
 */
static int
open_layout(struct art_store *st, struct art_err *err)
{
	MDB_txn *txn;
	int rc, r;

	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0)
		return lmdb_fail(st, err, "open", rc);
	rc = mdb_dbi_open(txn, "meta", 0, &st->meta);
	if (rc == MDB_NOTFOUND) {
		mdb_txn_abort(txn);
		return init_layout(st, err);
	}
	if (rc != 0 || check_meta(st, txn, err) == -1) {
		mdb_txn_abort(txn);
		return rc != 0 ? lmdb_fail(st, err, "open", rc) : -1;
	}
	if ((r = open_dbis(st, txn, 0, err)) != 0) {
		mdb_txn_abort(txn);
		return r == 1 ? init_layout(st, err) : -1;
	}
	if ((rc = mdb_txn_commit(txn)) != 0)
		return lmdb_fail(st, err, "open", rc);
	return 0;
}

static void	cache_clear(struct art_store *);

/* Opens st's environment on st->dir with a map of size bytes. */
static int
env_open(struct art_store *st, size_t size, struct art_err *err)
{
	mdb_filehandle_t fd;
	int rc, fl;

	if ((rc = mdb_env_create(&st->env)) != 0 ||
	    (rc = mdb_env_set_maxdbs(st->env, ART_DB__COUNT + 1)) != 0 ||
	    (rc = mdb_env_set_mapsize(st->env, size)) != 0 ||
	    (rc = mdb_env_open(st->env, st->dir, 0, 0600)) != 0 ||
	    open_layout(st, err) == -1) {
		if (rc != 0)
			lmdb_fail(st, err, "open", rc);
		if (st->env != NULL)
			mdb_env_close(st->env);
		st->env = NULL;
		return -1;
	}
	st->map_size = size;
	/*
	 * LMDB leaves its data file's descriptor open across exec: a worker
	 * or tool a process starts must not inherit the store.
	 */
	if (mdb_env_get_fd(st->env, &fd) == 0 && (fl = fcntl(fd, F_GETFD)) != -1)
		fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	return 0;
}

/*
 * A failed commit can leave LMDB's environment fatal (MDB_PANIC): every
 * later transaction fails until it is closed and opened again.  No
 * transaction outlives its art_store_read/write call, so none is open
 * here: the environment is reopened, on what the file holds, and what
 * was kept of the old one is dropped.
 */
static int
reopen(struct art_store *st, struct art_err *err)
{
	size_t size = st->env != NULL ? art_store_mapsize(st) : st->map_size;

	if (st->env != NULL)
		mdb_env_close(st->env);
	st->env = NULL;
	st->unsynced = 0;
	cache_clear(st);
	jv_free(st->kept);
	st->kept = jv_null();
	return env_open(st, size, err);
}

int
art_store_open(struct art_store **stp, const struct art_store_opts *o,
    struct art_err *err)
{
	struct art_store *st;
	size_t start;

	*stp = NULL;
	if (!o->create && access(o->dir, F_OK) == -1 && errno == ENOENT)
		return art_err_set(err, "no_store", "no store in '%s'", o->dir);
	if (make_dirs(o->dir, err) == -1)
		return -1;
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->dir = strdup(o->dir)) == NULL) {
		free(st);
		return art_err_set(err, "nomem", "out of memory");
	}
	st->map_max = o->map_max > 0 ? o->map_max : ART_STORE_MAP_MAX;
	st->cache = jv_object();
	st->kept = jv_null();
	st->clock = o->clock;
	start = o->map_start > 0 ? o->map_start : ART_STORE_MAP_START;
	if (start > st->map_max)
		start = st->map_max;
	if (env_open(st, start, err) == -1) {
		art_store_close(st);
		return -1;
	}
	*stp = st;
	return 0;
}

const char *
art_store_lmdb_version(char *buf, size_t n)
{
	int major, minor, patch;

	mdb_version(&major, &minor, &patch);
	snprintf(buf, n, "%d.%d.%d", major, minor, patch);
	return buf;
}

void
art_store_close(struct art_store *st)
{
	int i;

	if (st == NULL)
		return;
	if (st->env != NULL) {
		if (st->unsynced)
			mdb_env_sync(st->env, 1);	/* a clean exit is durable */
		mdb_env_close(st->env);
	}
	jv_free(st->cache);
	jv_free(st->kept);
	for (i = 0; i < DOCS_MAX; i++) {
		if (st->docs[i].raw != NULL)
			jv_free(st->docs[i].val);
		free(st->docs[i].raw);
	}
	free(st->dir);
	free(st);
}

const char *
art_store_find_dir(const char *db, const char *agentrt_db,
    const char *xdg_data, const char *home, char *buf, size_t n,
    struct art_err *err)
{
	if (db != NULL && *db != '\0')
		return db;
	if (agentrt_db != NULL && *agentrt_db != '\0')
		return agentrt_db;
	if (xdg_data != NULL && *xdg_data == '/')
		snprintf(buf, n, "%s/agentrt", xdg_data);
	else if (home != NULL && *home != '\0')
		snprintf(buf, n, "%s/.local/share/agentrt", home);
	else {
		art_err_set(err, "no_store", "find store: set AGENTRT_DB, "
		    "XDG_DATA_HOME or HOME, or give -d DIR");
		return NULL;
	}
	return buf;
}

const char *
art_store_dir(const struct art_store *st)
{
	return st->dir;
}

const struct art_clock *
art_store_clock(const struct art_store *st)
{
	return st->clock;
}

size_t
art_store_mapsize(const struct art_store *st)
{
	MDB_envinfo info;

	if (st->env == NULL || mdb_env_info(st->env, &info) != 0)
		return st->map_size;
	return info.me_mapsize;
}

struct art_store *
art_txn_store(struct art_txn *t)
{
	return t->st;
}

static void
cache_clear(struct art_store *st)
{
	if (st->ncache == 0)
		return;
	jv_free(st->cache);
	st->cache = jv_object();
	st->ncache = 0;
}

/* The cached value of an immutable key, or jv_invalid(). */
static jv
cache_get(struct art_store *st, enum art_db db, const MDB_val *k)
{
	if (db != ART_DB_NODES || st->ncache == 0)
		return jv_invalid();
	return jv_object_get(jv_copy(st->cache), jv_string_sized(k->mv_data,
	    (int)k->mv_size));
}

static void
cache_put(struct art_store *st, enum art_db db, const MDB_val *k, jv v)
{
	if (db != ART_DB_NODES) {
		jv_free(v);
		return;
	}
	if (st->ncache >= CACHE_MAX)
		cache_clear(st);
	st->cache = jv_object_set(st->cache, jv_string_sized(k->mv_data,
	    (int)k->mv_size), v);
	st->ncache++;
}

/* Another process grew the map: adopt its size and go on. */
static int
begin(struct art_store *st, unsigned flags, MDB_txn **txn,
    struct art_err *err)
{
	int rc;

	/* A reopen that failed is tried again. */
	if (st->env == NULL && reopen(st, err) == -1)
		return -1;
	rc = mdb_txn_begin(st->env, NULL, flags, txn);
	if (rc == MDB_MAP_RESIZED) {
		if ((rc = mdb_env_set_mapsize(st->env, 0)) == 0)
			rc = mdb_txn_begin(st->env, NULL, flags, txn);
	}
	if (rc == MDB_PANIC) {
		if (reopen(st, err) == -1)
			return -1;
		rc = mdb_txn_begin(st->env, NULL, flags, txn);
	}
	if (rc != 0)
		return art_err_set(err, "store", "begin transaction in '%s': "
		    "%s", st->dir, mdb_strerror(rc));
	return 0;
}

/* Doubles the map, up to map_max; called with no transaction open. */
static int
grow(struct art_store *st, struct art_err *err)
{
	size_t cur = art_store_mapsize(st), next;
	int rc;

	if (cur >= st->map_max)
		return art_err_set(err, "store_full", "store '%s' is full: its "
		    "map reached the limit of %zu bytes", st->dir, st->map_max);
	next = cur > st->map_max / 2 ? st->map_max : cur * 2;
	if ((rc = mdb_env_set_mapsize(st->env, next)) != 0)
		return art_err_set(err, "store_full", "grow store '%s' to %zu "
		    "bytes: %s", st->dir, next, mdb_strerror(rc));
	st->map_size = next;
	return 0;
}

/*
 * Commits t, with MDB_NOSYNC set around the commit when t asked for it
 * (the flag is the environment's, so it is put back at once).  A durable
 * commit that wrote nothing is a no-op for LMDB, so it would sync
 * nothing: then the unsynced commits before it are synced here, since
 * the caller may act on them once this returns.
 */
static int
commit(struct art_store *st, struct art_txn *t)
{
	MDB_envinfo info;
	size_t id = mdb_txn_id(t->txn);
	int rc;

	if (t->nosync && (rc = mdb_env_set_flags(st->env, MDB_NOSYNC,
	    1)) != 0) {
		mdb_txn_abort(t->txn);
		return rc;
	}
	rc = mdb_txn_commit(t->txn);
	if (t->nosync) {
		mdb_env_set_flags(st->env, MDB_NOSYNC, 0);
		if (rc == 0)
			st->unsynced = 1;
		return rc;
	}
	if (rc == 0 && st->unsynced && mdb_env_info(st->env, &info) == 0 &&
	    info.me_last_txnid < id)
		rc = mdb_env_sync(st->env, 1);
	if (rc == 0)
		st->unsynced = 0;
	return rc;
}

int
art_store_write(struct art_store *st, art_txn_fn *fn, void *ctx,
    struct art_err *err)
{
	struct art_txn t = { st, NULL, 0, jv_null() };
	size_t id;
	int r, rc;

	for (;;) {
		if (begin(st, 0, &t.txn, err) == -1)
			return -1;
		t.nosync = 0;	/* a rerun decides afresh */
		id = mdb_txn_id(t.txn);
		jv_free(t.mine);
		t.mine = mine_from(st, id - 1);
		r = fn(&t, ctx, err);
		if (r == -1) {
			jv_free(t.mine);
			t.mine = jv_null();
			mdb_txn_abort(t.txn);
			cache_clear(st);	/* it may hold nodes never committed */
			if (!art_err_is(err, "map_full"))
				return -1;
		} else if ((rc = commit(st, &t)) != MDB_MAP_FULL) {
			if (rc == 0)
				keep_mine(st, &t, id);
			jv_free(t.mine);
			t.mine = jv_null();
			if (rc != 0) {
				cache_clear(st);
				jv_free(st->kept);
				st->kept = jv_null();
				return write_fail(st, err, "commit", rc);
			}
			return r;
		} else {
			jv_free(t.mine);
			t.mine = jv_null();
			cache_clear(st);
		}
		if (grow(st, err) == -1)
			return -1;
	}
}

void
art_txn_nosync(struct art_txn *t)
{
	t->nosync = 1;
}

int
art_store_read(struct art_store *st, art_txn_fn *fn, void *ctx,
    struct art_err *err)
{
	struct art_txn t = { st, NULL, 0, jv_null() };
	int r;

	if (begin(st, MDB_RDONLY, &t.txn, err) == -1)
		return -1;
	t.mine = mine_from(st, mdb_txn_id(t.txn));
	r = fn(&t, ctx, err);
	jv_free(t.mine);
	mdb_txn_abort(t.txn);
	return r;
}

/* key = sid NUL sub; with sid NULL the key is sub alone. */
static int
make_key(unsigned char *buf, MDB_val *k, const char *sid, const void *sub,
    size_t sublen, struct art_err *err)
{
	size_t n = sid != NULL ? strlen(sid) + 1 : 0;

	if (n + sublen > MAX_KEY)
		return art_err_set(err, "store", "key too long (%zu bytes)",
		    n + sublen);
	if (sid != NULL)
		memcpy(buf, sid, n);
	if (sublen > 0)
		memcpy(buf + n, sub, sublen);
	k->mv_data = buf;
	k->mv_size = n + sublen;
	return 0;
}

static int
put(struct art_txn *t, enum art_db db, const char *sid, const void *sub,
    size_t sublen, jv value, unsigned flags, struct art_err *err)
{
	unsigned char kb[MAX_KEY];
	MDB_val k, v;
	size_t n;
	char *text;
	jv mv;
	int rc;

	text = art_json_dump(&value, &n);
	mv = is_mine(t, db) ? value : (jv_free(value), jv_null());
	if (text == NULL) {
		jv_free(mv);
		return art_err_set(err, "nomem", "out of memory");
	}
	if (make_key(kb, &k, sid, sub, sublen, err) == -1) {
		free(text);
		jv_free(mv);
		return -1;
	}
	v.mv_data = text;
	v.mv_size = n + 1;	/* with its NUL: see parse_value() */
	if (db == ART_DB_NODES && !(flags & MDB_NOOVERWRITE))
		cache_clear(t->st);	/* a node rewritten: forget them all */
	rc = mdb_put(t->txn, t->st->dbi[db], &k, &v, flags);
	free(text);
	if (rc == 0 && is_mine(t, db))
		t->mine = jv_object_set(t->mine, mine_key(db, &k), mv);
	else
		jv_free(mv);
	if (rc == MDB_KEYEXIST)
		return art_err_set(err, "exists", "%s: key exists", dbnames[db]);
	if (rc == MDB_MAP_FULL)
		return art_err_set(err, "map_full", "store map is full");
	if (rc != 0 && is_full(t->st, rc))
		return write_fail(t->st, err, dbnames[db], rc);
	if (rc != 0)
		return art_err_set(err, "store", "write %s: %s", dbnames[db],
		    mdb_strerror(rc));
	return 0;
}

int
art_store_put(struct art_txn *t, enum art_db db, const char *sid,
    const void *sub, size_t sublen, jv value, struct art_err *err)
{
	return put(t, db, sid, sub, sublen, value, 0, err);
}

int
art_store_add(struct art_txn *t, enum art_db db, const char *sid,
    const void *sub, size_t sublen, jv value, struct art_err *err)
{
	return put(t, db, sid, sub, sublen, value, MDB_NOOVERWRITE, err);
}

/* A large value parsed before from the same bytes, or jv_invalid(). */
static jv
doc_get(struct art_store *st, const MDB_val *v)
{
	int i;

	if (v->mv_size < DOC_MIN || v->mv_size > DOC_MAX)
		return jv_invalid();
	for (i = 0; i < DOCS_MAX; i++)
		if (st->docs[i].raw != NULL && st->docs[i].len == v->mv_size &&
		    memcmp(st->docs[i].raw, v->mv_data, v->mv_size) == 0)
			return jv_copy(st->docs[i].val);
	return jv_invalid();
}

/* Keeps a large value (borrowed) parsed from v; out of memory, does not. */
static void
doc_put(struct art_store *st, const MDB_val *v, const jv *val)
{
	struct doc *d = &st->docs[st->ndoc];
	char *raw;

	if (v->mv_size < DOC_MIN || v->mv_size > DOC_MAX ||
	    (raw = malloc(v->mv_size)) == NULL)
		return;
	memcpy(raw, v->mv_data, v->mv_size);
	if (d->raw != NULL) {
		free(d->raw);
		jv_free(d->val);
	}
	d->raw = raw;
	d->len = v->mv_size;
	d->val = jv_copy(*val);
	st->ndoc = (st->ndoc + 1) % DOCS_MAX;
}

/*
 * A stored value: JSON then a NUL, so a failed parse stays in bounds.
 * keep: a large one may be kept parsed (art_store_get's; a scan's are
 * not, so reading a log through does not fill the cache).
 */
static jv
parse_value(struct art_store *st, const MDB_val *v, int keep,
    struct art_err *err)
{
	const char *p = v->mv_data;
	jv val;

	if (v->mv_size == 0 || p[v->mv_size - 1] != '\0') {
		art_err_set(err, "store", "corrupt value (%zu bytes, no NUL)",
		    v->mv_size);
		return jv_invalid();
	}
	if (keep && jv_is_valid(val = doc_get(st, v)))
		return val;
	if (keep)
		jv_free(val);
	st->parses++;
	val = art_json_parse(p, v->mv_size - 1, err);
	if (keep && jv_is_valid(val))
		doc_put(st, v, &val);
	return val;
}

uint64_t
art_store_parses(const struct art_store *st)
{
	return st->parses;
}

jv
art_store_get(struct art_txn *t, enum art_db db, const char *sid,
    const void *sub, size_t sublen, struct art_err *err)
{
	unsigned char kb[MAX_KEY];
	MDB_val k, v;
	jv val;
	int rc;

	if (make_key(kb, &k, sid, sub, sublen, err) == -1)
		return jv_invalid();
	if (jv_is_valid(val = cache_get(t->st, db, &k)))
		return val;
	jv_free(val);
	if (is_mine(t, db) && jv_is_valid(val = jv_object_get(jv_copy(t->mine),
	    mine_key(db, &k))))
		return val;
	if (is_mine(t, db))
		jv_free(val);
	rc = mdb_get(t->txn, t->st->dbi[db], &k, &v);
	if (rc == MDB_NOTFOUND) {
		art_err_set(err, "not_found", "%s: no such key", dbnames[db]);
		return jv_invalid();
	}
	if (rc != 0) {
		art_err_set(err, "store", "read %s: %s", dbnames[db],
		    mdb_strerror(rc));
		return jv_invalid();
	}
	val = parse_value(t->st, &v, db != ART_DB_NODES, err);
	if (jv_is_valid(val))
		cache_put(t->st, db, &k, jv_copy(val));
	if (jv_is_valid(val) && is_mine(t, db))
		t->mine = jv_object_set(t->mine, mine_key(db, &k), jv_copy(val));
	return val;
}

int
art_store_has(struct art_txn *t, enum art_db db, const char *sid,
    const void *sub, size_t sublen, struct art_err *err)
{
	unsigned char kb[MAX_KEY];
	MDB_val k, v;
	int rc;

	if (make_key(kb, &k, sid, sub, sublen, err) == -1)
		return -1;
	if (is_mine(t, db) && jv_object_has(jv_copy(t->mine),
	    mine_key(db, &k)))
		return 1;
	rc = mdb_get(t->txn, t->st->dbi[db], &k, &v);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return art_err_set(err, "store", "read %s: %s", dbnames[db],
		    mdb_strerror(rc));
	return 1;
}

int
art_store_del(struct art_txn *t, enum art_db db, const char *sid,
    const void *sub, size_t sublen, struct art_err *err)
{
	unsigned char kb[MAX_KEY];
	MDB_val k;
	int rc;

	if (make_key(kb, &k, sid, sub, sublen, err) == -1)
		return -1;
	if (is_mine(t, db))
		t->mine = jv_object_delete(t->mine, mine_key(db, &k));
	rc = mdb_del(t->txn, t->st->dbi[db], &k, NULL);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0 && is_full(t->st, rc))
		return write_fail(t->st, err, dbnames[db], rc);
	if (rc != 0)
		return art_err_set(err, "store", "delete from %s: %s",
		    dbnames[db], mdb_strerror(rc));
	return 1;
}

struct scan {
	MDB_cursor	*cur;
	MDB_val		 k, v;
	size_t		 plen;		/* bytes of the key every hit starts with */
	unsigned char	 pkey[MAX_KEY];
	size_t		 skip;		/* the sid NUL part handed over not */
};

/* Positions the cursor on the first key to visit; MDB_NOTFOUND at none. */
static int
scan_first(struct scan *s, const MDB_val *from, int after, int reverse)
{
	int rc;

	if (!reverse) {
		s->k = *from;
		/* LMDB refuses an empty key: the start of the db is MDB_FIRST. */
		rc = mdb_cursor_get(s->cur, &s->k, &s->v, from->mv_size == 0 ?
		    MDB_FIRST : MDB_SET_RANGE);
		if (rc == 0 && after && s->k.mv_size == from->mv_size &&
		    memcmp(s->k.mv_data, from->mv_data, s->k.mv_size) == 0)
			rc = mdb_cursor_get(s->cur, &s->k, &s->v, MDB_NEXT);
		return rc;
	}
	s->k = *from;
	rc = mdb_cursor_get(s->cur, &s->k, &s->v, MDB_SET_RANGE);
	if (rc == MDB_NOTFOUND)
		return mdb_cursor_get(s->cur, &s->k, &s->v, MDB_LAST);
	if (rc != 0)
		return rc;
	return mdb_cursor_get(s->cur, &s->k, &s->v, MDB_PREV);
}

static int
in_prefix(const struct scan *s)
{
	return s->k.mv_size >= s->plen &&
	    memcmp(s->k.mv_data, s->pkey, s->plen) == 0;
}

int
art_store_scan(struct art_txn *t, enum art_db db, const char *sid,
    const void *prefix, size_t prefixlen, const void *from, size_t fromlen,
    int reverse, art_scan_fn *fn, void *ctx, struct art_err *err)
{
	struct scan s = { 0 };
	unsigned char fkey[MAX_KEY];
	MDB_val f;
	jv v;
	int rc, r = 0;

	if (make_key(s.pkey, &f, sid, prefix, prefixlen, err) == -1)
		return -1;
	s.plen = f.mv_size;
	s.skip = sid != NULL ? strlen(sid) + 1 : 0;
	if (from != NULL) {
		if (make_key(fkey, &f, sid, from, fromlen, err) == -1)
			return -1;
	} else if (reverse) {
		/* Past every key of the prefix: the prefix then 0xff bytes. */
		memcpy(fkey, s.pkey, s.plen);
		memset(fkey + s.plen, 0xff, MAX_KEY - s.plen);
		f.mv_data = fkey;
		f.mv_size = MAX_KEY;
	}
	if ((rc = mdb_cursor_open(t->txn, t->st->dbi[db], &s.cur)) != 0)
		return art_err_set(err, "store", "scan %s: %s", dbnames[db],
		    mdb_strerror(rc));
	for (rc = scan_first(&s, &f, from != NULL, reverse); rc == 0 && in_prefix(&s);
	    rc = mdb_cursor_get(s.cur, &s.k, &s.v, reverse ? MDB_PREV :
	    MDB_NEXT)) {
		v = cache_get(t->st, db, &s.k);
		if (!jv_is_valid(v)) {
			jv_free(v);
			v = parse_value(t->st, &s.v, 0, err);
			if (jv_is_valid(v))
				cache_put(t->st, db, &s.k, jv_copy(v));
		}
		if (!jv_is_valid(v)) {
			r = -1;
			break;
		}
		r = fn((unsigned char *)s.k.mv_data + s.skip,
		    s.k.mv_size - s.skip, v, ctx, err);
		if (r != 0)
			break;
	}
	mdb_cursor_close(s.cur);
	if (r == 0 && rc != 0 && rc != MDB_NOTFOUND)
		return art_err_set(err, "store", "scan %s: %s", dbnames[db],
		    mdb_strerror(rc));
	return r == -1 ? -1 : 0;
}

int
art_store_last(struct art_txn *t, enum art_db db, const char *sid,
    const void *prefix, size_t prefixlen, void *sub, size_t *sublen,
    struct art_err *err)
{
	unsigned char pk[MAX_KEY], fk[MAX_KEY];
	MDB_cursor *cur;
	MDB_val p, f, k, v;
	size_t skip = sid != NULL ? strlen(sid) + 1 : 0;
	int rc, found = 0;

	if (make_key(pk, &p, sid, prefix, prefixlen, err) == -1)
		return -1;
	memcpy(fk, pk, p.mv_size);
	memset(fk + p.mv_size, 0xff, MAX_KEY - p.mv_size);
	f.mv_data = fk;
	f.mv_size = MAX_KEY;
	if ((rc = mdb_cursor_open(t->txn, t->st->dbi[db], &cur)) != 0)
		return art_err_set(err, "store", "seek %s: %s", dbnames[db],
		    mdb_strerror(rc));
	k = f;
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	rc = rc == MDB_NOTFOUND ? mdb_cursor_get(cur, &k, &v, MDB_LAST) :
	    rc == 0 ? mdb_cursor_get(cur, &k, &v, MDB_PREV) : rc;
	if (rc == 0 && k.mv_size >= p.mv_size && k.mv_size - skip <= *sublen &&
	    memcmp(k.mv_data, p.mv_data, p.mv_size) == 0) {
		*sublen = k.mv_size - skip;
		memcpy(sub, (unsigned char *)k.mv_data + skip, *sublen);
		found = 1;
	}
	mdb_cursor_close(cur);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return art_err_set(err, "store", "seek %s: %s", dbnames[db],
		    mdb_strerror(rc));
	return found;
}

int64_t
art_store_del_session(struct art_txn *t, const char *sid,
    struct art_err *err)
{
	unsigned char kb[MAX_KEY];
	MDB_cursor *cur;
	MDB_val pk, k, v;
	int64_t n = 0;
	int i, rc;

	if (make_key(kb, &pk, sid, NULL, 0, err) == -1)
		return -1;
	cache_clear(t->st);
	if (jv_get_kind(t->mine) == JV_KIND_OBJECT) {
		jv_free(t->mine);
		t->mine = jv_object();
	}
	for (i = 0; i < ART_DB__COUNT; i++) {
		if ((rc = mdb_cursor_open(t->txn, t->st->dbi[i], &cur)) != 0)
			return art_err_set(err, "store", "delete: %s",
			    mdb_strerror(rc));
		/* Seek afresh after each delete: simple, and O(log n). */
		for (;;) {
			k = pk;
			rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
			if (rc != 0 || k.mv_size < pk.mv_size ||
			    memcmp(k.mv_data, pk.mv_data, pk.mv_size) != 0)
				break;
			if ((rc = mdb_cursor_del(cur, 0)) != 0)
				break;
			n++;
		}
		mdb_cursor_close(cur);
		if (rc == MDB_MAP_FULL)
			return art_err_set(err, "map_full", "store map is full");
		if (rc != 0 && rc != MDB_NOTFOUND && is_full(t->st, rc))
			return write_fail(t->st, err, "delete", rc);
		if (rc != 0 && rc != MDB_NOTFOUND)
			return art_err_set(err, "store", "delete: %s",
			    mdb_strerror(rc));
	}
	return n;
}
