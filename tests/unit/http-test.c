/* http-test - requests to a scripted local server, driven through poll */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "libcurl.h"
#include <jv.h>

#include "json.h"
#include "sse.h"
#include "tap.h"

#define SERVER		"tests/helpers/llmserver.py"
#define FIXTURES	"tests/fixtures"
#define LIMIT_MS	10000		/* the most one run() waits */
#define SECRET		"sk-test-secret-0123456789"

/* The server child, its scratch directory, and the URL it answers at. */
struct rig {
	pid_t			 pid;
	char			 dir[64];
	char			 base[64];
	struct art_http		*h;
};

/* What one transfer gave its callbacks. */
struct got {
	char			*body;
	size_t			 len, cap;
	size_t			 ncalls;	/* data callbacks */
	long			 data_status;	/* what the data fn saw */
	int			 data_headers;	/* it saw a content-type */
	size_t			 stop_after;	/* stop at this call; 0: no */
	int			 ndone;
	enum art_http_result	 result;
	long			 status;
	jv			 headers;
	char			 message[256];
	/* a request to start from a callback, and where it reports */
	struct art_http		*h;
	char			 next_url[128];
	struct got		*next;
	int			 from_data;	/* start it from the data fn */
};

static const char *
srcdir(void)
{
	const char *d = getenv("top_srcdir");

	return d != NULL && *d != '\0' ? d : ".";
}

static double
ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 +
	    (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static void
pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static char *
slurp(const char *path, size_t *len)
{
	char *buf = NULL, *nb;
	size_t cap = 0, n = 0, k;
	FILE *f;

	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			cap = cap > 0 ? 2 * cap : 8192;
			if ((nb = realloc(buf, cap)) == NULL)
				abort();
			buf = nb;
		}
		k = fread(buf + n, 1, cap - n - 1, f);
		n += k;
	} while (k > 0);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int
have_python3(void)
{
	const char *path = getenv("PATH");
	char dir[4096], file[4200];
	const char *p, *e;
	size_t n;

	for (p = path != NULL ? path : "/usr/bin:/bin"; *p != '\0'; p = e) {
		e = strchr(p, ':');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		snprintf(dir, sizeof(dir), "%.*s", (int)n, p);
		snprintf(file, sizeof(file), "%s/python3", n > 0 ? dir : ".");
		if (access(file, X_OK) == 0)
			return 1;
		e = e != NULL ? e + 1 : p + n;
	}
	return 0;
}

static void
exec_server(const char *script, const char *portfile, const char *logfile,
    pid_t parent)
{
#ifdef __linux__
	/* the server goes when we do, however we go */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1);
#else
	(void)parent;
#endif
	execlp("python3", "python3", script, "--port-file", portfile,
	    "--log", logfile, (char *)NULL);
	_exit(127);
}

/* Waits up to 10 s for the port file; the port, or 0. */
static long
wait_port(struct rig *r, const char *portfile)
{
	struct timespec t0;
	long port = 0;
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < 10000) {
		if ((f = fopen(portfile, "r")) != NULL) {
			if (fscanf(f, "%ld", &port) != 1)
				port = 0;
			fclose(f);
			if (port > 0)
				return port;
		}
		if (waitpid(r->pid, NULL, WNOHANG) == r->pid) {
			r->pid = 0;		/* it died: nothing to kill */
			return 0;
		}
		pause_ms(10);
	}
	return 0;
}

static void
stop_server(struct rig *r)
{
	char path[128];

	if (r->pid > 0) {
		kill(r->pid, SIGTERM);
		waitpid(r->pid, NULL, 0);
		r->pid = 0;
	}
	snprintf(path, sizeof(path), "%s/port", r->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/log", r->dir);
	unlink(path);
	rmdir(r->dir);
}

static int
start_server(struct rig *r)
{
	char script[4096], portfile[128], logfile[128];
	pid_t parent = getpid();
	long port;

	snprintf(r->dir, sizeof(r->dir), "/tmp/http-test.XXXXXX");
	if (mkdtemp(r->dir) == NULL)
		return -1;
	snprintf(script, sizeof(script), "%s/%s", srcdir(), SERVER);
	snprintf(portfile, sizeof(portfile), "%s/port", r->dir);
	snprintf(logfile, sizeof(logfile), "%s/log", r->dir);
	fflush(stdout);
	if ((r->pid = fork()) == -1)
		return -1;
	if (r->pid == 0)
		exec_server(script, portfile, logfile, parent);
	if ((port = wait_port(r, portfile)) == 0) {
		stop_server(r);
		return -1;
	}
	snprintf(r->base, sizeof(r->base), "http://127.0.0.1:%ld", port);
	return 0;
}

/* What poll was given while transfers ran. */
struct seen {
	size_t	 max_socks;	/* the most sockets at once */
	int	 port;		/* the local port of the first one; 0: none */
};

static int
local_port(int fd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len) == -1 ||
	    sa.sin_family != AF_INET)
		return 0;
	return ntohs(sa.sin_port);
}

/*
 * Moves every transfer on until none is left, or limit_ms have passed,
 * noting in seen (which may be NULL) what poll was given.
 */
static void
run_seen(struct art_http *h, int limit_ms, struct seen *seen)
{
	struct pollfd pfd[64];
	struct timespec t0;
	size_t n;
	int t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (art_http_active(h) > 0 && ms_since(&t0) < limit_ms) {
		if ((n = art_http_pollfds(h, pfd, 64)) > 64)
			n = 64;
		if (seen != NULL && n > seen->max_socks)
			seen->max_socks = n;
		if (seen != NULL && seen->port == 0 && n > 0)
			seen->port = local_port(pfd[0].fd);
		t = art_http_timeout(h);
		if (t < 0 || t > 50)
			t = 50;
		if (poll(pfd, n, t) == -1 && errno != EINTR)
			break;
		art_http_work(h, pfd, n);
	}
}

static void
run(struct art_http *h, int limit_ms)
{
	run_seen(h, limit_ms, NULL);
}

static void
got_init(struct got *g)
{
	memset(g, 0, sizeof(*g));
	g->headers = jv_null();
	g->result = (enum art_http_result)-1;
}

static void
got_release(struct got *g)
{
	free(g->body);
	jv_free(g->headers);
}

static void
got_append(struct got *g, const char *p, size_t n)
{
	char *nb;

	if (g->len + n + 1 > g->cap) {
		g->cap = g->cap > 0 ? g->cap : 4096;
		while (g->cap < g->len + n + 1)
			g->cap *= 2;
		if ((nb = realloc(g->body, g->cap)) == NULL)
			abort();
		g->body = nb;
	}
	memcpy(g->body + g->len, p, n);
	g->len += n;
	g->body[g->len] = '\0';
}

static int on_data(void *, long, const jv *, const char *, size_t);
static void on_done(void *, const struct art_http_done *);

/* Starts a request; body, if any, is JSON written with ' for ". */
static int
start(struct art_http *h, const char *url, const char *body,
    const char *const *headers, int64_t timeout_ms, struct got *g)
{
	struct art_http_req req = {
		.url = url,
		.headers = headers,
		.timeout_ms = timeout_ms,
	};
	struct art_err err;
	char *json = NULL, *p;
	int rc = 0;

	/* the body is copied: this one does not outlive the call */
	if (body != NULL && (json = strdup(body)) == NULL)
		abort();
	for (p = json; p != NULL && *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	req.body = json;
	req.body_len = json != NULL ? strlen(json) : 0;
	if (art_http_start(h, &req, on_data, on_done, g, &err) == -1) {
		printf("#   start %s: %s\n", url, err.msg);
		rc = -1;
	}
	free(json);
	return rc;
}

/* Starts g's follow-up request, once. */
static void
chain(struct got *g)
{
	if (g->h == NULL || g->next == NULL)
		return;
	start(g->h, g->next_url, NULL, NULL, 0, g->next);
	g->h = NULL;
}

static int
on_data(void *ctx, long status, const jv *headers, const char *p,
    size_t n)
{
	struct got *g = ctx;
	jv ct = jv_object_get(jv_copy(*headers), jv_string("content-type"));

	g->data_headers = jv_get_kind(ct) == JV_KIND_STRING;
	jv_free(ct);
	g->data_status = status;
	got_append(g, p, n);
	g->ncalls++;
	if (g->from_data)
		chain(g);
	return g->stop_after > 0 && g->ncalls >= g->stop_after;
}

static void
on_done(void *ctx, const struct art_http_done *d)
{
	struct got *g = ctx;

	g->ndone++;
	g->result = d->result;
	g->status = d->status;
	jv_free(g->headers);
	g->headers = jv_copy(*d->headers);
	snprintf(g->message, sizeof(g->message), "%s", d->message);
	if (!g->from_data)
		chain(g);
}

/* One request, run to its end. */
static void
fetch(struct rig *r, const char *path, const char *body,
    const char *const *headers, int64_t timeout_ms, struct got *g)
{
	char url[256];

	snprintf(url, sizeof(url), "%s%s", r->base, path);
	if (start(r->h, url, body, headers, timeout_ms, g) == 0)
		run(r->h, LIMIT_MS);
}

/*
 * v's value at a dotted path ("choices.0.delta.content"); numbers index
 * arrays.  v is borrowed; the result is new, jv_null() when absent.
 */
static jv
at(const jv *v, const char *path)
{
	jv cur = jv_copy(*v);
	char seg[128];
	const char *p = path, *e;
	size_t n;

	while (*p != '\0' && jv_is_valid(cur)) {
		e = strchr(p, '.');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		snprintf(seg, sizeof(seg), "%.*s", (int)n, p);
		if (jv_get_kind(cur) == JV_KIND_ARRAY)
			cur = jv_array_get(cur, atoi(seg));
		else if (jv_get_kind(cur) == JV_KIND_OBJECT)
			cur = jv_object_get(cur, jv_string(seg));
		else {
			jv_free(cur);
			cur = jv_invalid();
		}
		p = e != NULL ? e + 1 : p + n;
	}
	if (!jv_is_valid(cur)) {
		jv_free(cur);
		return jv_null();
	}
	return cur;
}

/* True when v's string at path is want; says what it is when not. */
static int
str_at_quiet(const jv *v, const char *path, const char *want, int quiet)
{
	jv s = at(v, path);
	int eq = jv_get_kind(s) == JV_KIND_STRING &&
	    strcmp(jv_string_value(s), want) == 0;

	if (!eq && !quiet && jv_get_kind(s) == JV_KIND_STRING)
		printf("#   %s is \"%s\", not \"%s\"\n", path,
		    jv_string_value(s), want);
	jv_free(s);
	return eq;
}

static int
str_at(const jv *v, const char *path, const char *want)
{
	return str_at_quiet(v, path, want, 0);
}

static int
kind_at(const jv *v, const char *path, jv_kind kind)
{
	jv x = at(v, path);
	int eq = jv_get_kind(x) == kind;

	jv_free(x);
	return eq;
}

static double
num_at(const jv *v, const char *path)
{
	jv x = at(v, path);
	double d = jv_get_kind(x) == JV_KIND_NUMBER ? jv_number_value(x) : -1;

	jv_free(x);
	return d;
}

/* The body as JSON (jv_invalid() when it is not). */
static jv
body_json(const struct got *g)
{
	struct art_err err;

	if (g->body == NULL)
		return jv_invalid();
	return art_json_parse(g->body, g->len, &err);
}

static void
test_echo_shows_the_post_the_server_got(struct rig *r)
{
	const char *hdrs[] = { "Content-Type: application/json",
	    "X-Art-Test: hello there", NULL };
	struct got g;
	jv v;

	got_init(&g);
	fetch(r, "/echo", "{'q':[1,2,3]}", hdrs, 5000, &g);
	v = body_json(&g);
	ok(g.ndone == 1 && g.result == ART_HTTP_OK && g.status == 200 &&
	    *g.message == '\0', "a POST to echo is OK with 200 and no message");
	ok(g.data_status == 200 && g.data_headers,
	    "the data callback sees the status and the headers");
	ok(str_at(&v, "method", "POST") && str_at(&v, "path", "/echo"),
	    "the server saw a POST to /echo");
	ok(num_at(&v, "body.q.2") == 3 && str_at(&v, "headers.content-type",
	    "application/json"), "the server got the body as sent");
	ok(str_at(&v, "headers.x-art-test", "hello there"),
	    "the server got the custom header");
	ok(kind_at(&v, "headers.expect", JV_KIND_NULL),
	    "no Expect: 100-continue goes out");
	jv_free(v);
	got_release(&g);
}

static void
test_get_has_no_body(struct rig *r)
{
	struct got g;
	jv v;

	got_init(&g);
	fetch(r, "/echo?x=1", NULL, NULL, 5000, &g);
	v = body_json(&g);
	ok(g.result == ART_HTTP_OK && str_at(&v, "method", "GET") &&
	    str_at(&v, "path", "/echo?x=1") && kind_at(&v, "body",
	    JV_KIND_NULL), "a NULL body is a GET with no body");
	jv_free(v);
	got_release(&g);
}

static void
test_response_headers_are_lower_cased(struct rig *r)
{
	struct got g;
	int upper = 0;

	got_init(&g);
	fetch(r, "/echo", "{}", NULL, 5000, &g);
	ok(str_at(&g.headers, "content-type", "application/json") &&
	    kind_at(&g.headers, "content-length", JV_KIND_STRING),
	    "Content-Type and Content-Length come as content-type and "
	    "content-length");
	jv_object_foreach(g.headers, k, val) {
		if (strpbrk(jv_string_value(k), "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
			upper++;
		jv_free(k);
		jv_free(val);
	}
	ok(upper == 0 && jv_object_length(jv_copy(g.headers)) >= 2,
	    "no header name keeps an upper-case letter");
	got_release(&g);
}

static void
test_stream_arrives_in_pieces_byte_for_byte(struct rig *r)
{
	char path[4096];
	struct got g;
	size_t n;
	char *want;

	snprintf(path, sizeof(path), "%s/%s/sse/chat-stream-text-with-usage"
	    ".sse", srcdir(), FIXTURES);
	want = slurp(path, &n);
	got_init(&g);
	fetch(r, "/chunk/3/fixture/sse/chat-stream-text-with-usage.sse", NULL,
	    NULL, 0, &g);
	ok(g.result == ART_HTTP_OK && str_at(&g.headers, "content-type",
	    "text/event-stream"), "an event stream comes whole");
	ok(g.ncalls > 10, "in many data callbacks (%zu)", g.ncalls);
	ok(want != NULL && g.len == n && memcmp(g.body, want, n) == 0,
	    "whose bytes are the fixture's, byte for byte");
	free(want);
	got_release(&g);
}

/* Starts n requests to path together and runs them; the time it took. */
static double
all_at_once(struct rig *r, const char *path, struct got *g, int n,
    struct seen *seen)
{
	struct timespec t0;
	char url[256], body[64];
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		got_init(&g[i]);
		snprintf(url, sizeof(url), "%s%s", r->base, path);
		snprintf(body, sizeof(body), "{'i':%d}", i);
		start(r->h, url, body, NULL, 10000, &g[i]);
	}
	ok(art_http_active(r->h) == (size_t)n, "%d transfers are active", n);
	run_seen(r->h, LIMIT_MS, seen);
	return ms_since(&t0);
}

static void
test_eight_together_all_complete(struct rig *r)
{
	struct got g[8];
	int i, good = 0;
	jv v;

	all_at_once(r, "/echo", g, 8, NULL);
	for (i = 0; i < 8; i++) {
		v = body_json(&g[i]);
		good += g[i].ndone == 1 && g[i].result == ART_HTTP_OK &&
		    num_at(&v, "body.i") == i;
		jv_free(v);
		got_release(&g[i]);
	}
	ok(good == 8, "8 transfers started together all complete, each "
	    "with its own answer (%d)", good);
	ok(art_http_active(r->h) == 0, "and none is left active");
}

static void
test_eight_stalls_overlap(struct rig *r)
{
	struct seen seen = { 0 };
	struct got g[8];
	int i, good = 0;
	double ms;

	ms = all_at_once(r, "/stall/300/echo", g, 8, &seen);
	for (i = 0; i < 8; i++) {
		good += g[i].result == ART_HTTP_OK && g[i].status == 200;
		got_release(&g[i]);
	}
	ok(good == 8 && ms < 2000, "8 requests stalled 300 ms each take "
	    "%.0f ms together, not 2400", ms);
	ok(seen.max_socks >= 8, "over 8 sockets polled at once (%zu)",
	    seen.max_socks);
}

static void
test_status_is_not_a_failure(struct rig *r)
{
	struct got g;

	got_init(&g);
	fetch(r, "/status/503", NULL, NULL, 5000, &g);
	ok(g.result == ART_HTTP_OK && g.status == 503 && g.data_status == 503,
	    "a 503 is an OK transfer with status 503");
	ok(g.body != NULL && strstr(g.body, "scripted 503") != NULL,
	    "and its body comes to the data callback");
	got_release(&g);
}

static void
test_dropped_stream_is_broken(struct rig *r)
{
	struct got g;

	got_init(&g);
	fetch(r, "/drop/40/fixture/sse/chat-stream-text-with-usage.sse",
	    NULL, NULL, 5000, &g);
	ok(g.result == ART_HTTP_BROKEN && g.status == 200,
	    "a stream cut after 40 bytes is BROKEN (%d: %s)", (int)g.result,
	    g.message);
	ok(g.len <= 40 && *g.message != '\0',
	    "after at most 40 bytes (%zu), with libcurl's words", g.len);
	got_release(&g);
}

static void
test_timeout(struct rig *r)
{
	const char *hdrs[] = { "Authorization: Bearer " SECRET, NULL };
	struct timespec t0;
	struct got g;
	double ms;

	got_init(&g);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fetch(r, "/stall/2000/echo", "{}", hdrs, 200, &g);
	ms = ms_since(&t0);
	ok(g.result == ART_HTTP_TIMEOUT && g.status == 0,
	    "a 2 s stall with timeout_ms 200 is a TIMEOUT (%d: %s)",
	    (int)g.result, g.message);
	ok(ms >= 190 && ms < 1500, "after about 200 ms (%.0f)", ms);
	ok(strstr(g.message, SECRET) == NULL && *g.message != '\0',
	    "the message names no request header");
	got_release(&g);
}

/* A port nobody listens on: bound, read, closed. */
static int
closed_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd, port = -1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static void
test_closed_port_is_connect(struct rig *r)
{
	const char *hdrs[] = { "Authorization: Bearer " SECRET, NULL };
	struct got g;
	char url[128];

	got_init(&g);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1", closed_port());
	if (start(r->h, url, "{}", hdrs, 5000, &g) == 0)
		run(r->h, LIMIT_MS);
	ok(g.result == ART_HTTP_CONNECT && g.status == 0 && g.ncalls == 0,
	    "a closed port is CONNECT (%d: %s)", (int)g.result, g.message);
	ok(strstr(g.message, SECRET) == NULL && *g.message != '\0',
	    "with libcurl's words and no request header");
	got_release(&g);
}

static void
test_data_callback_can_stop(struct rig *r)
{
	struct got g;

	got_init(&g);
	g.stop_after = 1;
	fetch(r, "/chunk/3/fixture/sse/chat-stream-text-with-usage.sse", NULL,
	    NULL, 0, &g);
	ok(g.result == ART_HTTP_STOPPED && g.ncalls == 1 && g.ndone == 1,
	    "a data callback returning 1 stops the transfer: STOPPED, once "
	    "(%d, %zu calls)", (int)g.result, g.ncalls);
	got_release(&g);
}

static void
test_done_callback_can_start_the_next(struct rig *r)
{
	struct got first, second;

	got_init(&first);
	got_init(&second);
	first.h = r->h;
	first.next = &second;
	snprintf(first.next_url, sizeof(first.next_url), "%s/status/201",
	    r->base);
	fetch(r, "/echo", "{}", NULL, 5000, &first);
	ok(first.result == ART_HTTP_OK && second.ndone == 1 &&
	    second.result == ART_HTTP_OK && second.status == 201,
	    "a transfer started from a done callback runs to its end");
	got_release(&first);
	got_release(&second);
}

static void
test_data_callback_can_start_the_next(struct rig *r)
{
	struct got first, second;

	got_init(&first);
	got_init(&second);
	first.h = r->h;
	first.next = &second;
	first.from_data = 1;
	snprintf(first.next_url, sizeof(first.next_url), "%s/status/202",
	    r->base);
	fetch(r, "/chunk/3/fixture/sse/messages-stream-text.sse", NULL, NULL,
	    0, &first);
	ok(first.result == ART_HTTP_OK && first.ncalls > 1 &&
	    second.ndone == 1 && second.result == ART_HTTP_OK &&
	    second.status == 202,
	    "a transfer started from a data callback runs to its end");
	got_release(&first);
	got_release(&second);
}

static void
test_raw_429_with_retry_after(struct rig *r)
{
	struct got g;
	jv v;

	got_init(&g);
	fetch(r, "/fixture/openai/error-429-rate-limit.http/v1/chat/"
	    "completions", "{}", NULL, 5000, &g);
	v = body_json(&g);
	ok(g.result == ART_HTTP_OK && g.status == 429,
	    "the .http fixture is a 429 (%d: %s)", (int)g.result, g.message);
	ok(str_at(&g.headers, "retry-after", "2") && str_at(&g.headers,
	    "x-ratelimit-reset-tokens", "6m0s"), "with its retry-after header");
	ok(str_at(&v, "error.code", "rate_limit_exceeded"),
	    "and its error body");
	jv_free(v);
	got_release(&g);
}

static void
test_json_fixture_and_garbage(struct rig *r)
{
	char path[4096], *want;
	struct got g;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s/agents/echo.json", srcdir(),
	    FIXTURES);
	want = slurp(path, &n);
	got_init(&g);
	fetch(r, "/fixture/agents/echo.json", NULL, NULL, 5000, &g);
	ok(g.status == 200 && want != NULL && g.len == n &&
	    memcmp(g.body, want, n) == 0 && str_at(&g.headers,
	    "content-type", "application/json"),
	    "a .json fixture comes as it is, as application/json");
	free(want);
	got_release(&g);

	got_init(&g);
	fetch(r, "/garbage/v1/chat/completions", "{}", NULL, 5000, &g);
	ok(g.status == 200 && g.body != NULL && strcmp(g.body,
	    "<html>not json</html>") == 0, "garbage is HTML called JSON");
	got_release(&g);
}

static void
test_bad_requests_get_json_errors(struct rig *r)
{
	struct got g;
	jv v;

	got_init(&g);
	fetch(r, "/loop/2/v1/chat/completions", "{'messages': [", NULL,
	    5000, &g);
	v = body_json(&g);
	ok(g.status == 400 && str_at(&v, "error.type",
	    "invalid_request_error"), "a bad body for loop is a 400 in JSON");
	jv_free(v);
	got_release(&g);

	got_init(&g);
	fetch(r, "/loop/2/v1/messages", "[1]", NULL, 5000, &g);
	v = body_json(&g);
	ok(g.status == 400 && str_at(&v, "type", "error"),
	    "in Anthropic's shape on /messages");
	jv_free(v);
	got_release(&g);

	got_init(&g);
	fetch(r, "/no/such/thing", NULL, NULL, 5000, &g);
	v = body_json(&g);
	ok(g.status == 404 && kind_at(&v, "error.message", JV_KIND_STRING),
	    "an unknown path is a 404 in JSON");
	jv_free(v);
	got_release(&g);
}

/* The events of a whole stream, each {"event", "data"}, data parsed. */
static int
keep_event(const struct art_sse_event *ev, void *ctx)
{
	jv *out = ctx, e = jv_object(), d;
	struct art_err err;

	if (art_sse_is_done(ev))
		d = jv_string("[DONE]");
	else if (!jv_is_valid(d = art_json_parse(ev->data, ev->data_len,
	    &err))) {
		jv_free(d);
		d = jv_string("(not json)");
	}
	e = jv_object_set(e, jv_string("event"), jv_string(ev->event));
	e = jv_object_set(e, jv_string("data"), d);
	*out = jv_array_append(*out, e);
	return 0;
}

static jv
events_of(const struct got *g)
{
	struct art_sse *sse = art_sse_new(0);
	struct art_err err;
	jv evs = jv_array();

	if (g->body != NULL)
		art_sse_feed(sse, g->body, g->len, keep_event, &evs, &err);
	if (art_sse_finish(sse, NULL, NULL, &err) != 0) {
		jv_free(evs);
		evs = jv_array();
	}
	art_sse_free(sse);
	return evs;
}

/* Joins the strings at path in each element of arr; counts the non-empty. */
static jv
join_at(const jv *arr, const char *path, int *pieces)
{
	jv out = jv_string(""), e, s;
	int i, n = jv_array_length(jv_copy(*arr));

	*pieces = 0;
	for (i = 0; i < n; i++) {
		e = jv_array_get(jv_copy(*arr), i);
		s = at(&e, path);
		if (jv_get_kind(s) == JV_KIND_STRING &&
		    jv_string_length_bytes(jv_copy(s)) > 0) {
			(*pieces)++;
			out = jv_string_concat(out, s);
		} else
			jv_free(s);
		jv_free(e);
	}
	return out;
}

static int
json_is(jv s, const char *want)
{
	struct art_err err;
	jv a, b;
	int eq;

	if (jv_get_kind(s) != JV_KIND_STRING) {
		jv_free(s);
		return 0;
	}
	a = art_json_parse_str(jv_string_value(s), &err);
	b = art_json_parse_str(want, &err);
	eq = art_json_equal(&a, &b);

	jv_free(a);
	jv_free(b);
	jv_free(s);
	return eq;
}

static int
string_is(jv s, const char *want)
{
	int eq = strcmp(jv_string_value(s), want) == 0;

	jv_free(s);
	return eq;
}

/* Request bodies, written with ' for " (see start()). */
#define OPENAI_FIRST \
	"{'model':'m','messages':[{'role':'user','content':'add'}]"
#define OPENAI_CALL(n) \
	"{'role':'assistant','content':null,'tool_calls':[{'id':'call_" n \
	"','type':'function','function':{'name':'add','arguments':'{}'}}]}," \
	"{'role':'tool','tool_call_id':'call_" n "','content':'" n "'}"
#define OPENAI_LAST \
	"{'model':'m','messages':[{'role':'user','content':'add'}," \
	OPENAI_CALL("0") "," OPENAI_CALL("1") "]"
#define STREAM	",'stream':true,'stream_options':{'include_usage':true}}"
#define OPENAI_PATH	"/loop/2/v1/chat/completions"

static void
test_loop_openai(struct rig *r)
{
	struct got g;
	jv v;

	got_init(&g);
	fetch(r, OPENAI_PATH, OPENAI_FIRST "}", NULL, 5000, &g);
	v = body_json(&g);
	ok(str_at(&v, "object", "chat.completion") && str_at(&v,
	    "choices.0.finish_reason", "tool_calls") && str_at(&v,
	    "choices.0.message.tool_calls.0.id", "call_0") && str_at(&v,
	    "choices.0.message.tool_calls.0.function.name", "add") &&
	    json_is(at(&v, "choices.0.message.tool_calls.0.function.arguments"),
	    "{\"a\":0,\"b\":1}"), "loop/2, OpenAI: step 0 calls add(0, 1)");
	ok(num_at(&v, "usage.total_tokens") == num_at(&v,
	    "usage.prompt_tokens") + num_at(&v, "usage.completion_tokens") &&
	    num_at(&v, "usage.completion_tokens") > 0, "with usage");
	jv_free(v);
	got_release(&g);

	got_init(&g);
	fetch(r, OPENAI_PATH, OPENAI_LAST "}", NULL, 5000, &g);
	v = body_json(&g);
	ok(str_at(&v, "choices.0.finish_reason", "stop") && str_at(&v,
	    "choices.0.message.content", "done after 2 steps"),
	    "loop/2, OpenAI: after two tool results, the text");
	jv_free(v);
	got_release(&g);
}

static void
test_loop_openai_stream(struct rig *r)
{
	struct got g;
	jv evs, fin, usage, joined;
	int n, pieces;

	got_init(&g);
	fetch(r, OPENAI_PATH, OPENAI_FIRST STREAM, NULL, 5000, &g);
	evs = events_of(&g);
	n = jv_array_length(jv_copy(evs));
	ok(n >= 6 && str_at(&g.headers, "content-type", "text/event-stream") &&
	    str_at(&evs, "0.data.choices.0.delta.role", "assistant") &&
	    str_at(&evs, "0.data.object", "chat.completion.chunk"),
	    "loop/2 streamed, OpenAI: a role chunk first");
	joined = join_at(&evs, "data.choices.0.delta.tool_calls.0.function."
	    "arguments", &pieces);
	ok(json_is(joined, "{\"a\":0,\"b\":1}") && pieces >= 2,
	    "the arguments of add(0, 1) come in %d pieces", pieces);
	ok(string_is(join_at(&evs, "data.choices.0.delta.tool_calls.0.id",
	    &pieces), "call_0") && pieces == 1, "the call's id comes once");
	fin = jv_array_get(jv_copy(evs), n - 3);
	usage = jv_array_get(jv_copy(evs), n - 2);
	ok(str_at(&fin, "data.choices.0.finish_reason", "tool_calls") &&
	    jv_array_length(at(&usage, "data.choices")) == 0 &&
	    num_at(&usage, "data.usage.total_tokens") > 0,
	    "then a finish chunk and a usage chunk with no choices");
	jv_free(fin);
	fin = jv_array_get(jv_copy(evs), n - 1);
	ok(str_at(&fin, "data", "[DONE]"), "and data: [DONE] last");
	jv_free(fin);
	jv_free(usage);
	jv_free(evs);
	got_release(&g);

	got_init(&g);
	fetch(r, OPENAI_PATH, OPENAI_LAST STREAM, NULL, 5000, &g);
	evs = events_of(&g);
	n = jv_array_length(jv_copy(evs));
	fin = jv_array_get(jv_copy(evs), n - 3);
	joined = join_at(&evs, "data.choices.0.delta.content", &pieces);
	ok(string_is(joined, "done after 2 steps") && pieces >= 2 &&
	    str_at(&fin, "data.choices.0.finish_reason", "stop"),
	    "then the text, in %d pieces, finishing stop", pieces);
	jv_free(fin);
	jv_free(evs);
	got_release(&g);
}

#define ANTHROPIC_USER \
	"{'model':'m','max_tokens':64,'messages':[{'role':'user'," \
	"'content':'add'}"
#define ANTHROPIC_CALL(n) \
	"{'role':'assistant','content':[{'type':'tool_use','id':'toolu_" n \
	"','name':'add','input':{}}]},{'role':'user','content':[{'type':" \
	"'tool_result','tool_use_id':'toolu_" n "','content':'" n "'}"
#define ANTHROPIC_FIRST		ANTHROPIC_USER "]"
#define ANTHROPIC_LAST \
	ANTHROPIC_USER "," ANTHROPIC_CALL("0") "]}," ANTHROPIC_CALL("1") "]}]"
/* A user's words beside a tool result start the count again. */
#define ANTHROPIC_AGAIN \
	ANTHROPIC_USER "," ANTHROPIC_CALL("0") ",{'type':'text','text':" \
	"'again'}]}]}"
#define ANTHROPIC_PATH	"/loop/2/v1/messages"

static void
test_loop_anthropic(struct rig *r)
{
	struct got g;
	jv v;

	got_init(&g);
	fetch(r, ANTHROPIC_PATH, ANTHROPIC_FIRST "}", NULL, 5000, &g);
	v = body_json(&g);
	ok(str_at(&v, "type", "message") && str_at(&v, "stop_reason",
	    "tool_use") && str_at(&v, "content.0.type", "tool_use") &&
	    str_at(&v, "content.0.id", "toolu_0") && str_at(&v,
	    "content.0.name", "add") && num_at(&v, "content.0.input.a") == 0 &&
	    num_at(&v, "content.0.input.b") == 1,
	    "loop/2, Anthropic: step 0 calls add(0, 1)");
	ok(num_at(&v, "usage.input_tokens") > 0 && num_at(&v,
	    "usage.output_tokens") > 0, "with usage");
	jv_free(v);
	got_release(&g);

	got_init(&g);
	fetch(r, ANTHROPIC_PATH, ANTHROPIC_LAST "}", NULL, 5000, &g);
	v = body_json(&g);
	ok(str_at(&v, "stop_reason", "end_turn") && str_at(&v,
	    "content.0.text", "done after 2 steps"),
	    "loop/2, Anthropic: after two tool results, the text");
	jv_free(v);
	got_release(&g);

	got_init(&g);
	fetch(r, ANTHROPIC_PATH, ANTHROPIC_AGAIN, NULL, 5000, &g);
	v = body_json(&g);
	ok(str_at(&v, "content.0.id", "toolu_0"),
	    "a user message with words besides tool results starts afresh");
	jv_free(v);
	got_release(&g);
}

/* True when every event's "event:" line names its data's "type". */
static int
events_are_typed(const jv *evs)
{
	int i, n = jv_array_length(jv_copy(*evs)), good = n > 0;
	jv e, t;

	for (i = 0; i < n && good; i++) {
		e = jv_array_get(jv_copy(*evs), i);
		t = at(&e, "event");
		good = str_at(&e, "data.type", jv_string_value(t));
		jv_free(t);
		jv_free(e);
	}
	return good;
}

static void
test_loop_anthropic_stream(struct rig *r)
{
	struct got g;
	jv evs, e, joined;
	int n, pieces;

	got_init(&g);
	fetch(r, ANTHROPIC_PATH, ANTHROPIC_FIRST ",'stream':true}", NULL,
	    5000, &g);
	evs = events_of(&g);
	n = jv_array_length(jv_copy(evs));
	ok(n >= 7 && events_are_typed(&evs) && str_at(&evs, "0.event",
	    "message_start") && num_at(&evs,
	    "0.data.message.usage.input_tokens") > 0,
	    "loop/2 streamed, Anthropic: message_start first, events typed");
	ok(str_at(&evs, "1.data.content_block.type", "tool_use") &&
	    str_at(&evs, "1.data.content_block.id", "toolu_0") &&
	    str_at(&evs, "1.data.content_block.name", "add"),
	    "a tool_use block starts");
	joined = join_at(&evs, "data.delta.partial_json", &pieces);
	ok(json_is(joined, "{\"a\":0,\"b\":1}") && pieces >= 2,
	    "its input comes in %d input_json_delta pieces", pieces);
	e = jv_array_get(jv_copy(evs), n - 2);
	ok(str_at(&e, "event", "message_delta") && str_at(&e,
	    "data.delta.stop_reason", "tool_use") && num_at(&e,
	    "data.usage.output_tokens") > 0,
	    "message_delta says tool_use, with usage");
	jv_free(e);
	e = jv_array_get(jv_copy(evs), n - 1);
	ok(str_at(&e, "event", "message_stop"), "message_stop last");
	jv_free(e);
	jv_free(evs);
	got_release(&g);

	got_init(&g);
	fetch(r, ANTHROPIC_PATH, ANTHROPIC_LAST ",'stream':true}", NULL,
	    5000, &g);
	evs = events_of(&g);
	n = jv_array_length(jv_copy(evs));
	e = jv_array_get(jv_copy(evs), n - 2);
	joined = join_at(&evs, "data.delta.text", &pieces);
	ok(string_is(joined, "done after 2 steps") && pieces >= 2 &&
	    str_at(&e, "data.delta.stop_reason", "end_turn"),
	    "then the text, in %d text_delta pieces, ending end_turn", pieces);
	jv_free(e);
	jv_free(evs);
	got_release(&g);
}

static void
test_connection_is_reused(struct rig *r)
{
	struct seen first = { 0 }, second = { 0 };
	struct art_http *h;
	struct art_err err;
	struct got g1, g2;
	char url[256];

	if ((h = art_http_new(&err)) == NULL) {
		ok(0, "art_http_new: %s", err.msg);
		return;
	}
	got_init(&g1);
	got_init(&g2);
	snprintf(url, sizeof(url), "%s/stall/100/echo", r->base);
	start(h, url, "{}", NULL, 5000, &g1);
	run_seen(h, LIMIT_MS, &first);
	start(h, url, NULL, NULL, 5000, &g2);
	run_seen(h, LIMIT_MS, &second);
	ok(g1.result == ART_HTTP_OK && g2.result == ART_HTTP_OK &&
	    first.port != 0 && first.port == second.port,
	    "the second request to a host goes over the first one's "
	    "connection (ports %d, %d)", first.port, second.port);
	art_http_free(h);
	got_release(&g1);
	got_release(&g2);
}

static void
test_free_drops_transfers_without_callbacks(struct rig *r)
{
	struct art_http *h;
	struct art_err err;
	struct got g;
	char url[256];
	int i;

	got_init(&g);
	if ((h = art_http_new(&err)) == NULL) {
		ok(0, "art_http_new: %s", err.msg);
		return;
	}
	snprintf(url, sizeof(url), "%s/stall/2000/echo", r->base);
	start(h, url, "{}", NULL, 0, &g);
	start(h, url, NULL, NULL, 0, &g);
	for (i = 0; i < 5; i++)
		run(h, 20);
	art_http_free(h);
	art_http_free(NULL);
	ok(g.ndone == 0 && g.ncalls == 0,
	    "art_http_free drops what runs, without calling back");
	got_release(&g);
}

static void
test_no_callback_from_start(struct rig *r)
{
	struct got g;
	char url[128];

	got_init(&g);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", closed_port());
	start(r->h, url, NULL, NULL, 0, &g);
	ok(g.ndone == 0 && art_http_active(r->h) == 1 &&
	    art_http_timeout(r->h) >= 0, "start calls nothing back, and "
	    "asks to be worked on");
	run(r->h, LIMIT_MS);
	ok(g.ndone == 1, "work does, once");
	got_release(&g);
}

static void
test_server_logs_each_request(struct rig *r)
{
	char path[128], *log, *line, *save = NULL;
	struct art_err err;
	int found = 0;
	size_t n;
	jv v;

	snprintf(path, sizeof(path), "%s/log", r->dir);
	if ((log = slurp(path, &n)) == NULL) {
		ok(0, "the server wrote a log");
		return;
	}
	for (line = strtok_r(log, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		v = art_json_parse_str(line, &err);
		found += str_at_quiet(&v, "path", "/echo", 1) && str_at(&v,
		    "headers.x-art-test", "hello there") && num_at(&v,
		    "body.q.0") == 1;
		jv_free(v);
	}
	ok(found == 1, "the server's log has the echo request, headers and "
	    "body");
	free(log);
}

int
main(void)
{
	struct rig r = { 0 };
	struct art_err err;

	if (!have_python3()) {
		printf("1..0 # SKIP no python3\n");
		return 0;
	}
	setenv("no_proxy", "*", 1);	/* the server is local, always */
	if (!ok(start_server(&r) == 0, "the test server starts") ||
	    !ok((r.h = art_http_new(&err)) != NULL, "art_http_new")) {
		stop_server(&r);
		art_curl_unload();
		return tap_done();
	}
	test_echo_shows_the_post_the_server_got(&r);
	test_get_has_no_body(&r);
	test_response_headers_are_lower_cased(&r);
	test_stream_arrives_in_pieces_byte_for_byte(&r);
	test_eight_together_all_complete(&r);
	test_eight_stalls_overlap(&r);
	test_status_is_not_a_failure(&r);
	test_dropped_stream_is_broken(&r);
	test_timeout(&r);
	test_closed_port_is_connect(&r);
	test_data_callback_can_stop(&r);
	test_done_callback_can_start_the_next(&r);
	test_data_callback_can_start_the_next(&r);
	test_raw_429_with_retry_after(&r);
	test_json_fixture_and_garbage(&r);
	test_bad_requests_get_json_errors(&r);
	test_loop_openai(&r);
	test_loop_openai_stream(&r);
	test_loop_anthropic(&r);
	test_loop_anthropic_stream(&r);
	test_connection_is_reused(&r);
	test_free_drops_transfers_without_callbacks(&r);
	test_no_callback_from_start(&r);
	test_server_logs_each_request(&r);

	art_http_free(r.h);
	stop_server(&r);
	art_curl_unload();
	return tap_done();
}
