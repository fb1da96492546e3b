/* spawn.h - one way to start a child process, and to end it */
#ifndef ART_SPAWN_H
#define ART_SPAWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

/*
 * Every process agentrt starts (a tool, an MCP server, a worker, a ring's
 * stage, a shell's one-off command) is started by art_spawn(), under one
 * set of rules:
 *
 * - it runs a program with execve(), never through a shell unless the
 *   program is one; a file named without a '/' is looked up in PATH (the
 *   child's environment's, as execvp() would), before the fork;
 * - each of its standard streams is ours, a descriptor the caller hands
 *   over, /dev/null, or a new pipe whose other end the caller gets;
 * - it stays in our process group, leads a new one, or joins one (both
 *   sides call setpgid(), so a signal sent right after the fork finds it);
 * - every signal is default and unblocked in it, whatever we ignore,
 *   catch or block;
 * - it inherits no descriptor above 2 but those the caller names in keep;
 * - its working directory, environment and resource limits are as asked;
 *   a limit is never raised past the hard limit we have (it is lowered to
 *   it), so setting one cannot fail for want of privilege;
 * - whatever fails between the fork and a successful execve() (chdir, a
 *   limit, execve itself) comes back up a close-on-exec pipe, so
 *   art_spawn() fails with the reason, the failed child already reaped,
 *   rather than handing back a child that exits 127.
 *
 * Fork rules.  Between fork and execve the child makes async-signal-safe
 * calls only: no malloc, no stdio, no jv, and never the LMDB environment
 * (DESIGN §4 and store.h: a forked child must not use or close it; this
 * one only execs, and the store's descriptors are closed in it).  So a process with a store open,
 * a curl handle or buffered output may spawn; buffered stdout is not
 * flushed here (a caller whose child shares our stdout flushes first).
 * All signals are blocked across the fork, so no handler of ours runs in
 * the child.  That uses sigprocmask(): call from a single-threaded
 * process.  SIGCHLD must not be ignored (the children could not be
 * reaped), and a caller that writes to a child's stdin ignores SIGPIPE.
 */

/* How art_spawn() sets up one of the child's standard streams. */
enum art_spawn_how {
	ART_SPAWN_INHERIT,	/* ours, as it is: the zero value */
	ART_SPAWN_PIPE,		/* a new pipe; its other end in child->fd[] */
	ART_SPAWN_NULL,		/* /dev/null */
	ART_SPAWN_FD		/* fd, borrowed: the caller still closes it */
};

struct art_spawn_io {
	enum art_spawn_how	 how;
	int			 fd;		/* ART_SPAWN_FD only */
};

/* pgid: lead a new process group, whose id is the child's pid. */
#define ART_SPAWN_NEW_GROUP	((pid_t)-1)

/* A resource limit: setrlimit(resource, {soft, hard}) in the child. */
struct art_spawn_limit {
	int		 resource;	/* RLIMIT_CPU, RLIMIT_AS, … */
	uint64_t	 soft, hard;
};

struct art_spawn {
	const char	*file;		/* a path, or a name looked up in PATH */
	char *const	*argv;		/* NULL-terminated, argv[0] first */
	char *const	*env;		/* NULL: this process's environment */
	const char	*cwd;		/* NULL: this process's */
	const char	*name;		/* in messages, as is; NULL: file */
	const char	*busy_code;	/* err's codes; NULL: "spawn_busy", */
	const char	*exec_code;	/* "spawn_exec" */
	struct art_spawn_io io[3];	/* stdin, stdout, stderr */
	pid_t		 pgid;		/* 0: ours; ART_SPAWN_NEW_GROUP; > 0:
					   join that group */
	bool		 nonblock;	/* the parent's pipe ends: O_NONBLOCK */
	const int	*keep;		/* descriptors the child inherits, at
					   their numbers; borrowed */
	int		 nkeep;
	const struct art_spawn_limit *limits;
	int		 nlimits;
	/* Killed (SIGKILL) when the process that started it dies. */
	bool		 die_with_parent;
};

/* A started child. */
struct art_child {
	pid_t	 pid;
	int	 fd[3];		/* our ends of its ART_SPAWN_PIPE streams, which
				   the caller closes, close-on-exec; else -1 */
};

/*
 * Starts the child s describes; s and what it points to are no longer
 * needed on return.  Returns 0 with *child filled, or -1 with child->pid
 * -1, errno set to the cause, every descriptor art_spawn() made closed,
 * and err, whose code is s->busy_code or s->exec_code when set:
 *   "spawn_busy"  short of processes, descriptors or memory (a pipe,
 *                 fork, dup2 or setpgid failed): worth trying again;
 *   "spawn_exec"  the program could not be run: not found in PATH, a bad
 *                 cwd, a limit that could not be set, execve failed.
 * Its message is "run NAME: WHY", NAME being s->name (the caller quotes
 * it as its users know it: "tool 'x'", "'server'") and WHY one of
 * strerror(errno), "not found in PATH", "chdir 'CWD': …" or "set a
 * resource limit: …".
 */
int	art_spawn(const struct art_spawn *, struct art_child *,
	    struct art_err *);

/*
 * Whether pid, our child, has exited, without reaping it: while it is
 * unreaped its process group's id cannot be reused, so the group can
 * still be signalled safely.  1 exited, 0 still running (or we were
 * interrupted), -1 with errno ECHILD when it is not ours to wait for
 * (someone else reaped it).
 */
int	art_spawn_poll(pid_t);
/*
 * Waits up to ms (polling every 10 ms) for art_spawn_poll() to be other
 * than 0; true when it is.  Reaps nothing.
 */
bool	art_spawn_exits_within(pid_t, int64_t ms);
/* Sends sig to group pgid; after SIGTERM, SIGCONT, so a stopped one sees it. */
void	art_spawn_signal_group(pid_t pgid, int sig);
/* Reaps pid, across EINTR: its wait status, or -1 (not ours). */
int	art_spawn_wait(pid_t);
/*
 * SIGKILLs whatever is left of the group pid leads, while pid, dead or
 * not, still holds its id, then reaps pid: its wait status, or -1.
 */
int	art_spawn_reap_group(pid_t);
/*
 * Ends the group pid leads: up to wait_ms for pid to exit on its own,
 * then SIGTERM to the group and up to grace_ms more, then
 * art_spawn_reap_group().  Its wait status, or -1 when it was not ours to
 * wait for (its group is then left alone: the id may be someone else's).
 */
int	art_spawn_stop(pid_t, int64_t wait_ms, int64_t grace_ms);

/*
 * A pipe whose ends are close-on-exec and numbered 3 or more, so that a
 * child's dup2() onto 0, 1 and 2 never lands on an end it still needs.
 * 0, or -1 with errno.
 */
int	art_spawn_pipe(int p[2]);
/* Makes fd non-blocking (best effort). */
void	art_spawn_nonblock(int fd);
/* Whether path is a regular file we may execute. */
bool	art_spawn_is_executable(const char *path);

/*
 * Whether process pid, ours or not, lives: it exists and has not exited.
 * kill(pid, 0) alone is not enough: a process that died and was not
 * reaped answers it, and one whose parent died too may never be reaped
 * where pid 1 does not reap (a container's init often does not), so a
 * driver killed with its ring would seem to drive its sessions forever.
 * /proc/PID/stat says a zombie; without /proc, kill() alone says.
 */
bool	art_spawn_alive(long pid);
/* Process pid's start time, in clock ticks since boot; 0 when unknown. */
unsigned long long art_spawn_started(long pid);

#endif
