/* worker.h - decisions answered by a worker process or an HTTP worker */
#ifndef ART_WORKER_H
#define ART_WORKER_H

#include <stdbool.h>
#include <stddef.h>

#include <jv.h>

#include "decide.h"
#include "err.h"

/*
 * A worker answers decision.request lines in any language: a long-lived
 * process that reads one request per line on its stdin and writes one
 * answer per line on its stdout (--exec), or an HTTP service each request
 * is POSTed to (--url).  An answer is a DecisionResponse, bare or whole;
 * null, to pass the request on; or {"type": "decision.error", "error",
 * "retryable"}.  Whatever goes wrong on the way (the process died or
 * hung, the connection broke, a 5xx) becomes a decision.error line for
 * the engine, retryable when asking again may help: a request is never
 * dropped.  After a failure the next request waits a backoff (100 ms,
 * doubling to 5 s; reset by an answer), and a dead process is started
 * again.  Requests are asked one at a time.
 */
struct art_worker;

/* A line to put on the bus at once (consumed): a streamed token delta. */
typedef int art_worker_emit_fn(void *arg, jv line);

struct art_clock;

struct art_worker_conf {
	const char	*exec;		/* /bin/sh -c this; or */
	const char	*url;		/* POST to this */
	/* HMAC-SHA256 key of X-Agentrt-Signature; NULL for none.  Copied. */
	const char	*secret;
	size_t		 max_line;	/* the longest answer; 0: the default */
	/* Borrowed for the worker's life; NULL: the real clock. */
	const struct art_clock *clock;
	art_worker_emit_fn *emit;	/* may be NULL: deltas are dropped */
	void		*emit_arg;
};

/*
 * A worker; an --exec process starts with the first request, and a --url
 * worker loads libcurl here (see lib/libcurl.h).  NULL with err ("usage"
 * for a bad conf, "nomem", "http").
 */
struct art_worker *art_worker_new(const struct art_worker_conf *,
	    struct art_err *);
/*
 * Closes the process's stdin and gives it a moment to exit before
 * killing its process group; reaps it.
 */
void	art_worker_free(struct art_worker *);

/*
 * Asks the worker about one decision.request (line, already checked to
 * have string decision_id and session_id; raw its bytes, sent as they
 * are), waiting no longer than the request's deadline.  ART_DECIDE_PASS
 * when it answered null; otherwise ART_DECIDE_ANSWER with *out (the
 * caller's) a decision.response or decision.error line.  A bad answer is
 * a decision.error too (not retryable).  Whenever the worker failed
 * (not when it answered a decision.error itself), err says how (code
 * "bad_response" for a bad answer, "worker" for the rest), for the
 * caller to say on stderr; err's code is NULL otherwise.
 */
enum art_decide_verdict art_worker_ask(struct art_worker *, const jv *line,
	    const char *raw, size_t rawlen, jv *out, struct art_err *);

/* The decision.error line for the request line; msg is copied. */
jv	art_worker_error_line(const jv *line, const char *msg, bool retryable);

#endif
