/* agentrt-serve - agents behind HTTP, for AG-UI clients and a browser
 *
 * POST /agents/AGENT takes AG-UI's RunAgentInput and answers a
 * text/event-stream of AG-UI events.  Every run is driven by one engine:
 * the ring a user would type in bash, started once,
 *
 *	agentrt-decide | agentrt-llm | agentrt-tool |
 *	    agentrt-session serve --clients FD --events FD
 *
 * A run's RunAgentInput becomes the line its session takes (lib/agui-run:
 * threadId is the session), written to the engine's --clients pipe; the
 * engine's client events, for every session, come back on its --events
 * pipe, and each goes to the run of its session (a sub-agent's to its
 * root's), which makes them AG-UI events in the run's envelope and frames
 * them as server-sent events.  A run ends with its session's RUN_FINISHED
 * or RUN_ERROR, or when the engine says the session has nothing in
 * flight (session.idle: a turn parked on a client tool).  A run stopped
 * (its client gone, the server stopping) is cancelled with a
 * session.cancel line, touching no other run; a ring that breaks ends
 * the runs it had in flight with RUN_ERROR, and the next run starts a
 * new ring, whose engine adopts what the old one left in flight.
 *
 * One thread.  libmicrohttpd runs from our own select() loop (its external
 * mode), so the ring is forked from a single-threaded process as spawn.h
 * requires, and a connection waiting for its run's next event is
 * suspended, not polled by libmicrohttpd.  Its socket is watched here
 * instead: a client that closes it (it sends nothing after its request)
 * has gone, and its run is cancelled at once.  A connection idle for
 * KEEPALIVE_MS gets an SSE comment, which finds a client that went
 * without a word.
 *
 * GET / is the page (page.html, built in); GET /agents lists the agents;
 * GET /threads/ID is a session's path, as AG-UI messages, and its
 * branches, both read by agentrt-tree.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jv.h>

#include "agent.h"
#include "agui.h"
#include "agui-run.h"
#include "buf.h"
#include "clock.h"
#include "diag.h"
#include "json.h"
#include "opt.h"
#include "ring.h"
#include "spawn.h"
#include "store.h"
#include "strvec.h"
#include "tree.h"

#define KEEPALIVE_MS	2000
#define STOP_GRACE_MS	5000	/* a ring told to stop, before SIGKILL */
/* The longest event line the engine writes that is taken. */
#define EVENT_MAX	(64u << 20)
#define MAX_DIRS	8
/* The longest output of agentrt-tree read for GET /threads/ID. */
#define TREE_MAX	(16u << 20)

/* The page (page.html), made into a C string at build time. */
extern const char art_serve_page[];

struct opts {
	const char	*listen, *db, *token_env;
	const char	*agent_dirs[MAX_DIRS], *tool_dirs[MAX_DIRS];
	int		 nagent_dirs, ntool_dirs;
	int		 port, max_runs;
	size_t		 max_body;
};

enum {
	O_LISTEN = 256, O_PORT, O_TOKEN_ENV, O_AGENTS, O_TOOLS, O_MAX_BODY,
	O_MAX_RUNS
};

static const struct art_opt options[] = {
	{ "listen", O_LISTEN, "ADDR", ART_OPT_TEXT, NULL, NULL, 0,
	    "the IPv4 address to listen on (default 127.0.0.1; any other "
	    "needs --token-env)" },
	{ "port", O_PORT, "PORT", ART_OPT_TEXT, NULL, NULL, 0,
	    "the TCP port (default 8080; 0: any free one, said on stdout)" },
	{ "token-env", O_TOKEN_ENV, "VAR", ART_OPT_ENV, NULL, NULL, 0,
	    "the bearer token every request but GET / must carry is in "
	    "$VAR" },
	{ "db", 'd', "DIR", ART_OPT_DIR, NULL, NULL, 0,
	    "the session store (default: $AGENTRT_DB, else as "
	    "agentrt-session)" },
	{ "agents", O_AGENTS, "DIR", ART_OPT_DIR, NULL, NULL, ART_OPT_MANY,
	    "look for agents in DIR first (then $AGENTRT_AGENTS)" },
	{ "tools", O_TOOLS, "DIR", ART_OPT_DIR, NULL, NULL, ART_OPT_MANY,
	    "the tools directory agentrt-tool runs (then $AGENTRT_TOOLS)" },
	{ "max-body", O_MAX_BODY, "BYTES", ART_OPT_TEXT, NULL, NULL, 0,
	    "the largest request body taken (default 4M)" },
	{ "max-runs", O_MAX_RUNS, "N", ART_OPT_TEXT, NULL, NULL, 0,
	    "runs at once, at most (default 16); more get 503" },
	ART_OPT_STANDARD
};

/* One run: its request's stream, and the AG-UI run it carries. */
struct run {
	struct run		*next;
	struct MHD_Connection	*conn;		/* NULL once the request ended */
	struct art_agui_run	*agui;
	struct art_buf		 out;		/* SSE bytes not yet sent */
	char			 agent[256];
	struct art_agui_ids	 ids;
	int64_t			 t0, sent_at;
	bool			 suspended, done, cancelled;
	bool			 unwatched;	/* its socket had bytes */
};

/* The one engine: its ring, the pipes of its clients' lines and events. */
struct engine {
	struct art_ring		 ring;
	bool			 up;		/* started, and no stage ended */
	int			 evfd;		/* its --events, read; or -1 */
	int			 clfd;		/* its --clients, written; or -1 */
	struct art_buf		 ev;		/* events not yet a whole line */
	struct art_buf		 cl;		/* lines not yet written */
};

/* One request: its body, and its run once it has one. */
struct req {
	struct art_buf	 body;
	bool		 too_large;
	struct run	*run;
};

static struct opts opts = { .listen = "127.0.0.1", .port = 8080,
	.max_runs = 16, .max_body = 4u << 20 };
static struct run *runs;
static int nruns;
static struct engine eng = { .evfd = -1, .clfd = -1 };
static struct art_store *store;	/* for MESSAGES_SNAPSHOT; opened once */
static const char *token;
static char bindir[PATH_MAX];
static volatile sig_atomic_t stop_sig;
static int wake[2] = { -1, -1 };
static bool resumed;		/* a connection resumed: MHD must run again */

static _Noreturn void
usage(const char *why)
{
	if (why != NULL)
		art_warn("%s", why);
	fprintf(stderr, "usage: agentrt-serve [OPTIONS] (see agentrt-serve "
	    "--help)\n");
	exit(ART_EXIT_USAGE);
}

static void
usage_plain(void)
{
	usage(NULL);
}

static _Noreturn void
help(void)
{
	fputs(
"Usage: agentrt-serve [OPTIONS]\n"
"\n"
"Serve agents over HTTP: POST /agents/AGENT takes AG-UI's RunAgentInput\n"
"and answers with AG-UI events (text/event-stream); GET / is a chat page.\n"
"\n"
"Options:\n", stdout);
	art_opt_help(stdout, options, 24);
	fputs(
"\n"
"Exit status: 0 stopped by SIGINT or SIGTERM, 1 failure, 2 usage error.\n",
	    stdout);
	art_opt_exit();
}

static _Noreturn void
version(void)
{
	char v[32];
	const char *const libs[] = { "libmicrohttpd", v, NULL };

	snprintf(v, sizeof(v), "%s", MHD_get_version());
	art_opt_version("agentrt-serve", PACKAGE_VERSION, libs);
}

static int
count_arg(const char *name, const char *s, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0' || v < min || v > max)
		art_die(ART_EXIT_USAGE, "bad %s '%s': expected a whole number "
		    "from %d to %d", name, s, min, max);
	return (int)v;
}

static void
parse(int argc, char **argv)
{
	struct option longopts[sizeof(options) / sizeof(options[0])];
	char shortopts[3 * sizeof(options) / sizeof(options[0])];
	int c;

	art_opt_longopts(options, longopts);
	art_opt_shortopts(options, "+", NULL, shortopts, sizeof(shortopts));
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case O_LISTEN: opts.listen = optarg; break;
		case O_PORT:
			opts.port = count_arg("--port", optarg, 0, 65535);
			break;
		case O_TOKEN_ENV: opts.token_env = optarg; break;
		case 'd': opts.db = optarg; break;
		case O_AGENTS:
			if (opts.nagent_dirs == MAX_DIRS)
				usage("too many --agents");
			opts.agent_dirs[opts.nagent_dirs++] = optarg;
			break;
		case O_TOOLS:
			if (opts.ntool_dirs == MAX_DIRS)
				usage("too many --tools");
			opts.tool_dirs[opts.ntool_dirs++] = optarg;
			break;
		case O_MAX_BODY:
			opts.max_body = art_opt_size_arg("--max-body", optarg);
			break;
		case O_MAX_RUNS:
			opts.max_runs = count_arg("--max-runs", optarg, 1,
			    4096);
			break;
		case 'h': help();
		case 'V': version();
		case ART_OPT_COMPLETIONS:
			art_opt_completions(options, argv[optind],
			    usage_plain);
		default:
			usage(NULL);
		}
	}
	if (optind < argc)
		usage("agentrt-serve takes no arguments");
}

/* --- the ring ----------------------------------------------------- */

/* Closes both ends of each pipe given, those that are open. */
static void
close_pipes(int *p, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (p[i] >= 0)
			close(p[i]);
}

/*
 * Starts the engine: the ring of the four stages, its session stage
 * serving every run, reading their lines from a pipe whose write end is
 * eng.clfd (--clients) and writing their events to one whose read end is
 * eng.evfd (--events).  The stages' stderr is ours.  0, or -1 with err.
 */
static int
engine_start(struct art_err *err)
{
	struct art_ring_cmd cmd = ART_RING_CMD_INIT;
	struct art_spawn s[ART_RING_STAGES];
	char evpath[32], clpath[32];
	int p[4] = { -1, -1, -1, -1 }, keep[2], i, rc;
	struct art_ring_opts o = {
		.bindir = bindir,
		.tool_dirs = opts.tool_dirs, .ntool_dirs =
		    (size_t)opts.ntool_dirs,
		.db = opts.db, .verb = "serve",
		.agent_dirs = opts.agent_dirs, .nagent_dirs =
		    (size_t)opts.nagent_dirs,
		.events = evpath, .events_format = "ndjson", .clients = clpath,
	};

	if (art_spawn_pipe(p) == -1 || art_spawn_pipe(p + 2) == -1) {
		close_pipes(p, 4);
		return art_err_set(err, "spawn_busy", "pipe: %s",
		    strerror(errno));
	}
	/* p[0..1] the events (we read p[0]), p[2..3] the lines (we write). */
	snprintf(evpath, sizeof(evpath), "/dev/fd/%d", p[1]);
	snprintf(clpath, sizeof(clpath), "/dev/fd/%d", p[2]);
	if (art_ring_cmd_make(&cmd, &o, err) == -1) {
		close_pipes(p, 4);
		return -1;
	}
	art_ring_cmd_spawn(&cmd, s);
	for (i = 0; i < ART_RING_STAGES; i++)
		s[i].die_with_parent = true;
	keep[0] = p[1], keep[1] = p[2];
	s[ART_RING_SESSION].keep = keep, s[ART_RING_SESSION].nkeep = 2;
	fflush(stdout);
	rc = art_ring_start(&eng.ring, s, ART_RING_STAGES, true, err);
	art_ring_cmd_release(&cmd);
	close(p[1]);
	close(p[2]);
	if (rc == -1) {
		close(p[0]);
		close(p[3]);
		return -1;
	}
	eng.evfd = p[0];
	eng.clfd = p[3];
	art_spawn_nonblock(eng.evfd);
	art_spawn_nonblock(eng.clfd);
	eng.up = true;
	return 0;
}

/* Writes what of the lines queued the engine takes; never blocks. */
static void
engine_flush(void)
{
	ssize_t n;

	while (eng.clfd >= 0 && eng.cl.len > 0) {
		n = write(eng.clfd, eng.cl.p, eng.cl.len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == -1) {	/* it went: its end is seen as a stage's */
			art_buf_clear(&eng.cl);
			return;
		}
		art_buf_consume(&eng.cl, (size_t)n);
	}
}

/* Queues line (consumed) for the engine; 0, or -1 with err. */
static int
engine_send(jv line, struct art_err *err)
{
	size_t len;
	char *s = art_json_dump(&line, &len);
	int rc = 0;

	jv_free(line);
	if (s == NULL || art_buf_add(&eng.cl, s, len) == -1 ||
	    art_buf_addc(&eng.cl, '\n') == -1)
		rc = art_err_set(err, "nomem", "out of memory");
	free(s);
	engine_flush();
	return rc;
}

/* The run of session sid (a sub-agent's root, else its own), or NULL. */
static struct run *
run_of(const char *sid)
{
	struct run *r;

	for (r = runs; sid != NULL && r != NULL; r = r->next)
		if (!r->done && strcmp(r->ids.thread, sid) == 0)
			return r;
	return NULL;
}

/*
 * Runs agentrt-tree ARGS... to its end: its stdout (bounded), or NULL
 * when it failed; *status its exit status.  Blocks, briefly: the tree's
 * reads are of one session.
 */
static char *
tree(const char *cmd, const char *sid, size_t *len, int *status)
{
	struct art_strvec a = ART_STRVEC_INIT;
	char file[PATH_MAX];
	struct art_spawn s;
	struct art_child ch;
	struct art_buf b = ART_BUF_INIT;
	struct art_err err;
	int rc;

	art_strvec_push(&a, "agentrt-tree");
	if (opts.db != NULL)
		art_strvec_push(&a, "-d"), art_strvec_push(&a, opts.db);
	art_strvec_push(&a, cmd), art_strvec_push(&a, "--");
	art_strvec_push(&a, sid);
	if (a.nomem) {
		art_warn("out of memory");
		art_strvec_release(&a);
		return NULL;
	}
	memset(&s, 0, sizeof(s));
	s.file = art_ring_sibling(bindir, "agentrt-tree", file, sizeof(file));
	s.argv = a.v;
	s.io[1].how = ART_SPAWN_PIPE;
	s.io[2].how = ART_SPAWN_NULL;
	fflush(stdout);
	rc = art_spawn(&s, &ch, &err);
	art_strvec_release(&a);
	if (rc == -1) {
		art_warn("%s", err.msg);
		return NULL;
	}
	rc = art_buf_read_fd(&b, ch.fd[1], TREE_MAX, "agentrt-tree", &err);
	close(ch.fd[1]);
	*status = art_spawn_wait(ch.pid);
	if (rc == -1) {
		art_warn("%s", err.msg);
		art_buf_release(&b);
		return NULL;
	}
	if (art_buf_addc(&b, '\0') == -1) {
		art_buf_release(&b);
		return NULL;
	}
	return art_buf_detach(&b, len);
}


/* --- AG-UI messages ---------------------------------------------- */

/* A recorded message (the tree's path) as an AG-UI Message. */
static jv
agui_message(const jv *m)
{
	return art_agui_message(jv_copy(*m));
}

/* NDJSON text as a jv array of its values, each through fn (or as is). */
static jv
lines_of(const char *text, jv (*fn)(const jv *))
{
	jv out = jv_array(), v;
	const char *p = text, *nl;
	struct art_err err;

	while (*p != '\0') {
		nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p);
		if (nl > p) {
			v = art_json_parse(p, (size_t)(nl - p), &err);
			if (jv_is_valid(v) && fn != NULL) {
				jv w = fn(&v);

				jv_free(v);
				v = w;
			}
			if (jv_is_valid(v))
				out = jv_array_append(out, v);
			else
				jv_free(v);
		}
		p = *nl != '\0' ? nl + 1 : nl;
	}
	return out;
}


/* --- responses ---------------------------------------------------- */

static enum MHD_Result
respond(struct MHD_Connection *conn, unsigned status, const char *type,
    const char *body, size_t len, bool copy)
{
	struct MHD_Response *resp;
	enum MHD_Result r;

	resp = MHD_create_response_from_buffer(len, (void *)body, copy ?
	    MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
	r = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result
respond_json(struct MHD_Connection *conn, unsigned status, jv v)
{
	size_t len;
	char *s = art_json_dump(&v, &len);
	enum MHD_Result r;

	jv_free(v);
	if (s == NULL)
		return MHD_NO;
	r = respond(conn, status, "application/json", s, len, true);
	free(s);
	return r;
}

/*
 * An error: {"error": {"code", "message"}} with status, and one line on
 * stderr naming the request and why.
 */
static enum MHD_Result
refuse(struct MHD_Connection *conn, const char *method, const char *url,
    unsigned status, const char *code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	art_warn("%s %s: %u %s: %s", method, url, status, code, msg);
	return respond_json(conn, status, jv_object_set(jv_object(),
	    jv_string("error"), jv_object_set(jv_object_set(jv_object(),
	    jv_string("code"), jv_string(code)), jv_string("message"),
	    jv_string(msg))));
}

/* Whether the request carries the token; compared in constant time. */
static bool
authorized(struct MHD_Connection *conn)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_AUTHORIZATION);
	size_t i, n, m;
	unsigned char d;

	if (token == NULL)
		return true;
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return false;
	h += 7;
	n = strlen(h), m = strlen(token);
	d = n != m;
	for (i = 0; i < n; i++)
		d |= (unsigned char)(h[i] ^ token[i % (m > 0 ? m : 1)]);
	return d == 0;
}

/* --- runs --------------------------------------------------------- */

static void
log_run(const struct run *r)
{
	jv l = art_json_set(jv_object(), "type", jv_string("run"));
	char *s;

	l = art_json_set(l, "agent", jv_string(r->agent));
	l = art_json_set(l, "thread_id", jv_string(r->ids.thread));
	l = art_json_set(l, "run_id", jv_string(r->ids.run));
	l = art_json_set(l, "outcome", jv_string(
	    art_agui_run_outcome(r->agui)));
	l = art_json_set(l, "ms", jv_number((double)(
	    art_clock_mono_ms() - r->t0)));
	if ((s = art_json_dump(&l, NULL)) != NULL) {
		printf("%s\n", s);
		fflush(stdout);
		free(s);
	}
	jv_free(l);
}

/* AG-UI's lines (one event each) as SSE messages on r's stream. */
static void
frame(struct run *r, struct art_buf *lines)
{
	const char *p = lines->p, *end = p + lines->len, *nl;

	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			break;
		if (art_buf_addstr(&r->out, "data: ") == -1 ||
		    art_buf_add(&r->out, p, (size_t)(nl - p)) == -1 ||
		    art_buf_addstr(&r->out, "\n\n") == -1) {
			art_warn("run %s: out of memory", r->ids.run);
			break;
		}
	}
	art_buf_clear(lines);
}

struct path_q {
	const char	*sid, *id;
	jv		 path;
};

static int
path_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct path_q *q = ctx;

	q->path = art_tree_path(t, q->sid, q->id, err);
	return jv_is_valid(q->path) ? 0 : -1;
}

/*
 * The messages root..id of session sid, for MESSAGES_SNAPSHOT, read from
 * the store the engine writes (opened at the first need: the engine made
 * it by then); jv_invalid() when it cannot be read.
 */
static jv
path_of(void *ctx, const char *sid, const char *id)
{
	struct art_store_opts so = { 0 };
	struct art_err err;
	char buf[PATH_MAX];
	struct path_q q = { sid, id, jv_invalid() };

	(void)ctx;
	if (store == NULL) {
		so.dir = art_store_find_dir(opts.db, getenv("AGENTRT_DB"),
		    getenv("XDG_DATA_HOME"), getenv("HOME"), buf, sizeof(buf),
		    &err);
		if (so.dir == NULL || art_store_open(&store, &so, &err) == -1) {
			art_warn("%s", err.msg);
			return jv_invalid();
		}
	}
	if (art_store_read(store, path_fn, &q, &err) == -1) {
		jv_free(q.path);
		return jv_invalid();
	}
	return q.path;
}

/* The run has ended: logged, and its stream told. */
static void
run_done(struct run *r)
{
	r->done = true;
	log_run(r);
}

/* Ends r's AG-UI run, if its events did not, as how says; then done. */
static void
run_end(struct run *r, enum art_agui_end_how how, const char *why)
{
	struct art_buf b = ART_BUF_INIT;

	if (r->done)
		return;
	if (art_agui_run_end(r->agui, how, why, &b) == -1)
		art_warn("run %s: out of memory", r->ids.run);
	frame(r, &b);
	art_buf_release(&b);
	run_done(r);
}

/*
 * One event line of the engine's: to the run of its session.  A run
 * cancelled takes none, and ends once its session is idle; a run ends
 * when its events end it (RUN_FINISHED, RUN_ERROR), or when its session
 * is idle (a turn parked on a client tool).
 */
static void
event_line(const char *line, size_t len)
{
	struct art_buf b = ART_BUF_INIT;
	struct art_err err;
	jv v = art_json_parse(line, len, &err);
	const char *sid = art_json_str(&v, "session_id");
	const char *root = art_json_str(&v, "root_session_id");
	const char *type = art_json_str(&v, "type");
	struct run *r = run_of(root != NULL ? root : sid);

	if (!jv_is_valid(v))
		art_warn("the engine wrote an event that is not JSON: %s",
		    err.msg);
	else if (r == NULL || type == NULL)
		;	/* no run is waiting on it */
	else if (strcmp(type, "session.idle") == 0) {
		if (root == NULL)
			run_end(r, r->cancelled ? ART_AGUI_END_CANCELLED :
			    ART_AGUI_END_IDLE, NULL);
	} else if (!r->cancelled) {
		if (art_agui_run_event(r->agui, &v, &b) == -1)
			art_warn("run %s: out of memory", r->ids.run);
		frame(r, &b);
		if (art_agui_run_ended(r->agui))
			run_done(r);
	}
	art_buf_release(&b);
	jv_free(v);
}

/* Reads what the engine wrote; at its end, eng.evfd is -1. */
static void
engine_read(void)
{
	char buf[65536], *nl;
	ssize_t n;

	while (eng.evfd >= 0) {
		n = read(eng.evfd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			close(eng.evfd);
			eng.evfd = -1;
			return;
		}
		if (art_buf_add(&eng.ev, buf, (size_t)n) == -1) {
			art_warn("the engine's events: out of memory");
			art_buf_clear(&eng.ev);
			continue;
		}
		while (eng.ev.len > 0 && (nl = memchr(eng.ev.p, '\n',
		    eng.ev.len)) != NULL) {
			event_line(eng.ev.p, (size_t)(nl - eng.ev.p));
			art_buf_consume(&eng.ev, (size_t)(nl - eng.ev.p) + 1);
		}
		if (eng.ev.len > EVENT_MAX) {
			art_warn("the engine wrote an event over %u bytes: "
			    "dropped", EVENT_MAX);
			art_buf_clear(&eng.ev);
		}
	}
}

/* Sleeps until a signal's wake-up or ms pass (at most 100 ms). */
static void
nap(int64_t ms)
{
	struct timeval tv;
	fd_set rs;
	char c;

	if (ms > 100)
		ms = 100;
	FD_ZERO(&rs);
	FD_SET(wake[0], &rs);
	tv.tv_sec = 0;
	tv.tv_usec = (suseconds_t)(ms > 0 ? ms : 0) * 1000;
	if (select(wake[0] + 1, &rs, NULL, NULL, &tv) > 0)
		while (read(wake[0], &c, 1) == 1)
			;
}

/*
 * Stops the ring: its input closed and SIGTERM, STOP_GRACE_MS to end,
 * then SIGKILL for what is left, said.  Every stage is reaped.
 */
static void
engine_stop(void)
{
	int64_t end = art_clock_mono_ms() + STOP_GRACE_MS, left;

	if (eng.ring.n == 0)
		return;
	if (eng.clfd >= 0)
		close(eng.clfd);
	if (eng.evfd >= 0)	/* its events are not wanted now */
		close(eng.evfd);
	eng.clfd = eng.evfd = -1;
	art_buf_release(&eng.cl);
	art_buf_release(&eng.ev);
	art_ring_signal(&eng.ring, SIGTERM);
	while (art_ring_reap(&eng.ring, false) > 0 &&
	    (left = end - art_clock_mono_ms()) > 0)
		nap(left);
	if (art_ring_reap(&eng.ring, false) > 0) {
		art_warn("the ring did not stop in %d ms: killed",
		    STOP_GRACE_MS);
		art_ring_signal(&eng.ring, SIGKILL);
		art_ring_reap(&eng.ring, true);
	}
	art_ring_release(&eng.ring);
	memset(&eng.ring, 0, sizeof(eng.ring));
	eng.up = false;
}

/* Names the first stage of the ring that has ended, and how, in buf. */
static const char *
ended_stage(char *buf, size_t n)
{
	static const char *const names[] = { "agentrt-decide", "agentrt-llm",
	    "agentrt-tool", "agentrt-session" };
	int i, st;

	for (i = 0; i < eng.ring.n && i < 4; i++) {
		if (eng.ring.pid[i] != 0 || (st = eng.ring.status[i]) == -1)
			continue;
		if (WIFEXITED(st))
			snprintf(buf, n, "%s exited with status %d", names[i],
			    WEXITSTATUS(st));
		else
			snprintf(buf, n, "%s was killed by signal %d",
			    names[i], WTERMSIG(st));
		return buf;
	}
	snprintf(buf, n, "its events ended");
	return buf;
}

/*
 * A stage ended, or the engine's events did: the ring is broken.  What
 * it wrote is read, the runs still going end in RUN_ERROR (what they
 * recorded stays, for the next engine to adopt), and the ring is
 * stopped; the next run starts another.
 */
static void
engine_down(void)
{
	struct run *r;
	char why[128];
	int live;

	engine_read();
	live = art_ring_reap(&eng.ring, false);
	art_warn("the ring stopped (%s): the next run starts it again",
	    live < eng.ring.n ? ended_stage(why, sizeof(why)) :
	    "its events ended");
	eng.up = false;
	for (r = runs; r != NULL; r = r->next)
		run_end(r, r->cancelled ? ART_AGUI_END_CANCELLED :
		    ART_AGUI_END_FAILED, "the ring closed with the turn in "
		    "flight");
	engine_stop();
}

/* Is the ring broken: a stage ended, or the events? */
static bool
engine_broken(void)
{
	return eng.up && (eng.evfd < 0 ||
	    art_ring_reap(&eng.ring, false) < eng.ring.n);
}

static void
run_free(struct run *r)
{
	struct run **pp;

	for (pp = &runs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	nruns--;
	art_agui_run_free(r->agui);
	art_buf_release(&r->out);
	free(r);
}

/* libmicrohttpd wants the stream's next bytes. */
static ssize_t
reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct run *r = cls;
	size_t n;

	(void)pos;
	if (r->out.len > 0) {
		n = r->out.len < max ? r->out.len : max;
		memcpy(buf, r->out.p, n);
		art_buf_consume(&r->out, n);
		r->sent_at = art_clock_mono_ms();
		return (ssize_t)n;
	}
	if (r->done)
		return MHD_CONTENT_READER_END_OF_STREAM;
	MHD_suspend_connection(r->conn);
	r->suspended = true;
	return 0;
}

/*
 * Stops the run: its client went, or the server stops.  Its session's
 * turn is cancelled (what it recorded stays), and the run ends once the
 * engine says the session is idle.
 */
static void
cancel_run(struct run *r)
{
	struct art_err err;
	jv line;

	if (r->done || r->cancelled)
		return;
	r->cancelled = true;
	line = art_json_set(jv_object(), "type", jv_string("session.cancel"));
	line = art_json_set(line, "session_id", jv_string(r->ids.thread));
	line = art_json_set(line, "reason", jv_string("cancelled"));
	if (!eng.up || engine_send(line, &err) == -1)
		run_end(r, ART_AGUI_END_CANCELLED, NULL);
}

/*
 * The response is done with: sent whole, or its client went away.  A
 * run still going is cancelled; it is freed once it has ended.
 */
static void
reader_free(void *cls)
{
	struct run *r = cls;

	r->conn = NULL;
	cancel_run(r);
}

/* POST /agents/AGENT, its body whole. */
static enum MHD_Result
post_run(struct MHD_Connection *conn, const char *url, const char *agent,
    struct req *q)
{
	const struct art_agui_opts ao = { path_of, NULL };
	struct art_agui_ids ids;
	struct art_err err;
	struct art_buf b = ART_BUF_INIT;
	struct MHD_Response *resp;
	struct run *r;
	jv in, line;
	enum MHD_Result rc;
	int bad;

	if (q->too_large)
		return refuse(conn, "POST", url, MHD_HTTP_CONTENT_TOO_LARGE,
		    "too_large", "the body is over %zu bytes (--max-body)",
		    opts.max_body);
	if (agent[0] == '\0' || strchr(agent, '/') != NULL ||
	    agent[0] == '.')
		return refuse(conn, "POST", url, MHD_HTTP_NOT_FOUND,
		    "no_agent", "no agent '%s'", agent);
	in = art_json_parse(q->body.p != NULL ? q->body.p : "",
	    q->body.len, &err);
	if (!jv_is_valid(in)) {
		jv_free(in);
		return refuse(conn, "POST", url, MHD_HTTP_BAD_REQUEST,
		    "bad_input", "the body is not JSON: %s", err.msg);
	}
	if (art_json_check_numbers(q->body.p, q->body.len, &err) == -1) {
		jv_free(in);
		return refuse(conn, "POST", url, MHD_HTTP_BAD_REQUEST,
		    "bad_input", "%s", err.msg);
	}
	bad = art_agui_input(&in, agent, &ids, &line, &err);
	jv_free(in);
	if (bad == -1) {
		jv_free(line);
		return refuse(conn, "POST", url, MHD_HTTP_BAD_REQUEST,
		    "bad_input", "%s", err.msg);
	}
	if (run_of(ids.thread) != NULL) {
		jv_free(line);
		return refuse(conn, "POST", url, MHD_HTTP_CONFLICT, "busy",
		    "thread '%s' has a run going", ids.thread);
	}
	if (nruns >= opts.max_runs) {
		jv_free(line);
		return refuse(conn, "POST", url, MHD_HTTP_SERVICE_UNAVAILABLE,
		    "busy", "%d runs going (--max-runs)", nruns);
	}
	if (engine_broken())
		engine_down();
	if (!eng.up && engine_start(&err) == -1) {
		jv_free(line);
		return refuse(conn, "POST", url, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "spawn", "%s", err.msg);
	}
	if (engine_send(line, &err) == -1)
		return refuse(conn, "POST", url, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "nomem", "%s", err.msg);
	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (r->agui = art_agui_run_new(ids.thread, ids.run, &ao)) == NULL) {
		free(r);
		return MHD_NO;	/* the line went: its events find no run */
	}
	snprintf(r->agent, sizeof(r->agent), "%s", agent);
	r->ids = ids;
	r->t0 = r->sent_at = art_clock_mono_ms();
	r->conn = conn;
	r->next = runs;
	runs = r;
	nruns++;
	art_agui_run_start(r->agui, &b);
	frame(r, &b);
	art_buf_release(&b);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
	    reader, r, reader_free);
	if (resp == NULL) {
		reader_free(r);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	rc = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return rc;
}

/* GET /agents: the agents the runs can name. */
static enum MHD_Result
get_agents(struct MHD_Connection *conn)
{
	struct art_err err;
	size_t n;
	const char **dirs = art_agent_dirs(opts.agent_dirs,
	    (size_t)opts.nagent_dirs, getenv("AGENTRT_AGENTS"),
	    getenv("XDG_CONFIG_HOME"), getenv("HOME"), &n, &err);
	jv names;

	if (dirs == NULL)
		return MHD_NO;
	names = art_agent_names(dirs, n);
	free(dirs);
	return respond_json(conn, MHD_HTTP_OK, jv_object_set(jv_object(),
	    jv_string("agents"), names));
}

/* GET /threads/ID: the session's path as AG-UI messages, its branches. */
static enum MHD_Result
get_thread(struct MHD_Connection *conn, const char *url, const char *sid)
{
	char *path, *branches;
	size_t len;
	int st = 0, st2 = 0;
	enum MHD_Result rc;
	jv v;

	path = tree("path", sid, &len, &st);
	if (path == NULL || st != 0) {
		free(path);
		return refuse(conn, "GET", url, MHD_HTTP_NOT_FOUND,
		    "no_session", "no thread '%s'", sid);
	}
	branches = tree("branches", sid, &len, &st2);
	v = jv_object_set(jv_object(), jv_string("threadId"), jv_string(sid));
	v = jv_object_set(v, jv_string("messages"), lines_of(path,
	    agui_message));
	v = jv_object_set(v, jv_string("branches"), branches != NULL &&
	    st2 == 0 ? lines_of(branches, NULL) : jv_array());
	rc = respond_json(conn, MHD_HTTP_OK, v);
	free(path);
	free(branches);
	return rc;
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_len, void **con_cls)
{
	struct req *q = *con_cls;

	(void)cls, (void)version;
	if (q == NULL) {
		if ((q = calloc(1, sizeof(*q))) == NULL)
			return MHD_NO;
		*con_cls = q;
		return MHD_YES;
	}
	if (*upload_len > 0) {
		if (!q->too_large && q->body.len + *upload_len >
		    opts.max_body) {
			q->too_large = true;
			art_buf_release(&q->body);
		}
		if (!q->too_large && art_buf_add(&q->body, upload,
		    *upload_len) == -1)
			return MHD_NO;
		*upload_len = 0;
		return MHD_YES;
	}
	if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0) {
		if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
			return refuse(conn, method, url,
			    MHD_HTTP_METHOD_NOT_ALLOWED, "bad_method",
			    "use GET");
		return respond(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
		    art_serve_page, strlen(art_serve_page), false);
	}
	if (!authorized(conn))
		return refuse(conn, method, url, MHD_HTTP_UNAUTHORIZED,
		    "unauthorized", "no or wrong bearer token");
	if (strncmp(url, "/agents/", 8) == 0) {
		if (strcmp(method, "POST") != 0)
			return refuse(conn, method, url,
			    MHD_HTTP_METHOD_NOT_ALLOWED, "bad_method",
			    "use POST");
		return post_run(conn, url, url + 8, q);
	}
	if (strcmp(url, "/agents") == 0 && strcmp(method, "GET") == 0)
		return get_agents(conn);
	if (strncmp(url, "/threads/", 9) == 0 && strcmp(method, "GET") == 0 &&
	    url[9] != '\0' && strchr(url + 9, '/') == NULL)
		return get_thread(conn, url, url + 9);
	return refuse(conn, method, url, MHD_HTTP_NOT_FOUND, "not_found",
	    "nothing here");
}

static void
completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct req *q = *con_cls;

	(void)cls, (void)conn, (void)toe;
	if (q == NULL)
		return;
	art_buf_release(&q->body);
	free(q);
	*con_cls = NULL;
}

/* --- the loop ----------------------------------------------------- */

static void
on_stop(int sig)
{
	int e = errno;

	stop_sig = sig;
	(void)!write(wake[1], "", 1);	/* full: a wake-up is due anyway */
	errno = e;
}

/* A stage ended: the loop reaps it now rather than at its next poll. */
static void
on_child(int sig)
{
	int e = errno;

	(void)sig;
	(void)!write(wake[1], "", 1);
	errno = e;
}

/* Empties the wake pipe the handlers write to, once the loop is awake. */
static void
drain_wake(void)
{
	char c;

	while (read(wake[0], &c, 1) == 1)
		;
}

/* The address to bind; a usage error when it is no IPv4 address. */
static struct sockaddr_in
bind_addr(void)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)opts.port);
	if (strcmp(opts.listen, "localhost") == 0)
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, opts.listen, &a.sin_addr) != 1)
		art_die(ART_EXIT_USAGE, "bad --listen '%s': expected an IPv4 "
		    "address such as 127.0.0.1", opts.listen);
	return a;
}


/*
 * The socket of a run's suspended connection, to watch for its client's
 * end; -1 when there is none to watch.
 */
static int
watched_fd(const struct run *r)
{
	const union MHD_ConnectionInfo *ci;

	if (!r->suspended || r->conn == NULL || r->unwatched || r->cancelled)
		return -1;
	ci = MHD_get_connection_info(r->conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);
	return ci != NULL ? ci->connect_fd : -1;
}

/*
 * A watched socket is readable: at its end (or broken) the client has
 * gone.  Bytes instead (a client that sends more after its request) are
 * left to libmicrohttpd, and the socket is not watched again: it would
 * stay readable.
 */
static void
check_gone(struct run *r, int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR))
		cancel_run(r);
	else if (n > 0)
		r->unwatched = true;
}

/* The run's connection may go on: it has bytes, or its end. */
static void
wake_run(struct run *r)
{
	if (r->suspended && r->conn != NULL) {
		r->suspended = false;
		MHD_resume_connection(r->conn);
		resumed = true;
	}
}


/* One turn of the loop: the engine's lines and events, then the runs. */
static void
tend(fd_set *rs, fd_set *ws)
{
	struct run *r, *next;
	int64_t now = art_clock_mono_ms();
	int fd;

	if (eng.evfd >= 0 && FD_ISSET(eng.evfd, rs))
		engine_read();
	if (eng.clfd >= 0 && FD_ISSET(eng.clfd, ws))
		engine_flush();
	if (engine_broken())
		engine_down();
	for (r = runs; r != NULL; r = next) {
		next = r->next;
		if ((fd = watched_fd(r)) >= 0 && FD_ISSET(fd, rs))
			check_gone(r, fd);
		if (r->conn == NULL && r->done) {
			run_free(r);
			continue;
		}
		if (r->out.len == 0 && !r->done && now - r->sent_at >=
		    KEEPALIVE_MS && r->conn != NULL) {
			art_buf_addstr(&r->out, ": keepalive\n\n");
			r->sent_at = now;
		}
		if (r->out.len > 0 || r->done)
			wake_run(r);
	}
}

static void
watch(fd_set *s, int fd, MHD_socket *max)
{
	if (fd < 0)
		return;
	FD_SET(fd, s);
	if (fd > *max)
		*max = fd;
}

static void
serve(struct MHD_Daemon *d)
{
	fd_set rs, ws, es;
	MHD_socket max;
	struct run *r;
	struct timeval tv;
	MHD_UNSIGNED_LONG_LONG mt;
	int64_t wait_ms;

	while (!stop_sig) {
		FD_ZERO(&rs);
		FD_ZERO(&ws);
		FD_ZERO(&es);
		max = wake[0];
		FD_SET(wake[0], &rs);
		if (MHD_get_fdset(d, &rs, &ws, &es, &max) != MHD_YES)
			art_die(ART_EXIT_FAIL, "libmicrohttpd: no descriptors");
		wait_ms = KEEPALIVE_MS / 2;
		watch(&rs, eng.evfd, &max);
		if (eng.cl.len > 0)
			watch(&ws, eng.clfd, &max);
		for (r = runs; r != NULL; r = r->next)
			watch(&rs, watched_fd(r), &max);
		if (MHD_get_timeout(d, &mt) == MHD_YES && (int64_t)mt < wait_ms)
			wait_ms = (int64_t)mt;
		/*
		 * libmicrohttpd 0.9.75 takes up a resumed connection only in
		 * its next run, and neither its descriptors nor its timeout
		 * say one is due: a resume after the run is one now.
		 */
		if (resumed)
			wait_ms = 0;
		tv.tv_sec = wait_ms / 1000;
		tv.tv_usec = (wait_ms % 1000) * 1000;
		if (select(max + 1, &rs, &ws, &es, &tv) == -1) {
			if (errno == EINTR)
				continue;
			art_die(ART_EXIT_FAIL, "select: %s", strerror(errno));
		}
		if (FD_ISSET(wake[0], &rs))
			drain_wake();
		tend(&rs, &ws);
		resumed = false;
		MHD_run_from_select(d, &rs, &ws, &es);
		FD_ZERO(&rs);
		FD_ZERO(&ws);
		tend(&rs, &ws);	/* what the requests just did */
	}
}

/* Are runs still waiting on their cancels? */
static bool
runs_going(void)
{
	const struct run *r;

	for (r = runs; r != NULL; r = r->next)
		if (!r->done)
			return true;
	return false;
}

/*
 * Stopped: every run cancelled, and given STOP_GRACE_MS to be so while
 * the engine goes on; then the ring is stopped, every connection let go,
 * and the daemon.
 */
static void
shutdown_all(struct MHD_Daemon *d)
{
	int64_t end = art_clock_mono_ms() + STOP_GRACE_MS, left;
	struct run *r, *next;
	struct timeval tv;
	fd_set rs, ws;
	int max;

	for (r = runs; r != NULL; r = r->next)
		cancel_run(r);
	while (eng.up && runs_going() && (left = end - art_clock_mono_ms()) >
	    0) {
		FD_ZERO(&rs);
		FD_ZERO(&ws);
		max = wake[0];
		FD_SET(wake[0], &rs);
		watch(&rs, eng.evfd, &max);
		if (eng.cl.len > 0)
			watch(&ws, eng.clfd, &max);
		tv.tv_sec = 0;
		tv.tv_usec = (suseconds_t)(left > 100 ? 100 : left) * 1000;
		if (select(max + 1, &rs, &ws, NULL, &tv) <= 0)
			continue;
		if (FD_ISSET(wake[0], &rs))
			drain_wake();
		if (eng.evfd >= 0 && FD_ISSET(eng.evfd, &rs))
			engine_read();
		if (eng.clfd >= 0 && FD_ISSET(eng.clfd, &ws))
			engine_flush();
		if (engine_broken())
			engine_down();
	}
	for (r = runs; r != NULL; r = r->next)
		run_end(r, ART_AGUI_END_CANCELLED, NULL);
	engine_stop();
	for (r = runs; r != NULL; r = next) {
		next = r->next;
		wake_run(r);
	}
	MHD_stop_daemon(d);
	while (runs != NULL)
		run_free(runs);
	if (store != NULL)
		art_store_close(store);
}

int
main(int argc, char **argv)
{
	struct sockaddr_in a;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	struct sigaction sa;
	sigset_t ss;
	struct art_err err;
	char host[INET_ADDRSTRLEN];

	art_diag_init(argv[0]);
	parse(argc, argv);
	a = bind_addr();
	if (opts.token_env != NULL) {
		token = getenv(opts.token_env);
		if (token == NULL || *token == '\0')
			art_die(ART_EXIT_USAGE, "--token-env %s: $%s is not "
			    "set", opts.token_env, opts.token_env);
	}
	if ((ntohl(a.sin_addr.s_addr) >> 24) != 127 && token == NULL)
		art_die(ART_EXIT_USAGE, "--listen %s is not loopback: give "
		    "--token-env VAR, a bearer token for the requests",
		    opts.listen);
	art_ring_bindir(bindir, sizeof(bindir));
	if (pipe(wake) == -1)
		art_die(ART_EXIT_FAIL, "pipe: %s", strerror(errno));
	fcntl(wake[0], F_SETFL, O_NONBLOCK);
	fcntl(wake[1], F_SETFL, O_NONBLOCK);
	fcntl(wake[0], F_SETFD, FD_CLOEXEC);
	fcntl(wake[1], F_SETFD, FD_CLOEXEC);
	/*
	 * Whoever started us may have these blocked (a mask survives exec):
	 * a SIGTERM held pending would never stop the server.  The stages
	 * it starts begin with an empty mask (spawn.c).
	 */
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGCHLD);
	sigprocmask(SIG_UNBLOCK, &ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = MHD_start_daemon(MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME,
	    0, NULL, NULL, handle, NULL,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a,
	    MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
	    MHD_OPTION_END);
	if (d == NULL)
		art_die(ART_EXIT_FAIL, "listen on %s:%d: %s", opts.listen,
		    opts.port, strerror(errno));
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	inet_ntop(AF_INET, &a.sin_addr, host, sizeof(host));
	printf("{\"type\":\"listening\",\"url\":\"http://%s:%u/\"}\n", host,
	    info != NULL ? (unsigned)info->port : (unsigned)opts.port);
	fflush(stdout);
	/* Started now, its engine adopts what a server before left going. */
	if (engine_start(&err) == -1)
		art_warn("%s: the first run tries again", err.msg);
	serve(d);
	shutdown_all(d);
	return 0;
}
