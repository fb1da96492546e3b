/* ring.c - a ring of stages: each one's stdout the next one's stdin
 *
 * Pipe i joins stage i's stdout to stage i+1's stdin, the last one
 * wrapping round to stage 0.  All n pipes are made first, every stage is
 * handed its two ends, and then we close every end: the stages hold the
 * only ones, each end in exactly one process.
 */
#include "ring.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void
close_pipes(int (*p)[2], int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (p[i][0] >= 0)
			close(p[i][0]);
		if (p[i][1] >= 0)
			close(p[i][1]);
		p[i][0] = p[i][1] = -1;
	}
}

/* Starts stage i on its ends of the pipes; -1 with err. */
static int
start_stage(struct art_ring *r, const struct art_spawn *stage, int i,
    int (*p)[2], bool group, struct art_err *err)
{
	struct art_spawn s = stage[i];
	struct art_child ch;

	s.io[0] = (struct art_spawn_io){ ART_SPAWN_FD, p[(i + r->n - 1) %
	    r->n][0] };
	s.io[1] = (struct art_spawn_io){ ART_SPAWN_FD, p[i][1] };
	s.pgid = !group ? 0 : i == 0 ? ART_SPAWN_NEW_GROUP : r->pgid;
	if (art_spawn(&s, &ch, err) == -1)
		return -1;
	r->pid[i] = ch.pid;
	if (group && i == 0)
		r->pgid = ch.pid;
	return 0;
}

int
art_ring_start(struct art_ring *r, const struct art_spawn *stage, int n,
    bool group, struct art_err *err)
{
	int p[ART_RING_MAX][2], i, e;

	memset(r, 0, sizeof(*r));
	if (n < 1 || n > ART_RING_MAX)
		return art_err_set(err, "usage", "a ring of %d stages", n);
	r->n = n;
	for (i = 0; i < n; i++)
		p[i][0] = p[i][1] = -1;
	for (i = 0; i < n; i++)
		if (art_spawn_pipe(p[i]) == -1) {
			e = errno;
			close_pipes(p, n);
			return art_err_set(err, "spawn_busy", "make a ring's "
			    "pipe: %s", strerror(e));
		}
	for (i = 0; i < n; i++)
		if (start_stage(r, stage, i, p, group, err) == -1)
			break;
	close_pipes(p, n);
	if (i == n)
		return 0;
	art_ring_signal(r, SIGTERM);
	art_ring_reap(r, true);
	return -1;
}

int
art_ring_reap(struct art_ring *r, bool block)
{
	int i, st, live = 0;
	pid_t p;

	for (i = 0; i < r->n; i++) {
		if (r->pid[i] == 0)
			continue;
		while ((p = waitpid(r->pid[i], &st, block ? 0 : WNOHANG)) ==
		    -1 && errno == EINTR)
			;
		if (p == 0) {
			live++;
			continue;
		}
		r->status[i] = p == -1 ? -1 : st;
		r->pid[i] = 0;
	}
	return live;
}

void
art_ring_signal(const struct art_ring *r, int sig)
{
	int i, live = 0;

	for (i = 0; i < r->n; i++)
		live += r->pid[i] > 0;
	/* With none unreaped, the group's id may be another's by now. */
	if (live == 0)
		return;
	if (r->pgid > 0) {
		art_spawn_signal_group(r->pgid, sig);
		return;
	}
	for (i = 0; i < r->n; i++)
		if (r->pid[i] > 0)
			kill(r->pid[i], sig);
}

void
art_ring_release(struct art_ring *r)
{
	if (art_ring_reap(r, false) > 0)
		art_ring_signal(r, SIGKILL);
	art_ring_reap(r, true);
}

/* --- the standard ring ---------------------------------------------------- */

int
art_ring_bindir(char *dir, size_t n)
{
	char self[PATH_MAX], *slash;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0)
		dir[0] = '\0';
	if (len <= 0)
		return -1;
	self[len] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		return -1;
	/* "/agentrt-llm" is in "/", as dirname(3) says. */
	slash[slash == self] = '\0';
	if ((size_t)snprintf(dir, n, "%s", self) >= n) {
		if (n > 0)
			dir[0] = '\0';
		return -1;
	}
	return 0;
}

const char *
art_ring_sibling(const char *bindir, const char *name, char *buf, size_t n)
{
	int len;

	if (bindir == NULL || bindir[0] == '\0')
		return name;
	len = snprintf(buf, n, "%s/%s", bindir, name);
	if (len < 0 || (size_t)len >= n || !art_spawn_is_executable(buf))
		return name;
	return buf;
}

/* Pushes opt and val when val is given. */
static void
opt(struct art_strvec *a, const char *opt, const char *val)
{
	if (val != NULL) {
		art_strvec_push(a, opt);
		art_strvec_push(a, val);
	}
}

/* Pushes opt and each of the n vals. */
static void
opts(struct art_strvec *a, const char *opt, const char *const *val, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		art_strvec_push(a, opt);
		art_strvec_push(a, val[i]);
	}
}

static void
session_argv(struct art_strvec *a, const struct art_ring_opts *o)
{
	opt(a, "-d", o->db);
	art_strvec_push(a, o->verb != NULL ? o->verb : "run");
	if (o->verbose)
		art_strvec_push(a, "-v");
	opt(a, "-s", o->sid);
	opt(a, "-a", o->agent);
	opts(a, "--agents", o->agent_dirs, o->nagent_dirs);
	if (o->ntool_dirs > 0)
		opt(a, "--tools", o->tool_dirs[0]);
	opt(a, "--events", o->events);
	opt(a, "--events-format", o->events_format);
	opt(a, "--clients", o->clients);
	opt(a, "-m", o->message);
	opt(a, "--input", o->input);
	opt(a, "--resume", o->resume);
	opt(a, "--payload", o->payload);
}

int
art_ring_cmd_make(struct art_ring_cmd *cmd, const struct art_ring_opts *o,
    struct art_err *err)
{
	static const char *const name[ART_RING_STAGES] = { "agentrt-decide",
	    "agentrt-llm", "agentrt-tool", "agentrt-session" };
	char buf[PATH_MAX];
	struct art_strvec *a = cmd->argv;
	int i, bad = 0;

	for (i = 0; i < ART_RING_STAGES; i++) {
		art_strvec_push(&a[i], name[i]);
		cmd->file[i] = strdup(art_ring_sibling(o->bindir, name[i], buf,
		    sizeof(buf)));
		bad |= cmd->file[i] == NULL;
	}
	opt(&a[ART_RING_DECIDE], "-f", o->policy);
	opt(&a[ART_RING_DECIDE], "--jq", o->decide_jq);
	opt(&a[ART_RING_DECIDE], "--exec", o->decide_exec);
	opt(&a[ART_RING_DECIDE], "--url", o->decide_url);
	opt(&a[ART_RING_LLM], "-m", o->model);
	opt(&a[ART_RING_LLM], "--record", o->llm_record);
	opt(&a[ART_RING_LLM], "--replay", o->llm_replay);
	opts(&a[ART_RING_TOOL], "--tools", o->tool_dirs, o->ntool_dirs);
	opts(&a[ART_RING_TOOL], "--mcp", o->mcps, o->nmcps);
	opts(&a[ART_RING_TOOL], "--env", o->tool_envs, o->ntool_envs);
	opt(&a[ART_RING_TOOL], "--replay", o->tool_replay);
	session_argv(&a[ART_RING_SESSION], o);
	for (i = 0; i < ART_RING_STAGES; i++)
		bad |= a[i].nomem;
	if (bad) {
		art_ring_cmd_release(cmd);
		return art_err_set(err, "nomem", "out of memory");
	}
	return 0;
}

void
art_ring_cmd_spawn(const struct art_ring_cmd *cmd, struct art_spawn *s)
{
	int i;

	for (i = 0; i < ART_RING_STAGES; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].file = cmd->file[i];
		s[i].argv = cmd->argv[i].v;
		s[i].name = cmd->argv[i].v[0];
	}
}

void
art_ring_cmd_release(struct art_ring_cmd *cmd)
{
	int i;

	for (i = 0; i < ART_RING_STAGES; i++) {
		art_strvec_release(&cmd->argv[i]);
		free(cmd->file[i]);
		cmd->file[i] = NULL;
	}
}
