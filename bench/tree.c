/* tree - what reconciling a long view, and resolving state along it, cost
 *
 * In a fresh temporary store, one session's tree gets a path of N
 * messages (user and assistant in turn), written by one
 * art_reconcile_apply() of the whole view in one write transaction, as
 * the engine writes a response's transcript.  Then each figure is one
 * untimed run and R timed ones of:
 *
 *   - the same view sent again, which must write and record nothing;
 *   - the view edited at message N/2 (no id, new content), which writes
 *     the N - N/2 messages from there on, the later ones under fresh ids.
 *     Each edit runs in a write transaction this program aborts, so every
 *     run starts from the same tree;
 *   - art_session_resolve() at the head and at node N/2, after N
 *     worker.state.updated versions anchored one per node from the root
 *     down (so walking the path root first, every anchor holds a newer
 *     version than the last: the most values resolve reads), and N
 *     agent.updated versions all anchored at the root (one value to read).
 *
 * Each call is timed alone, and the allocations made during it are
 * counted, libjq's and LMDB's included: this file defines malloc(),
 * calloc(), realloc() and free(), which the dynamic linker then prefers
 * for every library in the process, and forwards them to the entry points
 * glibc exports for such wrappers.
 *
 * The store keeps every node it parses in a cache that an aborted write
 * empties.  "warm" is a process that has read the path before; "cold" one
 * that has not (a new process, or one whose last write failed).
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jv.h>

#include "clock.h"
#include "diag.h"
#include "err.h"
#include "ids.h"
#include "json.h"
#include "reconcile.h"
#include "session.h"
#include "store.h"
#include "tree.h"

#define DEFAULT_N	10000
#define DEFAULT_RUNS	11

struct opts {
	size_t		 n;
	int		 runs;
	const char	*parent;	/* where the temporary store goes */
	size_t		 map_start;	/* 0: the store's default */
	bool		 keep;
};

/* --- counting allocations -------------------------------------------- */

/* glibc's allocator, under the names it exports for wrappers like ours. */
extern void	*__libc_malloc(size_t);
extern void	*__libc_calloc(size_t, size_t);
extern void	*__libc_realloc(void *, size_t);
extern void	 __libc_free(void *);

/*
 * What malloc() and its kin counted while on was set.  A global because
 * malloc() has no context argument to carry it; the program has one
 * thread.  Volatile because the compiler takes malloc() for the builtin
 * that touches no variable of ours, and would otherwise read the count in
 * this file from before a call.  strdup() inside glibc reaches our
 * malloc() too; LMDB's posix_memalign(), used only to copy an
 * environment, is not counted.
 */
static volatile struct {
	bool	on;
	size_t	calls;
	size_t	bytes;
} counter;

static void
count(size_t n)
{
	if (counter.on) {
		counter.calls++;
		counter.bytes += n;
	}
}

void *
malloc(size_t n)
{
	count(n);
	return __libc_malloc(n);
}

void *
calloc(size_t nmemb, size_t size)
{
	count(nmemb * size);
	return __libc_calloc(nmemb, size);
}

void *
realloc(void *p, size_t n)
{
	count(n);
	return __libc_realloc(p, n);
}

void
free(void *p)
{
	__libc_free(p);
}

/* --- measuring ------------------------------------------------------- */

/* One timed call. */
struct sample {
	double	us;
	size_t	allocs;		/* malloc, calloc and realloc calls */
	size_t	bytes;		/* the bytes they asked for */
};

static volatile sig_atomic_t stopping;

static void
on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static int
interrupted(struct art_err *err)
{
	return art_err_set(err, "interrupted", "interrupted");
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void
meter_start(struct sample *s)
{
	counter.calls = 0;
	counter.bytes = 0;
	counter.on = true;
	s->us = now_us();
}

static void
meter_stop(struct sample *s)
{
	s->us = now_us() - s->us;
	counter.on = false;
	s->allocs = counter.calls;
	s->bytes = counter.bytes;
}

/*
 * Whether our malloc() is the one called: valgrind, for one, replaces it
 * with its own, and then every count reads 0.
 */
static bool
counting_works(void)
{
	void *volatile p;	/* or the pair may be optimized away */
	struct sample s;

	meter_start(&s);
	p = malloc(1);
	meter_stop(&s);
	free(p);
	return s.allocs == 1;
}

/* --- the store and the views ----------------------------------------- */

/* The temporary store, its session, and the views sent to it. */
struct bench {
	struct art_clock	 clock;
	struct art_ids		 ids;
	struct art_store	*store;
	char			 dir[PATH_MAX];
	char			 sid[ART_ID_BUFSZ];
	size_t			 n;
	char			(*node)[ART_ID_BUFSZ];	/* path, root first */
	jv			 view;	/* n messages, with ids */
	jv			 edit;	/* view, [n/2] id-less and changed */
};

static int
bench_open(struct bench *b, const char *parent, size_t map_start,
    struct art_err *err)
{
	struct art_store_opts so = { 0 };

	if (snprintf(b->dir, sizeof(b->dir), "%s/agentrt-bench.XXXXXX",
	    parent) >= (int)sizeof(b->dir)) {
		b->dir[0] = '\0';	/* nothing for bench_close() */
		return art_err_set(err, "usage", "directory name too long");
	}
	if (mkdtemp(b->dir) == NULL) {
		b->dir[0] = '\0';
		return art_err_set(err, "io", "create directory in '%s': %s",
		    parent, strerror(errno));
	}
	so.dir = b->dir;
	so.create = 1;
	so.clock = &b->clock;
	so.map_start = map_start;
	return art_store_open(&b->store, &so, err);
}

/* Closes the store and, unless keep is set, removes its directory. */
static void
bench_close(struct bench *b, bool keep)
{
	static const char *const files[] = { "data.mdb", "lock.mdb" };
	char path[PATH_MAX + 16];
	size_t i;

	art_store_close(b->store);
	b->store = NULL;
	jv_free(b->view);
	jv_free(b->edit);
	b->view = b->edit = jv_null();
	free(b->node);
	b->node = NULL;
	if (b->dir[0] == '\0')
		return;
	if (keep) {
		art_warn("kept %s", b->dir);
		return;
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", b->dir, files[i]);
		if (unlink(path) == -1 && errno != ENOENT)
			art_warn("remove '%s': %s", path, strerror(errno));
	}
	if (rmdir(b->dir) == -1)
		art_warn("remove '%s': %s", b->dir, strerror(errno));
	b->dir[0] = '\0';
}

static long long
data_size(const struct bench *b)
{
	char path[PATH_MAX + 16];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/data.mdb", b->dir);
	return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

static int
create_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	return art_session_create(t, ctx, "bench", jv_null(), jv_array(), err);
}

static int
mint(struct bench *b, char id[ART_ID_BUFSZ], struct art_err *err)
{
	if (art_ids_v7(&b->ids, id) == -1)
		return art_err_set(err, "ids", "mint id: %s", strerror(errno));
	return 0;
}

/* Message i of the view; id NULL leaves it without one. */
static jv
message(size_t i, const char *id, bool edited)
{
	char text[96];
	jv m = jv_object();

	snprintf(text, sizeof(text), "message %zu%s: the quick brown fox jumps "
	    "over the lazy dog", i, edited ? ", edited" : "");
	if (id != NULL)
		m = jv_object_set(m, jv_string("id"), jv_string(id));
	m = jv_object_set(m, jv_string("role"), jv_string(i % 2 ?
	    "assistant" : "user"));
	return jv_object_set(m, jv_string("content"), jv_string(text));
}

/* The session, the path's ids, and the two views of it. */
static int
bench_setup(struct bench *b, struct art_err *err)
{
	size_t i;

	if (mint(b, b->sid, err) == -1 ||
	    art_store_write(b->store, create_fn, b->sid, err) == -1)
		return -1;
	if ((b->node = calloc(b->n, sizeof(*b->node))) == NULL)
		return art_err_set(err, "nomem", "out of memory");
	b->view = jv_array_sized((int)b->n);
	for (i = 0; i < b->n; i++) {
		if (mint(b, b->node[i], err) == -1)
			return -1;
		b->view = jv_array_append(b->view, message(i, b->node[i],
		    false));
	}
	b->edit = jv_array_set(jv_copy(b->view), (int)(b->n / 2),
	    message(b->n / 2, NULL, true));
	return 0;
}

/* sid's head into buf ("" when it has none). */
static int
head_of(struct art_txn *t, const char *sid, char *buf, size_t n,
    struct art_err *err)
{
	jv s = art_session_get(t, sid, err);
	const char *h;

	if (!jv_is_valid(s))
		return -1;
	h = art_json_str(&s, "head");
	snprintf(buf, n, "%s", h != NULL ? h : "");
	jv_free(s);
	return 0;
}

static int
rollback(struct art_err *err)
{
	return art_err_set(err, "rollback", "rolled back on purpose");
}

static int
rollback_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	(void)t, (void)ctx;
	return rollback(err);
}

/* An aborted write, which empties the store's node cache. */
static int
forget(struct bench *b, struct art_err *err)
{
	if (art_store_write(b->store, rollback_fn, NULL, err) == 0 ||
	    art_err_is(err, "rollback"))
		return 0;
	return -1;
}

static int
warm_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct bench *b = ctx;
	char head[ART_ID_MAX + 1];
	jv ids;

	if (head_of(t, b->sid, head, sizeof(head), err) == -1)
		return -1;
	ids = art_tree_path_ids(t, b->sid, head, err);
	if (!jv_is_valid(ids))
		return -1;
	jv_free(ids);
	return 0;
}

/* A read of the active path, which puts its nodes in the cache. */
static int
warm(struct bench *b, struct art_err *err)
{
	return art_store_read(b->store, warm_fn, b, err);
}

/* --- reconciling ----------------------------------------------------- */

/* One art_reconcile_apply() in one write transaction, and what it did. */
struct apply {
	struct bench	*b;
	const jv	*view;
	bool		 rollback;	/* abort the write after the call */
	struct art_txn	*t;		/* the write in progress, for the ops */
	struct art_err	*err;		/* its err, which the ops fill */
	int		 written;
	int		 records;	/* events the call recorded */
	int		 runs;		/* more than 1 when the map grew */
	struct sample	 s;
};

static int
mint_cb(void *ctx, char *buf)
{
	struct apply *a = ctx;

	return mint(a->b, buf, a->err);
}

static int
record_cb(void *ctx, jv payload)
{
	struct apply *a = ctx;

	if (stopping) {
		jv_free(payload);
		return interrupted(a->err);
	}
	a->records++;
	return art_session_record(a->t, a->b->sid, payload, NULL, a->err) ==
	    -1 ? -1 : 0;
}

/* Run again from the start when the map grows: only the last run counts. */
static int
apply_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct apply *a = ctx;
	struct art_reconcile_ops ops = { mint_cb, record_cb, a };
	char head[ART_ID_MAX + 1];

	if (head_of(t, a->b->sid, head, sizeof(head), err) == -1)
		return -1;
	a->t = t;
	a->err = err;
	a->records = 0;
	a->runs++;
	meter_start(&a->s);
	a->written = art_reconcile_apply(t, a->b->sid, a->view, *head != '\0' ?
	    head : NULL, &ops, err);
	meter_stop(&a->s);
	a->t = NULL;
	a->err = NULL;
	if (a->written == -1)
		return -1;
	return a->rollback ? rollback(err) : 0;
}

static int
apply_once(struct bench *b, const jv *view, bool rb, struct apply *a,
    struct art_err *err)
{
	memset(a, 0, sizeof(*a));
	a->b = b;
	a->view = view;
	a->rollback = rb;
	if (art_store_write(b->store, apply_fn, a, err) == 0)
		return 0;
	return rb && art_err_is(err, "rollback") ? 0 : -1;
}

/* Every message written is one message.new, and nothing else recorded. */
static int
check_apply(const struct apply *a, size_t want, struct art_err *err)
{
	if ((size_t)a->written != want || a->records != a->written)
		return art_err_set(err, "bench", "reconcile wrote %d messages "
		    "and recorded %d events, expected %zu of each", a->written,
		    a->records, want);
	return 0;
}

/* --- resolving ------------------------------------------------------- */

/* One art_session_resolve(), and the "n" its value must hold. */
struct resolve {
	enum art_version kind;
	const char	*head;
	int64_t		 want;
	const char	*sid;
	struct sample	 s;
};

static int
resolve_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct resolve *rs = ctx;
	int64_t got = -1;
	jv v;
	int r;

	meter_start(&rs->s);
	v = art_session_resolve(t, rs->sid, rs->kind, rs->head, err);
	meter_stop(&rs->s);
	if (!jv_is_valid(v))
		return -1;
	r = art_json_get_int(&v, "n", 1, &got, err);
	jv_free(v);
	if (r == 0 && got != rs->want)
		return art_err_set(err, "bench", "resolved n=%lld, expected "
		    "%lld", (long long)got, (long long)rs->want);
	return r;
}

/* N versions of one kind in one write transaction. */
struct versions {
	struct bench	*b;
	const char	*type;		/* as worker.state.updated */
	const char	*field;		/* its value, as state */
	bool		 spread;	/* version i at node i, else at root */
	struct sample	 s;
};

static jv
version_payload(const struct versions *v, size_t i)
{
	jv p = jv_object();

	p = jv_object_set(p, jv_string("type"), jv_string(v->type));
	p = jv_object_set(p, jv_string(v->field), jv_object_set(jv_object(),
	    jv_string("n"), jv_number((double)i)));
	return jv_object_set(p, jv_string("anchor"), jv_string(
	    v->b->node[v->spread ? i : 0]));
}

static int
versions_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct versions *v = ctx;
	size_t i;
	int r = 0;

	meter_start(&v->s);
	for (i = 0; r == 0 && i < v->b->n; i++) {
		if (stopping)
			r = interrupted(err);
		else if (art_session_record(t, v->b->sid, version_payload(v, i),
		    NULL, err) == -1)
			r = -1;
	}
	meter_stop(&v->s);
	return r;
}

/* --- statistics and output ------------------------------------------- */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of s[0..n), each field taken alone; min and max of times. */
static struct sample
median_of(const struct sample *s, size_t n, double *min, double *max)
{
	double *t = calloc(n, sizeof(*t));
	size_t *a = calloc(n, sizeof(*a)), *by = calloc(n, sizeof(*by)), i;
	struct sample m;

	if (t == NULL || a == NULL || by == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	for (i = 0; i < n; i++) {
		t[i] = s[i].us;
		a[i] = s[i].allocs;
		by[i] = s[i].bytes;
	}
	qsort(t, n, sizeof(*t), cmp_double);
	qsort(a, n, sizeof(*a), cmp_size);
	qsort(by, n, sizeof(*by), cmp_size);
	m.us = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	m.allocs = a[n / 2];
	m.bytes = by[n / 2];
	*min = t[0];
	*max = t[n - 1];
	free(t);
	free(a);
	free(by);
	return m;
}

static const char *
fmt_time(double us, char *buf, size_t n)
{
	if (us < 1e3)
		snprintf(buf, n, "%.1f us", us);
	else if (us < 1e6)
		snprintf(buf, n, "%.2f ms", us / 1e3);
	else
		snprintf(buf, n, "%.2f s", us / 1e6);
	return buf;
}

static const char *
fmt_bytes(double b, char *buf, size_t n)
{
	if (b < 1024)
		snprintf(buf, n, "%.0f B", b);
	else if (b < 1024 * 1024)
		snprintf(buf, n, "%.1f KiB", b / 1024);
	else
		snprintf(buf, n, "%.1f MiB", b / (1024 * 1024));
	return buf;
}

/*
 * One line: the label, the time and what goes with it (a range, or the
 * time with its commit), the allocations, then all of it per unit.
 */
static void
print_row(const char *label, const struct sample *m, const char *aside,
    size_t units, const char *unit)
{
	char t[32], by[32], per[32];

	printf("%-37s %9s %-26s %9zu allocs %10s | %8.3f us %7.2f allocs %8s"
	    " /%s\n", label, fmt_time(m->us, t, sizeof(t)), aside, m->allocs,
	    fmt_bytes((double)m->bytes, by, sizeof(by)), m->us / (double)units,
	    (double)m->allocs / (double)units, fmt_bytes((double)m->bytes /
	    (double)units, per, sizeof(per)), unit);
}

/* A one-off call, timed inside its write and as the whole write. */
static void
print_once(const char *label, const struct sample *s, double total,
    size_t units, const char *unit)
{
	char t[32], aside[40];

	snprintf(aside, sizeof(aside), "(%s with commit)", fmt_time(total, t,
	    sizeof(t)));
	print_row(label, s, aside, units, unit);
}

/* --- the figures ----------------------------------------------------- */

/* What is done, untimed, before each timed run. */
enum prep {
	PREP_NONE,
	PREP_FORGET,	/* empty the node cache */
	PREP_WARM	/* read the active path into it */
};

/* One timed call into *s. */
typedef int probe_fn(struct bench *, void *ctx, struct sample *s,
	    struct art_err *);

struct figure {
	const char	*label;
	enum prep	 prep;
	probe_fn	*probe;
	void		*ctx;
	size_t		 units;		/* messages or nodes, per call */
	const char	*unit;
};

/* What one art_reconcile_apply() should do. */
struct apply_spec {
	const jv	*view;
	bool		 rollback;
	size_t		 want;		/* messages written */
};

static int
probe_apply(struct bench *b, void *ctx, struct sample *s, struct art_err *err)
{
	const struct apply_spec *sp = ctx;
	struct apply a;

	if (apply_once(b, sp->view, sp->rollback, &a, err) == -1)
		return -1;
	*s = a.s;
	return check_apply(&a, sp->want, err);
}

static int
probe_resolve(struct bench *b, void *ctx, struct sample *s,
    struct art_err *err)
{
	struct resolve *rs = ctx;

	if (art_store_read(b->store, resolve_fn, rs, err) == -1)
		return -1;
	*s = rs->s;
	return 0;
}

static int
prepare(struct bench *b, enum prep prep, struct art_err *err)
{
	if (stopping)
		return interrupted(err);
	switch (prep) {
	case PREP_NONE:		return 0;
	case PREP_FORGET:	return forget(b, err);
	case PREP_WARM:		return warm(b, err);
	}
	return 0;
}

/* One untimed run first: it pays for page faults and a map that grows. */
static int
series(struct bench *b, const struct opts *o, const struct figure *f,
    struct art_err *err)
{
	struct sample *s = calloc((size_t)o->runs, sizeof(*s)), m, first;
	char lo[32], hi[32], range[64];
	double min, max;
	int i, r;

	if (s == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	if ((r = prepare(b, f->prep, err)) == 0)
		r = f->probe(b, f->ctx, &first, err);
	for (i = 0; r == 0 && i < o->runs; i++)
		if ((r = prepare(b, f->prep, err)) == 0)
			r = f->probe(b, f->ctx, &s[i], err);
	if (r == 0) {
		m = median_of(s, (size_t)o->runs, &min, &max);
		snprintf(range, sizeof(range), "[%s .. %s]", fmt_time(min, lo,
		    sizeof(lo)), fmt_time(max, hi, sizeof(hi)));
		print_row(f->label, &m, range, f->units, f->unit);
		fflush(stdout);
	}
	free(s);
	return r;
}

/* The whole view in one write: the tree every later figure reads. */
static int
first_write(struct bench *b, struct art_err *err)
{
	size_t map0 = art_store_mapsize(b->store);
	struct apply a;
	double t0 = now_us();

	if (apply_once(b, &b->view, false, &a, err) == -1 ||
	    check_apply(&a, b->n, err) == -1)
		return -1;
	print_once("first write of the view, 1 txn", &a.s, now_us() - t0,
	    b->n, "msg");
	if (a.runs > 1)
		printf("  (the map grew from %zu to %zu MiB: ran %d times, the "
		    "last one timed)\n", map0 >> 20,
		    art_store_mapsize(b->store) >> 20, a.runs);
	return 0;
}

static int
reconcile_figures(struct bench *b, const struct opts *o, struct art_err *err)
{
	size_t n = b->n, news = n - n / 2;
	struct apply_spec resend = { &b->view, false, 0 };
	struct apply_spec cold = { &b->view, true, 0 };
	struct apply_spec edit = { &b->edit, true, news };
	const struct figure figs[] = {
		{ "resend, warm cache", PREP_NONE, probe_apply, &resend, n,
		    "msg" },
		{ "resend, cold cache", PREP_FORGET, probe_apply, &cold, n,
		    "msg" },
		{ "edit at n/2, warm, rolled back", PREP_WARM, probe_apply,
		    &edit, news, "msg written" },
		{ "edit at n/2, cold, rolled back", PREP_FORGET, probe_apply,
		    &edit, news, "msg written" },
	};
	size_t i;

	for (i = 0; i < sizeof(figs) / sizeof(figs[0]); i++)
		if (series(b, o, &figs[i], err) == -1)
			return -1;
	return 0;
}

static int
record_versions(struct bench *b, const char *label, struct versions *v,
    struct art_err *err)
{
	double t0 = now_us();

	if (art_store_write(b->store, versions_fn, v, err) == -1)
		return -1;
	print_once(label, &v->s, now_us() - t0, b->n, "version");
	return 0;
}

static int
resolve_figures(struct bench *b, const struct opts *o, struct art_err *err)
{
	size_t n = b->n, mid = n / 2;
	struct versions st = { .b = b, .type = "worker.state.updated",
	    .field = "state", .spread = true };
	struct versions ag = { .b = b, .type = "agent.updated",
	    .field = "config", .spread = false };
	struct resolve sh = { .kind = ART_VERSION_STATE, .head = b->node[n - 1],
	    .want = (int64_t)n - 1, .sid = b->sid };
	struct resolve sm = { .kind = ART_VERSION_STATE, .head = b->node[mid],
	    .want = (int64_t)mid, .sid = b->sid };
	struct resolve ah = { .kind = ART_VERSION_AGENT, .head = b->node[n - 1],
	    .want = (int64_t)n - 1, .sid = b->sid };
	struct resolve am = { .kind = ART_VERSION_AGENT, .head = b->node[mid],
	    .want = (int64_t)n - 1, .sid = b->sid };
	const struct figure figs[] = {
		{ "resolve state at head, warm", PREP_NONE, probe_resolve, &sh,
		    n, "node" },
		{ "resolve state at head, cold", PREP_FORGET, probe_resolve,
		    &sh, n, "node" },
		{ "resolve state at n/2, warm", PREP_NONE, probe_resolve, &sm,
		    mid + 1, "node" },
		{ "resolve 1-anchor agent at head, warm", PREP_NONE,
		    probe_resolve, &ah, n, "node" },
		{ "resolve 1-anchor agent at n/2, warm", PREP_NONE,
		    probe_resolve, &am, mid + 1, "node" },
	};
	size_t i;

	if (record_versions(b, "record n states, 1 per node, 1 txn", &st,
	    err) == -1 || record_versions(b, "record n agents at root, 1 txn",
	    &ag, err) == -1)
		return -1;
	for (i = 0; i < sizeof(figs) / sizeof(figs[0]); i++)
		if (series(b, o, &figs[i], err) == -1)
			return -1;
	return 0;
}

/* Last, since it moves the head: the edit committed, commit timed too. */
static int
edit_commit(struct bench *b, struct art_err *err)
{
	size_t news = b->n - b->n / 2;
	struct apply a;
	double t0;

	if (warm(b, err) == -1)
		return -1;
	t0 = now_us();
	if (apply_once(b, &b->edit, false, &a, err) == -1 ||
	    check_apply(&a, news, err) == -1)
		return -1;
	print_once("edit at n/2, warm, committed", &a.s, now_us() - t0, news,
	    "msg written");
	return 0;
}

static int
run(struct bench *b, const struct opts *o, struct art_err *err)
{
	if (bench_open(b, o->parent, o->map_start, err) == -1 ||
	    bench_setup(b, err) == -1)
		return -1;
	printf("bench/tree: n=%zu messages, edit at index %zu; each figure: "
	    "median [min .. max] of %d runs,\nallocations per call, then all "
	    "of it per message or path node\n", b->n, b->n / 2, o->runs);
	if (!counting_works())
		printf("(malloc is not ours here, valgrind's perhaps: "
		    "allocations read 0)\n");
	if (first_write(b, err) == -1 || reconcile_figures(b, o, err) == -1 ||
	    resolve_figures(b, o, err) == -1 || edit_commit(b, err) == -1)
		return -1;
	printf("data.mdb %.1f MiB, map %zu MiB\n", (double)data_size(b) /
	    (1 << 20), art_store_mapsize(b->store) >> 20);
	return 0;
}

/* --- main ------------------------------------------------------------ */

static const struct option longopts[] = {
	{ "messages",	required_argument,	NULL, 'n' },
	{ "runs",	required_argument,	NULL, 'r' },
	{ "dir",	required_argument,	NULL, 'd' },
	{ "map-start",	required_argument,	NULL, 'm' },
	{ "keep",	no_argument,		NULL, 'k' },
	{ "help",	no_argument,		NULL, 'h' },
	{ NULL,		0,			NULL, 0 }
};

static _Noreturn void
help(void)
{
	fputs(
"Usage: tree [-n N] [-r RUNS] [-d DIR] [-m MIB] [-k]\n"
"\n"
"In a fresh temporary agentrt store, write a view of N messages into a\n"
"session's tree with art_reconcile_apply(), then time it and count its\n"
"allocations for the same view sent again and for the view edited at\n"
"message N/2; then record N state versions along the path and time\n"
"art_session_resolve() at its head and its middle.\n"
"\n"
"Options:\n"
"  -n, --messages N    messages in the view (default 10000)\n"
"  -r, --runs RUNS     timed runs per figure, after one untimed run\n"
"                      (default 11)\n"
"  -d, --dir DIR       make the store under DIR (default: $TMPDIR, else\n"
"                      /tmp)\n"
"  -m, --map-start MIB the store's first map size, which doubles when\n"
"                      full (default 64; 1 makes even n=10000 grow it)\n"
"  -k, --keep          keep the store, and name it on stderr\n"
"  -h, --help          print this help and exit\n"
"\n"
"Exit status: 0 success, 1 failure, 2 usage error.\n", stdout);
	exit(ferror(stdout) || fflush(stdout) == EOF ? ART_EXIT_FAIL :
	    ART_EXIT_OK);
}

static _Noreturn void
usage(void)
{
	fprintf(stderr, "usage: tree [-n N] [-r RUNS] [-d DIR] [-m MIB] [-k]\n"
	    "Try 'tree --help' for more information.\n");
	exit(ART_EXIT_USAGE);
}

static size_t
count_arg(const char *opt, const char *arg, size_t min)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' ||
	    v < min || v > INT_MAX)
		art_die(ART_EXIT_USAGE, "bad %s '%s': expected a count from "
		    "%zu", opt, arg, min);
	return (size_t)v;
}

static void
parse_opts(struct opts *o, int argc, char *argv[])
{
	int c;

	while ((c = getopt_long(argc, argv, "n:r:d:m:kh", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'n': o->n = count_arg("-n", optarg, 2); break;
		case 'r': o->runs = (int)count_arg("-r", optarg, 1); break;
		case 'd': o->parent = optarg; break;
		case 'm':
			o->map_start = count_arg("-m", optarg, 1) << 20;
			break;
		case 'k': o->keep = true; break;
		case 'h': help();
		default:  usage();
		}
	}
	if (optind != argc)
		usage();
}

static void
setup(struct bench *b)
{
	struct art_err err;
	struct sigaction sa;

	if (art_clock_init(&b->clock, NULL, &err) == -1 ||
	    art_ids_init(&b->ids, &b->clock, NULL, &err) == -1)
		art_die(ART_EXIT_FAIL, "%s", err.msg);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int
main(int argc, char *argv[])
{
	struct opts o = { .n = DEFAULT_N, .runs = DEFAULT_RUNS };
	struct bench b;
	struct art_err err;
	int r;

	art_diag_init(argv[0]);
	parse_opts(&o, argc, argv);
	if (o.parent == NULL && ((o.parent = getenv("TMPDIR")) == NULL ||
	    *o.parent == '\0'))
		o.parent = "/tmp";
	memset(&b, 0, sizeof(b));
	b.n = o.n;
	b.view = b.edit = jv_null();
	setup(&b);
	r = run(&b, &o, &err);
	bench_close(&b, o.keep);
	if (r == -1)
		art_die(ART_EXIT_FAIL, "n=%zu: %s", o.n, err.msg);
	if (ferror(stdout) || fflush(stdout) == EOF)
		art_die(ART_EXIT_FAIL, "write output: %s", strerror(errno));
	return ART_EXIT_OK;
}
