/* mcp.c - one MCP server over stdio, driven by the caller's poll
 *
 * The client is a small state machine over one server process at a time:
 * INIT (initialize sent), LIST (tools/list pages coming), READY, DYING
 * (its stdout ended or it exited: we let it finish and drain its stderr
 * for a moment), and DEAD, for good.  Calls live on one list in id order;
 * a call made before READY keeps its request there, unsent, until the
 * tool list is in.
 *
 * Bytes go out through one buffer that art_mcp_work() writes as the pipe
 * takes them, so a large request never blocks us while the server is busy
 * writing to us.  Bytes come in through an ndjson reader fed by hand,
 * which splits on '\n' before parsing, so a bad line costs only itself.
 *
 * The server is started by art_spawn() (spawn.h), as a tool is, in a
 * new process group, with argv[0] looked up in the PATH of its own
 * environment; as for a tool, its group is killed while the unreaped
 * leader still holds the group's id, and only then reaped.
 *
 * Callbacks run from art_mcp_work() with the client consistent: a call is
 * off the list before its callback runs, and on a death or a give-up the
 * list is detached and the next server started first.  Anything that
 * would tear the server down while the reader is being read is put off:
 * it leaves a message in doom, and art_mcp_work() acts on it after.
 */
#include "mcp.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "json.h"
#include "ndjson.h"
#include "spawn.h"
#include "strvec.h"
#include "tools.h"
#include "utf8.h"

#define READ_CHUNK	65536
#define READS_PER_WORK	16	/* so a chatty server cannot starve the loop */
#define DYING_MS	500	/* for a server whose stdout ended to exit */
#define DYING_POLL_MS	10	/* how often to look for that exit */
#define STDERR_QUOTE	160	/* bytes of stderr a message quotes */
#define QUOTE_MAX	(STDERR_QUOTE * 2)	/* " | " grows it */
#define DETAIL_MAX	(QUOTE_MAX + 64)	/* "signal 9; last stderr: …" */
#define MSG_MAX		(DETAIL_MAX + 128)

enum state { ST_INIT, ST_LIST, ST_READY, ST_DYING, ST_DEAD };

/* One tools/call, from art_mcp_call() to its callback. */
struct call {
	int64_t		 id;
	int64_t		 deadline, timeout_ms;
	jv		 req;		/* the request until sent, then null */
	art_mcp_done_fn	*done;
	void		*ctx;
	struct call	*next;
};

struct art_mcp {
	char		**argv, **envp, *cwd;
	int64_t		  startup_ms;
	pid_t		  pid;		/* -1: none running */
	int		  in_fd, out_fd, err_fd;
	bool		  exited;	/* the leader exited, not yet reaped */
	bool		  lost;		/* reaped by someone else */
	int		  status;	/* from waitpid() */
	enum state	  st;
	int64_t		  due;		/* startup deadline; DYING's end */
	int64_t		  wait_id;	/* initialize or tools/list in flight */
	int		  pages;
	jv		  tools, listing;
	/* A refresh on tools/list_changed: its request, its pages so far. */
	int64_t		  relist_id;	/* 0: none in flight */
	int64_t		  relist_due;	/* when an unanswered one is given up */
	int		  relist_pages;
	bool		  relist_again;	/* changed again meanwhile */
	jv		  relisting;
	unsigned	  generation;	/* lists taken in */
	struct art_ndjson_reader *rd;
	struct art_tools_tail tail;
	struct art_buf	  out;		/* for its stdin, from out_off on */
	size_t		  out_off;
	struct call	 *calls;
	int64_t		  next_id;
	art_mcp_progress_fn *progress;
	int		  deaths;
	size_t		  nbad;
	char		  doom[MSG_MAX];	/* give up after this read */
	char		  why[MSG_MAX];		/* why the client is dead */
	char		  dead_msg[MSG_MAX];	/* what later calls get */
};

static int64_t
now_ms(void)
{
	return art_clock_mono_ms();
}

/* --- strings and vectors ---------------------------------------------- */

static void
strv_free(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

static char **
strv_dup(const char *const *v)
{
	size_t i, n = 0;
	char **out;

	while (v != NULL && v[n] != NULL)
		n++;
	if ((out = calloc(n + 1, sizeof(*out))) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if ((out[i] = strdup(v[i])) == NULL) {
			strv_free(out);
			return NULL;
		}
	return out;
}

/* --- the process -------------------------------------------------------- */

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Forks and execs; 0, or -1 with err and every descriptor closed. */
static int
spawn(struct art_mcp *m, struct art_err *err)
{
	char name[STDERR_QUOTE];
	struct art_spawn s = { .file = m->argv[0], .argv = m->argv,
	    .env = m->envp, .cwd = m->cwd, .name = name,
	    .busy_code = "mcp_busy", .exec_code = "mcp_exec",
	    .pgid = ART_SPAWN_NEW_GROUP, .nonblock = true };
	struct art_child ch;

	snprintf(name, sizeof(name), "'%s'", m->argv[0]);
	s.io[0].how = s.io[1].how = s.io[2].how = ART_SPAWN_PIPE;
	if (art_spawn(&s, &ch, err) == -1) {
		m->pid = -1;
		return -1;
	}
	m->pid = ch.pid;
	m->in_fd = ch.fd[0], m->out_fd = ch.fd[1], m->err_fd = ch.fd[2];
	m->exited = m->lost = false;
	m->status = 0;
	return 0;
}

/* Notices, without reaping, that the leader has exited. */
static void
check_exit(struct art_mcp *m)
{
	int st;

	if (m->pid <= 0 || m->exited || (st = art_spawn_poll(m->pid)) == 0)
		return;
	/* -1: not ours to wait for any more: the group id may be reused. */
	m->lost = st == -1;
	m->exited = true;
}

static void
read_stderr(struct art_mcp *m)
{
	char buf[4096];
	ssize_t n;
	int i;

	for (i = 0; m->err_fd >= 0 && i < READS_PER_WORK; i++) {
		n = read(m->err_fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			close_fd(&m->err_fd);
			return;
		}
		art_tools_tail_add(&m->tail, buf, (size_t)n);
	}
}

/*
 * Kills what is left of the group (while the leader, dead or not, still
 * holds its id) and reaps the leader; closes the pipes.
 */
static void
reap(struct art_mcp *m)
{
	int st;

	if (m->pid > 0 && !m->lost && (st = art_spawn_reap_group(m->pid)) !=
	    -1)
		m->status = st;
	m->pid = -1;
	m->exited = true;
	close_fd(&m->in_fd), close_fd(&m->out_fd), close_fd(&m->err_fd);
	art_ndjson_reader_free(m->rd);
	m->rd = NULL;
	m->out_off = 0;
	art_buf_clear(&m->out);
}

/*
 * The last ART_MCP_STDERR_LINES lines of stderr on one line, joined with
 * " | ", at most STDERR_QUOTE bytes (its end kept); "" when none.
 */
static void
stderr_quote(const struct art_mcp *m, char *buf, size_t size)
{
	jv t = art_tools_tail_text(&m->tail, sizeof(m->tail.buf));
	const char *s = jv_string_value(t);
	size_t len = strlen(s), start = len, i, n = 0;
	int lines = 0;

	while (start > 0 && lines < ART_MCP_STDERR_LINES)
		if (s[--start] == '\n' && start + 1 < len &&
		    s[start + 1] != '\n')
			lines++;
	if (lines == ART_MCP_STDERR_LINES)
		start++;
	if (len - start > STDERR_QUOTE)
		start = len - STDERR_QUOTE;
	start = art_utf8_fwd(s, start, len);
	for (i = start; i < len && n + 4 < size; i++) {
		if (s[i] == '\n') {
			while (i + 1 < len && (s[i + 1] == '\n' ||
			    s[i + 1] == '\r'))
				i++;
			memcpy(buf + n, " | ", 3);
			n += 3;
		} else if (s[i] == '\r')
			continue;
		else if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			buf[n++] = ' ';
		else
			buf[n++] = s[i];
	}
	buf[n] = '\0';
	jv_free(t);
}

/* "status 1; last stderr: …" for the reaped server. */
static void
exit_detail(const struct art_mcp *m, char *buf, size_t size)
{
	char st[32], tail[QUOTE_MAX];

	if (m->lost)
		snprintf(st, sizeof(st), "status unknown");
	else if (WIFSIGNALED(m->status))
		snprintf(st, sizeof(st), "signal %d", WTERMSIG(m->status));
	else
		snprintf(st, sizeof(st), "status %d", WEXITSTATUS(m->status));
	stderr_quote(m, tail, sizeof(tail));
	if (*tail != '\0')
		snprintf(buf, size, "%s; last stderr: %s", st, tail);
	else
		snprintf(buf, size, "%s", st);
}

/* --- output --------------------------------------------------------------- */

/* Writes what the pipe takes now; a server gone drops the rest. */
static void
flush_out(struct art_mcp *m)
{
	ssize_t n;

	while (m->in_fd >= 0 && m->out_off < m->out.len) {
		n = write(m->in_fd, m->out.p + m->out_off, m->out.len -
		    m->out_off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == -1) {		/* EPIPE: its stdout's end comes next */
			close_fd(&m->in_fd);
			break;
		}
		m->out_off += (size_t)n;
	}
	m->out_off = 0;
	art_buf_clear(&m->out);
}

/* Queues v (consumed) as one line and writes what it can; -1: nomem. */
static int
send_msg(struct art_mcp *m, jv v)
{
	size_t len;
	char *text;

	text = art_json_dump(&v, &len);
	jv_free(v);
	if (text == NULL)
		return -1;
	if (m->in_fd < 0) {
		free(text);
		return 0;
	}
	art_buf_consume(&m->out, m->out_off);
	m->out_off = 0;
	/* Room first, so the line goes in whole or not at all. */
	if (art_buf_reserve(&m->out, len + 1) == -1) {
		free(text);
		return -1;
	}
	art_buf_add(&m->out, text, len);
	art_buf_addc(&m->out, '\n');
	free(text);
	flush_out(m);
	return 0;
}

static jv
message(const char *method, jv params)
{
	jv v = jv_object_set(jv_object(), jv_string("jsonrpc"),
	    jv_string("2.0"));

	v = jv_object_set(v, jv_string("method"), jv_string(method));
	if (jv_get_kind(params) != JV_KIND_NULL)
		v = jv_object_set(v, jv_string("params"), params);
	else
		jv_free(params);
	return v;
}

/* Sends a request of ours (params consumed); returns its id, -1: nomem. */
static int64_t
request(struct art_mcp *m, const char *method, jv params)
{
	int64_t id = m->next_id++;
	jv v = message(method, params);

	v = jv_object_set(v, jv_string("id"), jv_number((double)id));
	return send_msg(m, v) == -1 ? -1 : id;
}

/* An answer to the server's request id (consumed): result or error. */
static void
respond(struct art_mcp *m, jv id, jv result, jv error)
{
	jv v = jv_object_set(jv_object(), jv_string("jsonrpc"),
	    jv_string("2.0"));

	v = jv_object_set(v, jv_string("id"), id);
	if (jv_is_valid(error)) {
		jv_free(result);
		v = jv_object_set(v, jv_string("error"), error);
	} else {
		jv_free(error);
		v = jv_object_set(v, jv_string("result"), result);
	}
	send_msg(m, v);
}

static int
send_initialize(struct art_mcp *m)
{
	jv info = jv_object(), p = jv_object();

	info = jv_object_set(info, jv_string("name"), jv_string("agentrt"));
	info = jv_object_set(info, jv_string("version"),
	    jv_string(ART_MCP_CLIENT_VERSION));
	p = jv_object_set(p, jv_string("protocolVersion"),
	    jv_string(ART_MCP_PROTOCOL));
	p = jv_object_set(p, jv_string("capabilities"), jv_object());
	p = jv_object_set(p, jv_string("clientInfo"), info);
	m->wait_id = request(m, "initialize", p);
	return m->wait_id == -1 ? -1 : 0;
}

/* Starts a server and says hello; -1 with err. */
static int
launch(struct art_mcp *m, struct art_err *err)
{
	if ((m->rd = art_ndjson_reader_new(-1, "mcp", ART_MCP_MAX_LINE,
	    ART_NDJSON_ARRAYS)) ==
	    NULL)
		return art_err_set(err, "nomem", "out of memory");
	art_tools_tail_init(&m->tail);
	if (spawn(m, err) == -1) {
		art_ndjson_reader_free(m->rd);
		m->rd = NULL;
		return -1;
	}
	m->st = ST_INIT;
	m->due = now_ms() + m->startup_ms;
	if (send_initialize(m) == -1) {
		reap(m);
		return art_err_set(err, "nomem", "out of memory");
	}
	return 0;
}

/* --- calls ---------------------------------------------------------------- */

static void
call_free(struct call *c)
{
	jv_free(c->req);
	free(c);
}

static void
call_back_n(struct call *c, enum art_mcp_outcome outcome, bool retryable,
    const char *text, size_t len, const jv *result, const jv *parts)
{
	struct art_mcp_done d;
	jv null = jv_null();

	d.outcome = outcome;
	d.ok = outcome == ART_MCP_OK;
	d.retryable = retryable;
	d.text = text;
	d.len = len;
	d.result = result != NULL ? result : &null;
	d.parts = parts != NULL ? parts : &null;
	c->done(c->ctx, &d);
}

static void
call_back(struct call *c, enum art_mcp_outcome outcome, bool retryable,
    const char *text, const jv *result)
{
	call_back_n(c, outcome, retryable, text, strlen(text), result, NULL);
}

/* Calls back each call of list with one message, and frees them. */
static void
fail_all(struct call *list, enum art_mcp_outcome outcome, bool retryable,
    const char *msg)
{
	struct call *c;

	while ((c = list) != NULL) {
		list = c->next;
		call_back(c, outcome, retryable, msg, NULL);
		call_free(c);
	}
}

static struct call *
take_call(struct art_mcp *m, int64_t id)
{
	struct call **pp, *c;

	for (pp = &m->calls; (c = *pp) != NULL; pp = &c->next)
		if (c->id == id && jv_get_kind(c->req) == JV_KIND_NULL) {
			*pp = c->next;
			c->next = NULL;
			return c;
		}
	return NULL;
}

/* Sends the calls that waited for the server to be ready. */
static void
send_waiting(struct art_mcp *m)
{
	struct call *c;
	jv req;

	for (c = m->calls; c != NULL; c = c->next) {
		if (jv_get_kind(c->req) == JV_KIND_NULL)
			continue;
		req = c->req;
		c->req = jv_null();
		send_msg(m, req);
	}
}

/* Decoded size of base64 text, ignoring padding and white space. */
static size_t
b64_size(const char *s)
{
	size_t n = 0;

	for (; s != NULL && *s != '\0'; s++)
		if (*s != '=' && *s != '\n' && *s != '\r' && *s != ' ')
			n++;
	return n * 3 / 4;
}

static const char *
str_or(const jv *obj, const char *key, const char *dflt)
{
	const char *s = art_json_str(obj, key);

	return s != NULL ? s : dflt;
}

/* A resource block's text: its text, or a placeholder for a blob. */
static jv
resource_text(const jv *block)
{
	jv r = art_json_field(block, "resource");
	const char *text = art_json_str(&r, "text");
	jv out;

	if (text != NULL)
		out = jv_string(text);
	else if (art_json_str(&r, "blob") != NULL)
		out = jv_string_fmt("[resource %s %s, %zu bytes]",
		    str_or(&r, "uri", "?"), str_or(&r, "mimeType", "?"),
		    b64_size(art_json_str(&r, "blob")));
	else
		out = jv_string_fmt("[resource %s]", str_or(&r, "uri", "?"));
	jv_free(r);
	return out;
}

/* One content block as text (mcp.h says how). */
static jv
block_text(const jv *block)
{
	const char *type = str_or(block, "type", "unknown");

	if (strcmp(type, "text") == 0)
		return jv_string(str_or(block, "text", ""));
	if (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0)
		return jv_string_fmt("[%s %s, %zu bytes]", type,
		    str_or(block, "mimeType", "?"),
		    b64_size(art_json_str(block, "data")));
	if (strcmp(type, "resource") == 0)
		return resource_text(block);
	if (strcmp(type, "resource_link") == 0)
		return jv_string_fmt("[resource link %s]",
		    str_or(block, "uri", "?"));
	return jv_string_fmt("[%s block]", type);
}

/* An image block as an image_url part with a data URL. */
static jv
image_part(const jv *block)
{
	jv url = jv_string_fmt("data:%s;base64,", str_or(block, "mimeType",
	    "application/octet-stream")), img;

	url = jv_string_append_str(url, str_or(block, "data", ""));
	img = jv_object_set(jv_object(), jv_string("url"), url);
	return jv_object_set(jv_object_set(jv_object(), jv_string("type"),
	    jv_string("image_url")), jv_string("image_url"), img);
}

/* A result's content as ContentPart[] when it holds an image; else null. */
static jv
result_parts(const jv *result)
{
	jv content = art_json_field(result, "content"), out = jv_array(), p;
	const char *type;
	int images = 0;

	if (jv_get_kind(content) != JV_KIND_ARRAY) {
		jv_free(content);
		jv_free(out);
		return jv_null();
	}
	jv_array_foreach(content, i, b) {
		type = str_or(&b, "type", "");
		if (strcmp(type, "image") == 0 &&
		    art_json_str(&b, "data") != NULL) {
			p = image_part(&b);
			images++;
		} else
			p = jv_object_set(jv_object_set(jv_object(),
			    jv_string("type"), jv_string("text")),
			    jv_string("text"), block_text(&b));
		out = jv_array_append(out, p);
		jv_free(b);
	}
	jv_free(content);
	if (images > 0)
		return out;
	jv_free(out);
	return jv_null();
}

/* A tools/call result's text (mcp.h says how). */
static jv
result_text(const jv *result)
{
	jv content = art_json_field(result, "content"), sc, out;
	char *dump;
	size_t len;
	int n = 0;

	if (jv_get_kind(content) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(content)) > 0) {
		out = jv_string("");
		jv_array_foreach(content, i, b) {
			if (n++ > 0)
				out = jv_string_append_str(out, "\n");
			out = jv_string_concat(out, block_text(&b));
			jv_free(b);
		}
		jv_free(content);
		return out;
	}
	jv_free(content);
	sc = art_json_field(result, "structuredContent");
	out = jv_string("");
	if (jv_get_kind(sc) != JV_KIND_NULL &&
	    (dump = art_json_dump(&sc, &len)) != NULL) {
		jv_free(out);
		out = jv_string_sized(dump, (int)len);
		free(dump);
	}
	jv_free(sc);
	return out;
}

/* "<code> <message>" of a JSON-RPC error object. */
static void
rpc_error_text(const jv *error, char *buf, size_t size)
{
	jv code = art_json_field(error, "code");
	const char *msg = art_json_str(error, "message");

	snprintf(buf, size, "%.0f %s", jv_get_kind(code) == JV_KIND_NUMBER ?
	    jv_number_value(code) : 0.0, msg != NULL ? msg : "(no message)");
	jv_free(code);
}

/* Calls back a call answered with resp (borrowed), and frees it. */
static void
finish(struct call *c, const jv *resp)
{
	jv error = art_json_field(resp, "error");
	jv result = art_json_field(resp, "result"), text, parts;
	char buf[MSG_MAX], rpc[MSG_MAX - 8];
	int is_error = 0;

	if (jv_get_kind(error) != JV_KIND_NULL) {
		rpc_error_text(&error, rpc, sizeof(rpc));
		snprintf(buf, sizeof(buf), "mcp: %s", rpc);
		call_back(c, ART_MCP_RPC_ERROR, false, buf, NULL);
	} else if (jv_get_kind(result) != JV_KIND_OBJECT) {
		call_back(c, ART_MCP_FAILED, false, "mcp: an answer with no "
		    "result object", NULL);
	} else {
		text = result_text(&result);
		parts = result_parts(&result);
		art_json_get_bool(&result, "isError", 0, &is_error, NULL);
		call_back_n(c, is_error ? ART_MCP_TOOL_ERROR : ART_MCP_OK,
		    false, jv_string_value(text),
		    (size_t)jv_string_length_bytes(jv_copy(text)), &result,
		    &parts);
		jv_free(parts);
		jv_free(text);
	}
	jv_free(error);
	jv_free(result);
	call_free(c);
}

/* --- startup ------------------------------------------------------------ */

/* Puts off a give-up: what (initialize, tools/list) got no result. */
static void
startup_failed(struct art_mcp *m, const char *what, const jv *resp)
{
	jv error = art_json_field(resp, "error");
	char rpc[MSG_MAX / 2];

	if (jv_get_kind(error) == JV_KIND_OBJECT) {
		rpc_error_text(&error, rpc, sizeof(rpc));
		snprintf(m->doom, sizeof(m->doom), "mcp: %s failed: %s", what,
		    rpc);
	} else
		snprintf(m->doom, sizeof(m->doom), "mcp: %s: an answer with "
		    "no result object", what);
	jv_free(error);
}

static void
become_ready(struct art_mcp *m)
{
	jv_free(m->tools);
	m->tools = m->listing;
	m->listing = jv_array();
	m->st = ST_READY;
	m->generation++;
	m->relist_id = 0;
	m->relist_again = false;
	m->relist_pages = 0;
	jv_free(m->relisting);
	m->relisting = jv_array();
	send_waiting(m);
}

static void
list_page(struct art_mcp *m, const char *cursor)
{
	jv p = jv_object();

	if (cursor != NULL)
		p = jv_object_set(p, jv_string("cursor"), jv_string(cursor));
	m->pages++;
	if ((m->wait_id = request(m, "tools/list", p)) == -1)
		snprintf(m->doom, sizeof(m->doom), "mcp: out of memory");
}

static void
on_initialize(struct art_mcp *m, const jv *resp)
{
	jv result = art_json_field(resp, "result"), caps, tools;

	if (jv_get_kind(result) != JV_KIND_OBJECT) {
		jv_free(result);
		startup_failed(m, "initialize", resp);
		return;
	}
	caps = art_json_field(&result, "capabilities");
	tools = jv_get_kind(caps) == JV_KIND_OBJECT ?
	    art_json_field(&caps, "tools") : jv_null();
	send_msg(m, message("notifications/initialized", jv_null()));
	jv_free(m->listing);
	m->listing = jv_array();
	m->pages = 0;
	if (jv_get_kind(tools) == JV_KIND_NULL)
		become_ready(m);
	else {
		m->st = ST_LIST;
		list_page(m, NULL);
	}
	jv_free(tools);
	jv_free(caps);
	jv_free(result);
}

static void
on_list(struct art_mcp *m, const jv *resp)
{
	jv result = art_json_field(resp, "result"), tools;
	const char *cursor;

	if (jv_get_kind(result) != JV_KIND_OBJECT) {
		jv_free(result);
		startup_failed(m, "tools/list", resp);
		return;
	}
	tools = art_json_field(&result, "tools");
	if (jv_get_kind(tools) == JV_KIND_ARRAY)
		m->listing = jv_array_concat(m->listing, tools);
	else
		jv_free(tools);
	cursor = art_json_str(&result, "nextCursor");
	if (cursor != NULL && *cursor != '\0' && m->pages < ART_MCP_MAX_PAGES)
		list_page(m, cursor);
	else
		become_ready(m);
	jv_free(result);
}

/*
 * notifications/tools/list_changed, once ready: the list is asked for
 * again, and it replaces the old one when its last page is in.  One
 * that comes while a refresh is in flight asks for one more after it.
 * An error answer keeps the old list.
 */
static void
relist_page(struct art_mcp *m, const char *cursor)
{
	jv p = jv_object();

	if (cursor != NULL)
		p = jv_object_set(p, jv_string("cursor"), jv_string(cursor));
	m->relist_pages++;
	m->relist_due = now_ms() + m->startup_ms;
	if ((m->relist_id = request(m, "tools/list", p)) == -1) {
		m->relist_id = 0;	/* the old list stays */
		jv_free(m->relisting);
		m->relisting = jv_array();
	}
}

static void	list_changed(struct art_mcp *);

/*
 * A refresh the server has not answered within the startup limit is
 * given up (the old list stays), so that a later change still asks.
 */
static void
relist_expire(struct art_mcp *m, int64_t now)
{
	if (m->st != ST_READY || m->relist_id == 0 || now < m->relist_due)
		return;
	m->relist_id = 0;
	jv_free(m->relisting);
	m->relisting = jv_array();
	if (m->relist_again) {
		m->relist_again = false;
		list_changed(m);
	}
}

static void
list_changed(struct art_mcp *m)
{
	if (m->st != ST_READY)
		return;		/* the list on its way is the new one */
	if (m->relist_id != 0) {
		m->relist_again = true;
		return;
	}
	jv_free(m->relisting);
	m->relisting = jv_array();
	m->relist_pages = 0;
	relist_page(m, NULL);
}

static void
on_relist(struct art_mcp *m, const jv *resp)
{
	jv result = art_json_field(resp, "result"), tools;
	const char *cursor;

	m->relist_id = 0;
	tools = jv_get_kind(result) == JV_KIND_OBJECT ?
	    art_json_field(&result, "tools") : jv_null();
	cursor = art_json_str(&result, "nextCursor");
	if (jv_get_kind(tools) != JV_KIND_ARRAY)
		jv_free(tools);		/* an error: the old list stays */
	else {
		m->relisting = jv_array_concat(m->relisting, tools);
		if (cursor != NULL && *cursor != '\0' &&
		    m->relist_pages < ART_MCP_MAX_PAGES) {
			relist_page(m, cursor);
			jv_free(result);
			return;
		}
		jv_free(m->tools);
		m->tools = m->relisting;
		m->relisting = jv_array();
		m->generation++;
	}
	jv_free(result);
	if (m->relist_again) {
		m->relist_again = false;
		list_changed(m);
	}
}

/* --- input ---------------------------------------------------------------- */

/* A request from the server: ping is answered, anything else refused. */
static void
server_request(struct art_mcp *m, const char *method, jv id)
{
	jv e;

	if (strcmp(method, "ping") == 0) {
		respond(m, id, jv_object(), jv_invalid());
		return;
	}
	e = jv_object_set(jv_object(), jv_string("code"), jv_number(-32601));
	e = jv_object_set(e, jv_string("message"),
	    jv_string("Method not found"));
	respond(m, id, jv_null(), e);
}

/* Our id in obj's key (an answer's "id"), or -1 when it is not one. */
static int64_t
answer_id_of(const jv *obj, const char *key)
{
	jv id = art_json_field(obj, key);
	double d = jv_get_kind(id) == JV_KIND_NUMBER ? jv_number_value(id) :
	    -1;

	jv_free(id);
	return d >= 1 && d < 9007199254740992.0 && d == (double)(int64_t)d ?
	    (int64_t)d : -1;
}

static int64_t
answer_id(const jv *msg)
{
	return answer_id_of(msg, "id");
}

/* The call in flight (sent) whose id is n; NULL when none. */
static struct call *
find_sent(struct art_mcp *m, int64_t n)
{
	struct call *c;

	for (c = m->calls; c != NULL; c = c->next)
		if (c->id == n && jv_get_kind(c->req) == JV_KIND_NULL)
			return c;
	return NULL;
}

/* A notifications/progress: to the callback, for a call in flight. */
static void
on_progress(struct art_mcp *m, const jv *msg)
{
	jv params = art_json_field(msg, "params"), v;
	struct art_mcp_progress p = { 0, false, 0, NULL };
	struct call *c;
	int64_t tok;

	tok = jv_get_kind(params) == JV_KIND_OBJECT ? answer_id_of(&params,
	    "progressToken") : -1;
	v = art_json_field(&params, "progress");
	if (tok != -1 && m->progress != NULL &&
	    jv_get_kind(v) == JV_KIND_NUMBER &&
	    (c = find_sent(m, tok)) != NULL) {
		p.progress = jv_number_value(v);
		jv_free(v);
		v = art_json_field(&params, "total");
		if ((p.has_total = jv_get_kind(v) == JV_KIND_NUMBER))
			p.total = jv_number_value(v);
		p.message = art_json_str(&params, "message");
		m->progress(c->ctx, &p);
	}
	jv_free(v);
	jv_free(params);
}

/* One message, an object (batch elements come here one by one). */
static void
handle_one(struct art_mcp *m, jv msg)
{
	const char *method = art_json_str(&msg, "method");
	jv id = art_json_field(&msg, "id");
	struct call *c;
	int64_t n;

	if (method != NULL) {
		/* With an id it is a request; without, a notification. */
		if (jv_get_kind(id) != JV_KIND_NULL)
			server_request(m, method, jv_copy(id));
		else if (strcmp(method, "notifications/progress") == 0)
			on_progress(m, &msg);
		else if (strcmp(method, "notifications/tools/list_changed") ==
		    0)
			list_changed(m);
	} else if ((n = answer_id(&msg)) != -1) {
		if (m->st == ST_INIT && n == m->wait_id)
			on_initialize(m, &msg);
		else if (m->st == ST_LIST && n == m->wait_id)
			on_list(m, &msg);
		else if (m->st == ST_READY && n == m->relist_id)
			on_relist(m, &msg);
		else if ((c = take_call(m, n)) != NULL)
			finish(c, &msg);
	}
	jv_free(id);
	jv_free(msg);
}

/*
 * A line: one message, or a JSON-RPC batch of them.  Our answers to a
 * batch's requests go out one by one, which a server must accept.
 */
static void
handle(struct art_mcp *m, jv msg)
{
	bool bad;

	if (jv_get_kind(msg) != JV_KIND_ARRAY) {
		handle_one(m, msg);
		return;
	}
	bad = jv_array_length(jv_copy(msg)) == 0;
	jv_array_foreach(msg, i, e) {
		if (m->doom[0] != '\0' || jv_get_kind(e) != JV_KIND_OBJECT) {
			bad = true;
			jv_free(e);
			continue;
		}
		handle_one(m, e);
	}
	/* A line is counted once, however many of its elements are bad. */
	m->nbad += bad && m->doom[0] == '\0';
	jv_free(msg);
}

/* Handles the whole lines buffered, until a give-up is due. */
static void
drain(struct art_mcp *m)
{
	enum art_ndjson_status s;
	struct art_err err;
	jv v;

	while (m->doom[0] == '\0' && m->rd != NULL) {
		s = art_ndjson_next(m->rd, &v, &err);
		if (s == ART_NDJSON_OK)
			handle(m, v);
		else if (s == ART_NDJSON_BAD)
			m->nbad++;
		else
			break;
	}
}

static void
read_stdout(struct art_mcp *m)
{
	char buf[READ_CHUNK];
	struct art_err err;
	ssize_t n;
	int i;

	for (i = 0; m->out_fd >= 0 && m->doom[0] == '\0' &&
	    i < READS_PER_WORK; i++) {
		n = read(m->out_fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			art_ndjson_feed_eof(m->rd);
			drain(m);
			close_fd(&m->out_fd);
			return;
		}
		if (art_ndjson_feed(m->rd, buf, (size_t)n, &err) == -1) {
			snprintf(m->doom, sizeof(m->doom), "mcp: out of "
			    "memory");
			return;
		}
		drain(m);
	}
}

/* --- death, restart, giving up ------------------------------------------ */

static struct call *
detach_calls(struct art_mcp *m)
{
	struct call *list = m->calls;

	m->calls = NULL;
	return list;
}

/* Kills the server for good; calls in flight fail with msg. */
static void
give_up(struct art_mcp *m, const char *msg)
{
	struct call *list;
	char buf[MSG_MAX];

	snprintf(buf, sizeof(buf), "%s", msg);
	reap(m);
	m->st = ST_DEAD;
	m->doom[0] = '\0';
	snprintf(m->why, sizeof(m->why), "%s", buf);
	snprintf(m->dead_msg, sizeof(m->dead_msg), "%s", buf);
	list = detach_calls(m);
	fail_all(list, ART_MCP_FAILED, false, buf);
}

static void
begin_dying(struct art_mcp *m)
{
	m->st = ST_DYING;
	m->due = now_ms() + DYING_MS;
	close_fd(&m->in_fd);
	m->out_off = 0;
	art_buf_clear(&m->out);
}

/* The server is gone: fail its calls, and start it again or give up. */
static void
died(struct art_mcp *m)
{
	char detail[DETAIL_MAX], msg[MSG_MAX];
	struct art_err err;
	struct call *list;
	bool again;

	read_stderr(m);
	reap(m);
	exit_detail(m, detail, sizeof(detail));
	snprintf(msg, sizeof(msg), "mcp: the server exited (%s)", detail);
	list = detach_calls(m);
	again = ++m->deaths < 2;
	if (!again) {
		m->st = ST_DEAD;
		snprintf(m->dead_msg, sizeof(m->dead_msg),
		    "mcp: the server died twice; giving up");
		snprintf(m->why, sizeof(m->why), "mcp: the server died twice; "
		    "giving up (%s)", detail);
	} else if (launch(m, &err) == -1) {
		again = false;
		m->st = ST_DEAD;
		snprintf(m->why, sizeof(m->why), "mcp: restart the server: %s",
		    err.msg);
		snprintf(m->dead_msg, sizeof(m->dead_msg), "%s", m->why);
	}
	fail_all(list, ART_MCP_EXITED, again, msg);
}

/* Calls out of time, off the list and called back. */
static void
expire_calls(struct art_mcp *m, int64_t now)
{
	struct call **pp, *c, *expired = NULL, **tail = &expired;
	char msg[96];
	jv p;

	for (pp = &m->calls; (c = *pp) != NULL;) {
		if (c->deadline > now) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		c->next = NULL;
		*tail = c;
		tail = &c->next;
	}
	for (c = expired; c != NULL; c = c->next) {
		if (jv_get_kind(c->req) != JV_KIND_NULL || m->st != ST_READY)
			continue;
		p = jv_object_set(jv_object(), jv_string("requestId"),
		    jv_number((double)c->id));
		p = jv_object_set(p, jv_string("reason"), jv_string("timeout"));
		send_msg(m, message("notifications/cancelled", p));
	}
	while ((c = expired) != NULL) {
		expired = c->next;
		snprintf(msg, sizeof(msg), "mcp: no answer within %lld ms",
		    (long long)c->timeout_ms);
		call_back(c, ART_MCP_TIMEOUT, true, msg, NULL);
		call_free(c);
	}
}

static void
startup_timeout(struct art_mcp *m)
{
	char msg[MSG_MAX], tail[QUOTE_MAX];
	int n;

	n = snprintf(msg, sizeof(msg), "mcp: the server did not answer %s "
	    "within %lld ms", m->st == ST_INIT ? "initialize" : "tools/list",
	    (long long)m->startup_ms);
	stderr_quote(m, tail, sizeof(tail));
	if (*tail != '\0' && n > 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n,
		    " (last stderr: %s)", tail);
	give_up(m, msg);
}

/* --- the public face ---------------------------------------------------- */

struct art_mcp *
art_mcp_start(const char *const *argv, const char *const *envp,
    const char *cwd, int64_t timeout_ms, struct art_err *err)
{
	struct art_mcp *m;

	if (argv == NULL || argv[0] == NULL || argv[0][0] == '\0') {
		art_err_set(err, "mcp_exec", "run the server: no command");
		return NULL;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	m->pid = -1;
	m->in_fd = m->out_fd = m->err_fd = -1;
	m->tools = jv_array();
	m->listing = jv_array();
	m->relisting = jv_array();
	m->next_id = 1;
	m->startup_ms = timeout_ms > 0 ? timeout_ms : ART_MCP_CALL_TIMEOUT_MS;
	m->argv = strv_dup(argv);
	m->envp = strv_dup(envp);
	if (m->argv == NULL || m->envp == NULL || (cwd != NULL &&
	    (m->cwd = strdup(cwd)) == NULL)) {
		art_mcp_free(m);
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	if (launch(m, err) == -1) {
		art_mcp_free(m);
		return NULL;
	}
	return m;
}

void
art_mcp_free(struct art_mcp *m)
{
	struct call *c;

	if (m == NULL)
		return;
	if (m->pid > 0) {
		close_fd(&m->in_fd);
		if (!m->lost)
			art_spawn_stop(m->pid, ART_MCP_EXIT_GRACE_MS,
			    ART_MCP_EXIT_GRACE_MS);
		m->pid = -1;
	}
	reap(m);
	while ((c = m->calls) != NULL) {
		m->calls = c->next;
		call_free(c);
	}
	jv_free(m->tools);
	jv_free(m->listing);
	jv_free(m->relisting);
	strv_free(m->argv);
	strv_free(m->envp);
	free(m->cwd);
	art_buf_release(&m->out);
	free(m);
}

int
art_mcp_wait_ready(struct art_mcp *m, struct art_err *err)
{
	struct pollfd pfd[ART_MCP_POLLFDS];
	size_t n;

	while (m->st != ST_READY) {
		if (m->st == ST_DEAD)
			return art_err_set(err, "mcp", "%s", m->why);
		n = art_mcp_pollfds(m, pfd, ART_MCP_POLLFDS);
		if (poll(pfd, (nfds_t)n, art_mcp_timeout(m)) == -1) {
			if (errno != EINTR)
				return art_err_set(err, "mcp", "poll: %s",
				    strerror(errno));
			n = 0;
		}
		art_mcp_work(m, pfd, n);
	}
	return 0;
}

bool
art_mcp_is_ready(const struct art_mcp *m)
{
	return m->st == ST_READY;
}

bool
art_mcp_is_dead(const struct art_mcp *m)
{
	return m->st == ST_DEAD;
}

jv
art_mcp_tools(const struct art_mcp *m)
{
	return jv_copy(m->tools);
}

unsigned
art_mcp_tools_generation(const struct art_mcp *m)
{
	return m->generation;
}

bool
art_mcp_tool_is_matched(const jv *globs, const char *name)
{
	bool yes = jv_get_kind(*globs) != JV_KIND_ARRAY;

	if (!yes)
		jv_array_foreach(*globs, i, g) {
			if (!yes && jv_get_kind(g) == JV_KIND_STRING &&
			    fnmatch(jv_string_value(g), name, 0) == 0)
				yes = true;
			jv_free(g);
			(void)i;
		}
	return yes;
}

/* t's member from (a schema) as to, when it is an object. */
static jv
move_schema(jv d, const jv *t, const char *from, const char *to)
{
	jv v = art_json_field(t, from);

	if (jv_get_kind(v) == JV_KIND_OBJECT)
		return jv_object_set(d, jv_string(to), v);
	jv_free(v);
	return d;
}

jv
art_mcp_declarations(const jv *tools, const jv *globs, const char *server)
{
	jv out = jv_array(), d, v;
	const char *name;

	if (jv_get_kind(*tools) != JV_KIND_ARRAY)
		return out;
	jv_array_foreach(*tools, i, t) {
		name = jv_get_kind(t) == JV_KIND_OBJECT ?
		    art_json_str(&t, "name") : NULL;
		if (name != NULL && art_tools_name_is_valid(name) &&
		    art_mcp_tool_is_matched(globs, name)) {
			d = jv_object_set(jv_object(), jv_string("name"),
			    jv_string(name));
			v = art_json_field(&t, "description");
			if (jv_get_kind(v) == JV_KIND_STRING)
				d = jv_object_set(d, jv_string("description"),
				    v);
			else
				jv_free(v);
			d = move_schema(d, &t, "inputSchema", "input");
			if (!jv_object_has(jv_copy(d), jv_string("input")))
				d = jv_object_set(d, jv_string("input"),
				    jv_object_set(jv_object(),
				    jv_string("type"), jv_string("object")));
			d = move_schema(d, &t, "outputSchema", "output");
			d = move_schema(d, &t, "annotations", "annotations");
			if (server != NULL)
				d = jv_object_set(d, jv_string("mcp_server"),
				    jv_string(server));
			out = jv_array_append(out, d);
		}
		jv_free(t);
		(void)i;
	}
	return out;
}

/* A new call with its request built (arguments consumed); NULL: nomem. */
static struct call *
call_new(struct art_mcp *m, const char *tool, jv arguments,
    int64_t timeout_ms)
{
	struct call *c;
	jv p;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		jv_free(arguments);
		return NULL;
	}
	c->id = m->next_id++;
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : ART_MCP_CALL_TIMEOUT_MS;
	c->deadline = now_ms() + c->timeout_ms;
	p = jv_object_set(jv_object(), jv_string("name"), jv_string(tool));
	p = jv_object_set(p, jv_string("arguments"), arguments);
	/* The call's id is unique among calls in flight, as a token must be. */
	p = jv_object_set(p, jv_string("_meta"), jv_object_set(jv_object(),
	    jv_string("progressToken"), jv_number((double)c->id)));
	c->req = jv_object_set(message("tools/call", p), jv_string("id"),
	    jv_number((double)c->id));
	return c;
}

int
art_mcp_call(struct art_mcp *m, const char *tool, jv arguments,
    int64_t timeout_ms, art_mcp_done_fn *done, void *ctx,
    struct art_err *err)
{
	struct call *c, **pp;
	jv req;

	if (m->st == ST_DEAD || tool == NULL) {
		jv_free(arguments);
		if (m->st == ST_DEAD)
			return art_err_set(err, "mcp_dead", "%s", m->dead_msg);
		return art_err_set(err, "mcp_args", "call: no tool name");
	}
	if (jv_get_kind(arguments) == JV_KIND_NULL) {
		jv_free(arguments);
		arguments = jv_object();
	}
	if (jv_get_kind(arguments) != JV_KIND_OBJECT) {
		jv_free(arguments);
		return art_err_set(err, "mcp_args", "call '%s': arguments are "
		    "not an object", tool);
	}
	if ((c = call_new(m, tool, arguments, timeout_ms)) == NULL)
		return art_err_set(err, "nomem", "out of memory");
	c->done = done;
	c->ctx = ctx;
	for (pp = &m->calls; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = c;
	if (m->st != ST_READY)
		return 0;	/* it goes out once the server is ready */
	req = c->req;
	c->req = jv_null();
	if (send_msg(m, req) == -1) {
		*pp = NULL;
		call_free(c);
		return art_err_set(err, "nomem", "out of memory");
	}
	return 0;
}

void
art_mcp_set_progress(struct art_mcp *m, art_mcp_progress_fn *fn)
{
	m->progress = fn;
}

size_t
art_mcp_pending(const struct art_mcp *m)
{
	const struct call *c;
	size_t n = 0;

	for (c = m->calls; c != NULL; c = c->next)
		n++;
	return n;
}

size_t
art_mcp_pollfds(const struct art_mcp *m, struct pollfd *pfd, size_t max)
{
	size_t n = 0;

	if (m->in_fd >= 0 && m->out.len > m->out_off) {
		if (n < max)
			pfd[n].fd = m->in_fd, pfd[n].events = POLLOUT,
			    pfd[n].revents = 0;
		n++;
	}
	if (m->out_fd >= 0) {
		if (n < max)
			pfd[n].fd = m->out_fd, pfd[n].events = POLLIN,
			    pfd[n].revents = 0;
		n++;
	}
	if (m->err_fd >= 0) {
		if (n < max)
			pfd[n].fd = m->err_fd, pfd[n].events = POLLIN,
			    pfd[n].revents = 0;
		n++;
	}
	return n;
}

int
art_mcp_timeout(const struct art_mcp *m)
{
	const struct call *c;
	int64_t due = INT64_MAX, now;

	if (m->st == ST_DEAD)
		return -1;
	now = now_ms();
	for (c = m->calls; c != NULL; c = c->next)
		if (c->deadline < due)
			due = c->deadline;
	if ((m->st == ST_INIT || m->st == ST_LIST) && m->due < due)
		due = m->due;
	if (m->st == ST_READY && m->relist_id != 0 && m->relist_due < due)
		due = m->relist_due;
	if (m->st == ST_DYING) {
		if (m->due < due)
			due = m->due;
		if (now + DYING_POLL_MS < due)
			due = now + DYING_POLL_MS;
	}
	if (due == INT64_MAX)
		return -1;
	if (due <= now)
		return 0;
	return due - now > INT_MAX ? INT_MAX : (int)(due - now);
}

void
art_mcp_work(struct art_mcp *m, const struct pollfd *pfd, size_t n)
{
	int64_t now;
	size_t i;

	if (m->st == ST_DEAD)
		return;
	for (i = 0; i < n; i++) {
		if (pfd[i].fd < 0 || pfd[i].revents == 0)
			continue;
		if (pfd[i].fd == m->in_fd)
			flush_out(m);
		else if (pfd[i].fd == m->out_fd)
			read_stdout(m);
		else if (pfd[i].fd == m->err_fd)
			read_stderr(m);
	}
	if (m->doom[0] != '\0') {
		give_up(m, m->doom);
		return;
	}
	check_exit(m);
	if (m->st != ST_DYING && (m->out_fd < 0 || m->exited))
		begin_dying(m);
	now = now_ms();
	if (m->st == ST_DYING && ((m->exited && m->out_fd < 0 &&
	    m->err_fd < 0) || now >= m->due))
		died(m);
	if (m->st == ST_DEAD)
		return;
	expire_calls(m, now);
	relist_expire(m, now);
	if ((m->st == ST_INIT || m->st == ST_LIST) && now >= m->due)
		startup_timeout(m);
}

long
art_mcp_pid(const struct art_mcp *m)
{
	return m->pid > 0 ? (long)m->pid : -1;
}

size_t
art_mcp_bad_lines(const struct art_mcp *m)
{
	return m->nbad;
}

int
art_mcp_deaths(const struct art_mcp *m)
{
	return m->deaths;
}

/* --- --mcp arguments ------------------------------------------------- */

void
art_mcp_argv_free(char **v)
{
	strv_free(v);
}

char **
art_mcp_argv(const char *spec, char **prefix, struct art_err *err)
{
	struct art_strvec v = ART_STRVEC_INIT;
	char *w;
	size_t len;
	const char *p = spec, *eq, *q;
	int in_word;
	char quote;

	*prefix = NULL;
	while (*p == ' ' || *p == '\t')
		p++;
	/* NAME= before the command names the tools' prefix. */
	for (q = p; *q != '\0' && *q != ' ' && *q != '\t' && *q != '='; q++)
		;
	eq = *q == '=' ? q : NULL;
	if (eq != NULL) {
		for (q = p; q < eq; q++)
			if (!isalnum((unsigned char)*q) && *q != '-' &&
			    *q != '_')
				break;
		if (q != eq || eq == p) {
			art_err_set(err, "bad_mcp", "--mcp '%s': the name "
			    "before '=' may hold letters, digits, '-' and '_' "
			    "only", spec);
			return NULL;
		}
		if ((*prefix = strndup(p, (size_t)(eq - p))) == NULL)
			goto nomem;
		p = eq + 1;
	}
	if ((w = malloc(strlen(p) + 1)) == NULL)
		goto nomem;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		len = 0;
		in_word = 1;
		quote = 0;
		while (in_word && *p != '\0') {
			if (quote == 0 && (*p == ' ' || *p == '\t'))
				in_word = 0;
			else if (quote == 0 && (*p == '\'' || *p == '"'))
				quote = *p++;
			else if (quote != 0 && *p == quote) {
				quote = 0;
				p++;
			} else if (*p == '\\' && quote != '\'' &&
			    p[1] != '\0' && (quote == 0 || p[1] == '"' ||
			    p[1] == '\\')) {
				w[len++] = p[1];
				p += 2;
			} else
				w[len++] = *p++;
		}
		if (quote != 0) {
			free(w);
			art_strvec_release(&v);
			free(*prefix);
			*prefix = NULL;
			art_err_set(err, "bad_mcp", "--mcp '%s': unclosed %c",
			    spec, quote);
			return NULL;
		}
		if (art_strvec_pushf(&v, "%.*s", (int)len, w) == -1) {
			free(w);
			goto nomem;
		}
	}
	free(w);
	if (v.n == 0) {
		art_strvec_release(&v);
		free(*prefix);
		*prefix = NULL;
		art_err_set(err, "bad_mcp", "--mcp '%s': no command to run",
		    spec);
		return NULL;
	}
	return art_strvec_detach(&v);
nomem:
	art_strvec_release(&v);
	free(*prefix);
	*prefix = NULL;
	art_err_set(err, "nomem", "out of memory");
	return NULL;
}
