/* mcp.h - one MCP server over stdio, driven by the caller's poll */
#ifndef ART_MCP_H
#define ART_MCP_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"

/*
 * A Model Context Protocol client for one server that runs as our child
 * and speaks newline-delimited JSON-RPC 2.0 on its stdin and stdout
 * (protocol version ART_MCP_PROTOCOL).  Like http.h it has no loop of its
 * own: the caller's poll(2) waits on the descriptors art_mcp_pollfds()
 * gives, for at most art_mcp_timeout() ms, and then calls art_mcp_work(),
 * which writes what is queued, reads what came, and calls back.
 *
 * The server is started by art_spawn() (spawn.h), so it runs without a
 * shell, in a process group of its own, with the environment the caller
 * hands over (already scrubbed: this module adds nothing to it), every
 * signal default and unblocked, and no descriptor of ours but its three
 * pipes.  Its stderr is drained and its last lines are kept for messages.
 *
 * Startup: `initialize` (capabilities {}, clientInfo {"agentrt",
 * ART_MCP_CLIENT_VERSION}), on its result `notifications/initialized`,
 * then `tools/list`, following nextCursor (up to ART_MCP_MAX_PAGES
 * pages); a server whose initialize result has no "tools" capability has
 * no tools.  The client is ready once the tool list is in.  Calls made
 * before that wait and go out then.  Whatever protocol version the server
 * answers with is accepted.
 *
 * Messages are matched by id, integers this client assigns.  A line that
 * is a JSON array is a JSON-RPC batch: each element is taken as if it had
 * come on a line of its own.  A line that is not a JSON object or array,
 * and a batch that is empty or holds anything but objects, is counted
 * once (art_mcp_bad_lines()); what is not an object is ignored, as are
 * notifications other than notifications/progress and answers to unknown
 * ids (a call that timed out).  Each tools/call carries
 * params._meta.progressToken, the call's own id, and a
 * notifications/progress naming the token of a call in flight goes to the
 * progress callback (art_mcp_set_progress()).
 * The server's own requests get error -32601 (method not found), except
 * "ping", which gets an empty result.  A call that times out is dropped
 * and the server is sent notifications/cancelled for it.  What we send
 * is queued and written as the pipe takes it, never blocking, so a large
 * arguments object cannot deadlock against a server writing to us.
 *
 * Death and restart: when the server's stdout ends or its process exits,
 * its group is killed and reaped, every call in flight fails (retryable),
 * and the server is started again, once.  A second death, or a startup
 * that fails (no answer to initialize or tools/list within the startup
 * timeout, an error answer, a server that cannot be run again), makes the
 * client dead for good: the calls then in flight fail as not retryable,
 * and later calls fail at once.
 *
 * The process must ignore SIGPIPE (cmd/ owns signals): a server may die
 * with bytes still queued for it, and the write that finds out must fail,
 * not kill us.  A process exit is seen at the next art_mcp_work() (a
 * stdout that ends is seen at once); a caller that catches SIGCHLD
 * should call it then too.
 */

struct art_mcp;

#define ART_MCP_PROTOCOL	"2025-06-18"
#define ART_MCP_CLIENT_VERSION	"0.1.0"	/* configure.ac's */
#define ART_MCP_POLLFDS		3	/* pollfds a client needs at most */
#define ART_MCP_MAX_LINE	((size_t)64 << 20)	/* longer: a bad line */
#define ART_MCP_MAX_PAGES	100	/* of tools/list */
#define ART_MCP_CALL_TIMEOUT_MS	120000	/* a call's limit when given 0 */
#define ART_MCP_STDERR_LINES	3	/* of stderr that a message quotes */
#define ART_MCP_EXIT_GRACE_MS	500	/* art_mcp_free(): per step */

enum art_mcp_outcome {
	ART_MCP_OK,		/* a result; text is its content */
	ART_MCP_TOOL_ERROR,	/* a result with isError:true; text too */
	ART_MCP_RPC_ERROR,	/* a JSON-RPC error: "mcp: <code> <message>" */
	ART_MCP_TIMEOUT,	/* "mcp: no answer within N ms" */
	ART_MCP_EXITED,		/* "mcp: the server exited (…)" */
	ART_MCP_FAILED		/* the client died: startup failed, or a bad
				 * answer; the message says which */
};

/*
 * The end of one call, given once to its callback; done and what it
 * points to are borrowed for the callback's duration.
 *
 * text, when ok or a tool error, is the result's content blocks, joined
 * with "\n": a text block as its text; an image or audio block as
 * "[image image/png, N bytes]" ("[audio …]"), N the decoded size; an
 * embedded resource as its text, or "[resource URI MIME, N bytes]" for a
 * blob; a resource link as "[resource link URI]"; another kind as
 * "[KIND block]".  When content is empty or missing and the result has
 * structuredContent, text is that as compact JSON.  (Content wins when
 * both are there: the spec asks servers to put the same JSON in a text
 * block, and the text is what a model is meant to read.)  Otherwise text
 * is the error message, one line.
 *
 * parts, when the content holds an image block, is that content as
 * ContentPart[] (the seed's shape), block for block: an image as
 * {"type":"image_url","image_url":{"url":"data:MIME;base64,DATA"}}, and
 * any other block as a text part holding its text above.  Otherwise (no
 * image, not a result) parts is null, and text is all there is.
 *
 * retryable is true for ART_MCP_TIMEOUT, and for ART_MCP_EXITED when the
 * server is being started again; false otherwise.
 */
struct art_mcp_done {
	enum art_mcp_outcome	 outcome;
	bool			 ok;		/* outcome is ART_MCP_OK */
	bool			 retryable;
	const char		*text;		/* UTF-8, NUL-terminated */
	size_t			 len;		/* of text, in bytes */
	const jv		*result;	/* the raw result; else null */
	const jv		*parts;		/* ContentPart[], or null */
};

typedef void art_mcp_done_fn(void *ctx, const struct art_mcp_done *done);

/*
 * A notifications/progress for a call in flight; borrowed for the
 * callback's duration.  A notification whose progress is not a number,
 * or whose token names no call in flight, is dropped.
 */
struct art_mcp_progress {
	double		 progress;
	bool		 has_total;
	double		 total;		/* when has_total */
	const char	*message;	/* NULL when none */
};

/* ctx is the ctx that call's art_mcp_call() was given. */
typedef void art_mcp_progress_fn(void *ctx,
	    const struct art_mcp_progress *progress);

/*
 * Starts the server: argv[0] is run as it is when it holds a '/', else
 * looked up in the PATH of envp ("/usr/bin:/bin" when envp has none).
 * argv and envp are NULL-terminated; envp is the server's whole
 * environment.  cwd NULL is ours.  timeout_ms (0: ART_MCP_CALL_TIMEOUT_MS)
 * bounds each startup, from spawn to the tool list; restarts get it too.
 * Everything is copied.  Sends initialize and returns without waiting for
 * it.  NULL with err "mcp_exec" when the server cannot be run (no such
 * file, a bad cwd), "mcp_busy" when the system is short of processes or
 * descriptors, "nomem".
 */
struct art_mcp *art_mcp_start(const char *const *argv,
	    const char *const *envp, const char *cwd, int64_t timeout_ms,
	    struct art_err *);

/*
 * Closes the server's stdin, waits up to ART_MCP_EXIT_GRACE_MS for it to
 * exit, sends its group SIGTERM, waits as long again, sends SIGKILL, and
 * reaps it; no process of the group is left (one the leader left behind
 * dies of the SIGKILL, and init reaps it).  Calls in flight are dropped
 * without a callback.  Blocks for at most about twice the grace.  Never
 * from inside a callback.  NULL does nothing.
 */
void	art_mcp_free(struct art_mcp *);

/*
 * Runs a poll loop of its own until the client is ready: 0.  -1 with err
 * "mcp" when the client is dead (the message says why: the startup timed
 * out, the server exited twice, …).  Callbacks of calls already made may
 * run inside it.
 */
int	art_mcp_wait_ready(struct art_mcp *, struct art_err *);

bool	art_mcp_is_ready(const struct art_mcp *);	/* tools are in */
bool	art_mcp_is_dead(const struct art_mcp *);	/* for good */

/*
 * The tools as the server listed them (objects with name, description,
 * inputSchema, …), an array the caller owns; [] before the first list.
 * During a restart it is the last server's list until the new one is in.
 */
jv	art_mcp_tools(const struct art_mcp *);
/*
 * How many tool lists have been taken in: 1 once ready, one more each
 * time the server's notifications/tools/list_changed was followed by a
 * fresh tools/list (all its pages), and after each restart's list.  A
 * caller that keeps the last value it saw knows when to look again.
 */
unsigned art_mcp_tools_generation(const struct art_mcp *);

/*
 * Whether the tool name passes globs (borrowed): an array of fnmatch(3)
 * patterns, any of which may match; anything but an array (null, no
 * "tools" given) passes every name.
 */
bool	art_mcp_tool_is_matched(const jv *globs, const char *name);
/*
 * The tools (borrowed; as art_mcp_tools() gives them) that globs pass,
 * as an agent file declares tools (AgentTool): {name, description?,
 * input, output?, annotations?, mcp_server?}.  input is inputSchema
 * ({"type":"object"} when the server gives none), output outputSchema;
 * annotations (the server's hints) and mcp_server (server, when not
 * NULL: which of the agent's mcp_servers serves it) are agentrt's
 * extension members.  A tool whose name art_tools_name_is_valid()
 * refuses is left out.  A new array; [] when tools is not an array.
 */
jv	art_mcp_declarations(const jv *tools, const jv *globs,
	    const char *server);

/*
 * Calls tool with arguments (an object, or null for {}; consumed),
 * waiting at most timeout_ms (0: ART_MCP_CALL_TIMEOUT_MS) from now,
 * including any wait for the server to become ready.  done(ctx, …) comes
 * later, once, from art_mcp_work() or art_mcp_wait_ready(), never from
 * here.  -1 with err when the call cannot even be made: "mcp_dead" (not
 * retryable; "mcp: the server died twice; giving up", or why the client
 * died), "mcp_args" (no tool, or arguments not an object), "nomem".
 * A callback may make new calls.
 */
int	art_mcp_call(struct art_mcp *, const char *tool, jv arguments,
	    int64_t timeout_ms, art_mcp_done_fn *done, void *ctx,
	    struct art_err *);

/*
 * Sets the callback that notifications/progress go to (NULL: none, the
 * default; they are dropped).  It runs from art_mcp_work() or
 * art_mcp_wait_ready(), before the call's done, and must not free the
 * client.
 */
void	art_mcp_set_progress(struct art_mcp *, art_mcp_progress_fn *);

/* Calls made and not yet called back. */
size_t	art_mcp_pending(const struct art_mcp *);

/*
 * Fills up to max pollfds with the server's pipes and the events wanted;
 * returns how many there are (at most ART_MCP_POLLFDS; may exceed max:
 * call again with more room).  0 once the client is dead.
 */
size_t	art_mcp_pollfds(const struct art_mcp *, struct pollfd *, size_t max);

/*
 * Milliseconds until art_mcp_work() is due without any descriptor event
 * (a call or the startup timing out, a dying server's grace ending): 0 at
 * once, -1 not at all.
 */
int	art_mcp_timeout(const struct art_mcp *);

/*
 * After poll: moves the client on with what pfd (as art_mcp_pollfds()
 * filled them, n of them, revents set) says is ready, notices a server
 * that exited, applies timeouts, restarts, and calls back.  pfd may be
 * NULL when n is 0.  Reading and writing never block.
 */
void	art_mcp_work(struct art_mcp *, const struct pollfd *pfd, size_t n);

/*
 * An --mcp argument, "[NAME=]COMMAND ARG...", split without a shell: on
 * blanks, with '...' and "..." quoting (no escapes inside '...', \" and
 * \\ inside "...", \x outside quotes).  *prefix is NAME (a new string;
 * NULL when none), the prefix of the tools it serves ("NAME__tool"); NAME
 * is letters, digits, '-' and '_'.  Returns a NULL-terminated argv the
 * caller frees with art_mcp_argv_free(), or NULL with err "bad_mcp"
 * (nothing to run, an unclosed quote, a bad NAME) or "nomem".
 */
char	**art_mcp_argv(const char *spec, char **prefix, struct art_err *);
void	art_mcp_argv_free(char **);

/* The server's process group (its pid), or -1 when none is running. */
long	art_mcp_pid(const struct art_mcp *);
/* Lines from the server that were not JSON objects, over all its runs. */
size_t	art_mcp_bad_lines(const struct art_mcp *);
/* How many times the server has died (0, 1 or 2). */
int	art_mcp_deaths(const struct art_mcp *);

#endif
