/* ring.c - a ring of stages: each one's stdout the next one's stdin
 *
 * Pipe i joins stage i's stdout to stage i+1's stdin, the last one
 * wrapping round to stage 0.  All n pipes are made first, every stage is
 * handed its two ends, and then we close every end: the stages hold the
 * only ones, each end in exactly one process.
 */
#include "ring.h"

#include <errno.h>
#include <signal.h>
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
