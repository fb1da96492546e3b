/* http.h - HTTP requests in flight together, driven by the caller's poll */
#ifndef ART_HTTP_H
#define ART_HTTP_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"

/*
 * Many requests at once over libcurl's multi interface, with no thread and
 * no loop of its own: the caller's poll(2) waits on the sockets
 * art_http_pollfds() gives, for at most art_http_timeout() ms, and then
 * calls art_http_work(), which moves every transfer on and calls back.
 * Connections are kept alive and reused between requests to one host.
 * Every request says "User-Agent: agentrt/VERSION" unless its headers
 * name another.
 * The first art_http_new() loads libcurl (lib/libcurl.h); the process
 * calls art_curl_unload() before it exits.
 */

struct art_http;

/* Connections at once to one host; more transfers queue for one. */
#define ART_HTTP_MAX_HOST	48

struct art_http_req {
	const char		*url;
	/* "Name: value" lines, NULL-terminated; NULL for none. */
	const char *const	*headers;
	const char		*body;		/* POST it; NULL: GET */
	size_t			 body_len;
	int64_t			 timeout_ms;	/* the whole exchange; 0: none */
};

enum art_http_result {
	ART_HTTP_OK,		/* a whole response came */
	ART_HTTP_TIMEOUT,	/* timeout_ms passed first */
	ART_HTTP_CONNECT,	/* no connection (refused, no such host) */
	ART_HTTP_BROKEN,	/* the connection broke, or the body ended early */
	ART_HTTP_STOPPED,	/* the data callback asked to stop */
	ART_HTTP_FAILED		/* anything else libcurl reports */
};

struct art_http_done {
	enum art_http_result	 result;
	long			 status;	/* 0 when no status line came */
	const jv		*headers;	/* lower-cased name -> value */
	const char		*message;	/* libcurl's words; "" when OK */
};

/*
 * Body bytes as they arrive, after the status line and headers (headers
 * as in art_http_done, borrowed for the call).  Returns 0 to go on, or
 * anything else to stop the transfer (its done callback then says
 * ART_HTTP_STOPPED).
 */
typedef int art_http_data_fn(void *ctx, long status, const jv *headers,
    const char *p, size_t n);
/* The end of a transfer, once; done and what it points to are borrowed. */
typedef void art_http_done_fn(void *ctx, const struct art_http_done *done);

/* NULL with err ("nomem", or "http" with libcurl's words). */
struct art_http *art_http_new(struct art_err *);
/* Drops every transfer still running without calling back. */
void	art_http_free(struct art_http *);

/*
 * Starts req; the strings it points to are copied.  The callbacks come
 * only from art_http_work(), never from here.  -1 with err when the
 * transfer cannot even start.
 */
int	art_http_start(struct art_http *, const struct art_http_req *,
	    art_http_data_fn *, art_http_done_fn *, void *ctx,
	    struct art_err *);

/* Transfers started and not yet done. */
size_t	art_http_active(const struct art_http *);

/*
 * Fills up to max pollfds with the sockets libcurl waits on and the events
 * it waits for; returns how many there are (which may exceed max: call
 * again with more room).
 */
size_t	art_http_pollfds(const struct art_http *, struct pollfd *,
	    size_t max);

/* Milliseconds until art_http_work() is due without any socket event: 0
 * at once, -1 not at all. */
int	art_http_timeout(const struct art_http *);

/*
 * After poll: tells libcurl which of pfd (as art_http_pollfds() filled
 * them, n of them, with revents set) are ready and which timers are due,
 * then calls back for what arrived and for each transfer that ended.
 * pfd may be NULL when n is 0 (a timeout).
 */
void	art_http_work(struct art_http *, const struct pollfd *pfd, size_t n);

#endif
