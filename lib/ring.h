/* ring.h - a ring of stages: each one's stdout the next one's stdin */
#ifndef ART_RING_H
#define ART_RING_H

#include <stdbool.h>
#include <sys/types.h>

#include "err.h"
#include "spawn.h"
#include "strvec.h"

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

/* --- the standard ring: decide | llm | tool | session ------------------ */

/*
 * agentrt-serve, agentrt-shell and session replay run the same four
 * binaries; these find them and make their command lines.  They touch no
 * state of ours (they read /proc/self/exe and stat a file), so any
 * thread may call them.
 */

/*
 * The directory our own executable is in, read from /proc/self/exe: a
 * build tree's top or an install's bin, where the sibling binaries are.
 * 0 with it in dir (n bytes), or -1 with dir "" when it cannot be told
 * (no /proc) or does not fit.
 */
int	art_ring_bindir(char *dir, size_t n);
/*
 * The file to run for the sibling binary name: bindir/name, made in buf
 * (n bytes), when bindir is neither NULL nor "" and that is a file we may
 * execute; else name itself, for art_spawn() to look up in PATH.  Points
 * at buf or at name.
 */
const char *art_ring_sibling(const char *bindir, const char *name, char *buf,
	    size_t n);

/* The stages of the standard ring, in its order. */
enum {
	ART_RING_DECIDE, ART_RING_LLM, ART_RING_TOOL, ART_RING_SESSION,
	ART_RING_STAGES
};

/*
 * What the four stages are run with.  NULL (a count of 0) leaves an
 * option out; each stage's arguments come in the order of its fields.
 * Everything is borrowed, and copied by art_ring_cmd_make().
 */
struct art_ring_opts {
	const char	*bindir;	/* the siblings' (art_ring_bindir()), or
					   NULL: PATH */
	/* agentrt-decide */
	const char	*policy;	/* -f FILE */
	const char	*decide_jq;	/* --jq FILTER */
	const char	*decide_exec;	/* --exec CMD */
	const char	*decide_url;	/* --url URL */
	/* agentrt-llm */
	const char	*model;		/* -m MODEL */
	const char	*llm_record;	/* --record CASSETTE */
	const char	*llm_replay;	/* --replay CASSETTE */
	/* agentrt-tool */
	const char *const *tool_dirs;	/* --tools DIR each; the first one
					   is the session's --tools too */
	size_t		 ntool_dirs;
	const char *const *mcps;	/* --mcp SPEC each */
	size_t		 nmcps;
	const char *const *tool_envs;	/* --env NAME each */
	size_t		 ntool_envs;
	const char	*tool_replay;	/* --replay TAPE */
	/* agentrt-session [-d DB] VERB */
	const char	*db;		/* -d DIR */
	const char	*verb;		/* "run", "serve"; NULL: "run" */
	bool		 verbose;	/* -v: run says a new session's id */
	const char	*sid;		/* -s ID */
	const char	*agent;		/* -a NAME */
	const char *const *agent_dirs;	/* --agents DIR each */
	size_t		 nagent_dirs;
	/* then --tools tool_dirs[0] */
	const char	*events;	/* --events FILE */
	const char	*events_format;	/* --events-format FORMAT */
	const char	*clients;	/* --clients FILE */
	const char	*message;	/* -m TEXT */
	const char	*input;		/* --input JSON */
	const char	*resume;	/* --resume ID */
	const char	*payload;	/* --payload JSON */
};

/*
 * The four stages' command lines: argv[i].v is stage i's argv, argv[0]
 * the binary's name ("agentrt-decide", ...), and file[i] what to run
 * (art_ring_sibling()'s answer, a copy).  Embedded; ART_RING_CMD_INIT or
 * zeroed memory makes it empty, art_ring_cmd_release() frees it.
 */
struct art_ring_cmd {
	struct art_strvec	 argv[ART_RING_STAGES];
	char			*file[ART_RING_STAGES];
};

#define ART_RING_CMD_INIT	{ { ART_STRVEC_INIT, ART_STRVEC_INIT, \
	ART_STRVEC_INIT, ART_STRVEC_INIT }, { NULL, NULL, NULL, NULL } }

/*
 * Makes the four command lines of o in an empty cmd.  0, or -1 with err
 * "nomem" and cmd released.  It has no limit on arguments but memory.
 */
int	art_ring_cmd_make(struct art_ring_cmd *, const struct art_ring_opts *o,
	    struct art_err *);
/*
 * Fills s[0..ART_RING_STAGES) (zeroed first) to run the stages of cmd:
 * file, argv, and name argv[0].  Borrowed: valid while cmd is.
 */
void	art_ring_cmd_spawn(const struct art_ring_cmd *, struct art_spawn *s);
void	art_ring_cmd_release(struct art_ring_cmd *);

#endif
