/* toolrun.h - tool calls off the bus: run, queued, routed, replayed */
#ifndef ART_TOOLRUN_H
#define ART_TOOLRUN_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "clock.h"
#include "err.h"
#include "outq.h"
#include "tools.h"
#include "tooltape.h"

/*
 * The tool side's twin of llm.h: a toolrun takes the bus lines a stage
 * reads and answers the decision.request lines whose trigger is
 * tool.execute, writing every answer and every line it does not own to
 * one output queue, so they keep their order.  A tool is looked for in
 * the tools directories first, then among the MCP servers' tools:
 *
 * - An executable tool's decision is answered at once with no actions,
 *   and its settle line (tool.result or tool.error) follows when it ends.
 *   With every job slot taken, the call is answered all the same and
 *   waits in a queue, in arrival order, for a slot; one whose deadline
 *   passes while it waits is settled without running.
 * - A jq tool runs here and is answered in the decision itself.
 * - An MCP server's tool is answered at once and settled when the server
 *   answers.
 * - With a tape to replay, every call is answered from it and no tool
 *   runs and no server is started; a call the tape lacks is a tool.error,
 *   not a tool run for real.  With a tape to record, each call's answer
 *   is appended to it.
 * - A tool found nowhere is passed on unchanged: another stage may own it.
 *
 * Before any of that, the allow-list: a call runs (or is replayed, or
 * passed on) only when the request's agent declares the tool in its
 * "tools", by name alone or as an object with that "name" (an MCP
 * server's tool too, as NAME__TOOL with a prefix).  The agent is the
 * line's "agent"; for a line by reference (request.h), the one the store
 * its "ref" names holds for that session at that place, read in one read
 * transaction of the store, which is opened once and kept.  A tool it
 * does not declare is answered at once with a non-retryable tool.error
 * "unknown tool: NAME", code unknown_tool, and runs nothing; a store that
 * cannot say is the same, code bad_request.  A line with no agent that is
 * not by reference (one written by hand) is not checked.
 *
 * An agent's own MCP servers (its "mcp_servers", agent.c): a tools.list
 * line {session_id, id, server, command, tools?, env?} starts the server
 * it names, or finds the one already running with that name and
 * command, without waiting for it; once its tools are in, it is answered
 * with tools.listed {session_id, id, server, tools}, the tools that the
 * line's globs pass as art_mcp_declarations() makes them, or, when the
 * server cannot start or list them, {session_id, id, server, error}.
 * When the server's list changes (tools/list_changed), each session
 * told of it is sent a fresh tools.listed with no id.  A tool.execute
 * whose declaration names an "mcp_server" goes to that server of the
 * agent's mcp_servers (started then when need be) under its own name,
 * and is refused (unknown_tool) when the entry's globs do not pass it.
 * With a tape to replay, a tools.list is answered from the tape (the
 * exchange "tools.list" of {"server": NAME}) and no server starts; with
 * one to record, each list answered is appended to it.
 *
 * An executable tool's environment is art_tools_env()'s: the allow-list,
 * then the conf's pass, then the names its declaration's "env" lists
 * (the agent's declaration, or the declaration file beside the tool when
 * the agent gives only the name or there is no agent).  --mcp servers
 * get the conf's pass only; an agent's server the conf's pass and the
 * names its mcp_servers entry's "env" lists.  A provider key never gets
 * through.
 *
 * The caller's poll loop drives it, as with art_llm: the descriptors of
 * art_toolrun_pollfds(), a timeout of art_toolrun_timeout(), then
 * art_toolrun_work().  The process must ignore SIGPIPE, and should wake
 * its poll on SIGCHLD, so a tool that ends is noticed at once (it is at
 * the next timeout otherwise).  One thread.  Tools are children of this
 * process: art_toolrun_stop() kills them.
 */
struct art_toolrun;

struct art_toolrun_conf {
	char *const	*dirs;		/* NULL-terminated, searched in order */
	char *const	*env;		/* the environment tools get theirs
					 * from (art_tools_env()) */
	const char *const *pass;	/* variables of env every tool and
					 * server is passed (--env),
					 * NULL-terminated; NULL: none */
	const char	*cwd;		/* tools run there; NULL: ours */
	int64_t		 timeout_ms;	/* of a call whose trigger has no
					 * deadline */
	int64_t		 kill_grace_ms;	/* from SIGTERM to SIGKILL */
	size_t		 jobs;		/* tools running at most; 0: any */
	struct art_tools_limits limits;
	size_t		 max_output;	/* kept of a tool's output */
	const char *const *mcp;		/* "[NAME=]COMMAND ARG..." specs */
	size_t		 nmcp;
	struct art_tooltape *replay;	/* answers every call; NULL: none */
	int		 record_fd;	/* the tape appended to; -1: none */
	const char	*record;	/* its name, for messages */
	const struct art_clock *clock;	/* the bus's: deadlines are on it */
	struct art_outq	*out;		/* where every line goes */
	/* What a person should hear of (a tool that could not start, a
	 * tape that could not be written), one line without a newline; may
	 * be NULL. */
	void		 (*warn)(void *ctx, const char *msg);
	void		*ctx;
};

/*
 * A toolrun; conf is copied, what it points to borrowed for the
 * toolrun's life.  Starts every MCP server (unless there is a tape to
 * replay) and waits for its tools, in order.  NULL with err "nomem";
 * "bad_mcp" for a spec that does not parse (art_mcp_argv()'s message);
 * or the server's code, the message naming it ("--mcp 'SPEC': why").
 */
struct art_toolrun *art_toolrun_new(const struct art_toolrun_conf *,
	    struct art_err *);
/*
 * Kills the tools still running, drops the calls waiting, and ends the
 * MCP servers (art_mcp_free(), which may take a second).  Never from
 * inside the warn callback.  NULL does nothing.
 */
void	art_toolrun_free(struct art_toolrun *);
/*
 * Kills the tools still running and drops the calls waiting, unsettled,
 * at once: for a run that must end now (a signal, a fatal error).
 */
void	art_toolrun_stop(struct art_toolrun *);

/*
 * The lines a toolrun answers, as an ndjson reader's filter
 * (art_ndjson_set_filter()): decision.request lines for tool.execute,
 * and tools.list lines.
 * Every other well-formed line can be passed on as it came.
 */
int	art_toolrun_wants(const char *type, const char *trigger, void *ctx);

/*
 * Takes one bus line (consumed) and raw[0..len), the bytes it was read
 * from (art_ndjson_raw()), which are what is passed on when the line is
 * not ours.  src and lineno name where it was read, in the messages of a
 * request that cannot be answered, which also become error lines.  -1
 * with err when the run cannot go on: "nomem", or the output queue's
 * "io" (the reader is gone).  Then art_toolrun_stop() and end the run.
 */
int	art_toolrun_line(struct art_toolrun *, jv line, const char *raw,
	    size_t len, const char *src, size_t lineno, struct art_err *);

/*
 * Calls not yet settled: running, waiting for a slot, or at a server;
 * and tools.list lines waiting for their server's tools.
 */
size_t	art_toolrun_active(const struct art_toolrun *);
/* Of those, the calls waiting for a job slot. */
size_t	art_toolrun_waiting(const struct art_toolrun *);
/* Of those, the calls running: a tool's process, or at an MCP server. */
size_t	art_toolrun_running(const struct art_toolrun *);
/*
 * Forgets the calls waiting for a slot, which never started (their
 * engine is gone: it sends them again when it resumes the session).
 */
void	art_toolrun_drop_waiting(struct art_toolrun *);

/*
 * The caller's poll loop.  art_toolrun_pollfds() returns how many
 * descriptors there are to poll and fills pfd with them when max is
 * enough (else fills nothing: call again with more room).
 * art_toolrun_timeout() is how long poll may wait, in ms (0 at once, -1
 * forever).  After the poll, art_toolrun_work() gets pfd as filled, with
 * revents, and n as returned (or NULL and 0, say after an EINTR): it
 * moves every call on, settles the ones that ended, and starts the
 * waiting ones that now have a slot.  Give lines after the work, before
 * the next art_toolrun_pollfds(), as pfd describes the servers as they
 * were when it was filled.  -1 with err as for art_toolrun_line().
 */
size_t	art_toolrun_pollfds(struct art_toolrun *, struct pollfd *pfd,
	    size_t max);
int	art_toolrun_timeout(const struct art_toolrun *);
int	art_toolrun_work(struct art_toolrun *, const struct pollfd *pfd,
	    size_t n, struct art_err *);

/*
 * Hands each tool served to fn, in order, as its declaration (consumed):
 * each tool of the directories (art_tools_declaration()), then each MCP
 * server's tool as an agent file declares it ({name, description, input,
 * output?}).  For a declaration that cannot be read, decl is {"name":…}
 * and problem says why; else problem is NULL.  One at a time, so that
 * the caller can write each as it comes.  -1 with err "nomem".
 */
typedef void art_toolrun_declare_fn(void *ctx, jv decl, const char *problem);
int	art_toolrun_declare(struct art_toolrun *, art_toolrun_declare_fn *,
	    void *ctx, struct art_err *);

#endif
