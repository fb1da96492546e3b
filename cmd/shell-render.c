/* shell-render.c - a turn's client events as a person reads them
 *
 * On a terminal: tokens as they stream, tool calls and results one line
 * each, errors in one line, and a dim usage line at the end.  Elsewhere
 * (-c, piped input) stdout gets only the reply, so scripts can use it,
 * and errors go to stderr.  Tool calls and results are drawn from the
 * recorded messages rather than tool_call/tool_result events: a call of a
 * sub-agent is a message too, but has no tool events.
 */
#include <config.h>

#include "shell.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "diag.h"
#include "json.h"
#include "utf8.h"

#define DIM	"\033[2m"
#define RED	"\033[31m"
#define CYAN	"\033[36m"
#define BOLD	"\033[1m"
#define RESET	"\033[0m"

static const char *
sgr(const struct shell *sh, const char *code)
{
	return sh->color ? code : "";
}

void
render_init(struct render *r, struct shell *sh)
{
	*r = (struct render){ .sh = sh };
	snprintf(r->root, sizeof(r->root), "%s", sh->sid);
	r->streamed = jv_object();
	r->names = jv_object();
	r->completion = jv_null();
	r->interrupt = jv_null();
}

void
render_release(struct render *r)
{
	jv_free(r->streamed);
	jv_free(r->names);
	jv_free(r->completion);
	jv_free(r->interrupt);
	art_buf_release(&r->errline);
}

static size_t
columns(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

char *
render_line(const char *s, size_t used)
{
	size_t width = columns(), max, n, i;
	char *out;

	max = width > used + 8 ? width - used - 1 : 8;
	if ((out = malloc(strlen(s) + 4)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	for (i = n = 0; s[i] != '\0' && n < max; i++)
		out[n++] = s[i] == '\n' || s[i] == '\t' || s[i] == '\r' ?
		    ' ' : s[i];
	if (s[i] != '\0') {
		/* Room for the ellipsis; never cut a UTF-8 sequence in two
		 * (out[n] is the first byte dropped). */
		n = art_utf8_back(out, n > 1 ? n - 1 : 0);
		memcpy(out + n, "\xe2\x80\xa6", 3);	/* … */
		n += 3;
	}
	out[n] = '\0';
	return out;
}

/* Ends a streamed line before anything else is drawn. */
static void
newline(struct render *r)
{
	if (r->midline)
		putchar('\n');
	r->midline = false;
}

static void
vsay(const struct shell *sh, FILE *f, const char *code, const char *fmt,
    va_list ap)
{
	fputs(sgr(sh, code), f);
	vfprintf(f, fmt, ap);
	fprintf(f, "%s\n", sgr(sh, RESET));
	fflush(f);
}

void
render_dim(const struct shell *sh, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(sh, stdout, DIM, fmt, ap);
	va_end(ap);
}

/* On a terminal a red line on stdout, in the flow; else our stderr line. */
void
render_error(const struct shell *sh, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	if (sh->tty)
		vsay(sh, stdout, RED, fmt, ap);
	else {
		vsnprintf(buf, sizeof(buf), fmt, ap);
		art_warn("%s", buf);
	}
	va_end(ap);
}

/* The agent of child session sid, looked up once. */
static const char *
child_name(struct render *r, const char *sid)
{
	struct args a = { .n = 0 };
	jv name = jv_object_get(jv_copy(r->names), jv_string(sid)), s;
	const char *agent;

	if (jv_get_kind(name) != JV_KIND_STRING) {
		jv_free(name);
		args_add(&a, "agentrt-session"), args_add(&a, "show");
		args_add(&a, sid);
		s = shell_json(r->sh, &a, true);
		name = jv_is_valid(s) ? jv_array_get(s, 0) : (jv_free(s),
		    jv_null());
		agent = art_json_str(&name, "agent_id");
		s = jv_string(agent != NULL ? agent : "sub-agent");
		jv_free(name);
		name = s;
		r->names = jv_object_set(r->names, jv_string(sid), jv_copy(s));
	}
	jv_free(name);
	/* r->names holds the string, so the pointer outlives name. */
	name = jv_object_get(jv_copy(r->names), jv_string(sid));
	agent = jv_string_value(name);
	jv_free(name);
	return agent;
}

/* "[alpha] " before a sub-agent's lines; "" for the turn's own session. */
static void
prefix(struct render *r, const jv *ev, char *buf, size_t n)
{
	const char *sid = art_json_str(ev, "session_id");

	buf[0] = '\0';
	if (sid != NULL && r->root[0] != '\0' && strcmp(sid, r->root) != 0)
		snprintf(buf, n, "%s[%s]%s ", sgr(r->sh, CYAN),
		    child_name(r, sid), sgr(r->sh, RESET));
}

static void
show_call(struct render *r, const char *pre, const jv *call)
{
	jv fn = art_json_field(call, "function");
	const char *name = art_json_str(&fn, "name"),
	    *args = art_json_str(&fn, "arguments");
	char head[512], *line;

	snprintf(head, sizeof(head), "\xe2\x86\x92 %s ", name != NULL ? name :
	    "?");
	line = render_line(args != NULL ? args : "", strlen(head) + 8);
	newline(r);
	printf("%s%s%s%s%s\n", pre, sgr(r->sh, DIM), head, line,
	    sgr(r->sh, RESET));
	free(line);
	jv_free(fn);
}

static void
show_tool(struct render *r, const char *pre, const jv *m)
{
	const char *name = art_json_str(m, "name");
	jv content = art_json_field(m, "content");
	char head[512], *line;

	if (jv_get_kind(content) != JV_KIND_STRING)
		content = jv_dump_string(content, 0);
	snprintf(head, sizeof(head), "\xe2\x86\x90 %s: ", name != NULL ? name :
	    "tool");
	line = render_line(jv_string_value(content), strlen(head) + 8);
	newline(r);
	printf("%s%s%s%s%s\n", pre, sgr(r->sh, DIM), head, line,
	    sgr(r->sh, RESET));
	free(line);
	jv_free(content);
}

static void
show_assistant(struct render *r, const char *pre, const jv *m)
{
	const char *id = art_json_str(m, "id"), *text = art_json_str(m,
	    "content");
	jv calls = art_json_field(m, "tool_calls"), seen;
	bool streamed = false;

	if (id != NULL) {
		seen = jv_object_get(jv_copy(r->streamed), jv_string(id));
		streamed = jv_is_valid(seen);
		jv_free(seen);
	}
	if (streamed)
		newline(r);
	else if (text != NULL && *text != '\0') {
		newline(r);
		printf("%s%s\n", pre, text);
	}
	if (jv_get_kind(calls) == JV_KIND_ARRAY)
		jv_array_foreach(calls, i, c) {
			show_call(r, pre, &c);
			jv_free(c);
		}
	jv_free(calls);
}

static void
on_message(struct render *r, const jv *ev, const char *pre)
{
	jv m = art_json_field(ev, "message");
	const char *role = art_json_str(&m, "role");

	if (role != NULL && strcmp(role, "assistant") == 0)
		show_assistant(r, pre, &m);
	else if (role != NULL && strcmp(role, "tool") == 0)
		show_tool(r, pre, &m);
	jv_free(m);
}

static void
on_token(struct render *r, const jv *ev, bool child)
{
	const char *text = art_json_str(ev, "text"), *id = art_json_str(ev,
	    "id");
	size_t n;

	/* A sub-agent's tokens would interleave; its message shows it. */
	if (child || text == NULL || *text == '\0')
		return;
	if (id != NULL)
		r->streamed = jv_object_set(r->streamed, jv_string(id),
		    jv_true());
	fputs(text, stdout);
	n = strlen(text);
	r->midline = text[n - 1] != '\n';
}

/* Refusals of an input that agentrt-session also says on its stderr. */
static bool
said_by_session(const char *code)
{
	static const char *const codes[] = { "interrupted", "no_interrupt",
	    "bad_input", "turn_already_active", NULL };
	int i;

	for (i = 0; code != NULL && codes[i] != NULL; i++)
		if (strcmp(codes[i], code) == 0)
			return true;
	return false;
}

static void
on_error(struct render *r, const jv *ev, const char *pre)
{
	const char *msg = art_json_str(ev, "message"), *code = art_json_str(ev,
	    "code");
	jv retrying = art_json_field(ev, "retrying");
	char *line;

	if (msg == NULL)
		msg = code != NULL ? code : "?";
	if (said_by_session(code) || strcmp(msg, r->lasterr) == 0) {
		jv_free(retrying);
		return;
	}
	snprintf(r->lasterr, sizeof(r->lasterr), "%s", msg);
	line = r->sh->tty ? render_line(msg, 16) : strdup(msg);
	if (line == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	newline(r);
	if (r->sh->tty)
		printf("%s", pre);
	render_error(r->sh, "error: %s%s", line,
	    jv_get_kind(retrying) == JV_KIND_TRUE ? " (retrying)" : "");
	jv_free(retrying);
	free(line);
}

static void
on_status(struct render *r, const jv *ev)
{
	const char *status = art_json_str(ev, "status");

	if (status == NULL || strcmp(status, "suspended") != 0)
		return;
	jv_free(r->interrupt);
	r->interrupt = jv_object();
	r->interrupt = jv_object_set(r->interrupt, jv_string("id"),
	    art_json_field(ev, "interrupt_id"));
	r->interrupt = jv_object_set(r->interrupt, jv_string("reason"),
	    art_json_field(ev, "reason"));
	r->interrupt = jv_object_set(r->interrupt, jv_string("payload"),
	    art_json_field(ev, "payload"));
	r->interrupt = jv_object_set(r->interrupt, jv_string("session_id"),
	    art_json_field(ev, "session_id"));
}

void
render_event(struct render *r, jv ev)
{
	const char *type = art_json_str(&ev, "type"),
	    *sid = art_json_str(&ev, "session_id");
	bool child;
	char pre[512];

	if (r->root[0] == '\0' && sid != NULL && type != NULL &&
	    strcmp(type, "turn.started") == 0)
		snprintf(r->root, sizeof(r->root), "%s", sid);
	child = sid != NULL && strcmp(sid, r->root) != 0;
	if (type == NULL)
		;
	else if (strcmp(type, "status") == 0)
		on_status(r, &ev);
	else if (strcmp(type, "completion") == 0 && !child) {
		jv_free(r->completion);
		r->completion = jv_copy(ev);
	} else if (strcmp(type, "error") == 0) {
		prefix(r, &ev, pre, sizeof(pre));
		on_error(r, &ev, pre);
	} else if (!r->sh->tty)
		;
	else if (strcmp(type, "token") == 0)
		on_token(r, &ev, child);
	else if (strcmp(type, "security") == 0) {
		/* What the pipeline did, never what it matched. */
		newline(r);
		render_dim(r->sh, "[security: %s %s]", art_json_str(&ev,
		    "severity") != NULL ? art_json_str(&ev, "severity") : "?",
		    art_json_str(&ev, "detail") != NULL ? art_json_str(&ev,
		    "detail") : "?");
	}
	else if (strcmp(type, "message") == 0) {
		prefix(r, &ev, pre, sizeof(pre));
		on_message(r, &ev, pre);
	}
	fflush(stdout);
	jv_free(ev);
}

/*
 * A line a stage wrote on stderr.  The session's "session ID" notice
 * names the session a turn of a new one made; the prompt shows it.
 */
static void
stderr_line(struct render *r, char *line)
{
	static const char notice[] = "agentrt-session: session ";
	static const char failed[] = "agentrt-session: turn failed (";

	/* The completion's error says it (render_end). */
	if (strncmp(line, failed, sizeof(failed) - 1) == 0)
		return;
	if (strncmp(line, notice, sizeof(notice) - 1) == 0 &&
	    strchr(line + sizeof(notice) - 1, ' ') == NULL) {
		if (r->root[0] == '\0')
			snprintf(r->root, sizeof(r->root), "%s",
			    line + sizeof(notice) - 1);
		return;
	}
	newline(r);
	fflush(stdout);
	fprintf(stderr, "%s%s%s\n", r->sh->tty ? sgr(r->sh, RED) : "", line,
	    r->sh->tty ? sgr(r->sh, RESET) : "");
}

void
render_stderr(struct render *r, const char *buf, size_t n, bool eof)
{
	struct art_buf *b = &r->errline;
	char *nl;

	if (art_buf_add(b, buf, n) == -1)
		art_die(ART_EXIT_FAIL, "out of memory");
	while ((nl = memchr(b->p, '\n', b->len)) != NULL) {
		*nl = '\0';
		stderr_line(r, b->p);
		art_buf_consume(b, (size_t)(nl + 1 - b->p));
	}
	if (eof && b->len > 0) {
		stderr_line(r, b->p);
		art_buf_clear(b);
	}
}

static void
cost_text(const jv *c, char *buf, size_t n)
{
	jv cost = art_json_field(c, "cost");

	if (jv_get_kind(cost) == JV_KIND_STRING)
		snprintf(buf, n, "$%s", jv_string_value(cost));
	else if (jv_get_kind(cost) == JV_KIND_NUMBER)
		snprintf(buf, n, "$%g", jv_number_value(cost));
	else
		snprintf(buf, n, "$?");
	jv_free(cost);
}

static void
usage_line(struct render *r)
{
	const jv *c = &r->completion;
	jv usage = art_json_field(c, "usage"), ms = art_json_field(c,
	    "duration_ms");
	int64_t in = 0, out = 0;
	char cost[64];

	art_json_get_int(&usage, "input", 0, &in, NULL);
	art_json_get_int(&usage, "output", 0, &out, NULL);
	cost_text(c, cost, sizeof(cost));
	if (jv_get_kind(ms) == JV_KIND_NUMBER)
		render_dim(r->sh, "[%lld in \xc2\xb7 %lld out \xc2\xb7 %s "
		    "\xc2\xb7 %.0f ms]", (long long)in, (long long)out, cost,
		    jv_number_value(ms));
	else
		render_dim(r->sh, "[%lld in \xc2\xb7 %lld out \xc2\xb7 %s]",
		    (long long)in, (long long)out, cost);
	jv_free(usage);
	jv_free(ms);
}

void
render_end(struct render *r, int status)
{
	jv err = art_json_field(&r->completion, "error");

	newline(r);
	if (jv_get_kind(err) == JV_KIND_STRING &&
	    strncmp(jv_string_value(err), r->lasterr, sizeof(r->lasterr) - 1)
	    != 0)
		render_error(r->sh, "error: %s", jv_string_value(err));
	jv_free(err);
	if (!r->sh->tty)
		return;
	if (status == SHELL_STOPPED)
		render_dim(r->sh, "[stopped]");
	else if (jv_get_kind(r->completion) == JV_KIND_OBJECT)
		usage_line(r);
	fflush(stdout);
}
