/* http.c - HTTP requests in flight together, driven by the caller's poll
 *
 * libcurl's multi "socket" interface tells us, through two callbacks, which
 * sockets it wants watched and for what (kept in a small table that
 * art_http_pollfds() copies out) and when it next wants to be woken without
 * any socket event (kept as an absolute CLOCK_MONOTONIC deadline, so
 * art_http_timeout() is the time left).  art_http_work() hands libcurl what
 * poll saw, then reads the finished transfers off the multi handle and calls
 * their done callbacks.
 *
 * libcurl refuses art_curl.multi_add_handle() while it is inside one of its own
 * callbacks, and a data callback runs there; a transfer started then waits
 * on a queue until art_curl.multi_socket_action() has returned.
 */
#include <config.h>

#include "http.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "libcurl.h"

#ifndef CURL_WRITEFUNC_ERROR		/* libcurl before 7.87 */
#define CURL_WRITEFUNC_ERROR	0
#endif

/* A socket libcurl wants watched, and the poll events it wants. */
struct sock {
	curl_socket_t	 fd;
	short		 events;
};

/* One transfer, from art_http_start() to its done callback. */
struct xfer {
	CURL			*easy;
	struct curl_slist	*hdrs;
	art_http_data_fn	*data;
	art_http_done_fn	*done;
	void			*ctx;
	jv			 headers;	/* the last response's */
	bool			 stopped;	/* the data callback said so */
	bool			 added;		/* on the multi handle */
	struct xfer		*prev, *next;	/* every transfer */
	struct xfer		*queued;	/* waiting to be added */
	char			 errbuf[CURL_ERROR_SIZE];
};

struct art_http {
	CURLM		*multi;
	struct sock	*socks;
	size_t		 nsocks, capsocks;
	struct timespec	 deadline;
	bool		 timer;		/* deadline is set */
	bool		 timer_moved;	/* the timer callback ran */
	bool		 in_curl;	/* inside art_curl.multi_socket_action() */
	size_t		 active;
	struct xfer	*xfers;
	struct xfer	*queue, *queue_tail;
};

static struct timespec
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts;
}

static struct timespec
after_ms(long ms)
{
	struct timespec ts = now();

	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static struct sock *
find_sock(const struct art_http *h, curl_socket_t fd)
{
	size_t i;

	for (i = 0; i < h->nsocks; i++)
		if (h->socks[i].fd == fd)
			return &h->socks[i];
	return NULL;
}

static void
drop_sock(struct art_http *h, curl_socket_t fd)
{
	struct sock *s = find_sock(h, fd);

	if (s != NULL)
		*s = h->socks[--h->nsocks];
}

static int
watch_sock(struct art_http *h, curl_socket_t fd, short events)
{
	struct sock *s = find_sock(h, fd);

	if (s != NULL) {
		s->events = events;
		return 0;
	}
	if (art_grow(&h->socks, &h->capsocks, h->nsocks + 1,
	    sizeof(*h->socks)) == -1)
		return -1;
	h->socks[h->nsocks].fd = fd;
	h->socks[h->nsocks].events = events;
	h->nsocks++;
	return 0;
}

/* CURLMOPT_SOCKETFUNCTION: a socket that wants nothing leaves the table. */
static int
on_socket(CURL *easy, curl_socket_t fd, int what, void *arg, void *sockp)
{
	struct art_http *h = arg;
	short events = 0;

	(void)easy;
	(void)sockp;
	if (what & CURL_POLL_IN)
		events |= POLLIN;
	if (what & CURL_POLL_OUT)
		events |= POLLOUT;
	if (what == CURL_POLL_REMOVE || events == 0) {
		drop_sock(h, fd);
		return 0;
	}
	return watch_sock(h, fd, events);
}

/* CURLMOPT_TIMERFUNCTION: one deadline, replaced or removed each call. */
static int
on_timer(CURLM *multi, long ms, void *arg)
{
	struct art_http *h = arg;

	(void)multi;
	h->timer_moved = true;
	h->timer = ms >= 0;
	if (h->timer)
		h->deadline = after_ms(ms);
	return 0;
}

struct art_http *
art_http_new(struct art_err *err)
{
	struct art_http *h;

	if (art_curl_load(err) == -1)
		return NULL;
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	if ((h->multi = art_curl.multi_init()) == NULL) {
		free(h);
		art_err_set(err, "http", "start libcurl: curl_multi_init "
		    "failed");
		return NULL;
	}
	art_curl.multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	art_curl.multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	art_curl.multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	art_curl.multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	/*
	 * Past this many connections to one host, transfers wait their turn
	 * inside libcurl rather than flood the server's listen queue (a small
	 * one drops them, to be retried a second later; bench/README.md).
	 */
	art_curl.multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
	    (long)ART_HTTP_MAX_HOST);
	return h;
}

static void
xfer_free(struct xfer *x)
{
	art_curl.easy_cleanup(x->easy);
	art_curl.slist_free_all(x->hdrs);
	jv_free(x->headers);
	free(x);
}

/* Takes x off the list and the multi handle; the caller frees it. */
static void
unlink_xfer(struct art_http *h, struct xfer *x)
{
	if (x->added)
		art_curl.multi_remove_handle(h->multi, x->easy);
	x->added = false;
	if (x->prev != NULL)
		x->prev->next = x->next;
	else
		h->xfers = x->next;
	if (x->next != NULL)
		x->next->prev = x->prev;
	h->active--;
}

void
art_http_free(struct art_http *h)
{
	struct xfer *x;

	if (h == NULL)
		return;
	while ((x = h->xfers) != NULL) {
		unlink_xfer(h, x);
		xfer_free(x);
	}
	art_curl.multi_cleanup(h->multi);
	free(h->socks);
	free(h);
}

/*
 * CURLOPT_HEADERFUNCTION: "Name: value" lines into x->headers, the name
 * lower-cased and repeats joined with ", ".  A status line starts the set
 * afresh, so a 1xx answer's headers never reach the callbacks.
 */
static size_t
on_header(char *p, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb, len = n, nlen, i;
	const char *colon, *v, *end;
	char *name;
	jv key, old, val;

	if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		jv_free(x->headers);
		x->headers = jv_object();
		return n;
	}
	while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == '\n'))
		len--;
	/* a folded line (obsolete) or a line with no name is not a header */
	if (len == 0 || p[0] == ' ' || p[0] == '\t' ||
	    (colon = memchr(p, ':', len)) == NULL || colon == p)
		return n;
	nlen = (size_t)(colon - p);
	if ((name = malloc(nlen)) == NULL)
		return CURL_WRITEFUNC_ERROR;
	for (i = 0; i < nlen; i++)	/* ASCII only, whatever the locale */
		name[i] = p[i] >= 'A' && p[i] <= 'Z' ? p[i] - 'A' + 'a' : p[i];
	key = jv_string_sized(name, (int)nlen);
	free(name);
	v = colon + 1;
	end = p + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	val = jv_string_sized(v, (int)(end - v));
	old = jv_object_get(jv_copy(x->headers), jv_copy(key));
	if (jv_get_kind(old) == JV_KIND_STRING)
		val = jv_string_concat(jv_string_append_str(old,
		    ", "), val);
	else
		jv_free(old);
	x->headers = jv_object_set(x->headers, key, val);
	return n;
}

/* CURLOPT_WRITEFUNCTION: body bytes to the data callback. */
static size_t
on_data(char *p, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb;
	long status = 0;

	if (x->data == NULL)
		return n;
	art_curl.easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
	if (x->data(x->ctx, status, &x->headers, p, n) == 0)
		return n;
	x->stopped = true;
	return CURL_WRITEFUNC_ERROR;
}

/* Sets every option; libcurl's first complaint, or CURLE_OK. */
static CURLcode
setup(struct xfer *x, const struct art_http_req *req)
{
	CURL *e = x->easy;
	CURLcode rc = CURLE_OK;

#define SET(opt, val) \
	do { if (rc == CURLE_OK) rc = art_curl.easy_setopt(e, opt, val); } while (0)
	SET(CURLOPT_URL, req->url);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_ACCEPT_ENCODING, "");
	SET(CURLOPT_ERRORBUFFER, x->errbuf);
	SET(CURLOPT_PRIVATE, (void *)x);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, (void *)x);
	SET(CURLOPT_WRITEFUNCTION, on_data);
	SET(CURLOPT_WRITEDATA, (void *)x);
	SET(CURLOPT_HTTPHEADER, x->hdrs);
	/* Every request names us; a User-Agent header of the caller's wins. */
	SET(CURLOPT_USERAGENT, "agentrt/" PACKAGE_VERSION);
	if (req->timeout_ms > 0)
		SET(CURLOPT_TIMEOUT_MS, req->timeout_ms > LONG_MAX ? LONG_MAX :
		    (long)req->timeout_ms);
	if (req->body != NULL) {
		/* the size first, so COPYPOSTFIELDS copies that many bytes */
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		SET(CURLOPT_COPYPOSTFIELDS, req->body);
	} else
		SET(CURLOPT_HTTPGET, 1L);
#undef SET
	return rc;
}

/* The request's header lines, and "Expect:" so no POST waits for a 100. */
static int
header_list(struct xfer *x, const char *const *headers)
{
	struct curl_slist *l;
	size_t i;

	for (i = 0; headers != NULL && headers[i] != NULL; i++) {
		if ((l = art_curl.slist_append(x->hdrs, headers[i])) == NULL)
			return -1;
		x->hdrs = l;
	}
	if ((l = art_curl.slist_append(x->hdrs, "Expect:")) == NULL)
		return -1;
	x->hdrs = l;
	return 0;
}

static struct xfer *
xfer_new(const struct art_http_req *req, struct art_err *err)
{
	struct xfer *x;
	CURLcode rc;

	if ((x = calloc(1, sizeof(*x))) == NULL) {
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	x->headers = jv_object();
	if ((x->easy = art_curl.easy_init()) == NULL ||
	    header_list(x, req->headers) == -1) {
		xfer_free(x);
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	if ((rc = setup(x, req)) != CURLE_OK) {
		xfer_free(x);
		art_err_set(err, rc == CURLE_OUT_OF_MEMORY ? "nomem" : "http",
		    "set up request: %s", art_curl.easy_strerror(rc));
		return NULL;
	}
	return x;
}

static int
add(struct art_http *h, struct xfer *x, struct art_err *err)
{
	CURLMcode mc;

	if ((mc = art_curl.multi_add_handle(h->multi, x->easy)) != CURLM_OK)
		return art_err_set(err, mc == CURLM_OUT_OF_MEMORY ? "nomem" :
		    "http", "start request: %s", art_curl.multi_strerror(mc));
	x->added = true;
	return 0;
}

int
art_http_start(struct art_http *h, const struct art_http_req *req,
    art_http_data_fn *data, art_http_done_fn *done, void *ctx,
    struct art_err *err)
{
	struct xfer *x;

	if ((x = xfer_new(req, err)) == NULL)
		return -1;
	x->data = data;
	x->done = done;
	x->ctx = ctx;
	if (h->in_curl) {
		if (h->queue_tail != NULL)
			h->queue_tail->queued = x;
		else
			h->queue = x;
		h->queue_tail = x;
	} else if (add(h, x, err) == -1) {
		xfer_free(x);
		return -1;
	}
	x->next = h->xfers;
	if (h->xfers != NULL)
		h->xfers->prev = x;
	h->xfers = x;
	h->active++;
	return 0;
}

size_t
art_http_active(const struct art_http *h)
{
	return h->active;
}

size_t
art_http_pollfds(const struct art_http *h, struct pollfd *pfd, size_t max)
{
	size_t i;

	for (i = 0; i < h->nsocks && i < max; i++) {
		pfd[i].fd = h->socks[i].fd;
		pfd[i].events = h->socks[i].events;
		pfd[i].revents = 0;
	}
	return h->nsocks;
}

int
art_http_timeout(const struct art_http *h)
{
	struct timespec t;
	int64_t ns;

	if (!h->timer)
		return -1;
	t = now();
	ns = ((int64_t)h->deadline.tv_sec - t.tv_sec) * 1000000000 +
	    (h->deadline.tv_nsec - t.tv_nsec);
	if (ns <= 0)
		return 0;
	if (ns / 1000000 >= INT_MAX)
		return INT_MAX;
	return (int)((ns + 999999) / 1000000);	/* up: never wake early */
}

static bool
timer_is_due(const struct art_http *h)
{
	struct timespec t;

	if (!h->timer)
		return false;
	t = now();
	return t.tv_sec > h->deadline.tv_sec || (t.tv_sec ==
	    h->deadline.tv_sec && t.tv_nsec >= h->deadline.tv_nsec);
}

static enum art_http_result
result_of(const struct xfer *x, CURLcode rc)
{
	switch (rc) {
	case CURLE_OK:
		return ART_HTTP_OK;
	case CURLE_OPERATION_TIMEDOUT:
		return ART_HTTP_TIMEOUT;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return ART_HTTP_CONNECT;
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2_STREAM:
		return ART_HTTP_BROKEN;
	case CURLE_WRITE_ERROR:
		if (x->stopped)
			return ART_HTTP_STOPPED;
		return ART_HTTP_FAILED;
	default:
		return ART_HTTP_FAILED;
	}
}

/*
 * Calls x's done callback, then frees x.  x is off the multi handle first,
 * so that art_http_active() no longer counts it and the callback may start
 * the next request at once.
 */
static void
finish(struct art_http *h, struct xfer *x, CURLcode rc, const char *why)
{
	struct art_http_done d;

	unlink_xfer(h, x);
	d.result = result_of(x, rc);
	d.status = 0;
	art_curl.easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &d.status);
	d.headers = &x->headers;
	if (rc == CURLE_OK)
		d.message = "";
	else if (why != NULL)
		d.message = why;
	else
		d.message = x->errbuf[0] != '\0' ? x->errbuf :
		    art_curl.easy_strerror(rc);
	if (x->done != NULL)
		x->done(x->ctx, &d);
	xfer_free(x);
}

/* Adds the transfers started from inside libcurl's callbacks. */
static void
add_queued(struct art_http *h)
{
	struct art_err e;
	struct xfer *x;

	while ((x = h->queue) != NULL) {
		if ((h->queue = x->queued) == NULL)
			h->queue_tail = NULL;
		x->queued = NULL;
		if (add(h, x, &e) == -1)
			finish(h, x, CURLE_FAILED_INIT, e.msg);
	}
}

static void
act(struct art_http *h, curl_socket_t fd, int ev)
{
	int running;

	h->in_curl = true;
	art_curl.multi_socket_action(h->multi, fd, ev, &running);
	h->in_curl = false;
	add_queued(h);
}

static int
select_bits(short revents)
{
	int ev = 0;

	if (revents & (POLLIN | POLLPRI | POLLHUP))
		ev |= CURL_CSELECT_IN;
	if (revents & POLLOUT)
		ev |= CURL_CSELECT_OUT;
	if (revents & (POLLERR | POLLNVAL))
		ev |= CURL_CSELECT_ERR;
	return ev;
}

/*
 * A due timer that libcurl did not move, say because poll woke a little
 * before libcurl's own clock reached it, is set again from what libcurl
 * says now, so it neither stays due forever nor is lost.
 */
static void
run_timer(struct art_http *h)
{
	long ms = -1;

	h->timer_moved = false;
	act(h, CURL_SOCKET_TIMEOUT, 0);
	if (h->timer_moved)
		return;
	art_curl.multi_timeout(h->multi, &ms);
	h->timer = ms >= 0;
	if (h->timer)
		h->deadline = after_ms(ms);
}

void
art_http_work(struct art_http *h, const struct pollfd *pfd, size_t n)
{
	CURLMsg *m;
	char *x;
	size_t i;
	int left;

	for (i = 0; i < n; i++) {
		/* an earlier action may have closed this socket */
		if (pfd[i].revents == 0 || find_sock(h, pfd[i].fd) == NULL)
			continue;
		act(h, pfd[i].fd, select_bits(pfd[i].revents));
	}
	if (timer_is_due(h))
		run_timer(h);
	while ((m = art_curl.multi_info_read(h->multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		x = NULL;
		art_curl.easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &x);
		if (x != NULL)
			finish(h, (struct xfer *)(void *)x, m->data.result,
			    NULL);
	}
}
