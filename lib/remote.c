/* remote.c - the model providers that answer over HTTP */
#include "remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "clock.h"
#include "http.h"
#include "json.h"
#include "sse.h"
#include "wire.h"

/* A 2xx body bigger than this is no model answer; an error body is cut. */
#define MAX_BODY	((size_t)64 << 20)
#define MAX_ERROR_BODY	((size_t)64 << 10)
/* How long a call without a deadline may take. */
#define DEFAULT_TIMEOUT_MS	600000
#define MAX_HEADERS	32

/*
 * What the last body sent was made of, when the format converts one
 * message at a time: the request's messages (the same jv values the
 * next request shares, art_llm_parse_request) and their wire forms as
 * JSON text joined by commas.  A request that begins with them costs
 * only the messages it adds.
 */
struct sent {
	jv	 in;		/* jv_null(): nothing kept */
	jv	 text;
};

struct remote {
	const struct art_llm_opts	*opts;
	const struct art_wire		*wire;
	struct art_http			*http;
	struct sent			 sent;
};

/* One HTTP exchange: the job it answers and what has come so far. */
struct xfer {
	struct remote		*r;
	struct art_llm_job	*job;
	const struct art_wire	*wire;
	bool			 stream;	/* the call asked for one */
	bool			 sse;		/* and the server sent one */
	bool			 started;	/* the first body bytes came */
	bool			 ended;		/* the stream's last event came */
	bool			 native;	/* answer in the provider's body */
	struct art_sse		*parser;
	struct art_wire_stream	*ws;
	struct art_buf		 body;		/* a body that is not a stream */
	jv			 error;		/* the stream's error, once */
	char			*key;		/* to redact from errors */
	char			*token;		/* the bearer token, likewise */
	int64_t			 deadline_ms;	/* -1: none */
	int64_t			 timeout_ms;
};

/* The dispatcher's clock (it fills in the real one when given none). */
static int64_t
now_ms(const struct remote *r)
{
	return art_clock_now_ms(r->opts->clock);
}

static const char *
env(const struct remote *r, const char *name)
{
	const char *v;

	if (r->opts->env == NULL || name == NULL)
		return NULL;
	v = r->opts->env(name);
	return v != NULL && *v != '\0' ? v : NULL;
}

static void *
remote_open(const struct art_llm_opts *opts, const struct art_wire *wire,
    struct art_err *err)
{
	struct remote *r;

	if (opts->net_init != NULL && opts->net_init(err) == -1)
		return NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	r->opts = opts;
	r->wire = wire;
	r->sent.in = jv_null();
	r->sent.text = jv_null();
	if ((r->http = art_http_new(err)) == NULL) {
		free(r);
		return NULL;
	}
	return r;
}

static void *
openai_open(const struct art_llm_opts *opts, struct art_err *err)
{
	return remote_open(opts, &art_openai_wire, err);
}

static void *
anthropic_open(const struct art_llm_opts *opts, struct art_err *err)
{
	return remote_open(opts, &art_anthropic_wire, err);
}

static void
remote_close(void *state)
{
	struct remote *r = state;

	art_http_free(r->http);
	jv_free(r->sent.in);
	jv_free(r->sent.text);
	free(r);
}

static void
xfer_free(struct xfer *x)
{
	art_sse_free(x->parser);
	if (x->ws != NULL)
		x->wire->stream_free(x->ws);
	art_buf_release(&x->body);
	jv_free(x->error);
	free(x->key);
	free(x->token);
	free(x);
}

/* --- errors ----------------------------------------------------------- */

static jv
error_obj(const char *msg, bool retryable, const char *code)
{
	return art_wire_error(jv_string(msg), retryable, code);
}

/* text with every key in it replaced; a new string the caller frees. */
static char *
replace_key(const char *text, const char *key)
{
	static const char mark[] = "[redacted]";
	size_t kl = strlen(key), n = 0;
	const char *p, *q;
	char *out, *o;

	for (p = text; (q = strstr(p, key)) != NULL; p = q + kl)
		n++;
	if ((out = malloc(strlen(text) + n * sizeof(mark) + 1)) == NULL)
		return NULL;
	for (o = out, p = text; (q = strstr(p, key)) != NULL; p = q + kl) {
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, mark, sizeof(mark) - 1);
		o += sizeof(mark) - 1;
	}
	strcpy(o, p);
	return out;
}

/*
 * An error never carries the key, whatever the provider quoted back: it
 * is replaced where it appears, and an error that cannot be rebuilt
 * after that says only that it was withheld.
 */
static jv
redact(jv e, const char *key)
{
	char *text, *clean;
	size_t len;
	jv back;

	if (key == NULL || strlen(key) < 4 || jv_get_kind(e) != JV_KIND_OBJECT)
		return e;
	if ((text = art_json_dump(&e, &len)) == NULL)
		return e;
	if (strstr(text, key) == NULL) {
		free(text);
		return e;
	}
	clean = replace_key(text, key);
	free(text);
	back = clean != NULL ? jv_parse(clean) : jv_invalid();
	free(clean);
	if (jv_get_kind(back) == JV_KIND_OBJECT) {
		jv_free(e);
		return back;
	}
	jv_free(back);
	back = error_obj("the provider's error quoted the API key, so it "
	    "is withheld", jv_get_kind(jv_object_get(jv_copy(e),
	    jv_string("retryable"))) == JV_KIND_TRUE, "provider_error");
	jv_free(e);
	return back;
}

/* --- the exchange ----------------------------------------------------- */

/* The body so far, as a C string ("" before any came). */
static const char *
body_of(const struct xfer *x)
{
	return x->body.p != NULL ? x->body.p : "";
}

static int
append_body(struct xfer *x, const char *p, size_t n, size_t max)
{
	size_t len = x->body.len;

	if (len + n > max)
		n = len < max ? max - len : 0;
	if (n == 0)
		return len >= max && max == MAX_BODY ? 1 : 0;
	return art_buf_add(&x->body, p, n) == -1 ? 1 : 0;
}

static int
on_event(const struct art_sse_event *ev, void *ctx)
{
	struct xfer *x = ctx;
	jv deltas = jv_array(), e = jv_invalid();
	int r;

	if (x->ended)
		return 0;
	r = x->wire->stream_event(x->ws, ev, &deltas, &e);
	jv_array_foreach(deltas, i, d)
		art_llm_job_delta(x->job, d);
	jv_free(deltas);
	if (r == 1)
		x->ended = true;
	if (r != -1) {
		jv_free(e);
		return 0;
	}
	jv_free(x->error);
	x->error = e;
	return 2;	/* stop: the stream failed */
}

static bool
is_event_stream(const jv *headers)
{
	const char *ct = art_json_str(headers, "content-type");

	return ct != NULL && strstr(ct, "text/event-stream") != NULL;
}

static int
on_data(void *ctx, long status, const jv *headers, const char *p, size_t n)
{
	struct xfer *x = ctx;
	struct art_err err;
	char msg[300];
	int r;

	if (!x->started) {
		x->started = true;
		x->sse = x->stream && status / 100 == 2 &&
		    is_event_stream(headers);
	}
	if (!x->sse)
		return append_body(x, p, n, status / 100 == 2 ? MAX_BODY :
		    MAX_ERROR_BODY);
	r = art_sse_feed(x->parser, p, n, on_event, x, &err);
	if (r == -1) {
		snprintf(msg, sizeof(msg), "%s: stream: %s", x->wire->name,
		    err.msg);
		jv_free(x->error);
		x->error = error_obj(msg, true, "provider_error");
	}
	return r != 0;
}

/* What the transport's failure means for the call. */
static jv
transport_error(const struct xfer *x, const struct art_http_done *d)
{
	char msg[512];
	const char *name = x->wire->name;

	switch (d->result) {
	case ART_HTTP_TIMEOUT:
		snprintf(msg, sizeof(msg), "%s: no answer within %lld ms%s",
		    name, (long long)x->timeout_ms, x->deadline_ms >= 0 ?
		    " (the call's deadline)" : "");
		return error_obj(msg, true, x->deadline_ms >= 0 ?
		    "deadline_exceeded" : "provider_error");
	case ART_HTTP_CONNECT:
		snprintf(msg, sizeof(msg), "%s: cannot connect: %s", name,
		    d->message);
		return error_obj(msg, true, "provider_error");
	case ART_HTTP_BROKEN:
		snprintf(msg, sizeof(msg), "%s: the connection broke%s: %s",
		    name, x->started ? " mid-answer" : "", d->message);
		return error_obj(msg, true, "provider_error");
	default:
		snprintf(msg, sizeof(msg), "%s: %s", name, d->message);
		return error_obj(msg, false, "provider_error");
	}
}

/*
 * The name of the response_format req (borrowed) asks for, or NULL; valid
 * while req is.
 */
static const char *
answer_name(const jv *req)
{
	jv rf = jv_get_kind(*req) == JV_KIND_OBJECT ?
	    jv_object_get(jv_copy(*req), jv_string("response_format")) :
	    jv_null();
	const char *name = art_json_str(&rf, "name");

	jv_free(rf);	/* req still holds the string */
	return name;
}

/* A 2xx answer as the outcome: a response, or why it is none. */
static void
read_answer(struct xfer *x, struct art_llm_outcome *out)
{
	const char *name = answer_name(&art_llm_job_call(x->job)->request);
	struct art_err err;
	jv resp = jv_invalid(), e = jv_invalid();
	int r;

	if (x->sse) {
		if (art_sse_finish(x->parser, on_event, x, &err) == -1) {
			out->error = error_obj(err.msg, true,
			    "provider_error");
			return;
		}
		r = x->wire->stream_result(x->ws, &resp, &e);
	} else
		r = x->wire->response(body_of(x), x->body.len, &resp, &e);
	if (r == -1) {
		jv_free(resp);
		out->error = e;
		return;
	}
	jv_free(e);
	if (!x->native) {
		if (name != NULL && x->wire->answer != NULL)
			resp = x->wire->answer(resp, name);
		out->response = resp;
		return;
	}
	/* A worker-run call with a format is answered in that format. */
	if (x->sse)
		out->response = x->wire->native(&resp);
	else
		out->response = jv_parse_sized(x->body.p, (int)x->body.len);
	jv_free(resp);
}

static void
on_done(void *ctx, const struct art_http_done *d)
{
	struct xfer *x = ctx;
	struct art_llm_job *job = x->job;
	struct art_llm_outcome out;

	art_llm_outcome_init(&out);
	if (jv_get_kind(x->error) == JV_KIND_OBJECT) {
		out.error = x->error;
		x->error = jv_null();
	} else if (d->result != ART_HTTP_OK)
		out.error = transport_error(x, d);
	else if (d->status / 100 != 2)
		out.error = x->wire->error(d->status, d->headers,
		    body_of(x), x->body.len, now_ms(x->r));
	else
		read_answer(x, &out);
	if (jv_get_kind(out.error) == JV_KIND_OBJECT) {
		jv_free(out.response);
		out.response = jv_null();
		out.error = redact(redact(out.error, x->key), x->token);
	}
	xfer_free(x);
	art_llm_job_done(job, &out);
}

/* --- starting --------------------------------------------------------- */

/* The call's provider block for prefix, or null. */
static jv
block_for(const struct art_llm_call *call, const char *prefix)
{
	jv b = art_json_field(&call->providers, prefix);

	if (jv_get_kind(b) == JV_KIND_OBJECT)
		return b;
	jv_free(b);
	return jv_object();
}

/* value with each ${NAME} replaced from the environment. */
static char *
expand(const struct remote *r, const char *value)
{
	struct art_buf out = ART_BUF_INIT;
	const char *p = value, *end, *v;
	char name[128];
	size_t n;
	int bad = 0;

	while (*p != '\0') {
		if (p[0] == '$' && p[1] == '{' &&
		    (end = strchr(p + 2, '}')) != NULL &&
		    (size_t)(end - p - 2) < sizeof(name)) {
			n = (size_t)(end - p - 2);
			memcpy(name, p + 2, n);
			name[n] = '\0';
			v = env(r, name);
			bad |= art_buf_addstr(&out, v != NULL ? v : "");
			p = end + 1;
		} else
			bad |= art_buf_addc(&out, *p++);
	}
	if (bad) {
		art_buf_release(&out);
		return NULL;
	}
	return art_buf_detach(&out, NULL);
}

struct hdrs {
	char	*line[MAX_HEADERS + 1];
	size_t	 n;
};

static int
add_header(struct hdrs *h, const char *name, const char *value)
{
	size_t len = strlen(name) + strlen(value) + 3;

	if (h->n == MAX_HEADERS)
		return -1;
	if ((h->line[h->n] = malloc(len)) == NULL)
		return -1;
	snprintf(h->line[h->n++], len, "%s: %s", name, value);
	h->line[h->n] = NULL;
	return 0;
}

static void
free_headers(struct hdrs *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		free(h->line[i]);
}

/*
 * Headers the built-in provider of a format takes from the environment,
 * as that provider's own SDK does (openai-python reads OPENAI_ORG_ID and
 * OPENAI_PROJECT_ID).  Never sent to another server of the same format.
 */
static const struct {
	const char	*wire;
	const char	*var;
	const char	*header;
} env_headers[] = {
	{ "openai", "OPENAI_ORG_ID", "OpenAI-Organization" },
	{ "openai", "OPENAI_PROJECT_ID", "OpenAI-Project" },
};

/*
 * The headers: content, auth (the key, then the format's bearer token
 * as Authorization, each when set, as the official SDKs send them), the
 * format's, the environment's for the built-in provider, then the
 * block's own.
 */
static int
build_headers(const struct remote *r, const jv *block, const char *key,
    const char *token, bool stream, bool builtin, struct hdrs *h,
    struct art_err *err)
{
	const struct art_wire *w = r->wire;
	jv extra = art_json_field(block, "headers");
	char member[64], *auth, *v;
	const char *version, *ev;
	size_t i, len;
	int bad = 0;

	h->n = 0;
	h->line[0] = NULL;
	bad |= add_header(h, "Content-Type", "application/json");
	bad |= add_header(h, "Accept", stream ? "text/event-stream" :
	    "application/json");
	if (key != NULL) {
		len = strlen(w->key_prefix) + strlen(key) + 1;
		if ((auth = malloc(len)) == NULL)
			bad = -1;
		else {
			snprintf(auth, len, "%s%s", w->key_prefix, key);
			bad |= add_header(h, w->key_header, auth);
			free(auth);
		}
	}
	if (token != NULL) {
		if ((auth = malloc(strlen(token) + 8)) == NULL)
			bad = -1;
		else {
			snprintf(auth, strlen(token) + 8, "Bearer %s", token);
			bad |= add_header(h, "Authorization", auth);
			free(auth);
		}
	}
	if (w->version_header != NULL &&
	    strlen(w->version_header) < sizeof(member)) {
		for (i = 0; w->version_header[i] != '\0'; i++)
			member[i] = w->version_header[i] == '-' ? '_' :
			    w->version_header[i];
		member[i] = '\0';
		version = art_json_str(block, member);
		bad |= add_header(h, w->version_header, version != NULL ?
		    version : w->version_default);
	}
	for (i = 0; builtin && i < sizeof(env_headers) /
	    sizeof(env_headers[0]); i++)
		if (strcmp(env_headers[i].wire, w->name) == 0 &&
		    (ev = env(r, env_headers[i].var)) != NULL)
			bad |= add_header(h, env_headers[i].header, ev);
	if (jv_get_kind(extra) == JV_KIND_OBJECT)
		jv_object_foreach(extra, k, val) {
			if (jv_get_kind(val) == JV_KIND_STRING &&
			    (v = expand(r, jv_string_value(val))) != NULL) {
				bad |= add_header(h, jv_string_value(k), v);
				free(v);
			}
			jv_free(k);
			jv_free(val);
		}
	jv_free(extra);
	if (bad) {
		free_headers(h);
		return art_err_set(err, "nomem", "too many headers, or out "
		    "of memory");
	}
	return 0;
}

/* The body to send: the format's request, or the call's own body. */
static jv
build_body(const struct xfer *x, const struct art_llm_call *call,
    const char *name, struct art_err *err)
{
	jv b;

	if (!x->native)
		return x->wire->request(&call->request, name, call->stream,
		    err);
	/* The body never carries stream: the trigger says (PROTOCOL §9). */
	b = jv_object_set(jv_copy(call->request), jv_string("model"),
	    jv_string(name));
	b = jv_object_delete(b, jv_string("stream"));
	b = jv_object_delete(b, jv_string("stream_options"));
	if (!call->stream)
		return b;
	b = jv_object_set(b, jv_string("stream"), jv_true());
	if (x->wire->stream_options != NULL)
		b = jv_object_set(b, jv_string("stream_options"),
		    jv_parse(x->wire->stream_options));
	return b;
}

/*
 * The body's text as art_json_dump() makes it of build_body(), for a
 * format that converts one message at a time: the body of the request
 * with no messages, and in its "messages":[] the wire forms of the kept
 * messages the request begins with (r->sent) and of the rest.  NULL
 * when the body is not made so (then the caller builds it whole);
 * *failed is set when the request is bad (err says why).
 */
static char *
body_text(struct remote *r, const struct xfer *x,
    const struct art_llm_call *call, const char *name, size_t *blen,
    int *failed, struct art_err *err)
{
	static const char empty[] = "\"messages\":[]";
	jv msgs, skel, body, text, m, w;
	size_t n;
	char *b, *at, *out;
	int i, len, kept = 0, same;

	*failed = 0;
	if (x->native || r->wire->message == NULL ||
	    jv_get_kind(call->request) != JV_KIND_OBJECT)
		return NULL;
	msgs = jv_object_get(jv_copy(call->request), jv_string("messages"));
	if (jv_get_kind(msgs) != JV_KIND_ARRAY) {
		jv_free(msgs);
		return NULL;
	}
	skel = jv_object_set(jv_copy(call->request), jv_string("messages"),
	    jv_array());
	body = r->wire->request(&skel, name, call->stream, err);
	jv_free(skel);
	if (!jv_is_valid(body)) {
		jv_free(msgs);
		*failed = 1;
		return NULL;
	}
	b = art_json_dump(&body, &n);
	jv_free(body);
	if (b == NULL || (at = strstr(b, empty)) == NULL) {
		free(b);
		jv_free(msgs);
		return NULL;
	}
	/* How many of the kept messages the request begins with. */
	len = jv_array_length(jv_copy(msgs));
	if (jv_get_kind(r->sent.in) == JV_KIND_ARRAY) {
		kept = jv_array_length(jv_copy(r->sent.in));
		same = kept <= len;
		for (i = 0; same && i < kept; i++)
			same = jv_identical(jv_array_get(jv_copy(r->sent.in), i),
			    jv_array_get(jv_copy(msgs), i));
		if (!same)
			kept = 0;
	}
	text = kept > 0 ? jv_copy(r->sent.text) : jv_string("");
	for (i = kept; i < len && jv_is_valid(text); i++) {
		m = jv_array_get(jv_copy(msgs), i);
		w = r->wire->message(&m, i, err);
		jv_free(m);
		if (!jv_is_valid(w)) {
			jv_free(w);
			jv_free(text);
			jv_free(msgs);
			free(b);
			*failed = 1;
			return NULL;
		}
		if (i > 0)
			text = jv_string_append_buf(text, ",", 1);
		text = art_json_append_dump(text, &w);
		jv_free(w);
	}
	if (!jv_is_valid(text)) {
		jv_free(msgs);
		free(b);
		*failed = 1;
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	/* b with the messages' text inside its "messages":[]. */
	i = jv_string_length_bytes(jv_copy(text));
	out = malloc(n + (size_t)i + 1);
	if (out != NULL) {
		size_t head = (size_t)(at - b) + sizeof(empty) - 2;

		memcpy(out, b, head);
		memcpy(out + head, jv_string_value(text), (size_t)i);
		memcpy(out + head + (size_t)i, b + head, n - head + 1);
		*blen = n + (size_t)i;
	} else {
		*failed = 1;
		art_err_set(err, "nomem", "out of memory");
	}
	free(b);
	jv_free(r->sent.in);
	jv_free(r->sent.text);
	r->sent.in = msgs;
	r->sent.text = text;
	return out;
}

/*
 * Does the call carry a credential: the key, a header of the block's in
 * the key's place (or Authorization), or Anthropic's bearer token?
 */
static bool
has_credential(const struct remote *r, const struct xfer *x,
    const jv *block)
{
	jv extra = art_json_field(block, "headers");
	const char *name;
	bool yes = x->key != NULL || x->token != NULL;

	if (!yes && jv_get_kind(extra) == JV_KIND_OBJECT)
		jv_object_foreach(extra, k, v) {
			name = jv_string_value(k);
			yes |= strcasecmp(name, r->wire->key_header) == 0 ||
			    strcasecmp(name, "Authorization") == 0;
			jv_free(k);
			jv_free(v);
		}
	jv_free(extra);
	return yes;
}

/*
 * A call to the provider's own servers without a key would only be
 * refused (or, offline, retried over a host it cannot resolve): say at
 * once which variable is missing.  A base URL of one's own may go
 * keyless.
 */
static int
no_key(const struct remote *r, const char *keyvar, const char *base,
    struct art_err *err)
{
	return art_err_set(err, "no_api_key", "%s is not set%s: a call to %s "
	    "needs a key (a server of your own: set %s)", keyvar,
	    strcmp(r->wire->name, "anthropic") == 0 ? " (nor "
	    "ANTHROPIC_AUTH_TOKEN)" : "", base, r->wire->base_url_env);
}

static int
remote_start(void *state, struct art_llm_job *job, const char *model,
    struct art_err *err)
{
	struct remote *r = state;
	const struct art_llm_call *call = art_llm_job_call(job);
	const char *slash = strchr(model, '/'), *base, *keyvar, *path,
	    *answer;
	bool builtin, remote;
	char prefix[128], *url = NULL, *text = NULL;
	struct art_http_req req = { 0 };
	struct hdrs h = { .n = 0 };
	struct xfer *x;
	size_t len, blen;
	jv block, body;
	int64_t now;
	int rc = -1, failed;

	len = (size_t)(slash - model);
	if (len >= sizeof(prefix))
		return art_err_set(err, "bad_model", "provider name too long "
		    "in '%s'", model);
	memcpy(prefix, model, len);
	prefix[len] = '\0';
	builtin = strcmp(prefix, r->wire->name) == 0;
	block = block_for(call, prefix);
	if ((x = calloc(1, sizeof(*x))) == NULL) {
		jv_free(block);
		return art_err_set(err, "nomem", "out of memory");
	}
	x->r = r;
	x->job = job;
	x->wire = r->wire;
	x->stream = call->stream;
	x->native = call->format != NULL;
	x->error = jv_null();
	x->deadline_ms = call->deadline_ms;
	if (x->native && strcmp(call->format, r->wire->name) != 0) {
		art_err_set(err, "bad_request", "a call in format '%s' cannot "
		    "go to %s", call->format, model);
		goto out;
	}
	if (x->stream && ((x->parser = art_sse_new(0)) == NULL ||
	    (x->ws = r->wire->stream_new()) == NULL)) {
		art_err_set(err, "nomem", "out of memory");
		goto out;
	}
	/* A response_format's answer streams as text (wire.h). */
	if (x->ws != NULL && !x->native && r->wire->stream_answer != NULL &&
	    (answer = answer_name(&call->request)) != NULL)
		r->wire->stream_answer(x->ws, answer);

	base = art_json_str(&block, "base_url");
	if (base == NULL && builtin)
		base = env(r, r->wire->base_url_env);
	if ((remote = base == NULL && builtin))
		base = r->wire->base_url;
	if (base == NULL) {
		art_err_set(err, "bad_model", "provider '%s' has no base_url",
		    prefix);
		goto out;
	}
	keyvar = art_json_str(&block, "api_key_env");
	if (keyvar == NULL && builtin)
		keyvar = r->wire->key_env;
	if (env(r, keyvar) != NULL && (x->key = strdup(env(r, keyvar))) ==
	    NULL) {
		art_err_set(err, "nomem", "out of memory");
		goto out;
	}
	if (builtin && env(r, r->wire->token_env) != NULL &&
	    (x->token = strdup(env(r, r->wire->token_env))) == NULL) {
		art_err_set(err, "nomem", "out of memory");
		goto out;
	}
	if (remote && keyvar != NULL && !has_credential(r, x, &block)) {
		no_key(r, keyvar, base, err);
		goto out;
	}
	text = body_text(r, x, call, slash + 1, &blen, &failed, err);
	if (failed)
		goto out;
	if (text == NULL) {
		body = build_body(x, call, slash + 1, err);
		if (!jv_is_valid(body))
			goto out;
		text = art_json_dump(&body, &blen);
		jv_free(body);
	}
	path = r->wire->path;
	len = strlen(base);
	while (len > 0 && base[len - 1] == '/')
		len--;
	if (text == NULL || (url = malloc(len + strlen(path) + 1)) == NULL ||
	    build_headers(r, &block, x->key, x->token, x->stream, builtin,
	    &h, err) == -1) {
		if (text == NULL || url == NULL)
			art_err_set(err, "nomem", "out of memory");
		goto out;
	}
	memcpy(url, base, len);
	strcpy(url + len, path);

	now = now_ms(r);
	x->timeout_ms = x->deadline_ms >= 0 ? x->deadline_ms - now :
	    DEFAULT_TIMEOUT_MS;
	if (x->timeout_ms < 1)
		x->timeout_ms = 1;
	req.url = url;
	req.headers = (const char *const *)h.line;
	req.body = text;
	req.body_len = blen;
	req.timeout_ms = x->timeout_ms;
	rc = art_http_start(r->http, &req, on_data, on_done, x, err);
	free_headers(&h);
out:
	free(url);
	free(text);
	jv_free(block);
	if (rc == -1)
		xfer_free(x);
	return rc;
}

static size_t
remote_pollfds(void *state, struct pollfd *pfd, size_t max)
{
	struct remote *r = state;

	return art_http_pollfds(r->http, pfd, max);
}

static int
remote_timeout(void *state)
{
	struct remote *r = state;

	return art_http_timeout(r->http);
}

static void
remote_work(void *state, const struct pollfd *pfd, size_t n)
{
	struct remote *r = state;

	art_http_work(r->http, pfd, n);
}

const struct art_llm_provider art_openai_provider = {
	.name = "openai",
	.open = openai_open,
	.close = remote_close,
	.start = remote_start,
	.pollfds = remote_pollfds,
	.timeout = remote_timeout,
	.work = remote_work,
};

const struct art_llm_provider art_anthropic_provider = {
	.name = "anthropic",
	.open = anthropic_open,
	.close = remote_close,
	.start = remote_start,
	.pollfds = remote_pollfds,
	.timeout = remote_timeout,
	.work = remote_work,
};
