/* shell-proc.c - agentrt-shell's children: one-off commands and the ring
 *
 * A turn is the ring a user would type in bash, built by hand: four
 * stages joined by pipes, the last one's stdout piped back into the
 * first.  The stages get a process group of their own, so Ctrl-C on the
 * terminal reaches only the shell, which then ends the whole ring with
 * one kill().  The session writes its client events into a pipe whose
 * write end it alone inherits (as /dev/fd/N), so the events end exactly
 * when the session does.
 */
#include <config.h>

#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "err.h"
#include "json.h"
#include "ndjson.h"

#define NSTAGES		4
/* How long a stopped ring has between SIGTERM and SIGKILL. */
#define KILL_GRACE_MS	2000

void
args_add(struct args *a, const char *s)
{
	if (a->n >= SHELL_MAX_ARGS)
		art_die(ART_EXIT_USAGE, "too many arguments for %s", a->v[0]);
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

/* The file to exec for sibling name: in our directory, else on PATH. */
static const char *
sibling(const struct shell *sh, const char *name, char *buf, size_t n)
{
	if (sh->bindir[0] != '\0') {
		snprintf(buf, n, "%s/%s", sh->bindir, name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return name;
}

static void
xpipe(int p[2])
{
	if (pipe(p) == -1)
		art_die(ART_EXIT_FAIL, "pipe: %s", strerror(errno));
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
}

static void
xclose(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Forks and execs a with stdin in, stdout out, stderr err (-1: ours).
 * pgid -1 keeps our process group, 0 makes a new one.  keep is an fd the
 * child inherits as it is.  Every other fd we hold is close-on-exec.
 */
static pid_t
spawn(const struct shell *sh, struct args *a, int in, int out, int err,
    pid_t pgid, int keep)
{
	char buf[4200];
	const char *file = sibling(sh, a->v[0], buf, sizeof(buf));
	pid_t pid;

	fflush(stdout);
	if ((pid = fork()) == -1) {
		art_warn("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (pgid >= 0)
			setpgid(0, pgid);
		signal(SIGINT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if ((in >= 0 && dup2(in, STDIN_FILENO) == -1) ||
		    (out >= 0 && dup2(out, STDOUT_FILENO) == -1) ||
		    (err >= 0 && dup2(err, STDERR_FILENO) == -1))
			_exit(127);
		if (keep >= 0)
			fcntl(keep, F_SETFD, 0);
		execvp(file, (char *const *)a->v);
		art_warn("run %s: %s", file, strerror(errno));
		_exit(127);
	}
	/* Both sides set it, so a kill() right after fork finds the group. */
	if (pgid >= 0)
		setpgid(pid, pgid == 0 ? pid : pgid);
	return pid;
}

static int
wait_status(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

int
shell_run(const struct shell *sh, struct args *a, int outfd, bool quiet)
{
	int null = -1, st;
	pid_t pid;

	if (quiet && (null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		art_die(ART_EXIT_FAIL, "open /dev/null: %s", strerror(errno));
	pid = spawn(sh, a, -1, outfd, null, -1, -1);
	xclose(&null);
	if (pid == -1)
		return -1;
	st = wait_status(pid);
	if (st == 127)
		return -1;
	return st;
}

/* Reads fd to its end into a NUL-terminated string the caller frees. */
static char *
slurp(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *s = malloc(cap), *t;
	ssize_t r;

	if (s == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	for (;;) {
		if (cap - n < 2) {
			if ((t = realloc(s, cap *= 2)) == NULL)
				art_die(ART_EXIT_FAIL, "out of memory");
			s = t;
		}
		r = read(fd, s + n, cap - n - 1);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	s[n] = '\0';
	*len = n;
	return s;
}

/* Every JSON value in text[0..len), as one array; jv_invalid() if bad. */
static jv
parse_all(const char *text, size_t len)
{
	struct jv_parser *p = jv_parser_new(0);
	jv out = jv_array(), v;

	jv_parser_set_buf(p, text, (int)len, 0);
	while (jv_is_valid(v = jv_parser_next(p)))
		out = jv_array_append(out, v);
	if (jv_invalid_has_msg(jv_copy(v))) {
		jv_free(out);
		out = jv_invalid();
	}
	jv_free(v);
	jv_parser_free(p);
	return out;
}

jv
shell_json(const struct shell *sh, struct args *a, bool quiet)
{
	int p[2], null = -1, st;
	size_t len;
	char *text;
	jv out;
	pid_t pid;

	xpipe(p);
	if (quiet && (null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		art_die(ART_EXIT_FAIL, "open /dev/null: %s", strerror(errno));
	pid = spawn(sh, a, -1, p[1], null, -1, -1);
	xclose(&p[1]);
	xclose(&null);
	if (pid == -1) {
		close(p[0]);
		return jv_invalid();
	}
	text = slurp(p[0], &len);
	close(p[0]);
	st = wait_status(pid);
	out = st == 0 ? parse_all(text, len) : jv_invalid();
	free(text);
	return out;
}

/* --- the ring --------------------------------------------------------- */

struct ring {
	pid_t	 pids[NSTAGES];	/* decide llm tool session; 0: reaped */
	int	 status;		/* the session's */
	pid_t	 pgid;
	int	 evfd;			/* client events, from the session */
	int	 errfd;			/* every stage's stderr */
	char	 evpath[32];
	struct args a[NSTAGES];
};

static void
decide_args(const struct shell *sh, struct args *a)
{
	args_add(a, "agentrt-decide");
	if (sh->o->decide_jq != NULL)
		args_add(a, "--jq"), args_add(a, sh->o->decide_jq);
	if (sh->o->exec != NULL)
		args_add(a, "--exec"), args_add(a, sh->o->exec);
	if (sh->o->url != NULL)
		args_add(a, "--url"), args_add(a, sh->o->url);
}

static void
llm_args(const struct shell *sh, struct args *a)
{
	args_add(a, "agentrt-llm");
	if (sh->model[0] != '\0')
		args_add(a, "-m"), args_add(a, sh->model);
	if (sh->o->record != NULL)
		args_add(a, "--record"), args_add(a, sh->o->record);
	if (sh->o->replay != NULL)
		args_add(a, "--replay"), args_add(a, sh->o->replay);
}

static void
tool_args(const struct shell *sh, struct args *a)
{
	int i;

	args_add(a, "agentrt-tool");
	for (i = 0; i < sh->o->ntool_dirs; i++)
		args_add(a, "--tools"), args_add(a, sh->o->tool_dirs[i]);
	for (i = 0; i < sh->o->nmcps; i++)
		args_add(a, "--mcp"), args_add(a, sh->o->mcps[i]);
}

static void
session_args(const struct shell *sh, const struct turn *t, struct ring *r,
    struct args *a)
{
	int i;

	args_add(a, "agentrt-session");
	args_add(a, "run");
	if (sh->sid[0] != '\0')
		args_add(a, "-s"), args_add(a, sh->sid);
	else
		args_add(a, "-a"), args_add(a, sh->agent);
	for (i = 0; i < sh->o->nagent_dirs; i++)
		args_add(a, "--agents"), args_add(a, sh->o->agent_dirs[i]);
	if (sh->o->ntool_dirs > 0)
		args_add(a, "--tools"), args_add(a, sh->o->tool_dirs[0]);
	args_add(a, "--events"), args_add(a, r->evpath);
	if (t->message != NULL)
		args_add(a, "-m"), args_add(a, t->message);
	if (t->input != NULL)
		args_add(a, "--input"), args_add(a, t->input);
	if (t->resume != NULL)
		args_add(a, "--resume"), args_add(a, t->resume);
	if (t->payload != NULL)
		args_add(a, "--payload"), args_add(a, t->payload);
}

/* Starts the four stages; -1 (said) when one could not start. */
static int
ring_start(struct shell *sh, const struct turn *t, struct ring *r)
{
	int loop[2], p1[2], p2[2], p3[2], ev[2], er[2], i, ok = 0;

	xpipe(loop), xpipe(p1), xpipe(p2), xpipe(p3), xpipe(ev), xpipe(er);
	snprintf(r->evpath, sizeof(r->evpath), "/dev/fd/%d", ev[1]);
	decide_args(sh, &r->a[0]);
	llm_args(sh, &r->a[1]);
	tool_args(sh, &r->a[2]);
	session_args(sh, t, r, &r->a[3]);
	if ((r->pids[0] = spawn(sh, &r->a[0], loop[0], p1[1], er[1], 0,
	    -1)) > 0) {
		r->pgid = r->pids[0];
		ok = (r->pids[1] = spawn(sh, &r->a[1], p1[0], p2[1], er[1],
		    r->pgid, -1)) > 0 &&
		    (r->pids[2] = spawn(sh, &r->a[2], p2[0], p3[1], er[1],
		    r->pgid, -1)) > 0 &&
		    (r->pids[3] = spawn(sh, &r->a[3], p3[0], loop[1], er[1],
		    r->pgid, ev[1])) > 0;
	}
	xclose(&loop[0]), xclose(&loop[1]), xclose(&p1[0]), xclose(&p1[1]);
	xclose(&p2[0]), xclose(&p2[1]), xclose(&p3[0]), xclose(&p3[1]);
	xclose(&ev[1]), xclose(&er[1]);
	r->evfd = ev[0];
	r->errfd = er[0];
	fcntl(r->evfd, F_SETFL, O_NONBLOCK);
	fcntl(r->errfd, F_SETFL, O_NONBLOCK);
	if (!ok && r->pgid > 0)
		kill(-r->pgid, SIGTERM);
	for (i = 0; i < NSTAGES; i++)
		if (r->pids[i] < 0)
			r->pids[i] = 0;
	return ok ? 0 : -1;
}

/* Reaps the stages that ended; the number still running. */
static int
reap(struct ring *r, bool block)
{
	int i, st, live = 0;
	pid_t p;

	for (i = 0; i < NSTAGES; i++) {
		if (r->pids[i] == 0)
			continue;
		p = waitpid(r->pids[i], &st, block ? 0 : WNOHANG);
		if (p == -1 && errno == EINTR) {
			i--;
			continue;
		}
		if (p == 0) {
			live++;
			continue;
		}
		if (i == NSTAGES - 1)
			r->status = p == -1 ? ART_EXIT_FAIL : WIFEXITED(st) ?
			    WEXITSTATUS(st) : SHELL_STOPPED;
		r->pids[i] = 0;
	}
	return live;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Feeds what the events pipe holds to the renderer; false at its end. */
static bool
read_events(struct ring *r, struct art_ndjson_reader *rd, struct render *rn)
{
	struct art_err err;
	char buf[65536];
	ssize_t n;
	jv ev;
	enum art_ndjson_status st;

	n = read(r->evfd, buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n > 0 && art_ndjson_feed(rd, buf, (size_t)n, &err) == -1)
		art_die(ART_EXIT_FAIL, "out of memory");
	if (n <= 0)
		art_ndjson_feed_eof(rd);
	while ((st = art_ndjson_next(rd, &ev, &err)) != ART_NDJSON_AGAIN &&
	    st != ART_NDJSON_EOF) {
		if (st == ART_NDJSON_OK)
			render_event(rn, ev);
		else
			art_warn("events: %s", err.msg);
	}
	return n > 0;
}

/* Passes stage stderr on; false at its end. */
static bool
read_stderr(struct ring *r, struct render *rn)
{
	char buf[4096];
	ssize_t n = read(r->errfd, buf, sizeof(buf));

	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return true;
	render_stderr(rn, buf, n > 0 ? (size_t)n : 0, n <= 0);
	return n > 0;
}

/*
 * Ctrl-C stops the ring: SIGTERM to its group, SIGKILL after a grace.
 * shell_turn() then cancels the turn the ring left running.
 */
static void
stop(struct ring *r, int64_t *deadline, bool *killed)
{
	if (*deadline == 0) {
		kill(-r->pgid, SIGTERM);
		*deadline = now_ms() + KILL_GRACE_MS;
	} else if (!*killed && now_ms() >= *deadline) {
		kill(-r->pgid, SIGKILL);
		*killed = true;
	}
}

static void
ring_loop(struct ring *r, struct render *rn, bool *stopped)
{
	struct art_ndjson_reader *rd;
	struct pollfd pfd[2];
	int64_t deadline = 0;
	bool killed = false;
	int live = NSTAGES, n;

	if ((rd = art_ndjson_reader_new(-1, "events", ART_NDJSON_MAX_LINE,
	    0)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	while (r->evfd >= 0 || live > 0) {
		if (shell_sigint)
			*stopped = true, shell_sigint = 0;
		if (*stopped && live > 0)
			stop(r, &deadline, &killed);
		n = 0;
		if (r->evfd >= 0)
			pfd[n++] = (struct pollfd){ r->evfd, POLLIN, 0 };
		if (r->errfd >= 0)
			pfd[n++] = (struct pollfd){ r->errfd, POLLIN, 0 };
		if (poll(pfd, n, 50) > 0) {
			if (r->evfd >= 0 && !read_events(r, rd, rn))
				xclose(&r->evfd);
			if (r->errfd >= 0 && !read_stderr(r, rn))
				xclose(&r->errfd);
		}
		live = reap(r, false);
	}
	/* A tool a stage left behind may hold stderr open: stop here. */
	if (r->errfd >= 0) {
		read_stderr(r, rn);
		render_stderr(rn, "", 0, true);
		xclose(&r->errfd);
	}
	art_ndjson_reader_free(rd);
}

/*
 * A stopped turn is over: without this the session would take up the
 * turn again on the next run, and refuse the next message meanwhile.
 * What the turn recorded stays (agentrt-session cancel).
 */
static void
cancel(const struct shell *sh)
{
	struct args a = { .n = 0 };

	args_add(&a, "agentrt-session"), args_add(&a, "cancel");
	args_add(&a, sh->sid);
	shell_run(sh, &a, -1, false);
}

/* Is the session's turn still running with no ring to drive it? */
static bool
still_running(const struct shell *sh)
{
	struct args a = { .n = 0 };
	jv v, s;
	const char *st;
	bool running;

	args_add(&a, "agentrt-session"), args_add(&a, "show");
	args_add(&a, sh->sid);
	v = shell_json(sh, &a, true);
	if (!jv_is_valid(v)) {
		jv_free(v);
		return false;
	}
	s = jv_array_get(v, 0);
	st = art_json_str(&s, "status");
	running = st != NULL && strcmp(st, "running") == 0;
	jv_free(s);
	return running;
}

int
shell_turn(struct shell *sh, const struct turn *t, struct render *rn)
{
	struct ring r = { .status = ART_EXIT_FAIL, .evfd = -1, .errfd = -1 };
	bool stopped = false;

	shell_sigint = 0;
	if (ring_start(sh, t, &r) == -1) {
		reap(&r, true);
		xclose(&r.evfd), xclose(&r.errfd);
		return ART_EXIT_FAIL;
	}
	ring_loop(&r, rn, &stopped);
	if (rn->root[0] != '\0')
		snprintf(sh->sid, sizeof(sh->sid), "%s", rn->root);
	if (stopped && sh->sid[0] != '\0')
		cancel(sh);
	else if (r.status != ART_EXIT_OK && r.status != 3 &&
	    sh->sid[0] != '\0' && still_running(sh)) {
		/* A stage that died (a bad option, say) ends the ring early. */
		art_warn("the ring stopped before the turn ended; the turn is "
		    "cancelled");
		cancel(sh);
	}
	return stopped ? SHELL_STOPPED : r.status;
}
