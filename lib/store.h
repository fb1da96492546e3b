/* store.h - sessions in one LMDB environment */
#ifndef ART_STORE_H
#define ART_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "clock.h"
#include "err.h"

/* The layout this code reads and writes; a store of another is refused. */
#define ART_STORE_SCHEMA	1
/* The largest map by default (a sparse reservation, not disk). */
#define ART_STORE_MAP_MAX	((size_t)1 << 40)
/* The map a new environment starts with; it doubles when full. */
#define ART_STORE_MAP_START	((size_t)64 << 20)

/*
 * The named databases.  Every key is a session id, a NUL, then a sub-key
 * (empty for ART_DB_SESSIONS); values are compact JSON followed by a NUL.
 * ART_DB_EVENTS is the log, the truth; the others are views of it.
 */
enum art_db {
	ART_DB_SESSIONS,	/* sid -> the session's summary */
	ART_DB_EVENTS,		/* (sid, be64 seq) -> event */
	ART_DB_NODES,		/* (sid, node id) -> {message, parent_id, depth} */
	ART_DB_CALLS,		/* (sid, call id) -> call */
	ART_DB_TURNS,		/* (sid, turn id) -> turn */
	ART_DB_VERSIONS,	/* (sid, kind, anchor, NUL, be64 seq) -> value */
	ART_DB_PENDING,		/* (sid, priority, be64 seq) -> queued decision */
	ART_DB_DRIVERS,		/* sid -> the process driving it, {pid, since} */
	ART_DB_REQUESTS,	/* (sid, call id) -> the model call's request */
	ART_DB_OUTBOX,		/* (sid, call id, NUL, be64 attempt) -> a tool
				 * run's state and result (outbox.h) */
	ART_DB__COUNT
};

/*
 * Concurrency and fork.  Any number of processes may open one store at
 * once: LMDB serialises writers (one write transaction at a time across
 * every process; art_store_write waits for it) and readers never block.
 * Within a process a struct art_store is for one thread; nothing here
 * takes locks of its own, and LMDB's reader slots are per thread.  Never
 * fork() with a store open and use it, or close it, in the child (LMDB:
 * the child shares the parent's locks and maps; see mdb_env_open(3)): a
 * child that is to run another program execs at once and touches
 * nothing here (the environment's file descriptors are close-on-exec),
 * and a child that needs the store opens it anew after an exec.
 */
struct art_store;
/* A transaction, valid only inside the callback it is handed to. */
struct art_txn;

struct art_store_opts {
	const char		*dir;
	size_t			 map_max;	/* 0: ART_STORE_MAP_MAX */
	size_t			 map_start;	/* 0: ART_STORE_MAP_START */
	int			 create;	/* make the directory if absent */
	const struct art_clock	*clock;		/* borrowed for the store's life */
};

/*
 * Opens the store in opts->dir and checks its schema.  A missing directory
 * is made (0700, files 0600) when opts->create is set, else it is err code
 * "no_store".  Otherwise returns -1 with err code "store" and a one-line
 * reason: an unusable directory, a file that is not LMDB, an LMDB
 * environment another program made, another schema version.
 */
int	art_store_open(struct art_store **, const struct art_store_opts *,
	    struct art_err *);
/*
 * Where the store is, as every command finds it: db (-d), else agentrt_db
 * ($AGENTRT_DB), else xdg_data ($XDG_DATA_HOME, when absolute)/agentrt,
 * else home ($HOME)/.local/share/agentrt.  Any may be NULL or empty.
 * Returns db or agentrt_db, or buf (n bytes) filled in, or NULL with err
 * when none of them says.
 */
const char *art_store_find_dir(const char *db, const char *agentrt_db,
	    const char *xdg_data, const char *home, char *buf, size_t n,
	    struct art_err *);
void	art_store_close(struct art_store *);
/* The version of the LMDB in use, "0.9.24", in buf of n bytes; buf. */
const char *art_store_lmdb_version(char *buf, size_t n);
const char *art_store_dir(const struct art_store *);
const struct art_clock *art_store_clock(const struct art_store *);
/* The map's current size in bytes. */
size_t	art_store_mapsize(const struct art_store *);

/*
 * Runs fn in one write transaction and commits it, or aborts it when fn
 * returns -1 (whose err is kept).  When the map fills, the transaction is
 * aborted, the map doubled (up to map_max) and fn run again from the
 * start, so fn must only write through its txn.  A map that cannot grow
 * is err code "store_full".  A file system too full to take the change
 * is err code "no_space" ("commit to store 'DIR': no space left on
 * device"): nothing of it was recorded, and the same write succeeds once
 * space is freed.  A commit whose meta page could not be written leaves
 * LMDB's environment fatal (MDB_PANIC); the next read or write opens it
 * again on what the file holds, so one failed commit fails one write,
 * not every later one.  Returns fn's result, or -1.
 */
typedef int art_txn_fn(struct art_txn *, void *ctx, struct art_err *);
int	art_store_write(struct art_store *, art_txn_fn *, void *ctx,
	    struct art_err *);
/*
 * Called by a write's fn before it returns: this change need not be on
 * disk when art_store_write() returns.  It is in the OS page cache, so
 * every process sees it and a process killed with kill -9 loses nothing;
 * only an OS crash or power loss can undo it, together with the other
 * unsynced changes since the last durable commit, which makes them all
 * durable.  Use it only for a change whose loss the caller can re-derive
 * (what it hands out is a pure function of what was durably recorded).
 * LMDB's caveat holds: on a file system that does not keep the order of
 * writes, such a crash can also damage the environment.
 */
void	art_txn_nosync(struct art_txn *);
/* Runs fn in a read transaction, which never blocks the writer. */
int	art_store_read(struct art_store *, art_txn_fn *, void *ctx,
	    struct art_err *);
struct art_store *art_txn_store(struct art_txn *);

/*
 * Stores value (consumed) under (sid, sub).  -1 with err code "map_full"
 * (handled by art_store_write), "no_space" (LMDB wrote pages out early
 * to a full file system) or "store".  art_store_add() refuses an
 * existing key with err code "exists".
 */
int	art_store_put(struct art_txn *, enum art_db, const char *sid,
	    const void *sub, size_t sublen, jv value, struct art_err *);
int	art_store_add(struct art_txn *, enum art_db, const char *sid,
	    const void *sub, size_t sublen, jv value, struct art_err *);
/* The value under (sid, sub), a new jv; jv_invalid() with err code
 * "not_found" when absent, or "store" when unreadable. */
jv	art_store_get(struct art_txn *, enum art_db, const char *sid,
	    const void *sub, size_t sublen, struct art_err *);
/*
 * How many values this handle has parsed from their bytes: a value of a
 * few KB or more read again with the same bytes (a configuration every
 * step reads) is parsed once and counts once.  For tests and benchmarks.
 */
uint64_t art_store_parses(const struct art_store *);
/* 1 when (sid, sub) holds a value, 0 when not, -1 failed; parses nothing. */
int	art_store_has(struct art_txn *, enum art_db, const char *sid,
	    const void *sub, size_t sublen, struct art_err *);
/* 1 deleted, 0 absent, -1 failed. */
int	art_store_del(struct art_txn *, enum art_db, const char *sid,
	    const void *sub, size_t sublen, struct art_err *);

/*
 * Calls fn for each key of sid whose sub-key starts with prefix, in key
 * order (backwards when reverse is set), starting after the sub-key from
 * when it is not NULL.  fn gets the sub-key (borrowed for the call) and
 * the value (consumed); it returns 0 to go on, 1 to stop, -1 to fail.
 * sid NULL walks every session's keys; fn then gets the whole key.
 */
typedef int art_scan_fn(const void *sub, size_t sublen, jv value, void *ctx,
	    struct art_err *);
int	art_store_scan(struct art_txn *, enum art_db, const char *sid,
	    const void *prefix, size_t prefixlen, const void *from,
	    size_t fromlen, int reverse, art_scan_fn *, void *ctx,
	    struct art_err *);
/*
 * The last sub-key of sid that starts with prefix, copied to sub (whose
 * size *sublen gives, and which it then holds), without reading the
 * value: 1 found, 0 none, -1 on error.  O(log n).
 */
int	art_store_last(struct art_txn *, enum art_db, const char *sid,
	    const void *prefix, size_t prefixlen, void *sub, size_t *sublen,
	    struct art_err *);
/* Deletes every key of sid in every database; returns the count. */
int64_t	art_store_del_session(struct art_txn *, const char *sid,
	    struct art_err *);

/* Big-endian u64, the sub-key of ordered logs. */
void	art_be64_put(unsigned char out[8], uint64_t);
uint64_t art_be64_get(const unsigned char in[8]);

#endif
