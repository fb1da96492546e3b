/* session-loop.h - what run and serve share: the engine on a ring */
#ifndef ART_CMD_SESSION_LOOP_H
#define ART_CMD_SESSION_LOOP_H

#include <signal.h>
#include <stdio.h>

#include <jv.h>

#include "engine.h"
#include "err.h"
#include "agui.h"
#include "evtext.h"
#include "ids.h"
#include "ndjson.h"
#include "outq.h"

#include "session-cmd.h"

/* The most lines one transaction takes (the rest wait for the next). */
#define RING_BATCH_MAX	256

/* Where agents and tools are, for the engine's load_agent. */
struct agents {
	const char	**dirs;
	size_t		  n;
	char		**tools;
	int		  warned;	/* key and schema notes said */
};

/* The engine, its ring (stdin and stdout) and its --events file. */
struct ring {
	struct art_engine		*engine;
	struct art_store		*store;
	struct art_outq			*out;
	struct art_ndjson_reader	*in;
	FILE				*events;
	struct art_evtext		*text;	/* --events-format text */
	struct art_agui			*agui;	/* --events-format ag-ui */
	char				 agent[256];	/* a child's, for text */
	const struct art_clock		*clock;
	char				 sid[ART_ID_MAX + 1];
	int				 eof;
	struct agents			 agents;
	const char			*failed;	/* why, for ag-ui */
	/* Why --events stopped being written ("" while it is): a run
	 * whose client lost events does not exit 0. */
	char				 events_lost[256];
	/* serve: the sessions of the events written since it was last
	 * emptied, an object of ids (anything else: not kept). */
	jv				 touched;
};

/* SIGINT or SIGTERM came (its number): the loop ends. */
extern volatile sig_atomic_t loop_stop_signal;

/*
 * Sets r up on stdin and stdout: signals caught (SIGPIPE ignored), the
 * agents found, --events opened, the engine made, stdin non-blocking.
 * Dies on a failure (out of memory, an events file that will not open).
 */
void	loop_open(struct ring *r, struct env *, const struct opts *);
/*
 * Ends a streamed text line, closes --events, frees what r holds.  status
 * is the exit status to come: an AG-UI run left open by a failure (not 0,
 * not 3, a park) ends in RUN_ERROR, saying r->failed when set.  -1 (said
 * on stderr) when the last of --events could not be written.
 */
int	loop_close(struct ring *r, int status);
/* One client event (consumed) on --events, as NDJSON or as text. */
int	loop_write_event(struct ring *r, jv e, struct art_err *);
/*
 * Writes what the engine produced: ring lines (queued on r->out), then
 * client events, each refusal said on stderr too.  -1 when the ring
 * will not take a line.
 */
int	loop_drain(struct ring *r);
/* Notes that session sid (may be NULL) was touched, when r->touched is kept. */
void	loop_touch(struct ring *r, const char *sid);
/* The poll's timeout: ms until the engine's next timer, or -1. */
int	loop_poll_timeout(struct ring *r);
/*
 * The last stage of a ring at a terminal would print what a stage
 * should read: refused (status 2), saying how for cmd ("run ...").
 * stdin is checked too when in is set.
 */
void	loop_refuse_terminal(const char *cmd, bool in);

#endif
