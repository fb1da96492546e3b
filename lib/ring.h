/* ring.h - a ring of stages: each one's stdout the next one's stdin */
#ifndef ART_RING_H
#define ART_RING_H

#include <stdbool.h>
#include <sys/types.h>

#include "err.h"
#include "spawn.h"

/*
 * A ring is what a user would type in bash, closed on itself:
 *
 *	a | b | c | d  with d's stdout piped back into a's stdin
 *
 * Each stage is started by art_spawn() (see spawn.h for the rules the
 * child runs under, and the fork rules).  The pipes between stages are
 * the ring's own: no stage inherits another's, and we hold none once the
 * ring is up, so a stage that exits ends its neighbours' input and the
 * ring winds down by itself.  The stages may share a process group of
 * their own, led by the first, so one signal reaches them all (and a
 * terminal's Ctrl-C does not).
 *
 * Embedded and filled by art_ring_start(); single-threaded.
 */

#define ART_RING_MAX	8	/* stages in a ring, at most */

struct art_ring {
	int	 n;			/* stages */
	pid_t	 pid[ART_RING_MAX];	/* 0 once reaped */
	int	 status[ART_RING_MAX];	/* wait status once reaped; -1 when
					   it could not be waited for */
	pid_t	 pgid;			/* the ring's group, or 0 */
};

/*
 * Starts the n stages (1 to ART_RING_MAX) that stage[] describes, stage i
 * reading from stage i-1 and stage 0 from stage n-1.  The ring sets each
 * stage's stdin, stdout and process group: stage[i].io[2] (stderr) and
 * everything else are as given, and borrowed.  group: the stages share a
 * new process group, led by stage 0; else they stay in ours.  Returns 0,
 * or -1 with err as art_spawn() fills it (naming the stage that failed)
 * when a stage could not start: the stages already started have then
 * been sent SIGTERM and reaped, and r holds none running.
 */
int	art_ring_start(struct art_ring *r, const struct art_spawn *stage,
	    int n, bool group, struct art_err *);
/*
 * Reaps the stages that have ended, waiting for all of them when block;
 * returns how many still run.
 */
int	art_ring_reap(struct art_ring *r, bool block);
/*
 * Sends sig to the ring's group, or to each stage still running; to none
 * once every stage is reaped (the group's id may be another's by then).
 */
void	art_ring_signal(const struct art_ring *r, int sig);
/* SIGKILLs the stages still running and reaps every one. */
void	art_ring_release(struct art_ring *r);

#endif
