/* agentrt-serve - agents behind HTTP, for AG-UI clients and a browser
 *
 * POST /agents/AGENT takes AG-UI's RunAgentInput and answers a
 * text/event-stream of AG-UI events.  Each run is the ring a user would
 * type in bash: agentrt-decide | agentrt-llm | agentrt-tool |
 * agentrt-session run, the session writing its client events in AG-UI's
 * form (--events-format ag-ui) into a pipe this process reads and frames
 * as server-sent events.  threadId is the session; the client's messages
 * are a client.messages view, its tools client-handled tools (ClientContext
 * .tools), its state, context and forwardedProps the rest of ClientContext.
 * The run's envelope is ours: RUN_STARTED carries the request's threadId
 * and runId, and a run whose session ended without RUN_FINISHED or
 * RUN_ERROR (it parked on a client tool or an approval, or it failed)
 * gets one from here.
 *
 * One thread.  libmicrohttpd runs from our own select() loop (its external
 * mode), so the rings are forked from a single-threaded process as
 * spawn.h requires, and a connection waiting for its ring's next event is
 * suspended, not polled by libmicrohttpd.  Its socket is watched here
 * instead: a client that closes it (it sends nothing after its request)
 * has gone, and its run is stopped with SIGTERM at once (agentrt-session
 * cancels the turn).  A connection idle for KEEPALIVE_MS gets an SSE
 * comment, which finds a client that went without a word.
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
#include "buf.h"
#include "clock.h"
#include "diag.h"
#include "json.h"
#include "opt.h"
#include "ring.h"
#include "spawn.h"

#define KEEPALIVE_MS	2000
#define STOP_GRACE_MS	5000	/* a ring told to stop, before SIGKILL */
#define MAX_ARGS	48
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

/* One run: a ring, the events it writes, the stream they go out on. */
struct run {
	struct run		*next;
	struct MHD_Connection	*conn;		/* NULL once the request ended */
	struct art_ring		 ring;
	int			 evfd;		/* -1 at its end */
	int			 errfd;		/* the session's stderr, or -1 */
	struct art_buf		 in;		/* events not yet a whole line */
	struct art_buf		 err;		/* stderr not yet a whole line */
	char			 said[512];	/* the session's last stderr line */
	struct art_buf		 out;		/* SSE bytes not yet sent */
	char			 agent[256], thread[256], run_id[256];
	int64_t			 t0, sent_at;
	bool			 suspended, started, ended, done, cancelled;
	bool			 unwatched;	/* its socket had bytes */
	const char		*outcome;	/* for the log line */
	jv			 pending;	/* tool calls started, unanswered */
	jv			 interrupts;	/* AG-UI Interrupts, as said */
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

struct args {
	const char	*v[MAX_ARGS + 1];
	int		 n;
	char		 file[PATH_MAX + 32];
};

static void
add(struct args *a, const char *s)
{
	if (a->n < MAX_ARGS) {
		a->v[a->n++] = s;
		a->v[a->n] = NULL;
	}
}

/* A sibling binary: where we are (a build tree, an install), else PATH. */
static struct args *
sibling(struct args *a, const char *name)
{
	memset(a, 0, sizeof(*a));
	add(a, name);
	if (bindir[0] != '\0') {
		snprintf(a->file, sizeof(a->file), "%s/%s", bindir, name);
		if (access(a->file, X_OK) == 0)
			return a;
	}
	snprintf(a->file, sizeof(a->file), "%s", name);
	return a;
}

static void
add_db(struct args *a)
{
	if (opts.db != NULL)
		add(a, "-d"), add(a, opts.db);
}

/*
 * Starts r's ring: the session runs input (a ClientInput line) in session
 * r->thread, new with agent r->agent when it is not there yet, and writes
 * its events in AG-UI's form to a pipe whose read end is r->evfd.  The
 * stages' stderr is ours.  0, or -1 with err.
 */
static int
ring_start(struct run *r, const char *input, const char *resume,
    const char *payload, struct art_err *err)
{
	struct args a[4];
	struct art_spawn s[4];
	char evpath[32];
	int ev[2], er[2], i, rc;

	if (art_spawn_pipe(ev) == -1)
		return art_err_set(err, "spawn_busy", "pipe: %s",
		    strerror(errno));
	if (art_spawn_pipe(er) == -1) {
		close(ev[0]), close(ev[1]);
		return art_err_set(err, "spawn_busy", "pipe: %s",
		    strerror(errno));
	}
	snprintf(evpath, sizeof(evpath), "/dev/fd/%d", ev[1]);
	sibling(&a[0], "agentrt-decide");
	sibling(&a[1], "agentrt-llm");
	sibling(&a[2], "agentrt-tool");
	for (i = 0; i < opts.ntool_dirs; i++)
		add(&a[2], "--tools"), add(&a[2], opts.tool_dirs[i]);
	sibling(&a[3], "agentrt-session");
	add_db(&a[3]);
	add(&a[3], "run");
	add(&a[3], "-s"), add(&a[3], r->thread);
	add(&a[3], "-a"), add(&a[3], r->agent);
	for (i = 0; i < opts.nagent_dirs; i++)
		add(&a[3], "--agents"), add(&a[3], opts.agent_dirs[i]);
	if (opts.ntool_dirs > 0)
		add(&a[3], "--tools"), add(&a[3], opts.tool_dirs[0]);
	add(&a[3], "--events"), add(&a[3], evpath);
	add(&a[3], "--events-format"), add(&a[3], "ag-ui");
	if (resume != NULL) {
		add(&a[3], "--resume"), add(&a[3], resume);
		if (payload != NULL)
			add(&a[3], "--payload"), add(&a[3], payload);
	} else
		add(&a[3], "--input"), add(&a[3], input);
	for (i = 0; i < 4; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].file = a[i].file;
		s[i].argv = (char *const *)a[i].v;
		s[i].name = a[i].v[0];
		s[i].die_with_parent = true;
	}
	s[3].keep = &ev[1], s[3].nkeep = 1;
	/* The session's stderr is read: a run it refused says why. */
	s[3].io[2] = (struct art_spawn_io){ ART_SPAWN_FD, er[1] };
	fflush(stdout);
	rc = art_ring_start(&r->ring, s, 4, true, err);
	close(ev[1]);
	close(er[1]);
	if (rc == -1) {
		close(ev[0]);
		close(er[0]);
		return -1;
	}
	r->evfd = ev[0];
	r->errfd = er[0];
	art_spawn_nonblock(r->evfd);
	art_spawn_nonblock(r->errfd);
	return 0;
}

/*
 * Runs agentrt-tree ARGS... to its end: its stdout (bounded), or NULL
 * when it failed; *status its exit status.  Blocks, briefly: the tree's
 * reads are of one session.
 */
static char *
tree(const char *cmd, const char *sid, size_t *len, int *status)
{
	struct args a;
	struct art_spawn s;
	struct art_child ch;
	struct art_buf b = ART_BUF_INIT;
	struct art_err err;
	int rc;

	sibling(&a, "agentrt-tree");
	add_db(&a);
	add(&a, cmd), add(&a, "--"), add(&a, sid);
	memset(&s, 0, sizeof(s));
	s.file = a.file;
	s.argv = (char *const *)a.v;
	s.io[1].how = ART_SPAWN_PIPE;
	s.io[2].how = ART_SPAWN_NULL;
	fflush(stdout);
	if (art_spawn(&s, &ch, &err) == -1) {
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

/* --- AG-UI and the protocol's shapes ------------------------------ */

/* An AG-UI message's content as text: a string, or its text parts. */
static jv
content_text(jv c)
{
	jv s;

	if (jv_get_kind(c) != JV_KIND_ARRAY)
		return c;
	s = jv_string("");
	jv_array_foreach(c, i, part) {
		const char *t = art_json_str(&part, "text");

		if (t != NULL)
			s = jv_string_append_str(s, t);
		jv_free(part);
		(void)i;
	}
	jv_free(c);
	return s;
}

/*
 * An AG-UI Message as the protocol's DraftMessage, or jv_null() for a
 * role the protocol has no place for (activity, reasoning); jv_invalid
 * with a message for one that is not a message.
 */
static jv
draft_of(const jv *m)
{
	const char *role = art_json_str(m, "role");
	jv d = jv_object(), calls;

	if (jv_get_kind(*m) != JV_KIND_OBJECT || role == NULL) {
		jv_free(d);
		return jv_invalid_with_msg(jv_string("a message without a "
		    "role"));
	}
	if (strcmp(role, "developer") == 0)
		role = "system";
	if (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0 &&
	    strcmp(role, "system") != 0 && strcmp(role, "tool") != 0) {
		jv_free(d);
		return jv_null();
	}
	d = art_json_set_some(d, "id", art_json_field(m, "id"));
	d = jv_object_set(d, jv_string("role"), jv_string(role));
	d = art_json_set_some(d, "content",
	    content_text(art_json_field(m, "content")));
	calls = art_json_field(m, "toolCalls");
	if (jv_get_kind(calls) == JV_KIND_ARRAY && jv_array_length(
	    jv_copy(calls)) > 0)
		d = jv_object_set(d, jv_string("tool_calls"), calls);
	else
		jv_free(calls);
	d = art_json_set_some(d, "tool_call_id", art_json_field(m,
	    "toolCallId"));
	return d;
}

/* A RunAgentInput's tools as the protocol's AgentTool[], client-handled. */
static jv
tools_of(const jv *tools)
{
	jv out = jv_array();

	jv_array_foreach(*tools, i, t) {
		jv d = art_json_set_some(jv_object(), "name",
		    art_json_field(&t, "name"));

		d = art_json_set_some(d, "description", art_json_field(&t,
		    "description"));
		d = art_json_set_some(d, "input", art_json_field(&t,
		    "parameters"));
		d = jv_object_set(d, jv_string("handler"), jv_string("client"));
		out = jv_array_append(out, d);
		jv_free(t);
		(void)i;
	}
	return out;
}

/* Copies string member key of in into dst, or says why not: NULL, or why. */
static const char *
id_of(const jv *in, const char *key, char *dst, size_t n)
{
	const char *s = art_json_str(in, key);
	size_t i, len;

	if (s == NULL)
		return "must be a string";
	len = strlen(s);
	if (len == 0 || len >= n)
		return "must be 1 to 255 bytes";
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x21 || s[i] == '/' || s[i] == 0x7f)
			return "must have no spaces, control characters or '/'";
	memcpy(dst, s, len + 1);
	return NULL;
}

/*
 * A RunAgentInput's resume (AG-UI's answers to the interrupts a run ended
 * on): *resume and *payload for agentrt-session run --resume/--payload.
 * One entry a run: agentrt parks a turn on one interrupt at a time.  An
 * entry "cancelled" is answered as a refusal, which is what an approval
 * abandoned means.  jv_null() when there is none, jv_true() when it is
 * taken, jv_invalid() with a message when it is no resume.
 */
static jv
resume_of(const jv *in, char **resume, char **payload)
{
	jv res = art_json_field(in, "resume"), e, p;
	const char *iid, *st;

	if (jv_get_kind(res) == JV_KIND_NULL || (jv_get_kind(res) ==
	    JV_KIND_ARRAY && jv_array_length(jv_copy(res)) == 0)) {
		jv_free(res);
		return jv_null();
	}
	if (jv_get_kind(res) != JV_KIND_ARRAY || jv_array_length(jv_copy(
	    res)) != 1) {
		jv_free(res);
		return jv_invalid_with_msg(jv_string("resume must be an array "
		    "of one entry: agentrt parks a run on one interrupt"));
	}
	e = jv_array_get(res, 0);
	iid = art_json_str(&e, "interruptId");
	st = art_json_str(&e, "status");
	if (iid == NULL || st == NULL || (strcmp(st, "resolved") != 0 &&
	    strcmp(st, "cancelled") != 0)) {
		jv_free(e);
		return jv_invalid_with_msg(jv_string("resume[0] needs an "
		    "interruptId and a status, resolved or cancelled"));
	}
	*resume = strdup(iid);
	if (strcmp(st, "cancelled") == 0)
		p = jv_parse("{\"approved\":false,\"cancelled\":true,"
		    "\"reason\":\"cancelled by the client\"}");
	else
		p = art_json_field(&e, "payload");
	if (jv_get_kind(p) != JV_KIND_NULL)
		*payload = art_json_dump(&p, NULL);
	jv_free(p);
	jv_free(e);
	return jv_true();
}

/*
 * The ClientInput line for RunAgentInput in (borrowed): a client.messages
 * view, the run's id its turn_id; or jv_null() when the input resumes an
 * interrupt (*resume and *payload set, resume_of()).  jv_invalid() with a
 * message when in is no RunAgentInput.
 */
static jv
input_of(const jv *in, const char *agent, const char *run_id, char **resume,
    char **payload)
{
	jv msgs, tools, view, client, line, fp, d;

	*resume = *payload = NULL;
	d = resume_of(in, resume, payload);
	if (jv_get_kind(d) != JV_KIND_NULL)
		return jv_is_valid(d) ? (jv_free(d), jv_null()) : d;
	msgs = art_json_field(in, "messages");
	fp = art_json_field(in, "forwardedProps");
	if (jv_get_kind(msgs) != JV_KIND_ARRAY) {
		jv_free(msgs);
		jv_free(fp);
		return jv_invalid_with_msg(jv_string("messages must be an "
		    "array"));
	}
	view = jv_array();
	jv_array_foreach(msgs, i, m) {
		d = draft_of(&m);
		jv_free(m);
		if (!jv_is_valid(d)) {
			jv_free(d);
			jv_free(view);
			jv_free(msgs);
			jv_free(fp);
			return jv_invalid_with_msg(jv_string_fmt("messages[%d]: "
			    "not a message with a role", i));
		}
		if (jv_get_kind(d) != JV_KIND_NULL)
			view = jv_array_append(view, d);
	}
	jv_free(msgs);
	tools = art_json_field(in, "tools");
	client = jv_object();
	if (jv_get_kind(tools) == JV_KIND_ARRAY && jv_array_length(
	    jv_copy(tools)) > 0)
		client = jv_object_set(client, jv_string("tools"),
		    tools_of(&tools));
	else if (jv_get_kind(tools) != JV_KIND_NULL &&
	    jv_get_kind(tools) != JV_KIND_ARRAY) {
		jv_free(tools);
		jv_free(view);
		jv_free(client);
		jv_free(fp);
		return jv_invalid_with_msg(jv_string("tools must be an array"));
	}
	jv_free(tools);
	client = art_json_set_some(client, "context", art_json_field(in,
	    "context"));
	client = art_json_set_some(client, "state", art_json_field(in,
	    "state"));
	client = art_json_set_some(client, "forwarded_props", fp);
	line = jv_object_set(jv_object(), jv_string("type"),
	    jv_string("client.messages"));
	line = jv_object_set(line, jv_string("agent_id"), jv_string(agent));
	line = jv_object_set(line, jv_string("turn_id"), jv_string(run_id));
	line = jv_object_set(line, jv_string("messages"), view);
	if (jv_object_length(jv_copy(client)) > 0)
		line = jv_object_set(line, jv_string("client"), client);
	else
		jv_free(client);
	return line;
}

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
	jv l = jv_object_set(jv_object(), jv_string("type"), jv_string("run"));
	char *s;

	l = jv_object_set(l, jv_string("agent"), jv_string(r->agent));
	l = jv_object_set(l, jv_string("thread_id"), jv_string(r->thread));
	l = jv_object_set(l, jv_string("run_id"), jv_string(r->run_id));
	l = jv_object_set(l, jv_string("outcome"), jv_string(r->outcome));
	l = jv_object_set(l, jv_string("ms"), jv_number((double)(
	    art_clock_mono_ms() - r->t0)));
	if ((s = art_json_dump(&l, NULL)) != NULL) {
		printf("%s\n", s);
		fflush(stdout);
		free(s);
	}
	jv_free(l);
}

/* Appends event v (consumed) to r's stream as one SSE message. */
static void
send_event(struct run *r, jv v)
{
	size_t len;
	char *s = art_json_dump(&v, &len);

	jv_free(v);
	if (s == NULL)
		return;
	if (art_buf_addstr(&r->out, "data: ") == -1 ||
	    art_buf_add(&r->out, s, len) == -1 ||
	    art_buf_addstr(&r->out, "\n\n") == -1)
		art_warn("run %s: out of memory", r->run_id);
	free(s);
}

static jv
run_event(const struct run *r, const char *type)
{
	jv v = jv_object_set(jv_object(), jv_string("type"), jv_string(type));

	v = jv_object_set(v, jv_string("threadId"), jv_string(r->thread));
	return jv_object_set(v, jv_string("runId"), jv_string(r->run_id));
}

static void
start_run(struct run *r)
{
	if (!r->started)
		send_event(r, run_event(r, "RUN_STARTED"));
	r->started = true;
}

/*
 * What the run is left waiting on, from the events it carried: a
 * CUSTOM agentrt.interrupt (an approval, a question) as an AG-UI
 * Interrupt; a client tool's call, from TOOL_CALL_START until its
 * TOOL_CALL_RESULT.
 */
static void
track(struct run *r, const char *type, const jv *v)
{
	const char *id, *name;
	jv val, it, p, q;

	if (strcmp(type, "TOOL_CALL_START") == 0 &&
	    (id = art_json_str(v, "toolCallId")) != NULL)
		r->pending = jv_array_append(r->pending, jv_string(id));
	else if (strcmp(type, "TOOL_CALL_RESULT") == 0 &&
	    (id = art_json_str(v, "toolCallId")) != NULL)
		r->pending = art_json_without_str(r->pending, id);
	else if (strcmp(type, "CUSTOM") == 0 && (name = art_json_str(v,
	    "name")) != NULL && strcmp(name, "agentrt.interrupt") == 0) {
		val = art_json_field(v, "value");
		if ((id = art_json_str(&val, "interrupt_id")) != NULL) {
			it = jv_object_set(jv_object(), jv_string("id"),
			    jv_string(id));
			q = art_json_field(&val, "reason");
			it = jv_object_set(it, jv_string("reason"),
			    jv_get_kind(q) == JV_KIND_STRING ? q :
			    (jv_free(q), jv_string("input")));
			p = art_json_field(&val, "payload");
			q = art_json_field(&p, "question");
			if (jv_get_kind(q) == JV_KIND_STRING)
				it = jv_object_set(it, jv_string("message"), q);
			else
				jv_free(q);
			jv_free(p);
			r->interrupts = jv_array_append(r->interrupts, it);
		}
		jv_free(val);
	}
}

/*
 * How the run ended, as RUN_FINISHED's outcome says it: its interrupts
 * when it parked on one; else success, naming the tool calls left for
 * the client.
 */
static jv
outcome_of(struct run *r)
{
	jv o;

	if (jv_array_length(jv_copy(r->interrupts)) > 0) {
		r->outcome = "interrupt";
		o = jv_object_set(jv_object(), jv_string("type"),
		    jv_string("interrupt"));
		return jv_object_set(o, jv_string("interrupts"),
		    jv_copy(r->interrupts));
	}
	o = jv_object_set(jv_object(), jv_string("type"), jv_string("success"));
	if (jv_array_length(jv_copy(r->pending)) > 0) {
		r->outcome = "interrupt";
		o = jv_object_set(o, jv_string("pendingToolCallIds"),
		    jv_copy(r->pending));
	} else
		r->outcome = "success";
	return o;
}

/*
 * One line the session wrote.  The run's envelope is this request's:
 * RUN_STARTED first, once, with its threadId and runId (a session that
 * goes on with a turn a client tool or an approval parked starts no turn
 * of its own), and RUN_FINISHED or RUN_ERROR last, once, RUN_FINISHED
 * with the outcome the run's events make.
 */
static void
event_line(struct run *r, const char *line, size_t len)
{
	struct art_err err;
	jv v = art_json_parse(line, len, &err), o;
	const char *type;

	if (!jv_is_valid(v)) {
		jv_free(v);
		art_warn("run %s: the session wrote a line that is not JSON: "
		    "%s", r->run_id, err.msg);
		return;
	}
	type = art_json_str(&v, "type");
	if (type == NULL || r->ended) {
		jv_free(v);
		return;
	}
	if (strcmp(type, "RUN_STARTED") == 0) {
		jv_free(v);
		start_run(r);
		return;
	}
	start_run(r);
	track(r, type, &v);
	if (strcmp(type, "RUN_ERROR") == 0) {
		r->ended = true;
		r->outcome = "error";
	} else if (strcmp(type, "RUN_FINISHED") == 0) {
		r->ended = true;
		v = jv_object_set(v, jv_string("threadId"),
		    jv_string(r->thread));
		v = jv_object_set(v, jv_string("runId"), jv_string(r->run_id));
		o = art_json_field(&v, "outcome");
		if (jv_get_kind(o) != JV_KIND_OBJECT ||
		    art_json_str(&o, "type") == NULL ||
		    strcmp(art_json_str(&o, "type"), "success") == 0)
			v = jv_object_set(v, jv_string("outcome"),
			    outcome_of(r));
		else
			r->outcome = strcmp(art_json_str(&o, "type"),
			    "interrupt") == 0 ? "interrupt" : "cancelled";
		jv_free(o);
	}
	send_event(r, v);
}

/* Reads what the session wrote; at its end, r->evfd is -1. */
static void
read_events(struct run *r)
{
	char buf[65536], *nl;
	ssize_t n;

	for (;;) {
		n = read(r->evfd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			close(r->evfd);
			r->evfd = -1;
			return;
		}
		if (art_buf_add(&r->in, buf, (size_t)n) == -1) {
			art_warn("run %s: out of memory", r->run_id);
			return;
		}
		while (r->in.len > 0 && (nl = memchr(r->in.p, '\n',
		    r->in.len)) != NULL) {
			event_line(r, r->in.p, (size_t)(nl - r->in.p));
			art_buf_consume(&r->in, (size_t)(nl - r->in.p) + 1);
		}
	}
}

/*
 * Reads the session's stderr: each line passed on to ours, the last one
 * kept for a RUN_ERROR.  At its end, r->errfd is -1.
 */
static void
read_stderr(struct run *r)
{
	char buf[4096], *nl;
	ssize_t n;

	while (r->errfd >= 0) {
		n = read(r->errfd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			close(r->errfd);
			r->errfd = -1;
			n = 0;
			if (r->err.len > 0)
				art_buf_addc(&r->err, '\n');
		} else if (art_buf_add(&r->err, buf, (size_t)n) == -1)
			return;
		while (r->err.len > 0 && (nl = memchr(r->err.p, '\n',
		    r->err.len)) != NULL) {
			*nl = '\0';
			fprintf(stderr, "%s\n", r->err.p);
			if (nl > r->err.p)
				snprintf(r->said, sizeof(r->said), "%s",
				    r->err.p);
			art_buf_consume(&r->err, (size_t)(nl - r->err.p) + 1);
		}
		/* A line longer than a screenful is passed on in pieces. */
		if (r->err.len > 8192) {
			fwrite(r->err.p, 1, r->err.len, stderr);
			art_buf_clear(&r->err);
		}
	}
}

/* The session's exit status once reaped, or -1. */
static int
session_status(const struct run *r)
{
	int st = r->ring.status[3];

	if (r->ring.pid[3] != 0 || st == -1)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * The ring has ended: a run the session did not end is ended here.  Exit
 * status 3 is a turn parked, on a client tool or an interrupt: the run
 * finished, and the next one carries the answer.  A run stopped (its
 * client gone, or the server) finished as cancelled.
 */
static void
finish(struct run *r)
{
	int st = session_status(r);
	jv e;

	start_run(r);
	if (!r->ended) {
		r->ended = true;
		if (st == 0 || st == 3 || r->cancelled) {
			e = run_event(r, "RUN_FINISHED");
			e = jv_object_set(e, jv_string("outcome"), r->cancelled ?
			    jv_object_set(jv_object(), jv_string("type"),
			    jv_string("cancelled")) : outcome_of(r));
		} else {
			read_stderr(r);
			e = jv_object_set(jv_object_set(jv_object_set(
			    jv_object(), jv_string("type"),
			    jv_string("RUN_ERROR")), jv_string("message"),
			    r->said[0] != '\0' ? jv_string(r->said) :
			    jv_string_fmt("the run failed: agentrt-session "
			    "exited with status %d", st)), jv_string("code"),
			    jv_string("run_failed"));
			r->outcome = "error";
		}
		send_event(r, e);
	}
	if (r->cancelled)
		r->outcome = "cancelled";
	r->done = true;
	log_run(r);
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
	if (r->evfd >= 0)
		close(r->evfd);
	if (r->errfd >= 0)
		close(r->errfd);
	art_ring_release(&r->ring);
	art_buf_release(&r->in);
	art_buf_release(&r->err);
	art_buf_release(&r->out);
	jv_free(r->pending);
	jv_free(r->interrupts);
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
 * Stops the run's ring: its client went, or the server stops.  What it
 * recorded stays.
 */
static void
cancel_run(struct run *r)
{
	if (!r->done && !r->cancelled) {
		r->cancelled = true;
		art_ring_signal(&r->ring, SIGTERM);
	}
}

/*
 * The response is done with: sent whole, or its client went away.  A
 * ring still running is stopped; the run is freed once it is reaped.
 */
static void
reader_free(void *cls)
{
	struct run *r = cls;

	r->conn = NULL;
	cancel_run(r);
}

static bool
thread_busy(const char *thread)
{
	const struct run *r;

	for (r = runs; r != NULL; r = r->next)
		if (!r->done && strcmp(r->thread, thread) == 0)
			return true;
	return false;
}

/* POST /agents/AGENT, its body whole. */
static enum MHD_Result
post_run(struct MHD_Connection *conn, const char *url, const char *agent,
    struct req *q)
{
	struct art_err err;
	struct MHD_Response *resp;
	struct run *r;
	char *resume = NULL, *payload = NULL, *text = NULL;
	const char *why;
	jv in, line = jv_invalid();
	enum MHD_Result rc;

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
	if (jv_get_kind(in) != JV_KIND_OBJECT) {
		jv_free(in);
		return refuse(conn, "POST", url, MHD_HTTP_BAD_REQUEST,
		    "bad_input", "the body is not a RunAgentInput object");
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		jv_free(in);
		return MHD_NO;
	}
	r->evfd = r->errfd = -1;
	r->pending = jv_array();
	r->interrupts = jv_array();
	snprintf(r->agent, sizeof(r->agent), "%s", agent);
	if ((why = id_of(&in, "threadId", r->thread, sizeof(r->thread))) !=
	    NULL || (why = id_of(&in, "runId", r->run_id,
	    sizeof(r->run_id))) != NULL) {
		rc = refuse(conn, "POST", url, MHD_HTTP_BAD_REQUEST,
		    "bad_input", "%s %s", r->thread[0] == '\0' ? "threadId" :
		    "runId", why);
		goto out;
	}
	line = input_of(&in, agent, r->run_id, &resume, &payload);
	if (!jv_is_valid(line)) {
		jv m = jv_invalid_get_msg(line);

		line = jv_invalid();
		rc = refuse(conn, "POST", url, MHD_HTTP_BAD_REQUEST,
		    "bad_input", "%s", jv_get_kind(m) == JV_KIND_STRING ?
		    jv_string_value(m) : "not a RunAgentInput");
		jv_free(m);
		goto out;
	}
	if (thread_busy(r->thread)) {
		rc = refuse(conn, "POST", url, MHD_HTTP_CONFLICT, "busy",
		    "thread '%s' has a run going", r->thread);
		goto out;
	}
	if (nruns >= opts.max_runs) {
		rc = refuse(conn, "POST", url, MHD_HTTP_SERVICE_UNAVAILABLE,
		    "busy", "%d runs going (--max-runs)", nruns);
		goto out;
	}
	if (jv_get_kind(line) == JV_KIND_OBJECT)
		text = art_json_dump(&line, NULL);
	if (ring_start(r, text, resume, payload, &err) == -1) {
		rc = refuse(conn, "POST", url, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "spawn", "%s", err.msg);
		goto out;
	}
	r->t0 = r->sent_at = art_clock_mono_ms();
	r->conn = conn;
	r->outcome = "success";
	r->next = runs;
	runs = r;
	nruns++;
	start_run(r);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
	    reader, r, reader_free);
	if (resp == NULL) {
		reader_free(r);
		rc = MHD_NO;
	} else {
		MHD_add_response_header(resp, "Content-Type",
		    "text/event-stream");
		MHD_add_response_header(resp, "Cache-Control", "no-store");
		rc = MHD_queue_response(conn, MHD_HTTP_OK, resp);
		MHD_destroy_response(resp);
	}
	r = NULL;
out:
	if (r != NULL) {
		jv_free(r->pending);
		jv_free(r->interrupts);
	}
	free(r);
	free(resume);
	free(payload);
	free(text);
	jv_free(line);
	jv_free(in);
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

/* One turn of the loop for the runs: events read, rings reaped. */
static void
tend(fd_set *rs)
{
	struct run *r, *next;
	int64_t now = art_clock_mono_ms();
	int fd;

	for (r = runs; r != NULL; r = next) {
		next = r->next;
		if ((fd = watched_fd(r)) >= 0 && FD_ISSET(fd, rs))
			check_gone(r, fd);
		if (r->evfd >= 0 && FD_ISSET(r->evfd, rs))
			read_events(r);
		if (r->errfd >= 0 && FD_ISSET(r->errfd, rs))
			read_stderr(r);
		if (r->evfd < 0 && !r->done &&
		    art_ring_reap(&r->ring, false) == 0)
			finish(r);
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
serve(struct MHD_Daemon *d)
{
	fd_set rs, ws, es;
	MHD_socket max;
	struct run *r;
	struct timeval tv;
	MHD_UNSIGNED_LONG_LONG mt;
	int64_t wait_ms;
	int fd;

	while (!stop_sig) {
		FD_ZERO(&rs);
		FD_ZERO(&ws);
		FD_ZERO(&es);
		max = wake[0];
		FD_SET(wake[0], &rs);
		if (MHD_get_fdset(d, &rs, &ws, &es, &max) != MHD_YES)
			art_die(ART_EXIT_FAIL, "libmicrohttpd: no descriptors");
		wait_ms = KEEPALIVE_MS / 2;
		for (r = runs; r != NULL; r = r->next) {
			if (r->errfd >= 0) {
				FD_SET(r->errfd, &rs);
				if (r->errfd > max)
					max = r->errfd;
			}
			if (r->evfd >= 0) {
				FD_SET(r->evfd, &rs);
				if (r->evfd > max)
					max = r->evfd;
			} else if (!r->done)
				wait_ms = 100;	/* reaping: SIGCHLD wakes us */
			if ((fd = watched_fd(r)) >= 0) {
				FD_SET(fd, &rs);
				if (fd > max)
					max = fd;
			}
		}
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
		tend(&rs);
		resumed = false;
		MHD_run_from_select(d, &rs, &ws, &es);
		FD_ZERO(&rs);
		tend(&rs);	/* what the requests just did */
	}
}

/*
 * Waits up to STOP_GRACE_MS for the rings told to stop, reading their
 * sessions' stderr meanwhile (a session blocked writing it would never
 * end); then SIGKILL for what is left.  Every ring is reaped.
 */
static void
reap_all(void)
{
	int64_t end = art_clock_mono_ms() + STOP_GRACE_MS, left;
	struct run *r;
	struct timeval tv;
	fd_set rs;
	int max, live;

	for (;;) {
		live = 0;
		FD_ZERO(&rs);
		FD_SET(wake[0], &rs);
		max = wake[0];
		for (r = runs; r != NULL; r = r->next) {
			live += art_ring_reap(&r->ring, false);
			if (r->errfd >= 0) {
				FD_SET(r->errfd, &rs);
				if (r->errfd > max)
					max = r->errfd;
			}
		}
		left = end - art_clock_mono_ms();
		if (live == 0 || left <= 0)
			break;
		if (left > 100)
			left = 100;	/* SIGCHLD wakes us, as a rule */
		tv.tv_sec = 0;
		tv.tv_usec = (suseconds_t)left * 1000;
		if (select(max + 1, &rs, NULL, NULL, &tv) <= 0)
			continue;
		if (FD_ISSET(wake[0], &rs))
			drain_wake();
		for (r = runs; r != NULL; r = r->next)
			if (r->errfd >= 0 && FD_ISSET(r->errfd, &rs))
				read_stderr(r);
	}
	for (r = runs; r != NULL; r = r->next)
		if (art_ring_reap(&r->ring, false) > 0) {
			art_warn("run %s: its ring did not stop in %d ms: "
			    "killed", r->run_id, STOP_GRACE_MS);
			art_ring_signal(&r->ring, SIGKILL);
			art_ring_reap(&r->ring, true);
		}
}

/* Stopped: every ring ended, every connection let go, then the daemon. */
static void
shutdown_all(struct MHD_Daemon *d)
{
	struct run *r, *next;

	for (r = runs; r != NULL; r = r->next) {
		cancel_run(r);
		if (r->evfd >= 0) {	/* its events are not wanted now */
			close(r->evfd);
			r->evfd = -1;
		}
	}
	reap_all();
	for (r = runs; r != NULL; r = next) {
		next = r->next;
		if (!r->done)
			finish(r);
		wake_run(r);
	}
	MHD_stop_daemon(d);
	while (runs != NULL)
		run_free(runs);
}

static void
find_bindir(void)
{
	char buf[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return;
	buf[n] = '\0';
	if ((slash = strrchr(buf, '/')) != NULL) {
		*slash = '\0';
		snprintf(bindir, sizeof(bindir), "%s", buf);
	}
}

int
main(int argc, char **argv)
{
	struct sockaddr_in a;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	struct sigaction sa;
	sigset_t ss;
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
	find_bindir();
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
	serve(d);
	shutdown_all(d);
	return 0;
}
