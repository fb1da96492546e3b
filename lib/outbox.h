/* outbox.h - a tool run's state and result, kept until its call settles
 *
 * The tool stage writes here before it acts: an attempt of a call is
 * claimed (running, and by which process) before its tool starts, and
 * its settle line is kept, durably, before that line is written to the
 * ring.  So a stage that died, or an engine that died while its tool
 * ran, loses no result: the attempt's decision, delivered again, is
 * answered from here without running the tool again, and an attempt
 * whose stage died while it ran is told apart from one that finished.
 * The entries of a call go when it settles (views.c) and with its
 * session.  Keys: (sid, call id, NUL, be64 attempt) in ART_DB_OUTBOX.
 *
 * An entry is {"state": "running", "pid", "start", "boot", "at"} or
 * {"state": "done", "line": the settle line, "at"}.  A process is named
 * by its pid, its start time (/proc/PID/stat) and the boot it ran in, so
 * a pid used again by another process is not taken for it.
 */
#ifndef ART_OUTBOX_H
#define ART_OUTBOX_H

#include <stdbool.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"
#include "store.h"

/*
 * Claims attempt of (sid, call) for this process, in one synced write:
 * 1 when it was free and now is ours (the tool may start); 0 when it
 * was not, with *entry (a new jv) what the outbox holds; -1 with err.
 * Two stages asking at once: one claims, the other gets the entry.
 */
int	art_outbox_claim(struct art_store *, const char *sid,
	    const char *call, int64_t attempt, jv *entry, struct art_err *);

/* What the outbox holds for the attempt: a new jv, null when nothing. */
jv	art_outbox_get(struct art_store *, const char *sid, const char *call,
	    int64_t attempt, struct art_err *);

/*
 * Keeps line (borrowed: the attempt's tool.result or tool.error) as its
 * result, in one write, before the line goes out.  Not synced: a process
 * killed loses nothing of it (the OS has it), and what an OS crash
 * undoes reads as the synced claim of a boot gone by: interrupted.
 */
int	art_outbox_done(struct art_store *, const char *sid, const char *call,
	    int64_t attempt, const jv *line, struct art_err *);

/* In t: forgets every attempt of (sid, call).  0, or -1 with err. */
int	art_outbox_clear(struct art_txn *, const char *sid, const char *call,
	    struct art_err *);

/* Whether the process a running entry (borrowed) names is alive. */
bool	art_outbox_alive(const jv *entry);

#endif
