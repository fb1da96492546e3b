/* worker.c - decisions answered by a worker process or an HTTP worker
 *
 * Both kinds are asked the same way: wait out the backoff, send the
 * request's bytes, wait for one answer no longer than the request's
 * deadline, and make of the answer a bus line.  A process worker is kept
 * in its own process group so that a hung one can be killed with whatever
 * it started; its stderr is ours.  An HTTP worker's answer may be an
 * event stream: its token deltas go on the bus as they come (so a client
 * sees them) and its decision.result or decision.error ends it.
 */
#include "worker.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "http.h"
#include "json.h"
#include "ndjson.h"
#include "outq.h"
#include "sha.h"
#include "spawn.h"
#include "sse.h"
#include "tools.h"

#define BACKOFF_FIRST_MS	100
#define BACKOFF_MAX_MS		5000
#define GRACE_MS		1000	/* for a worker told to stop */
#define READ_CHUNK		65536
#define EXCERPT			200	/* of a bad answer, in a message */

struct art_worker {
	char		*exec;
	char		*url;
	char		*secret;
	size_t		 max_line;
	const struct art_clock *clock;
	art_worker_emit_fn *emit;
	void		*emit_arg;
	unsigned	 fails;		/* failures in a row */
	int64_t		 not_before;	/* mono ms: no attempt before it */
	/* --exec */
	pid_t		 pid;		/* -1: not running */
	int		 in_fd;		/* its stdin */
	int		 out_fd;	/* its stdout */
	struct art_buf	 buf;		/* read from out_fd, not yet used */
	/* --url */
	struct art_http	*http;
};

/* What one attempt came to. */
struct outcome {
	jv	 answer;	/* valid: the worker's answer */
	char	 why[400];	/* else: what went wrong */
	bool	 retryable;
	bool	 bad;		/* the worker's fault, not the way's */
};

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

jv
art_worker_error_line(const jv *line, const char *msg, bool retryable)
{
	jv e = jv_object_set(jv_object(), jv_string("type"),
	    jv_string("decision.error"));
	int64_t attempt = 1;

	e = jv_object_set(e, jv_string("session_id"),
	    art_json_field(line, "session_id"));
	e = jv_object_set(e, jv_string("decision_id"),
	    art_json_field(line, "decision_id"));
	art_json_get_int(line, "attempts", 0, &attempt, NULL);
	e = jv_object_set(e, jv_string("attempt"), jv_number((double)attempt));
	e = jv_object_set(e, jv_string("error"), jv_string(msg));
	return jv_object_set(e, jv_string("retryable"), jv_bool(retryable));
}

struct art_worker *
art_worker_new(const struct art_worker_conf *c, struct art_err *err)
{
	struct art_worker *w;

	if ((c->exec == NULL) == (c->url == NULL)) {
		art_err_set(err, "usage", "a worker needs a command or a URL");
		return NULL;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL)
		goto nomem;
	w->pid = -1;
	w->in_fd = w->out_fd = -1;
	w->max_line = c->max_line > 0 ? c->max_line : ART_NDJSON_MAX_LINE;
	w->emit = c->emit;
	w->emit_arg = c->emit_arg;
	w->clock = c->clock != NULL ? c->clock : &art_clock_real;
	if ((c->exec != NULL && (w->exec = strdup(c->exec)) == NULL) ||
	    (c->url != NULL && (w->url = strdup(c->url)) == NULL) ||
	    (c->secret != NULL && (w->secret = strdup(c->secret)) == NULL))
		goto nomem;
	if (c->url != NULL && (w->http = art_http_new(err)) == NULL) {
		art_worker_free(w);
		return NULL;
	}
	return w;
nomem:
	art_worker_free(w);
	art_err_set(err, "nomem", "out of memory");
	return NULL;
}

/* --- the process ------------------------------------------------------- */

/* Sleeps ms (at most), across signals. */
static void
nap(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/*
 * Ends the process: its stdin closed, a grace period when asked for, then
 * SIGTERM and SIGKILL to its group, and whatever it left behind killed
 * too.  Its wait status, or -1.
 */
static int
stop(struct art_worker *w, int64_t grace_ms)
{
	int st;

	if (w->pid == -1)
		return -1;
	close_fd(&w->in_fd);
	close_fd(&w->out_fd);
	art_buf_clear(&w->buf);
	st = art_spawn_stop(w->pid, grace_ms, GRACE_MS);
	w->pid = -1;
	return st;
}

/* The process's wait status in words, into buf. */
static const char *
status_words(int st, char *buf, size_t n)
{
	if (st >= 0 && WIFEXITED(st))
		snprintf(buf, n, "exited with status %d", WEXITSTATUS(st));
	else if (st >= 0 && WIFSIGNALED(st))
		snprintf(buf, n, "was killed by signal %d", WTERMSIG(st));
	else
		snprintf(buf, n, "ended");
	return buf;
}

/* Starts sh -c EXEC; its stderr is ours. */
static int
spawn(struct art_worker *w, struct art_err *err)
{
	char *argv[] = { "sh", "-c", w->exec, NULL };
	struct art_spawn s = { .file = "/bin/sh", .argv = argv,
	    .pgid = ART_SPAWN_NEW_GROUP, .nonblock = true };
	struct art_child ch;

	s.io[0].how = s.io[1].how = ART_SPAWN_PIPE;
	if (art_spawn(&s, &ch, NULL) == -1)
		return art_err_set(err, "worker", "start worker '%s': %s",
		    w->exec, strerror(errno));
	w->pid = ch.pid;
	w->in_fd = ch.fd[0];
	w->out_fd = ch.fd[1];
	art_buf_clear(&w->buf);
	return 0;
}

/* Waits for fd (events) until due (mono ms); 1 ready, 0 timed out. */
static int
wait_fd(int fd, short events, int64_t due)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t left;
	int r;

	for (;;) {
		left = due == INT64_MAX ? -1 : due - art_clock_mono_ms();
		if (due != INT64_MAX && left <= 0)
			return 0;
		r = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
		if (r > 0)
			return 1;
		if (r == -1 && errno != EINTR)
			return 1;	/* let the read or write say why */
	}
}

enum { SENT, TIMED_OUT, DIED };

static int
send_line(struct art_worker *w, const char *p, size_t n, int64_t due)
{
	const char nl = '\n';
	size_t done = 0;
	ssize_t r;

	while (done < n + 1) {
		r = done < n ? write(w->in_fd, p + done, n - done) :
		    write(w->in_fd, &nl, 1);
		if (r > 0) {
			done += (size_t)r;
			continue;
		}
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!wait_fd(w->in_fd, POLLOUT, due))
				return TIMED_OUT;
			continue;
		}
		return DIED;
	}
	return SENT;
}

enum { LINE, LINE_EOF, LINE_TIMEOUT, LINE_TOO_LONG };

/* The next line of the worker's stdout, without its '\n', in *line. */
static int
read_line(struct art_worker *w, int64_t due, char **line, size_t *n)
{
	struct art_buf *b = &w->buf;
	size_t scanned = 0;
	char *nl;
	ssize_t r;

	for (;;) {
		nl = b->len > scanned ? memchr(b->p + scanned, '\n',
		    b->len - scanned) : NULL;
		if (nl != NULL) {
			*line = b->p;
			*n = (size_t)(nl - b->p);
			return LINE;
		}
		scanned = b->len;
		if (b->len > w->max_line)
			return LINE_TOO_LONG;
		if (art_buf_reserve(b, READ_CHUNK) == -1)
			return LINE_TOO_LONG;
		r = read(w->out_fd, b->p + b->len, b->cap - b->len - 1);
		if (r > 0) {
			b->len += (size_t)r;
			b->p[b->len] = '\0';
			continue;
		}
		if (r == 0)
			return LINE_EOF;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return LINE_EOF;
		if (!wait_fd(w->out_fd, POLLIN, due))
			return LINE_TIMEOUT;
	}
}

/* Drops the line read_line() returned (n bytes and its '\n'). */
static void
consume(struct art_worker *w, size_t n)
{
	art_buf_consume(&w->buf, n + 1);
}

/* The worker's words for what it did, for an outcome. */
static void
said(struct outcome *o, bool retryable, const char *fmt, const char *cmd,
    const char *detail)
{
	snprintf(o->why, sizeof(o->why), fmt, cmd, detail);
	o->retryable = retryable;
}

static void
ask_process(struct art_worker *w, const char *raw, size_t rawlen, int64_t due,
    struct outcome *o)
{
	struct art_err err;
	char words[64], *line = NULL;
	size_t n = 0;
	int st, tries, ended = -1;
	bool fresh;

	/*
	 * One that exits cleanly after answering, before or while it is
	 * sent the next request, has not failed that request: a new one is
	 * asked.  One that crashes has.
	 */
	for (tries = 0; tries < 2; tries++) {
		if (w->pid != -1 && art_spawn_poll(w->pid) != 0)
			stop(w, 0);
		if ((fresh = w->pid == -1) && spawn(w, &err) == -1) {
			said(o, true, "%s%s", "", err.msg);
			return;
		}
		if ((st = send_line(w, raw, rawlen, due)) == SENT)
			st = read_line(w, due, &line, &n);
		else
			st = st == TIMED_OUT ? LINE_TIMEOUT : LINE_EOF;
		if (st != LINE_EOF)
			break;
		ended = stop(w, GRACE_MS);
		if (fresh || ended == -1 || !WIFEXITED(ended) ||
		    WEXITSTATUS(ended) != 0)
			break;
	}
	switch (st) {
	case LINE:
		line[n] = '\0';	/* there is room: it was the '\n' */
		o->answer = art_json_parse_str(line, &err);
		if (!jv_is_valid(o->answer)) {
			snprintf(o->why, sizeof(o->why), "worker '%.60s' "
			    "answered a line that is not JSON (%.100s): %.*s",
			    w->exec, err.msg, (int)(n < EXCERPT ? n : EXCERPT),
			    line);
			o->bad = true;
		}
		consume(w, n);
		return;
	case LINE_EOF:
		said(o, true, "worker '%.60s' %s before answering", w->exec,
		    status_words(ended, words, sizeof(words)));
		return;
	case LINE_TIMEOUT:
		stop(w, 0);
		said(o, true, "worker '%.60s' %s", w->exec,
		    "did not answer before the decision's deadline; stopped");
		return;
	default:
		stop(w, 0);
		said(o, false, "worker '%.60s' %s", w->exec, "answered a line "
		    "longer than --max-line; stopped");
		o->bad = true;
		return;
	}
}

/* --- HTTP -------------------------------------------------------------- */

/* One POST and what came of it. */
struct post {
	struct art_worker *w;
	const jv	*line;
	struct outcome	*o;
	bool		 stream;	/* the answer is an event stream */
	bool		 typed;		/* the content type was looked at */
	struct art_sse	*sse;
	jv		 body;		/* a JSON answer's bytes, a string */
	bool		 too_long;
	bool		 ended;		/* decision.result or .error came */
	bool		 done;
	struct art_http_done result;
	char		 message[200];
	struct art_err	 err;
};

/* A token delta on the bus, as agentrt-llm puts a model's. */
static int
on_delta(struct post *p, const struct art_sse_event *ev)
{
	struct art_err err;
	jv d = art_json_parse_str(ev->data, &err), tr, line;
	const char *id;

	if (!jv_is_valid(d) || jv_get_kind(d) != JV_KIND_OBJECT) {
		jv_free(d);
		return 0;	/* a delta is a courtesy: a bad one is skipped */
	}
	tr = art_json_field(p->line, "trigger");
	id = art_json_str(&tr, "id");
	line = jv_object_set(jv_object(), jv_string("type"),
	    jv_string("llm.token.delta"));
	line = jv_object_set(line, jv_string("session_id"),
	    art_json_field(p->line, "session_id"));
	line = jv_object_set(line, jv_string("id"), jv_string(id != NULL ? id :
	    art_json_str(p->line, "decision_id")));
	line = jv_object_set(line, jv_string("delta"), d);
	jv_free(tr);
	if (p->w->emit != NULL)
		return p->w->emit(p->w->emit_arg, line);
	jv_free(line);
	return 0;
}

/* decision.error's data: {message, retryable (default true)}. */
static void
on_error_frame(struct post *p, const struct art_sse_event *ev)
{
	struct art_err err;
	jv d = art_json_parse_str(ev->data, &err);
	const char *m = art_json_str(&d, "message");
	int retry = 1;

	if (m == NULL)
		m = art_json_str(&d, "error");
	art_json_get_bool(&d, "retryable", 0, &retry, NULL);
	snprintf(p->o->why, sizeof(p->o->why), "worker %.80s: %s", p->w->url,
	    m != NULL ? m : "decision.error without a message");
	p->o->retryable = retry;
	jv_free(d);
}

static int
on_event(const struct art_sse_event *ev, void *ctx)
{
	struct post *p = ctx;
	struct art_err err;

	if (p->ended)
		return 0;	/* exactly one end; what follows is moot */
	if (strcmp(ev->event, "llm.token.delta") == 0)
		return on_delta(p, ev) == 0 ? 0 : 1;
	if (strcmp(ev->event, "decision.result") == 0) {
		p->ended = true;
		p->o->answer = art_json_parse_str(ev->data, &err);
		if (!jv_is_valid(p->o->answer)) {
			snprintf(p->o->why, sizeof(p->o->why), "worker %.80s: "
			    "decision.result is not JSON (%.100s)", p->w->url,
			    err.msg);
			p->o->bad = true;
		}
	} else if (strcmp(ev->event, "decision.error") == 0) {
		p->ended = true;
		on_error_frame(p, ev);
	}
	return 0;
}

static bool
is_event_stream(const jv *headers)
{
	const char *ct = art_json_str(headers, "content-type");

	return ct != NULL && strncmp(ct, "text/event-stream", 17) == 0;
}

static int
on_data(void *ctx, long status, const jv *headers, const char *b, size_t n)
{
	struct post *p = ctx;

	if (!p->typed) {
		p->typed = true;
		p->stream = status / 100 == 2 && is_event_stream(headers);
		if (p->stream && (p->sse = art_sse_new(p->w->max_line)) ==
		    NULL)
			return 1;
	}
	if (p->stream)
		return art_sse_feed(p->sse, b, n, on_event, p, &p->err) == 0 ?
		    0 : 1;
	if ((size_t)jv_string_length_bytes(jv_copy(p->body)) + n >
	    p->w->max_line) {
		p->too_long = true;
		return 1;
	}
	p->body = jv_string_append_buf(p->body, b, (int)n);
	return 0;
}

static void
on_done(void *ctx, const struct art_http_done *d)
{
	struct post *p = ctx;

	p->done = true;
	p->result = *d;
	p->result.headers = NULL;
	snprintf(p->message, sizeof(p->message), "%s", d->message);
	p->result.message = p->message;
}

/* A POST's end in an outcome, when no answer or error frame ended it. */
static void
judge(struct post *p)
{
	struct outcome *o = p->o;
	const char *u = p->w->url, *b = jv_string_value(p->body);
	int n = jv_string_length_bytes(jv_copy(p->body));
	struct art_err err;

	if (p->ended)
		return;
	if (p->too_long) {
		snprintf(o->why, sizeof(o->why), "worker %.80s answered more "
		    "than --max-line bytes", u);
		o->bad = true;
		return;
	}
	if (p->result.result == ART_HTTP_STOPPED && p->stream) {
		snprintf(o->why, sizeof(o->why), "worker %.80s: bad event "
		    "stream: %.150s", u, p->err.msg);
		o->bad = true;
		return;
	}
	if (p->result.result != ART_HTTP_OK) {
		snprintf(o->why, sizeof(o->why), "worker %.80s: %s", u,
		    p->result.result == ART_HTTP_TIMEOUT ? "no answer before "
		    "the decision's deadline" : p->message);
		o->retryable = true;
		return;
	}
	if (p->result.status / 100 != 2) {
		snprintf(o->why, sizeof(o->why), "worker %.80s answered HTTP "
		    "%ld%s%.*s", u, p->result.status, n > 0 ? ": " : "",
		    n < EXCERPT ? n : EXCERPT, b);
		o->retryable = p->result.status / 100 == 5 ||
		    p->result.status == 429;
		o->bad = !o->retryable;
		return;
	}
	if (p->stream) {
		snprintf(o->why, sizeof(o->why), "worker %.80s: the event "
		    "stream ended without decision.result", u);
		o->retryable = true;
		return;
	}
	/* 204, or an empty body: nothing to say, so pass the request on. */
	if (p->result.status == 204 || n == 0) {
		o->answer = jv_null();
		return;
	}
	o->answer = art_json_parse_str(b, &err);
	if (!jv_is_valid(o->answer)) {
		snprintf(o->why, sizeof(o->why), "worker %.80s answered "
		    "something that is not JSON (%.100s): %.*s", u, err.msg,
		    n < EXCERPT ? n : EXCERPT, b);
		o->bad = true;
	}
}

/* "X-Agentrt-Signature: sha256=<hex HMAC-SHA256 of the body>". */
static void
signature(const struct art_worker *w, const char *raw, size_t n,
    char *hdr, size_t size)
{
	unsigned char mac[ART_SHA256_LEN];
	char hex[ART_SHA256_LEN * 2 + 1];

	art_hmac_sha256(w->secret, strlen(w->secret), raw, n, mac);
	snprintf(hdr, size, "X-Agentrt-Signature: sha256=%s",
	    art_hex(mac, sizeof(mac), hex));
}

static void
ask_http(struct art_worker *w, const jv *line, const char *raw, size_t n,
    int64_t due, struct outcome *o)
{
	char sig[128];
	const char *hdrs[5] = { "Content-Type: application/json",
	    "Accept: text/event-stream, application/json", NULL, NULL, NULL };
	struct art_http_req req = { .url = w->url, .headers = hdrs,
	    .body = raw, .body_len = n };
	struct post p = { .w = w, .line = line, .o = o, .body = jv_string("") };
	struct pollfd fds[64];
	size_t nfds;
	int64_t now;
	int t;

	if (w->secret != NULL) {
		signature(w, raw, n, sig, sizeof(sig));
		hdrs[2] = sig;
	}
	if (due != INT64_MAX) {
		now = art_clock_mono_ms();
		req.timeout_ms = due > now ? due - now : 1;
	}
	if (art_http_start(w->http, &req, on_data, on_done, &p, &p.err) == -1) {
		snprintf(o->why, sizeof(o->why), "worker %.80s: %.150s",
		    w->url, p.err.msg);
		o->retryable = true;
		jv_free(p.body);
		return;
	}
	while (!p.done) {
		nfds = art_http_pollfds(w->http, fds, 64);
		if (nfds > 64)
			nfds = 64;
		t = art_http_timeout(w->http);
		if (poll(fds, nfds, t < 0 || t > 1000 ? 1000 : t) == -1 &&
		    errno != EINTR)
			break;
		art_http_work(w->http, fds, nfds);
	}
	judge(&p);
	art_sse_free(p.sse);
	jv_free(p.body);
}

/* --- asking ------------------------------------------------------------ */

/* The request's deadline in mono ms; INT64_MAX when it has none. */
static int64_t
due_of(const struct art_worker *w, const jv *line)
{
	const char *d = art_json_str(line, "deadline");
	struct art_err err;
	int64_t at;

	if (d == NULL || art_clock_parse(d, &at, &err) == -1)
		return INT64_MAX;
	return art_clock_mono_ms() + (at - art_clock_now_ms(w->clock));
}

/* An answer value (consumed) as a verdict. */
static enum art_decide_verdict
interpret(const jv *line, jv v, const char *who, jv *out,
    struct art_err *err)
{
	const char *t, *e;
	int retry = 0;
	char msg[300];

	if (jv_get_kind(v) == JV_KIND_NULL) {
		jv_free(v);
		return ART_DECIDE_PASS;
	}
	if (jv_get_kind(v) != JV_KIND_OBJECT) {
		art_err_set(err, "bad_response", "decision '%s': %s answered "
		    "%s, not an object or null", art_json_str(line,
		    "decision_id"), who, art_json_kind_name(jv_get_kind(v)));
		jv_free(v);
		*out = art_worker_error_line(line, err->msg, false);
		return ART_DECIDE_ANSWER;
	}
	t = art_json_str(&v, "type");
	if (t != NULL && strcmp(t, "decision.error") == 0) {
		if ((e = art_json_str(&v, "error")) == NULL)
			e = art_json_str(&v, "message");
		art_json_get_bool(&v, "retryable", 0, &retry, NULL);
		snprintf(msg, sizeof(msg), "%s: %s", who, e != NULL ? e :
		    "decision.error without a message");
		*out = art_worker_error_line(line, msg, retry);
		if (art_json_str(&v, "code") != NULL)
			*out = jv_object_set(*out, jv_string("code"),
			    art_json_field(&v, "code"));
		jv_free(v);
		return ART_DECIDE_ANSWER;
	}
	if (art_decide_complete(line, v, out, err) == ART_DECIDE_FAIL) {
		jv_free(*out);
		*out = art_worker_error_line(line, err->msg, false);
	}
	return ART_DECIDE_ANSWER;
}

enum art_decide_verdict
art_worker_ask(struct art_worker *w, const jv *line, const char *raw,
    size_t rawlen, jv *out, struct art_err *err)
{
	struct outcome o = { .answer = jv_invalid() };
	int64_t due = due_of(w, line), now = art_clock_mono_ms(), back;
	char who[120];

	art_err_clear(err);
	if (w->not_before > now)
		nap((due < w->not_before ? due : w->not_before) - now);
	if (art_clock_mono_ms() >= due) {
		snprintf(o.why, sizeof(o.why), "the decision's deadline passed "
		    "before the worker could be asked");
		o.retryable = true;
	} else if (w->exec != NULL) {
		ask_process(w, raw, rawlen, due, &o);
	} else {
		ask_http(w, line, raw, rawlen, due, &o);
	}
	if (jv_is_valid(o.answer)) {
		w->fails = 0;
		w->not_before = 0;
		/* The command is long and the worker's words say enough. */
		snprintf(who, sizeof(who), "worker%s%.100s", w->url != NULL ?
		    " " : "", w->url != NULL ? w->url : "");
		return interpret(line, o.answer, who, out, err);
	}
	jv_free(o.answer);
	back = BACKOFF_FIRST_MS << (w->fails < 6 ? w->fails : 6);
	w->fails++;
	w->not_before = art_clock_mono_ms() + (back < BACKOFF_MAX_MS ? back :
	    BACKOFF_MAX_MS);
	/* Said on stderr too: whoever runs the ring sees the worker fail. */
	art_err_set(err, o.bad ? "bad_response" : "worker", "decision '%s': "
	    "%s%s", art_json_str(line, "decision_id"), o.why, o.retryable ?
	    " (retryable)" : "");
	*out = art_worker_error_line(line, o.why, o.retryable);
	return ART_DECIDE_ANSWER;
}

void
art_worker_free(struct art_worker *w)
{
	if (w == NULL)
		return;
	stop(w, GRACE_MS);
	art_http_free(w->http);
	art_buf_release(&w->buf);
	free(w->exec);
	free(w->url);
	free(w->secret);
	free(w);
}
