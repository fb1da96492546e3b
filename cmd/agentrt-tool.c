/* agentrt-tool - answer tool.execute decisions by running tools
 *
 * The tools themselves, the job slots, the waiting queue, the MCP
 * servers and the tapes are lib/toolrun.c's.  This is the process around
 * it: options, one poll loop and the exit status.  The loop moves
 * everything at once: the input, the output queue (never blocked on, so
 * a ring cannot deadlock), every running tool's pipes and the servers',
 * and a self-pipe the SIGCHLD handler writes to, with a timeout to the
 * nearest deadline.  Lines that are not ours are passed on byte for byte.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jv.h>

#include "agent.h"
#include "buf.h"
#include "clock.h"
#include "diag.h"
#include "err.h"
#include "input.h"
#include "mcp.h"
#include "ndjson.h"
#include "opt.h"
#include "outq.h"
#include "store.h"
#include "toolrun.h"
#include "tools.h"
#include "tooltape.h"

extern char **environ;

#define MAX_OUTPUT_MAX	((size_t)1 << 30)
#define JOBS_PER_CPU	4	/* the default -j: tools mostly wait on I/O */
#define JOBS_MAX	1000000
#define CPU_MAX		1000000000	/* seconds, as --timeout */
#define FILES_MAX	(1 << 20)	/* Linux's default fs.nr_open */
#define POLL_OURS	3		/* wake pipe, input, output */

struct opts {
	char		**dirs;		/* NULL-terminated, searched in order */
	const char	 *cwd;
	int64_t		  timeout_ms;
	int64_t		  kill_grace_ms;
	size_t		  jobs;		/* tools running at most; 0: any */
	struct art_tools_limits limits;
	size_t		  max_output;
	size_t		  max_line;
	bool		  list;
	char		**files;	/* operands; NULL-terminated */
	const char	**mcp;		/* --mcp specs; NULL-terminated */
	size_t		  nmcp, mcp_cap;
	const char	**pass;		/* --env names; NULL-terminated */
	size_t		  npass, pass_cap;
	const char	 *record;	/* --record FILE */
	const char	 *replay;	/* --replay FILE */
};

struct stage {
	const struct opts	 *o;
	struct art_clock	  clock;
	struct art_outq		 *out;
	struct art_input	 *in;
	struct art_toolrun	 *tr;
	struct pollfd		 *pfds;
	size_t			  npfds;
	int			  wake[2];	/* the SIGCHLD self-pipe */
	struct art_tooltape	 *tape;		/* --replay's; NULL: none */
	int			  record_fd;	/* --record's; -1: none */
};

/*
 * Set by the signal handlers: the write end of the self-pipe (written once
 * before the handlers are installed) and the signal that asks us to stop.
 */
static volatile sig_atomic_t wake_fd = -1;
static volatile sig_atomic_t stop_signal;

enum { OPT_CWD = 256, OPT_TIMEOUT, OPT_KILL_GRACE, OPT_CPU, OPT_MEMORY,
	OPT_FILES, OPT_MAX_OUTPUT, OPT_MAX_LINE, OPT_MCP, OPT_RECORD,
	OPT_REPLAY, OPT_ENV };

static const struct art_opt options[] = {
	{ "tools", 't', "DIR", ART_OPT_DIR, NULL, NULL, ART_OPT_MANY,
	    "look for tools in DIR; repeat to search several in order "
	    "(default: $AGENTRT_TOOLS, else ./tools)" },
	{ "mcp", OPT_MCP, "'[NAME=]COMMAND ARG...'", ART_OPT_TEXT, NULL, NULL,
	    ART_OPT_MANY,
	    "start an MCP server over stdio and serve its tools, as NAME__TOOL "
	    "with NAME=; repeatable" },
	{ "env", OPT_ENV, "VAR", ART_OPT_ENV, NULL, NULL, ART_OPT_MANY,
	    "pass the variable VAR, when set, to every tool and MCP server; "
	    "repeatable (never a provider key)" },
	{ "record", OPT_RECORD, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "append each call's name, arguments and result or error to the "
	    "tape FILE" },
	{ "replay", OPT_REPLAY, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "answer each call from the tape FILE, matched by name and "
	    "arguments, running no tool" },
	{ "cwd", OPT_CWD, "DIR", ART_OPT_DIR, NULL, NULL, 0,
	    "run tools in DIR (default: the current directory)" },
	{ "jobs", 'j', "N", ART_OPT_TEXT, NULL, NULL, 0,
	    "run at most N executable tools at once, the other calls waiting "
	    "in turn; 0: no limit (default: 4 per CPU)" },
	{ "timeout", OPT_TIMEOUT, "SECS", ART_OPT_TEXT, NULL, NULL, 0,
	    "time limit of a call whose trigger has no deadline "
	    "(default: 120)" },
	{ "kill-grace", OPT_KILL_GRACE, "MS", ART_OPT_TEXT, NULL, NULL, 0,
	    "wait MS milliseconds between SIGTERM and SIGKILL "
	    "(default: 2000)" },
	{ "cpu", OPT_CPU, "SECS", ART_OPT_TEXT, NULL, NULL, 0,
	    "limit each tool process to SECS seconds of CPU time "
	    "(default: inherited)" },
	{ "memory", OPT_MEMORY, "BYTES", ART_OPT_TEXT, NULL, NULL, 0,
	    "limit each tool process's address space to BYTES, K, M or G "
	    "allowed (default: inherited)" },
	{ "files", OPT_FILES, "N", ART_OPT_TEXT, NULL, NULL, 0,
	    "limit each tool process to N open files (default: inherited)" },
	{ "max-output", OPT_MAX_OUTPUT, "BYTES", ART_OPT_TEXT, NULL, NULL, 0,
	    "keep at most BYTES of a tool's output (default: 1048576)" },
	{ "max-line", OPT_MAX_LINE, "BYTES", ART_OPT_TEXT, NULL, NULL, 0,
	    "longest input line (default: 67108864)" },
	{ "list", 'l', NULL, ART_OPT_TEXT, NULL, NULL, ART_OPT_EXITS,
	    "print the tools' declarations and exit" },
	ART_OPT_STANDARD
};

static _Noreturn void
help(void)
{
	fputs(
"Usage: agentrt-tool [-t DIR]... [OPTIONS] [FILE...]\n"
"       agentrt-tool [-t DIR]... --list\n"
"\n"
"Answer tool.execute decision requests by running the named tool: an\n"
"executable NAME or a jq program NAME.jq in the tools directories, or a\n"
"tool of an MCP server.\n"
"Other lines pass through unchanged.\n"
"\n"
"Options:\n", stdout);
	art_opt_help(stdout, options, 24);
	fputs(
"\n"
"Exit status: 0 end of input, 1 failure, 2 usage error.\n", stdout);
	art_opt_exit();
}

/* The version, and those of the libraries this program links. */
static _Noreturn void
version(void)
{
	char lmdb[32];
	const char *const libs[] = { "libjq", ART_JQ_VERSION, "LMDB",
	    art_store_lmdb_version(lmdb, sizeof(lmdb)), NULL };

	art_opt_version("agentrt-tool", PACKAGE_VERSION, libs);
}

static _Noreturn void
usage(void)
{
	fputs("usage: agentrt-tool [-t DIR]... [OPTIONS] [FILE...]\n"
	    "Try 'agentrt-tool --help' for more information.\n", stderr);
	exit(ART_EXIT_USAGE);
}

/* --completions: the options, for the shells; no command to name. */
static _Noreturn void
completions(const char *context)
{
	art_opt_completions(options, context, usage);
}

/* --- options ---------------------------------------------------------- */

static void
check_dir(const char *opt, const char *dir)
{
	struct stat sb;

	if (stat(dir, &sb) == -1)
		art_die(ART_EXIT_USAGE, "bad %s '%s': %s", opt, dir,
		    strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		art_die(ART_EXIT_USAGE, "bad %s '%s': not a directory", opt,
		    dir);
}

/* A whole number in [min, max], or a usage error. */
static unsigned long long
parse_count(const char *opt, const char *s, unsigned long long min,
    unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v < min ||
	    v > max)
		art_die(ART_EXIT_USAGE, "bad %s '%s': expected a whole number "
		    "from %llu to %llu", opt, s, min, max);
	return v;
}

/* Seconds, fractions allowed, as milliseconds: at least 1, at most 1e9 s. */
static int64_t
parse_secs(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 ||
	    !isfinite(v) || v * 1000 < 1 || v > 1e9)
		art_die(ART_EXIT_USAGE, "bad --timeout '%s': expected seconds "
		    "from 0.001 to 1000000000", s);
	return (int64_t)(v * 1000 + 0.5);
}


/* JOBS_PER_CPU for each processor online, or for one if that is unknown. */
static size_t
default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 1 ? (size_t)n * JOBS_PER_CPU : JOBS_PER_CPU;
}

/* An --mcp spec, checked now so a bad one reads nothing. */
static void
add_mcp(struct opts *o, const char *spec)
{
	struct art_err err;
	char *prefix, **argv = art_mcp_argv(spec, &prefix, &err);

	if (argv == NULL) {
		art_warn("%s", err.msg);
		usage();
	}
	art_mcp_argv_free(argv);
	free(prefix);
	if (art_grow(&o->mcp, &o->mcp_cap, o->nmcp + 2, sizeof(*o->mcp)) ==
	    -1)
		art_die(ART_EXIT_FAIL, "out of memory");
	o->mcp[o->nmcp++] = spec;
	o->mcp[o->nmcp] = NULL;
}

/* An --env name, refused now (a provider key, a bad name) so none runs. */
static void
add_pass(struct opts *o, const char *name)
{
	struct art_err err;

	if (art_tools_env_check(name, &err) == -1)
		art_die(ART_EXIT_USAGE, "bad --env: %s", err.msg);
	if (art_grow(&o->pass, &o->pass_cap, o->npass + 2, sizeof(*o->pass)) ==
	    -1)
		art_die(ART_EXIT_FAIL, "out of memory");
	o->pass[o->npass++] = name;
	o->pass[o->npass] = NULL;
}

/* --- the run ---------------------------------------------------------- */

/*
 * A failed write ends the run, and the tools with it.  A reader that is
 * gone ends it as it ends every other filter: quietly, of SIGPIPE (which
 * was ignored only so that a dead MCP server cannot kill us).
 */
static _Noreturn void
fatal(struct stage *st, const struct art_err *err)
{
	struct sigaction sa;

	if (st->tr != NULL)
		art_toolrun_stop(st->tr);
	if (art_err_is(err, "epipe")) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGPIPE, &sa, NULL);
		raise(SIGPIPE);
		_exit(128 + SIGPIPE);
	}
	art_die(ART_EXIT_FAIL, "%s", art_err_is(err, "nomem") ?
	    "out of memory" : err->msg);
}

static void
say(void *ctx, const char *msg)
{
	(void)ctx;
	art_warn("%s", msg);
}

/* Takes every line the reader has. */
static void
drain(struct stage *st)
{
	struct art_ndjson_reader *rd = art_input_reader(st->in);
	enum art_ndjson_status s;
	struct art_err err;
	const char *raw;
	size_t len;
	jv rec;

	while ((s = art_ndjson_next(rd, &rec, &err)) != ART_NDJSON_AGAIN &&
	    s != ART_NDJSON_EOF) {
		raw = art_ndjson_raw(rd, &len);
		if (s == ART_NDJSON_OK) {
			if (art_toolrun_line(st->tr, rec, raw, len,
			    art_ndjson_name(rd), art_ndjson_lineno(rd),
			    &err) == -1)
				fatal(st, &err);
		} else if (s == ART_NDJSON_RAW) {	/* not a tool.execute */
			if (art_outq_push_raw(st->out, raw, len, &err) == -1 ||
			    art_outq_push_raw(st->out, "\n", 1, &err) == -1)
				fatal(st, &err);
		} else {
			art_warn("%s:%zu: %s", art_ndjson_name(rd),
			    art_ndjson_lineno(rd), err.msg);
			if (art_outq_push(st->out, art_ndjson_bad_line(rd,
			    &err), &err) == -1)
				fatal(st, &err);
		}
	}
}

/* Opens the next input that opens, naming each that does not. */
static void
open_next(struct stage *st)
{
	struct art_err err;

	while (art_input_open(st->in, &err) == -1) {
		if (art_err_is(&err, "nomem"))
			fatal(st, &err);
		art_warn("%s", err.msg);
	}
}

/* One read of the current input (poll said it is ready, so no block). */
static void
read_input(struct stage *st)
{
	struct art_err err;
	int rc;

	if ((rc = art_input_read(st->in, false, &err)) == -1 &&
	    art_err_is(&err, "nomem"))
		fatal(st, &err);
	if (rc == -1)
		art_warn("%s", err.msg);
	drain(st);
	if (rc <= 0)
		open_next(st);
}

/*
 * Descriptors we inherited past stderr (a shell's, a test harness's) are no
 * business of the tools: mark them close-on-exec.  Our own are already.
 */
static void
cloexec_inherited(void)
{
	struct dirent *de;
	long fd, max;
	char *end;
	DIR *d;

	if ((d = opendir("/proc/self/fd")) != NULL) {
		while ((de = readdir(d)) != NULL) {
			fd = strtol(de->d_name, &end, 10);
			if (*end == '\0' && fd > 2 && fd <= INT_MAX)
				fcntl((int)fd, F_SETFD, FD_CLOEXEC);
		}
		closedir(d);
		return;
	}
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		fcntl((int)fd, F_SETFD, FD_CLOEXEC);
}

static void
on_signal(int sig)
{
	int e = errno;
	ssize_t r;

	if (sig != SIGCHLD)
		stop_signal = sig;
	if (wake_fd >= 0)
		r = write(wake_fd, "", 1);	/* full pipe: already awake */
	(void)r;
	errno = e;
}

static void
setup_signals(struct stage *st)
{
	struct sigaction sa;
	int i;

	if (pipe(st->wake) == -1)
		art_die(ART_EXIT_FAIL, "pipe: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		fcntl(st->wake[i], F_SETFD, FD_CLOEXEC);
		fcntl(st->wake[i], F_SETFL, fcntl(st->wake[i], F_GETFL) |
		    O_NONBLOCK);
	}
	wake_fd = st->wake[1];
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);	/* a gone reader is EPIPE instead */
}

/* Stopped by a signal: end the tools, then die of the signal. */
static _Noreturn void
stop(struct stage *st)
{
	struct sigaction sa;
	int sig = stop_signal;

	art_toolrun_stop(st->tr);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* The pollfds: wake pipe, input, output, then the toolrun's. */
static size_t
fill_pollfds(struct stage *st)
{
	size_t need;
	struct pollfd *p;

	while ((need = POLL_OURS + art_toolrun_pollfds(st->tr, st->pfds +
	    POLL_OURS, st->npfds - POLL_OURS)) > st->npfds)
		if (art_grow(&st->pfds, &st->npfds, need,
		    sizeof(*st->pfds)) == -1)
			art_die(ART_EXIT_FAIL, "out of memory");
	p = st->pfds;
	p[0] = (struct pollfd){ .fd = st->wake[0], .events = POLLIN };
	p[1] = (struct pollfd){ .fd = art_outq_gone(st->out) ? -1 :
	    art_input_fd(st->in), .events = POLLIN };
	p[2] = (struct pollfd){ .fd = art_outq_pending(st->out) > 0 ?
	    art_outq_fd(st->out) : -1, .events = POLLOUT };
	return need;
}

static void
wait_output(struct stage *st)
{
	struct pollfd p = { .fd = art_outq_fd(st->out), .events = POLLOUT };
	struct art_err err;

	while (art_outq_pending(st->out) > 0) {
		if (stop_signal != 0)
			stop(st);
		if (poll(&p, 1, -1) == -1 && errno != EINTR)
			art_die(ART_EXIT_FAIL, "poll: %s", strerror(errno));
		if (art_outq_flush(st->out, &err) == -1)
			fatal(st, &err);
	}
}

/*
 * The reader (the engine) is gone: what would go to it is dropped, no
 * more input is read, and the tools running are let finish, each within
 * its --timeout, so the outbox keeps their results for the engine that
 * resumes the session.  Then the stage ends as a filter whose reader
 * went does: of SIGPIPE.
 */
static void
reader_gone(struct stage *st)
{
	static int said;
	size_t n = art_toolrun_running(st->tr);

	if (said++ > 0)
		return;
	art_toolrun_drop_waiting(st->tr);
	if (n > 0)
		art_warn("the ring's next stage is gone: %zu tool call%s still "
		    "running %s let finish, %s result%s kept for the run that "
		    "resumes %s session", n, n == 1 ? "" : "s",
		    n == 1 ? "is" : "are", n == 1 ? "its" : "their",
		    n == 1 ? "" : "s", n == 1 ? "its" : "their");
}

static _Noreturn void
gone(struct stage *st)
{
	struct art_err err;

	art_err_set(&err, "epipe", "write: %s", strerror(EPIPE));
	fatal(st, &err);
}

static void
loop(struct stage *st)
{
	struct art_err err;
	char drop[256];
	size_t n;

	while (art_outq_gone(st->out) ? art_toolrun_running(st->tr) > 0 :
	    art_input_fd(st->in) >= 0 || art_toolrun_active(st->tr) > 0) {
		if (stop_signal != 0)
			stop(st);
		if (art_outq_gone(st->out))
			reader_gone(st);
		n = fill_pollfds(st);
		if (poll(st->pfds, (nfds_t)n, art_toolrun_timeout(st->tr)) ==
		    -1 && errno != EINTR)
			art_die(ART_EXIT_FAIL, "poll: %s", strerror(errno));
		if (st->pfds[0].revents != 0)
			while (read(st->wake[0], drop, sizeof(drop)) > 0)
				;
		if (st->pfds[2].revents != 0 &&
		    art_outq_flush(st->out, &err) == -1)
			fatal(st, &err);
		if (art_toolrun_work(st->tr, st->pfds + POLL_OURS,
		    n - POLL_OURS, &err) == -1)
			fatal(st, &err);
		if (art_input_fd(st->in) >= 0 && st->pfds[1].revents != 0 &&
		    !art_outq_gone(st->out))
			read_input(st);
	}
	if (art_outq_gone(st->out))
		gone(st);
	wait_output(st);
}

/* The toolrun of the options; its MCP servers are started here. */
static struct art_toolrun *
toolrun(struct stage *st)
{
	const struct opts *o = st->o;
	struct art_toolrun_conf c = {
		.dirs = o->dirs, .env = environ, .cwd = o->cwd,
		.timeout_ms = o->timeout_ms, .kill_grace_ms = o->kill_grace_ms,
		.jobs = o->jobs, .limits = o->limits,
		.max_output = o->max_output, .mcp = o->mcp, .nmcp = o->nmcp,
		.pass = o->pass,
		.replay = st->tape, .record_fd = st->record_fd,
		.record = o->record, .clock = &st->clock, .out = st->out,
		.warn = say,
	};
	struct art_toolrun *tr;
	struct art_err err;

	if ((tr = art_toolrun_new(&c, &err)) == NULL)
		art_die(art_err_is(&err, "bad_mcp") ? ART_EXIT_USAGE :
		    ART_EXIT_FAIL, "%s", art_err_is(&err, "nomem") ?
		    "out of memory" : err.msg);
	return tr;
}

/* One line of --list; nbad counts the declarations that could not be read. */
static void
declare(void *ctx, jv decl, const char *problem)
{
	size_t *nbad = ctx;
	struct art_err err;

	if (problem != NULL) {
		art_warn("%s", problem);
		++*nbad;
	}
	if (art_ndjson_write(stdout, decl, &err) == -1)
		art_die(ART_EXIT_FAIL, "%s", err.msg);
}

/* --list: each tool's declaration, one line each. */
static int
list(const struct opts *o)
{
	struct stage st = { .o = o, .record_fd = -1 };
	struct art_err err;
	size_t nbad = 0;

	st.tr = toolrun(&st);
	if (art_toolrun_declare(st.tr, declare, &nbad, &err) == -1)
		art_die(ART_EXIT_FAIL, "out of memory");
	art_toolrun_free(st.tr);
	return nbad > 0 ? ART_EXIT_FAIL : ART_EXIT_OK;
}

/* The tape to replay and the one to record, as the options name them. */
static void
open_tapes(struct stage *st)
{
	const struct opts *o = st->o;
	struct art_err err;

	if (o->replay != NULL &&
	    (st->tape = art_tooltape_load(o->replay, &err)) == NULL)
		art_die(art_err_is(&err, "nomem") ? ART_EXIT_FAIL :
		    ART_EXIT_USAGE, "%s", art_err_is(&err, "nomem") ?
		    "out of memory" : err.msg);
	if (o->record != NULL && (st->record_fd = open(o->record,
	    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) == -1)
		art_die(ART_EXIT_USAGE, "--record '%s': %s", o->record,
		    strerror(errno));
}

static int
run(const struct opts *o)
{
	struct stage st = { .o = o, .wake = { -1, -1 }, .record_fd = -1 };
	struct art_err err;
	int status;

	if (art_clock_init(&st.clock, getenv("AGENTRT_CLOCK"), &err) == -1)
		art_die(ART_EXIT_USAGE, "bad AGENTRT_CLOCK: %s", err.msg);
	if ((st.out = art_outq_new(1)) == NULL ||
	    (st.in = art_input_new(o->files, o->max_line,
	    ART_NDJSON_REQUIRE_TYPE, "open")) == NULL ||
	    (st.pfds = calloc(st.npfds = POLL_OURS + 64,
	    sizeof(*st.pfds))) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	art_input_set_filter(st.in, art_toolrun_wants, NULL);
	art_outq_drop_when_gone(st.out);
	open_tapes(&st);
	cloexec_inherited();
	setup_signals(&st);
	st.tr = toolrun(&st);
	open_next(&st);
	loop(&st);
	art_toolrun_free(st.tr);
	status = art_input_failed(st.in) ? ART_EXIT_FAIL : ART_EXIT_OK;
	art_input_free(st.in);
	art_outq_free(st.out);
	art_tooltape_free(st.tape);
	if (st.record_fd != -1)
		close(st.record_fd);
	free(st.pfds);
	return status;
}

int
main(int argc, char *argv[])
{
	struct opts o = {
		.timeout_ms = ART_TOOLS_TIMEOUT_MS,
		.kill_grace_ms = ART_TOOLS_KILL_GRACE_MS,
		.max_output = ART_TOOLS_MAX_OUTPUT,
		.max_line = ART_NDJSON_MAX_LINE,
	};
	struct option longopts[sizeof(options) / sizeof(options[0])];
	char shortopts[3 * sizeof(options) / sizeof(options[0])];
	const char **given = NULL;	/* --tools, in order */
	size_t ngiven = 0, capgiven = 0, i;
	struct art_err err;
	int c, status;

	art_diag_init(argv[0]);
	o.jobs = default_jobs();
	art_opt_longopts(options, longopts);
	art_opt_shortopts(options, "", NULL, shortopts, sizeof(shortopts));
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	    -1) {
		switch (c) {
		case 't':
			if (art_grow(&given, &capgiven, ngiven + 1,
			    sizeof(*given)) == -1)
				art_die(ART_EXIT_FAIL, "out of memory");
			given[ngiven++] = optarg;
			break;
		case OPT_CWD:
			check_dir("--cwd", optarg);
			o.cwd = optarg;
			break;
		case OPT_MCP:
			add_mcp(&o, optarg);
			break;
		case OPT_ENV:
			add_pass(&o, optarg);
			break;
		case OPT_RECORD:
			o.record = optarg;
			break;
		case OPT_REPLAY:
			o.replay = optarg;
			break;
		case 'j':
			o.jobs = parse_count("--jobs", optarg, 0, JOBS_MAX);
			break;
		case OPT_TIMEOUT:
			o.timeout_ms = parse_secs(optarg);
			break;
		case OPT_KILL_GRACE:
			o.kill_grace_ms = (int64_t)parse_count("--kill-grace",
			    optarg, 0, 86400000);
			break;
		case OPT_CPU:
			o.limits.cpu_secs = parse_count("--cpu", optarg, 1,
			    CPU_MAX);
			break;
		case OPT_MEMORY:
			o.limits.memory = art_opt_size_arg("--memory", optarg);
			break;
		case OPT_FILES:
			o.limits.files = parse_count("--files", optarg, 1,
			    FILES_MAX);
			break;
		case OPT_MAX_OUTPUT:
			o.max_output = parse_count("--max-output", optarg, 1,
			    MAX_OUTPUT_MAX);
			break;
		case OPT_MAX_LINE:
			o.max_line = art_opt_size_arg("--max-line", optarg);
			break;
		case 'l': o.list = true; break;
		case 'h': help();
		case 'V': version();
		case ART_OPT_COMPLETIONS: completions(argv[optind]);
		default:  usage();
		}
	}
	if (o.list && optind < argc)
		usage();
	/* A replay looks at no tools directory, so it need not exist. */
	for (i = 0; i < ngiven && (o.replay == NULL || o.list); i++)
		check_dir("--tools", given[i]);
	if ((o.dirs = art_agent_tool_dirs(given, ngiven,
	    getenv("AGENTRT_TOOLS"), &err)) == NULL)
		art_die(ART_EXIT_FAIL, "%s", err.msg);
	o.files = argv + optind;
	status = o.list ? list(&o) : run(&o);
	free(o.dirs);
	free(given);
	free(o.mcp);
	free(o.pass);
	return status;
}
