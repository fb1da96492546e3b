/* shell-proc.c - agentrt-shell's children: one-off commands and the ring
 *
 * A turn is the ring a user would type in bash, built by
 * art_ring_start(): four stages joined by pipes, the last one's stdout
 * piped back into the first.  The stages get a process group of their
 * own, so Ctrl-C on the terminal reaches only the shell, which then ends
 * the whole ring with one signal.  The session writes its client events into a pipe whose
 * write end it alone inherits (as /dev/fd/N), so the events end exactly
 * when the session does.
 */
#include <config.h>

#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "buf.h"
#include "clock.h"
#include "diag.h"
#include "err.h"
#include "json.h"
#include "ndjson.h"
#include "ring.h"
#include "spawn.h"

/* How long a stopped ring has between SIGTERM and SIGKILL. */
#define KILL_GRACE_MS	2000

void
args_add(struct art_strvec *a, const char *s)
{
	if (art_strvec_push(a, s) == -1)
		art_die(ART_EXIT_FAIL, "out of memory");
}

static void
xpipe(int p[2])
{
	if (art_spawn_pipe(p) == -1)
		art_die(ART_EXIT_FAIL, "pipe: %s", strerror(errno));
}

static void
xclose(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Fills s to run sibling a (art_ring_sibling()), buf holding its file. */
static void
stage_of(const struct shell *sh, const struct art_strvec *a, char *buf,
    size_t n, struct art_spawn *s)
{
	memset(s, 0, sizeof(*s));
	s->file = art_ring_sibling(sh->bindir, a->v[0], buf, n);
	s->argv = a->v;
}

/*
 * Starts a one-off command in our process group, so Ctrl-C reaches it:
 * stdout as out says (a pipe's end then in *pipefd), stderr ours or, when
 * quiet, /dev/null.  Its pid, or -1, said unless quiet.
 */
static pid_t
start(const struct shell *sh, const struct art_strvec *a,
    struct art_spawn_io out, bool quiet, int *pipefd)
{
	char buf[4200];
	struct art_spawn s;
	struct art_child ch;
	struct art_err err;

	stage_of(sh, a, buf, sizeof(buf), &s);
	s.io[1] = out;
	s.io[2].how = quiet ? ART_SPAWN_NULL : ART_SPAWN_INHERIT;
	fflush(stdout);		/* its output comes after ours */
	if (art_spawn(&s, &ch, &err) == -1) {
		if (!quiet)
			art_warn("%s", err.msg);
		return -1;
	}
	if (pipefd != NULL)
		*pipefd = ch.fd[1];
	return ch.pid;
}

static int
wait_status(pid_t pid)
{
	int st = art_spawn_wait(pid);

	if (st == -1)
		return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

int
shell_run(const struct shell *sh, struct art_strvec *a, int outfd,
    bool quiet)
{
	struct art_spawn_io out = { ART_SPAWN_INHERIT, -1 };
	int st;
	pid_t pid;

	if (outfd >= 0)
		out = (struct art_spawn_io){ ART_SPAWN_FD, outfd };
	pid = start(sh, a, out, quiet, NULL);
	art_strvec_release(a);
	if (pid == -1)
		return -1;
	st = wait_status(pid);
	if (st == 127)
		return -1;
	return st;
}

/*
 * Reads fd to its end into a NUL-terminated string the caller frees; a
 * read error ends it early, as end of file would.
 */
static char *
slurp(int fd, size_t *len)
{
	struct art_buf b = ART_BUF_INIT;
	struct art_err err;
	char *s;

	if (art_buf_read_fd(&b, fd, 0, "output", &err) == -1 &&
	    art_err_is(&err, "nomem"))
		art_die(ART_EXIT_FAIL, "out of memory");
	if ((s = art_buf_detach(&b, len)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
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
shell_json(const struct shell *sh, struct art_strvec *a, bool quiet)
{
	struct art_spawn_io io = { ART_SPAWN_PIPE, -1 };
	int fd = -1, st;
	size_t len;
	char *text;
	jv out;
	pid_t pid;

	pid = start(sh, a, io, quiet, &fd);
	art_strvec_release(a);
	if (pid == -1)
		return jv_invalid();
	text = slurp(fd, &len);
	close(fd);
	st = wait_status(pid);
	out = st == 0 ? parse_all(text, len) : jv_invalid();
	free(text);
	return out;
}

/* --- the ring --------------------------------------------------------- */

struct ring {
	struct art_ring	 ring;		/* decide llm tool session */
	int	 evfd;			/* client events, from the session */
	int	 errfd;			/* every stage's stderr */
	char	 evpath[32];
	char	 sysdir[4096];		/* -S's agent file's directory, or "" */
	char	 sysfile[4400];
};

jv
shell_builtin_config(const struct shell *sh, struct art_err *err)
{
	char *dirs[SHELL_MAX_DIRS + 1];
	int i;

	for (i = 0; i < sh->o->ntool_dirs; i++)
		dirs[i] = (char *)sh->o->tool_dirs[i];
	dirs[i] = NULL;
	return art_agent_chat(sh->model, dirs, err);
}

/*
 * A turn that makes a session of the built-in chat agent, or with -S:
 * the agent's file (the built-in's config, or the agent file with
 * "system" replaced), written as NAME.json in a directory of its own
 * that session run looks in first, so the new session's config holds
 * it.  0, or -1 (said).
 */
static int
system_agent(const struct shell *sh, struct ring *r)
{
	const char *tmp = getenv("TMPDIR");
	struct art_err err;
	jv cfg, text;
	FILE *f;
	int bad, n, fits;

	if ((sh->o->system == NULL && !sh->builtin) || sh->sid[0] != '\0')
		return 0;
	cfg = sh->builtin ? shell_builtin_config(sh, &err) :
	    art_agent_load(sh->dirs, sh->ndirs, sh->agent, &err);
	if (!jv_is_valid(cfg)) {
		jv_free(cfg);
		art_warn("%s", err.msg);
		return -1;
	}
	n = snprintf(r->sysdir, sizeof(r->sysdir) - 6, "%s/agentrt-shell.",
	    tmp != NULL && *tmp == '/' ? tmp : "/tmp");
	fits = n >= 0 && (size_t)n < sizeof(r->sysdir) - 6;
	/* mkdtemp's template: six of 'X', which it replaces. */
	if (fits) {
		memset(r->sysdir + n, 'X', 6);
		r->sysdir[n + 6] = '\0';
	} else
		errno = ENAMETOOLONG;
	if (!fits || mkdtemp(r->sysdir) == NULL) {
		art_warn("make a directory for the new session's agent file: "
		    "%s", strerror(errno));
		r->sysdir[0] = '\0';
		jv_free(cfg);
		return -1;
	}
	snprintf(r->sysfile, sizeof(r->sysfile), "%s/%s.json", r->sysdir,
	    sh->agent);
	if (sh->o->system != NULL)
		cfg = jv_object_set(cfg, jv_string("system"),
		    jv_string(sh->o->system));
	text = jv_dump_string(cfg, 0);
	if ((f = fopen(r->sysfile, "w")) == NULL) {
		art_warn("write '%s': %s", r->sysfile, strerror(errno));
		jv_free(text);
		return -1;
	}
	fputs(jv_string_value(text), f);
	bad = ferror(f) | fclose(f);
	jv_free(text);
	if (bad) {
		art_warn("write '%s': %s", r->sysfile, strerror(errno));
		return -1;
	}
	return 0;
}

static void
system_agent_remove(struct ring *r)
{
	if (r->sysdir[0] == '\0')
		return;
	unlink(r->sysfile);
	rmdir(r->sysdir);
	r->sysdir[0] = '\0';
}

/* The ring's command lines for turn t: 0, or -1 (said). */
static int
ring_cmd(const struct shell *sh, const struct turn *t, const struct ring *r,
    struct art_ring_cmd *cmd)
{
	const char *dirs[SHELL_MAX_DIRS + 1];
	struct art_ring_opts o = {
		.bindir = sh->bindir,
		.decide_jq = sh->o->decide_jq, .decide_exec = sh->o->exec,
		.decide_url = sh->o->url,
		.model = sh->model[0] != '\0' ? sh->model : NULL,
		.llm_record = sh->o->record, .llm_replay = sh->o->replay,
		.tool_dirs = sh->o->tool_dirs,
		.ntool_dirs = (size_t)sh->o->ntool_dirs,
		.mcps = sh->o->mcps, .nmcps = (size_t)sh->o->nmcps,
		.tool_envs = sh->o->tool_envs,
		.ntool_envs = (size_t)sh->o->ntool_envs,
		/* -v: the new session's id, which names the turn's root. */
		.verb = "run", .verbose = true, .agent_dirs = dirs,
		.events = r->evpath,
		.message = t->message, .input = t->input, .resume = t->resume,
		.payload = t->payload,
	};
	struct art_err err;
	int i;

	if (sh->sid[0] != '\0')
		o.sid = sh->sid;
	else
		o.agent = sh->agent;
	if (r->sysdir[0] != '\0')
		dirs[o.nagent_dirs++] = r->sysdir;
	for (i = 0; i < sh->o->nagent_dirs; i++)
		dirs[o.nagent_dirs++] = sh->o->agent_dirs[i];
	if (art_ring_cmd_make(cmd, &o, &err) == -1) {
		art_warn("%s", err.msg);
		return -1;
	}
	return 0;
}

/* Starts the four stages; -1 (said) when one could not start. */
static int
ring_start(struct shell *sh, const struct turn *t, struct ring *r)
{
	struct art_ring_cmd cmd = ART_RING_CMD_INIT;
	struct art_spawn s[ART_RING_STAGES];
	struct art_err err;
	int ev[2], er[2], i, rc;

	xpipe(ev), xpipe(er);
	snprintf(r->evpath, sizeof(r->evpath), "/dev/fd/%d", ev[1]);
	if ((rc = ring_cmd(sh, t, r, &cmd)) == 0) {
		art_ring_cmd_spawn(&cmd, s);
		for (i = 0; i < ART_RING_STAGES; i++)
			s[i].io[2] = (struct art_spawn_io){ ART_SPAWN_FD,
			    er[1] };
		s[ART_RING_SESSION].keep = &ev[1];
		s[ART_RING_SESSION].nkeep = 1;
		fflush(stdout);
		rc = art_ring_start(&r->ring, s, ART_RING_STAGES, true, &err);
		if (rc == -1)
			art_warn("%s", err.msg);
		art_ring_cmd_release(&cmd);
	}
	xclose(&ev[1]), xclose(&er[1]);
	r->evfd = ev[0];
	r->errfd = er[0];
	fcntl(r->evfd, F_SETFL, O_NONBLOCK);
	fcntl(r->errfd, F_SETFL, O_NONBLOCK);
	return rc;
}

/* The session's exit status, once reaped. */
static int
session_status(const struct ring *r)
{
	int st = r->ring.status[ART_RING_SESSION];

	if (st == -1)
		return ART_EXIT_FAIL;
	return WIFEXITED(st) ? WEXITSTATUS(st) : SHELL_STOPPED;
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
		art_ring_signal(&r->ring, SIGTERM);
		*deadline = art_clock_mono_ms() + KILL_GRACE_MS;
	} else if (!*killed && art_clock_mono_ms() >= *deadline) {
		art_ring_signal(&r->ring, SIGKILL);
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
	int live = ART_RING_STAGES, n;

	if ((rd = art_ndjson_reader_new(-1, "events", ART_NDJSON_MAX_LINE,
	    0)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	while (r->evfd >= 0 || live > 0) {
		if (shell_sigint)
			*stopped = rn->stopped = true, shell_sigint = 0;
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
		render_tick(rn);
		live = art_ring_reap(&r->ring, false);
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
void
shell_cancel(const struct shell *sh)
{
	struct art_strvec a = ART_STRVEC_INIT;

	args_add(&a, "agentrt-session"), args_add(&a, "cancel");
	args_add(&a, sh->sid);
	shell_run(sh, &a, -1, false);
}

/* Is the session's turn still running with no ring to drive it? */
static bool
still_running(const struct shell *sh)
{
	struct art_strvec a = ART_STRVEC_INIT;
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
	struct ring r = { .evfd = -1, .errfd = -1 };
	bool stopped = false;
	int status;

	shell_sigint = 0;
	if (system_agent(sh, &r) == -1) {
		system_agent_remove(&r);
		return ART_EXIT_FAIL;
	}
	if (ring_start(sh, t, &r) == -1) {
		xclose(&r.evfd), xclose(&r.errfd);
		system_agent_remove(&r);
		return ART_EXIT_FAIL;
	}
	ring_loop(&r, rn, &stopped);
	system_agent_remove(&r);
	status = session_status(&r);
	if (rn->root[0] != '\0')
		snprintf(sh->sid, sizeof(sh->sid), "%s", rn->root);
	if (stopped && sh->sid[0] != '\0')
		shell_cancel(sh);
	else if (status != ART_EXIT_OK && status != 3 &&
	    sh->sid[0] != '\0' && still_running(sh)) {
		/* A stage that died (a bad option, say) ends the ring early. */
		art_warn("the ring stopped before the turn ended; the turn is "
		    "cancelled");
		shell_cancel(sh);
	}
	return stopped ? SHELL_STOPPED : status;
}
