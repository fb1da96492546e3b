/* store - how appends and active-path reads scale with the store's size
 *
 * For each chain length N, in a fresh temporary store: N message.new
 * events chained parent to child in one session, then N plain events in a
 * second session, each appended in its own write transaction as the
 * engine does (so each commit pays LMDB's fsync); then R reads of the
 * active path from the head.  A short chain is then built in the full
 * store and in a fresh empty one, the two taking turns append by append
 * and read by read: if appending and reading the path do not depend on
 * the log's total length, the two cost the same.  Each
 * append is timed twice: the whole art_store_write() (commit and fsync
 * included), and the work inside its transaction alone, which fsync
 * noise does not hide.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
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
#include "ndjson.h"
#include "session.h"
#include "store.h"
#include "tree.h"

#define MAX_NS		16
#define DEFAULT_READS	20
#define DEFAULT_SHORT	100

struct opts {
	size_t		 ns[MAX_NS];
	int		 nn;
	int		 reads;
	size_t		 short_len;
	const char	*parent;	/* where the temporary stores go */
	bool		 keep;
	bool		 json;
};

/* One temporary store. */
struct bench {
	struct art_clock	*clock;
	struct art_ids		*ids;
	struct art_store	*store;
	char			 dir[PATH_MAX];
};

/* The context of one append: what to record, and how long it took. */
struct append {
	const char	*sid;
	size_t		 i;
	bool		 message;	/* message.new, else test.note */
	char		 id[ART_ID_BUFSZ];
	char		 parent[ART_ID_BUFSZ];
	double		 work;		/* us in the callback's last run */
};

/* Per-append times, us: the whole write, and the work in its txn. */
struct series {
	double	*total;
	double	*work;
	size_t	 n;
};

struct stats {
	double	med, p90, p99, max;
	double	first, last;	/* medians of the first and last 10% */
};

/* A short chain's figures, in one store. */
struct probe {
	double	append, work, read;	/* medians, us */
};

/* One long chain's appends. */
struct phase {
	struct stats	total, work;
	double		secs;	/* the whole chain, wall time */
};

struct result {
	size_t		n;
	struct phase	msg, ev;
	double		read, read_per_msg;	/* medians, us */
	struct probe	full, empty;
	long long	size_msgs, size_events, size_total;
};

static volatile sig_atomic_t stopping;

static void
on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
interrupted(struct art_err *err)
{
	return art_err_set(err, "interrupted", "interrupted");
}

/* --- statistics ------------------------------------------------------ */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The p-quantile (nearest rank) of sorted[0..n). */
static double
quantile(const double *sorted, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n);

	if (n == 0)
		return 0;
	return sorted[k > 0 ? k - 1 : 0];
}

static double
median_of(const double *v, size_t n)
{
	double *s, m;

	if (n == 0)
		return 0;
	if ((s = malloc(n * sizeof(*s))) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

static struct stats
stats_of(const double *v, size_t n)
{
	struct stats st;
	size_t tenth = n / 10 > 0 ? n / 10 : 1;
	double *s;

	if ((s = malloc(n * sizeof(*s))) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	st.med = median_of(s, n);
	st.p90 = quantile(s, n, 0.90);
	st.p99 = quantile(s, n, 0.99);
	st.max = s[n - 1];
	free(s);
	st.first = median_of(v, tenth);
	st.last = median_of(v + n - tenth, tenth);
	return st;
}

/* --- temporary stores ------------------------------------------------ */

static int
bench_open(struct bench *b, const char *parent, struct art_err *err)
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
	so.clock = b->clock;
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

/* --- appending ------------------------------------------------------- */

static jv
payload_of(const struct append *a)
{
	char text[96];
	jv p = jv_object(), m;

	snprintf(text, sizeof(text), "%s %zu: the quick brown fox jumps over "
	    "the lazy dog", a->message ? "message" : "note", a->i);
	if (!a->message) {
		p = jv_object_set(p, jv_string("type"), jv_string("test.note"));
		return jv_object_set(p, jv_string("text"), jv_string(text));
	}
	m = jv_object();
	m = jv_object_set(m, jv_string("id"), jv_string(a->id));
	m = jv_object_set(m, jv_string("role"), jv_string(a->i % 2 ?
	    "assistant" : "user"));
	m = jv_object_set(m, jv_string("content"), jv_string(text));
	p = jv_object_set(p, jv_string("type"), jv_string("message.new"));
	p = jv_object_set(p, jv_string("message"), m);
	return jv_object_set(p, jv_string("parent_id"), a->parent[0] != '\0' ?
	    jv_string(a->parent) : jv_null());
}

/* Run again from the start when the map grows, so it builds afresh. */
static int
append_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct append *a = ctx;
	double t0 = now_us();
	int64_t seq = art_session_record(t, a->sid, payload_of(a), NULL, err);

	a->work = now_us() - t0;
	return seq == -1 ? -1 : 0;
}

static int
create_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	return art_session_create(t, ctx, "bench", jv_null(), jv_array(), err);
}

static int
new_session(struct bench *b, char sid[ART_ID_BUFSZ], struct art_err *err)
{
	if (art_ids_v7(b->ids, sid) == -1)
		return art_err_set(err, "ids", "mint id: %s", strerror(errno));
	return art_store_write(b->store, create_fn, sid, err);
}

static void
series_init(struct series *s, size_t n)
{
	s->n = n;
	s->total = malloc((n > 0 ? n : 1) * sizeof(double));
	s->work = malloc((n > 0 ? n : 1) * sizeof(double));
	if (s->total == NULL || s->work == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
}

static void
series_release(struct series *s)
{
	free(s->total);
	free(s->work);
}

/* A session being appended to, and the time each append took. */
struct chain {
	struct bench	*b;
	char		 sid[ART_ID_BUFSZ];
	struct append	 a;
	struct series	 s;
};

/*
 * A new session for n appends: messages chained parent to child when
 * message is set, else notes.
 */
static int
chain_start(struct chain *c, struct bench *b, bool message, size_t n,
    struct art_err *err)
{
	memset(c, 0, sizeof(*c));
	c->b = b;
	c->a.sid = c->sid;
	c->a.message = message;
	series_init(&c->s, n);
	return new_session(b, c->sid, err);
}

/* The next append, in its own write transaction. */
static int
chain_step(struct chain *c, struct art_err *err)
{
	struct append *a = &c->a;
	double t0;

	if (stopping)
		return interrupted(err);
	if (a->message && art_ids_v7(c->b->ids, a->id) == -1)
		return art_err_set(err, "ids", "mint id: %s", strerror(errno));
	t0 = now_us();
	if (art_store_write(c->b->store, append_fn, a, err) == -1)
		return -1;
	c->s.total[a->i] = now_us() - t0;
	c->s.work[a->i] = a->work;
	memcpy(a->parent, a->id, sizeof(a->parent));
	a->i++;
	return 0;
}

static int
chain_run(struct chain *c, struct art_err *err)
{
	while (c->a.i < c->s.n)
		if (chain_step(c, err) == -1)
			return -1;
	return 0;
}

/* --- reading the active path ----------------------------------------- */

struct reader {
	const char	*sid;
	int64_t		 len;
};

/* As a reader of the session would: the summary's head, then the path. */
static int
path_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct reader *r = ctx;
	jv s = art_session_get(t, r->sid, err), path;

	if (!jv_is_valid(s))
		return -1;
	path = art_tree_path(t, r->sid, art_json_str(&s, "head"), err);
	jv_free(s);
	if (!jv_is_valid(path))
		return -1;
	r->len = jv_array_length(path);
	return 0;
}

/* One read of sid's active path, in *us; it must hold want messages. */
static int
read_once(struct bench *b, const char *sid, size_t want, double *us,
    struct art_err *err)
{
	struct reader r = { sid, 0 };
	double t0;

	if (stopping)
		return interrupted(err);
	t0 = now_us();
	if (art_store_read(b->store, path_fn, &r, err) == -1)
		return -1;
	*us = now_us() - t0;
	if ((size_t)r.len != want)
		return art_err_set(err, "bench", "path of %lld messages, "
		    "expected %zu", (long long)r.len, want);
	return 0;
}

static double *
doubles(size_t n)
{
	double *v = malloc((n > 0 ? n : 1) * sizeof(*v));

	if (v == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	return v;
}

/* --- one chain length ------------------------------------------------ */

static void
progress(size_t n, const char *what, double secs)
{
	art_warn("n=%zu: %s in %.1f s (%.0f/s)", n, what, secs,
	    secs > 0 ? (double)n / secs : 0);
}

/* A whole chain of n appends; its session's id goes to sid. */
static int
fill(struct bench *b, bool message, size_t n, struct phase *ph,
    char sid[ART_ID_BUFSZ], struct art_err *err)
{
	struct chain c;
	double t0 = now_us();
	int r;

	if ((r = chain_start(&c, b, message, n, err)) == 0)
		r = chain_run(&c, err);
	if (r == 0) {
		ph->secs = (now_us() - t0) / 1e6;
		progress(n, message ? "messages appended" : "events appended",
		    ph->secs);
		ph->total = stats_of(c.s.total, c.s.n);
		ph->work = stats_of(c.s.work, c.s.n);
		memcpy(sid, c.sid, ART_ID_BUFSZ);
	}
	series_release(&c.s);
	return r;
}

/* The median of o->reads reads of the N-message path. */
static int
read_long(struct bench *b, const struct opts *o, const char *sid,
    struct result *res, struct art_err *err)
{
	double *t = doubles((size_t)o->reads);
	int i, r = 0;

	for (i = 0; r == 0 && i < o->reads; i++)
		r = read_once(b, sid, res->n, &t[i], err);
	if (r == 0) {
		res->read = median_of(t, (size_t)o->reads);
		res->read_per_msg = res->read / (double)res->n;
	}
	free(t);
	return r;
}

/*
 * A short chain in each store, then its path read o->reads times, the
 * two stores taking turns so that whatever else the machine is doing
 * falls on both alike.
 */
static int
probe(struct bench *full, struct bench *empty, const struct opts *o,
    struct result *res, struct art_err *err)
{
	struct chain cf = { 0 }, ce = { 0 };
	double *tf = doubles((size_t)o->reads);
	double *te = doubles((size_t)o->reads);
	int i, r;

	if ((r = chain_start(&cf, full, true, o->short_len, err)) == 0)
		r = chain_start(&ce, empty, true, o->short_len, err);
	while (r == 0 && cf.a.i < cf.s.n)
		if ((r = chain_step(&cf, err)) == 0)
			r = chain_step(&ce, err);
	for (i = 0; r == 0 && i < o->reads; i++)
		if ((r = read_once(full, cf.sid, o->short_len, &tf[i],
		    err)) == 0)
			r = read_once(empty, ce.sid, o->short_len, &te[i], err);
	if (r == 0) {
		res->full = (struct probe){ median_of(cf.s.total, cf.s.n),
		    median_of(cf.s.work, cf.s.n), median_of(tf, i) };
		res->empty = (struct probe){ median_of(ce.s.total, ce.s.n),
		    median_of(ce.s.work, ce.s.n), median_of(te, i) };
	}
	series_release(&cf.s);
	series_release(&ce.s);
	free(tf);
	free(te);
	return r;
}

static int
run_full(struct bench *full, struct bench *empty, const struct opts *o,
    struct result *res, struct art_err *err)
{
	char sid[ART_ID_BUFSZ], nsid[ART_ID_BUFSZ];

	if (fill(full, true, res->n, &res->msg, sid, err) == -1)
		return -1;
	res->size_msgs = data_size(full);
	if (fill(full, false, res->n, &res->ev, nsid, err) == -1)
		return -1;
	res->size_events = data_size(full);
	if (read_long(full, o, sid, res, err) == -1 ||
	    probe(full, empty, o, res, err) == -1)
		return -1;
	res->size_total = data_size(full);
	return 0;
}

/* One chain length, in a store to fill and an empty one to compare. */
static int
run_n(struct art_clock *clock, struct art_ids *ids, const struct opts *o,
    struct result *res, struct art_err *err)
{
	struct bench full = { clock, ids, NULL, "" };
	struct bench empty = { clock, ids, NULL, "" };
	int r;

	if ((r = bench_open(&full, o->parent, err)) == 0 &&
	    (r = bench_open(&empty, o->parent, err)) == 0)
		r = run_full(&full, &empty, o, res, err);
	bench_close(&full, o->keep);
	bench_close(&empty, o->keep);
	return r;
}

/* --- output ---------------------------------------------------------- */

/* Rounded to 0.01, so the JSON stays short. */
static jv
num(double x)
{
	return jv_number(round(x * 100) / 100);
}

static double
ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static jv
stats_json(const struct stats *s)
{
	jv o = jv_object();

	o = jv_object_set(o, jv_string("median"), num(s->med));
	o = jv_object_set(o, jv_string("p90"), num(s->p90));
	o = jv_object_set(o, jv_string("p99"), num(s->p99));
	o = jv_object_set(o, jv_string("max"), num(s->max));
	o = jv_object_set(o, jv_string("first10_median"), num(s->first));
	o = jv_object_set(o, jv_string("last10_median"), num(s->last));
	return jv_object_set(o, jv_string("last_over_first"),
	    num(ratio(s->last, s->first)));
}

static jv
phase_json(const struct phase *ph)
{
	jv o = jv_object();

	o = jv_object_set(o, jv_string("total_us"), stats_json(&ph->total));
	o = jv_object_set(o, jv_string("work_us"), stats_json(&ph->work));
	return jv_object_set(o, jv_string("seconds"), num(ph->secs));
}

static jv
probe_json(const struct probe *p)
{
	jv o = jv_object();

	o = jv_object_set(o, jv_string("append_us"), num(p->append));
	o = jv_object_set(o, jv_string("work_us"), num(p->work));
	return jv_object_set(o, jv_string("read_us"), num(p->read));
}

static jv
check_json(const struct opts *o, const struct result *r)
{
	jv c = jv_object();

	c = jv_object_set(c, jv_string("chain"),
	    jv_number((double)o->short_len));
	c = jv_object_set(c, jv_string("full"), probe_json(&r->full));
	c = jv_object_set(c, jv_string("empty"), probe_json(&r->empty));
	c = jv_object_set(c, jv_string("append_ratio"),
	    num(ratio(r->full.append, r->empty.append)));
	c = jv_object_set(c, jv_string("work_ratio"),
	    num(ratio(r->full.work, r->empty.work)));
	return jv_object_set(c, jv_string("read_ratio"),
	    num(ratio(r->full.read, r->empty.read)));
}

static jv
size_json(const struct result *r)
{
	jv s = jv_object();

	s = jv_object_set(s, jv_string("after_messages"),
	    jv_number((double)r->size_msgs));
	s = jv_object_set(s, jv_string("after_events"),
	    jv_number((double)r->size_events));
	s = jv_object_set(s, jv_string("total"),
	    jv_number((double)r->size_total));
	s = jv_object_set(s, jv_string("per_message"),
	    num((double)r->size_msgs / (double)r->n));
	return jv_object_set(s, jv_string("per_event"),
	    num((double)(r->size_events - r->size_msgs) / (double)r->n));
}

static jv
result_json(const struct opts *o, const struct result *r)
{
	jv j = jv_object(), p = jv_object();

	j = jv_object_set(j, jv_string("n"), jv_number((double)r->n));
	j = jv_object_set(j, jv_string("message_append"), phase_json(&r->msg));
	j = jv_object_set(j, jv_string("event_append"), phase_json(&r->ev));
	p = jv_object_set(p, jv_string("reads"), jv_number(o->reads));
	p = jv_object_set(p, jv_string("median_us"), num(r->read));
	p = jv_object_set(p, jv_string("per_message_us"),
	    num(r->read_per_msg));
	j = jv_object_set(j, jv_string("path_read"), p);
	j = jv_object_set(j, jv_string("log_length_check"), check_json(o, r));
	return jv_object_set(j, jv_string("data_mdb_bytes"), size_json(r));
}

static const struct row {
	const char	*label;
	const char	*fmt;
} rows[] = {
	{ "message append, us: median", "%.0f" },
	{ "  p90", "%.0f" },
	{ "  p99", "%.0f" },
	{ "  median of first 10%", "%.0f" },
	{ "  median of last 10%", "%.0f" },
	{ "  last / first", "%.2f" },
	{ "  work in txn: median", "%.1f" },
	{ "  work: last / first 10%", "%.2f" },
	{ "event append, us: median", "%.0f" },
	{ "  p99", "%.0f" },
	{ "  last / first 10%", "%.2f" },
	{ "  work in txn: median", "%.1f" },
	{ "  work: last / first 10%", "%.2f" },
	{ "path read, ms: median", "%.2f" },
	{ "  us per message on path", "%.2f" },
	{ "short chain, full/empty: append", "%.2f" },
	{ "  work in txn", "%.2f" },
	{ "  path read", "%.2f" },
	{ "data.mdb, MiB", "%.1f" },
	{ "  bytes per message", "%.0f" },
	{ "  bytes per event", "%.0f" },
};
#define NROWS	(sizeof(rows) / sizeof(rows[0]))

/* r's figures in the order of rows[]. */
static void
figures(const struct result *r, double f[NROWS])
{
	double n = (double)r->n;

	*f++ = r->msg.total.med;
	*f++ = r->msg.total.p90;
	*f++ = r->msg.total.p99;
	*f++ = r->msg.total.first;
	*f++ = r->msg.total.last;
	*f++ = ratio(r->msg.total.last, r->msg.total.first);
	*f++ = r->msg.work.med;
	*f++ = ratio(r->msg.work.last, r->msg.work.first);
	*f++ = r->ev.total.med;
	*f++ = r->ev.total.p99;
	*f++ = ratio(r->ev.total.last, r->ev.total.first);
	*f++ = r->ev.work.med;
	*f++ = ratio(r->ev.work.last, r->ev.work.first);
	*f++ = r->read / 1000;
	*f++ = r->read_per_msg;
	*f++ = ratio(r->full.append, r->empty.append);
	*f++ = ratio(r->full.work, r->empty.work);
	*f++ = ratio(r->full.read, r->empty.read);
	*f++ = (double)r->size_total / (1 << 20);
	*f++ = (double)r->size_msgs / n;
	*f = (double)(r->size_events - r->size_msgs) / n;
}

static void
print_table(const struct result *res, int nres)
{
	double f[MAX_NS][NROWS];
	char cell[32];
	size_t i;
	int j;

	printf("%-34s", "");
	for (j = 0; j < nres; j++) {
		figures(&res[j], f[j]);
		snprintf(cell, sizeof(cell), "n=%zu", res[j].n);
		printf(" %12s", cell);
	}
	putchar('\n');
	for (i = 0; i < NROWS; i++) {
		printf("%-34s", rows[i].label);
		for (j = 0; j < nres; j++) {
			snprintf(cell, sizeof(cell), rows[i].fmt, f[j][i]);
			printf(" %12s", cell);
		}
		putchar('\n');
	}
}

/* --- main ------------------------------------------------------------ */

static const struct option longopts[] = {
	{ "messages",	required_argument,	NULL, 'n' },
	{ "reads",	required_argument,	NULL, 'r' },
	{ "short",	required_argument,	NULL, 's' },
	{ "dir",	required_argument,	NULL, 'd' },
	{ "keep",	no_argument,		NULL, 'k' },
	{ "json",	no_argument,		NULL, 'j' },
	{ "help",	no_argument,		NULL, 'h' },
	{ NULL,		0,			NULL, 0 }
};

static _Noreturn void
help(void)
{
	fputs(
"Usage: store [-n N]... [-r READS] [-s LEN] [-d DIR] [-k] [-j]\n"
"\n"
"Time appends (one write transaction each, fsync included) and reads of\n"
"the active path in fresh temporary agentrt stores, for chains of N\n"
"messages, and report the store's size.\n"
"\n"
"Options:\n"
"  -n, --messages N    a chain length; repeat for several\n"
"                      (default: 1000, 10000 and 100000)\n"
"  -r, --reads READS   path reads timed per store (default 20)\n"
"  -s, --short LEN     the short chain built in the full store and in an\n"
"                      empty one, to compare (default 100)\n"
"  -d, --dir DIR       make the stores under DIR (default: $TMPDIR, else\n"
"                      /tmp)\n"
"  -k, --keep          keep the stores, and name them on stderr\n"
"  -j, --json          print one JSON object per N instead of the table\n"
"  -h, --help          print this help and exit\n"
"\n"
"Progress goes to stderr.  Exit status: 0 success, 1 failure, 2 usage\n"
"error.\n", stdout);
	exit(ferror(stdout) || fflush(stdout) == EOF ? ART_EXIT_FAIL :
	    ART_EXIT_OK);
}

static _Noreturn void
usage(void)
{
	fprintf(stderr, "usage: store [-n N]... [-r READS] [-s LEN] [-d DIR] "
	    "[-k] [-j]\nTry 'store --help' for more information.\n");
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

	while ((c = getopt_long(argc, argv, "n:r:s:d:kjh", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'n':
			if (o->nn == MAX_NS)
				art_die(ART_EXIT_USAGE, "too many -n (at most "
				    "%d)", MAX_NS);
			o->ns[o->nn++] = count_arg("-n", optarg, 1);
			break;
		case 'r': o->reads = (int)count_arg("-r", optarg, 1); break;
		case 's': o->short_len = count_arg("-s", optarg, 1); break;
		case 'd': o->parent = optarg; break;
		case 'k': o->keep = true; break;
		case 'j': o->json = true; break;
		case 'h': help();
		default:  usage();
		}
	}
	if (optind != argc)
		usage();
}

/* The world every store shares, made once. */
static void
setup(struct art_clock *clock, struct art_ids *ids)
{
	struct art_err err;
	struct sigaction sa;

	if (art_clock_init(clock, NULL, &err) == -1 ||
	    art_ids_init(ids, clock, NULL, &err) == -1)
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
	static const size_t defaults[] = { 1000, 10000, 100000 };
	struct opts o = { .reads = DEFAULT_READS, .short_len = DEFAULT_SHORT };
	struct result res[MAX_NS];
	struct art_clock clock;
	struct art_ids ids;
	struct art_err err;
	int i;

	art_diag_init(argv[0]);
	parse_opts(&o, argc, argv);
	if (o.nn == 0)
		for (o.nn = 0; o.nn < 3; o.nn++)
			o.ns[o.nn] = defaults[o.nn];
	if (o.parent == NULL && ((o.parent = getenv("TMPDIR")) == NULL ||
	    *o.parent == '\0'))
		o.parent = "/tmp";
	setup(&clock, &ids);
	for (i = 0; i < o.nn; i++) {
		memset(&res[i], 0, sizeof(res[i]));
		res[i].n = o.ns[i];
		if (run_n(&clock, &ids, &o, &res[i], &err) == -1)
			art_die(ART_EXIT_FAIL, "n=%zu: %s", o.ns[i], err.msg);
		if (o.json && art_ndjson_write(stdout, result_json(&o,
		    &res[i]), &err) == -1)
			art_die(ART_EXIT_FAIL, "%s", err.msg);
	}
	if (!o.json)
		print_table(res, o.nn);
	if (ferror(stdout) || fflush(stdout) == EOF)
		art_die(ART_EXIT_FAIL, "write output: %s", strerror(errno));
	return ART_EXIT_OK;
}
