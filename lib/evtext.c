/* evtext.c - client events and log events as a person reads them */
#include "evtext.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "json.h"
#include "mdterm.h"
#include "utf8.h"

#define ARROW_OUT	"\xe2\x86\x92"	/* → */
#define ARROW_IN	"\xe2\x86\x90"	/* ← */
#define DOT		"\xc2\xb7"	/* · */
#define ELLIPSIS	"\xe2\x80\xa6"	/* … */

struct art_evtext {
	struct art_evtext_opts o;
	char		 root[128];
	bool		 midline;	/* a streamed line is open */
	jv		 streamed;	/* ids of replies drawn as tokens */
	jv		 held;		/* replies held back (hold_token) */
	jv		 names;		/* sub-agent session id -> agent */
	char		 lasterr[256];	/* the last error, said once */
	char		 stop[256];	/* why the root's plan stopped */
	struct art_buf	 md;		/* markdown: streamed text, not a
					   whole block yet */
	bool		 md_drawn;	/* a block of that reply was drawn */
};

struct art_evtext *
art_evtext_new(const struct art_evtext_opts *o)
{
	struct art_evtext *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->o = *o;
	if (t->o.width < 20)
		t->o.width = 80;
	t->streamed = jv_object();
	t->held = jv_object();
	t->names = jv_object();
	return t;
}

void
art_evtext_free(struct art_evtext *t)
{
	if (t == NULL)
		return;
	jv_free(t->streamed);
	jv_free(t->held);
	jv_free(t->names);
	art_buf_release(&t->md);
	free(t);
}

void
art_evtext_set_root(struct art_evtext *t, const char *sid)
{
	snprintf(t->root, sizeof(t->root), "%s", sid != NULL ? sid : "");
}

const char *
art_evtext_root(const struct art_evtext *t)
{
	return t->root;
}

bool
art_evtext_is_midline(const struct art_evtext *t)
{
	return t->midline;
}

static int
addf(struct art_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
addf(struct art_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || art_buf_reserve(b, (size_t)n) == -1)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

static const char *
sgr(bool color, const char *code)
{
	return color ? code : "";
}

char *
art_evtext_line(const char *s, size_t used, size_t width)
{
	size_t max, n, i;
	char *out;

	if (width < 20)
		width = 80;
	max = width > used + 8 ? width - used - 1 : 8;
	if ((out = malloc(strlen(s) + 4)) == NULL)
		return NULL;
	for (i = n = 0; s[i] != '\0' && n < max; i++)
		out[n++] = s[i] == '\n' || s[i] == '\t' || s[i] == '\r' ?
		    ' ' : s[i];
	if (s[i] != '\0') {
		/* Room for the ellipsis; never cut a UTF-8 sequence in two
		 * (out[n] is the first byte dropped). */
		n = art_utf8_back(out, n > 1 ? n - 1 : 0);
		memcpy(out + n, ELLIPSIS, 3);
		n += 3;
	}
	out[n] = '\0';
	return out;
}

int
art_evtext_break(struct art_evtext *t, struct art_buf *out)
{
	int r;

	/* What is held of a streamed reply is drawn before anything else. */
	if (t->md.len > 0) {
		r = t->md_drawn && art_buf_addc(out, '\n') == -1 ? -1 :
		    art_mdterm_render(t->md.p, t->md.len, t->o.width, out);
		art_buf_clear(&t->md);
		t->md_drawn = t->midline = false;
		return r;
	}
	t->md_drawn = false;
	if (!t->midline)
		return 0;
	t->midline = false;
	return art_buf_addc(out, '\n');
}

/* One dim line: pre, head, then text cut to the width. */
static int
dim_line(struct art_evtext *t, struct art_buf *out, const char *pre,
    const char *head, const char *text)
{
	char *line;
	int r;

	if ((line = art_evtext_line(text, strlen(head) + 8, t->o.width)) ==
	    NULL)
		return -1;
	r = art_evtext_break(t, out) == -1 ? -1 : addf(out, "%s%s%s%s%s\n",
	    pre, sgr(t->o.color, ART_EVTEXT_DIM), head, line,
	    sgr(t->o.color, ART_EVTEXT_RESET));
	free(line);
	return r;
}

/* The agent of sub-agent session sid, asked once; lives as t->names. */
static const char *
agent_of(struct art_evtext *t, const char *sid)
{
	jv name = jv_object_get(jv_copy(t->names), jv_string(sid));
	const char *s;

	if (jv_get_kind(name) != JV_KIND_STRING) {
		jv_free(name);
		s = t->o.agent_of != NULL ? t->o.agent_of(t->o.ctx, sid) : NULL;
		t->names = jv_object_set(t->names, jv_string(sid),
		    jv_string(s != NULL ? s : "sub-agent"));
		name = jv_object_get(jv_copy(t->names), jv_string(sid));
	}
	/* t->names holds the string, so the pointer outlives name. */
	s = jv_string_value(name);
	jv_free(name);
	return s;
}

/* "[alpha] " before a sub-agent's lines; "" for the root's. */
static void
prefix(struct art_evtext *t, const jv *ev, char *buf, size_t n)
{
	const char *sid = art_json_str(ev, "session_id");

	buf[0] = '\0';
	if (sid != NULL && t->root[0] != '\0' && strcmp(sid, t->root) != 0)
		snprintf(buf, n, "%s[%s]%s ", sgr(t->o.color, ART_EVTEXT_CYAN),
		    agent_of(t, sid), sgr(t->o.color, ART_EVTEXT_RESET));
}

static int
show_call(struct art_evtext *t, struct art_buf *out, const char *pre,
    const jv *call)
{
	jv fn = art_json_field(call, "function");
	const char *name = art_json_str(&fn, "name"),
	    *args = art_json_str(&fn, "arguments");
	char head[512];
	int r;

	snprintf(head, sizeof(head), ARROW_OUT " %s ", name != NULL ? name :
	    "?");
	r = dim_line(t, out, pre, head, args != NULL ? args : "");
	jv_free(fn);
	return r;
}

static int
show_tool(struct art_evtext *t, struct art_buf *out, const char *pre,
    const jv *m)
{
	const char *name = art_json_str(m, "name");
	jv content = art_json_field(m, "content");
	char head[512];
	int r;

	if (jv_get_kind(content) != JV_KIND_STRING)
		content = jv_dump_string(content, 0);
	snprintf(head, sizeof(head), ARROW_IN " %s: ", name != NULL ? name :
	    "tool");
	r = dim_line(t, out, pre, head, jv_string_value(content));
	jv_free(content);
	return r;
}

static bool
was_streamed(const struct art_evtext *t, const char *id)
{
	jv seen;
	bool yes;

	if (id == NULL)
		return false;
	seen = jv_object_get(jv_copy(t->streamed), jv_string(id));
	yes = jv_is_valid(seen);
	jv_free(seen);
	return yes;
}

/*
 * Whether m is a structured answer's message, whose content is the raw
 * JSON: the structured_answer event after it draws the answer; or an
 * autonomous plan's reply ("todo_plan"), which its decomposition event
 * draws.  Its held tokens are forgotten either way, as the message ends
 * the reply.
 */
static bool
is_answer(struct art_evtext *t, const jv *m)
{
	jv a = art_json_field(m, "structured_answer"), p = art_json_field(m,
	    "todo_plan");
	bool yes = jv_get_kind(a) == JV_KIND_OBJECT ||
	    jv_get_kind(p) == JV_KIND_TRUE;

	jv_free(p);
	const char *id = art_json_str(m, "id");

	jv_free(a);
	if (id != NULL)
		t->held = jv_object_delete(t->held, jv_string(id));
	return yes;
}

static int
show_assistant(struct art_evtext *t, struct art_buf *out, const char *pre,
    const jv *m)
{
	const char *text = art_json_str(m, "content");
	jv calls = art_json_field(m, "tool_calls");
	int r = 0;

	if (!(t->o.show & ART_EVTEXT_TEXT))
		;
	else if (was_streamed(t, art_json_str(m, "id")) || is_answer(t, m))
		r = art_evtext_break(t, out);
	else if (text != NULL && *text != '\0' && t->o.markdown && *pre == '\0')
		r = art_evtext_break(t, out) == -1 ? -1 :
		    art_mdterm_render(text, strlen(text), t->o.width, out);
	else if (text != NULL && *text != '\0')
		r = art_evtext_break(t, out) == -1 ? -1 : addf(out, "%s%s\n",
		    pre, text);
	if (r == 0 && (t->o.show & ART_EVTEXT_TOOLS) &&
	    jv_get_kind(calls) == JV_KIND_ARRAY)
		jv_array_foreach(calls, i, c) {
			if (r == 0)
				r = show_call(t, out, pre, &c);
			jv_free(c);
		}
	jv_free(calls);
	return r;
}

static int
show_user(struct art_evtext *t, struct art_buf *out, const char *pre,
    const jv *m)
{
	jv content = art_json_field(m, "content");
	int r;

	if (jv_get_kind(content) != JV_KIND_STRING)
		content = jv_dump_string(content, 0);
	r = art_evtext_break(t, out) == -1 ? -1 : addf(out, "%s%s> %s%s\n",
	    pre, sgr(t->o.color, ART_EVTEXT_BOLD), jv_string_value(content),
	    sgr(t->o.color, ART_EVTEXT_RESET));
	jv_free(content);
	return r;
}

static int
on_message(struct art_evtext *t, const jv *ev, struct art_buf *out)
{
	jv m = art_json_field(ev, "message");
	const char *role = art_json_str(&m, "role");
	char pre[512];
	int r = 0;

	prefix(t, ev, pre, sizeof(pre));
	if (role == NULL)
		;
	else if (strcmp(role, "assistant") == 0)
		r = show_assistant(t, out, pre, &m);
	else if (strcmp(role, "tool") == 0 && (t->o.show & ART_EVTEXT_TOOLS))
		r = show_tool(t, out, pre, &m);
	else if (strcmp(role, "user") == 0 && (t->o.show & ART_EVTEXT_USER))
		r = show_user(t, out, pre, &m);
	jv_free(m);
	return r;
}

/*
 * A structured answer streams as its JSON, which is no text to read: a
 * reply whose first character but blanks is "{" is held back, not drawn,
 * and its message (or the structured_answer event after it) draws it
 * whole.  Blanks before that character wait to see which it is.  True
 * when text was held; else *pre is the blanks held before it (a new jv).
 */
static bool
hold_token(struct art_evtext *t, const char *id, const char *text, jv *pre)
{
	jv h = jv_object_get(jv_copy(t->held), jv_string(id));
	const char *p;

	if (jv_get_kind(h) == JV_KIND_TRUE) {
		jv_free(h);
		return true;
	}
	if (jv_get_kind(h) != JV_KIND_STRING) {
		jv_free(h);
		h = jv_string("");
	}
	for (p = text; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
	    p++)
		;
	if (*p == '\0' || *p == '{') {
		t->held = jv_object_set(t->held, jv_string(id), *p == '\0' ?
		    jv_string_append_str(h, text) : (jv_free(h), jv_true()));
		return true;
	}
	t->held = jv_object_delete(t->held, jv_string(id));
	*pre = h;
	return false;
}

/*
 * Markdown: a streamed reply is held until it holds whole blocks
 * (art_mdterm_cut), which are drawn; the rest when the reply ends or
 * anything else is drawn (art_evtext_break).
 */
static int
md_token(struct art_evtext *t, const char *text, size_t n,
    struct art_buf *out)
{
	size_t cut;
	int r;

	if (art_buf_add(&t->md, text, n) == -1)
		return -1;
	/* A block ends at a line's end: a token with none ends none. */
	if (memchr(text, '\n', n) == NULL ||
	    (cut = art_mdterm_cut(t->md.p, t->md.len)) == 0)
		return 0;
	/* Blocks drawn apart are set apart, as in one drawing. */
	r = t->md_drawn && art_buf_addc(out, '\n') == -1 ? -1 :
	    art_mdterm_render(t->md.p, cut, t->o.width, out);
	art_buf_consume(&t->md, cut);
	t->md_drawn = true;
	return r;
}

static int
on_token(struct art_evtext *t, const jv *ev, bool child, struct art_buf *out)
{
	const char *text = art_json_str(ev, "text"), *id = art_json_str(ev,
	    "id");
	jv pre;
	size_t n;

	/* A sub-agent's tokens would interleave; its message shows it. */
	if (child || text == NULL || *text == '\0' ||
	    !(t->o.show & ART_EVTEXT_TEXT))
		return 0;
	if (id != NULL && !was_streamed(t, id)) {
		if (hold_token(t, id, text, &pre))
			return 0;
		t->streamed = jv_object_set(t->streamed, jv_string(id),
		    jv_true());
		/* Blanks held before the reply are the reply's, in Markdown
		 * too. */
		if (art_buf_addstr(t->o.markdown ? &t->md : out,
		    jv_string_value(pre)) == -1) {
			jv_free(pre);
			return -1;
		}
		jv_free(pre);
	}
	n = strlen(text);
	if (t->o.markdown)
		return md_token(t, text, n, out);
	t->midline = text[n - 1] != '\n';
	return art_buf_add(out, text, n);
}

static bool
is_refusal(const char *code)
{
	static const char *const codes[] = { "interrupted", "no_interrupt",
	    "bad_input", "turn_already_active", NULL };
	int i;

	for (i = 0; code != NULL && codes[i] != NULL; i++)
		if (strcmp(codes[i], code) == 0)
			return true;
	return false;
}

/*
 * "error: MSG" into err: in the flow (err is out) red, after pre, and cut
 * to the width when cut is set; in a buffer of its own plain and whole.
 */
static int
error_line(struct art_evtext *t, const char *pre, const char *msg,
    const char *note, bool cut, struct art_buf *out, struct art_buf *err)
{
	bool flow = err == out;
	char *line = flow && cut ? art_evtext_line(msg, 16, t->o.width) :
	    strdup(msg);
	int r;

	if (line == NULL)
		return -1;
	snprintf(t->lasterr, sizeof(t->lasterr), "%s", msg);
	if (art_evtext_break(t, out) == -1)
		r = -1;
	else if (flow)
		r = addf(err, "%s%serror: %s%s%s\n", pre, sgr(t->o.color,
		    ART_EVTEXT_RED), line, note, sgr(t->o.color,
		    ART_EVTEXT_RESET));
	else
		r = addf(err, "error: %s%s\n", line, note);
	free(line);
	return r;
}

static int
on_error(struct art_evtext *t, const jv *ev, struct art_buf *out,
    struct art_buf *err)
{
	const char *msg = art_json_str(ev, "message"), *code = art_json_str(ev,
	    "code");
	jv retrying = art_json_field(ev, "retrying");
	bool again = jv_get_kind(retrying) == JV_KIND_TRUE;
	char pre[512];

	jv_free(retrying);
	if (msg == NULL)
		msg = code != NULL ? code : "?";
	if ((!(t->o.show & ART_EVTEXT_REFUSALS) && is_refusal(code)) ||
	    strcmp(msg, t->lasterr) == 0)
		return 0;
	prefix(t, ev, pre, sizeof(pre));
	return error_line(t, pre, msg, again ? " (retrying)" : "", true, out,
	    err);
}

/* " · $0.0001", or "" when the cost is not known: nothing is guessed. */
static void
cost_text(const jv *c, char *buf, size_t n)
{
	jv cost = art_json_field(c, "cost");

	if (jv_get_kind(cost) == JV_KIND_STRING)
		snprintf(buf, n, " " DOT " $%s", jv_string_value(cost));
	else if (jv_get_kind(cost) == JV_KIND_NUMBER)
		snprintf(buf, n, " " DOT " $%g", jv_number_value(cost));
	else
		buf[0] = '\0';
	jv_free(cost);
}

/* "[5 in · 5 out · $0 · 12 ms]", dim. */
static int
usage_line(struct art_evtext *t, const jv *c, struct art_buf *out)
{
	jv usage = art_json_field(c, "usage"), ms = art_json_field(c,
	    "duration_ms");
	int64_t in = 0, outn = 0;
	char cost[64], time[64] = "";
	int r;

	art_json_get_int(&usage, "input", 0, &in, NULL);
	art_json_get_int(&usage, "output", 0, &outn, NULL);
	cost_text(c, cost, sizeof(cost));
	if (jv_get_kind(ms) == JV_KIND_NUMBER)
		snprintf(time, sizeof(time), " " DOT " %.0f ms",
		    jv_number_value(ms));
	r = addf(out, "%s[%lld in " DOT " %lld out%s%s]%s\n",
	    sgr(t->o.color, ART_EVTEXT_DIM), (long long)in, (long long)outn,
	    cost, time, sgr(t->o.color, ART_EVTEXT_RESET));
	jv_free(usage);
	jv_free(ms);
	return r;
}

static int
on_completion(struct art_evtext *t, const jv *ev, struct art_buf *out,
    struct art_buf *err)
{
	const char *msg = art_json_str(ev, "error");

	if (art_evtext_break(t, out) == -1)
		return -1;
	if (art_json_str(ev, "code") != NULL && !(t->o.show & ART_EVTEXT_ENDED))
		msg = NULL;
	if (msg != NULL && strncmp(msg, t->lasterr, sizeof(t->lasterr) - 1) !=
	    0 && error_line(t, "", msg, "", false, out, err) == -1)
		return -1;
	return t->o.show & ART_EVTEXT_USAGE ? usage_line(t, ev, out) : 0;
}

/* "[parked: approval (interrupt ID)]" */
static int
on_status(struct art_evtext *t, const jv *ev, struct art_buf *out)
{
	const char *status = art_json_str(ev, "status"), *reason =
	    art_json_str(ev, "reason"), *id = art_json_str(ev, "interrupt_id");
	char pre[512];

	if (status == NULL || strcmp(status, "suspended") != 0 ||
	    !(t->o.show & ART_EVTEXT_PARKED))
		return 0;
	prefix(t, ev, pre, sizeof(pre));
	return art_evtext_break(t, out) == -1 ? -1 : addf(out,
	    "%s%s[parked: %s (interrupt %s)]%s\n", pre, sgr(t->o.color,
	    ART_EVTEXT_DIM), reason != NULL ? reason : "?", id != NULL ? id :
	    "?", sgr(t->o.color, ART_EVTEXT_RESET));
}

/* What the pipeline did, never what it matched. */
static int
on_security(struct art_evtext *t, const jv *ev, struct art_buf *out)
{
	const char *sev = art_json_str(ev, "severity"), *detail =
	    art_json_str(ev, "detail");

	if (!(t->o.show & ART_EVTEXT_TOOLS))
		return 0;
	return art_evtext_break(t, out) == -1 ? -1 : addf(out,
	    "%s[security: %s %s]%s\n", sgr(t->o.color, ART_EVTEXT_DIM),
	    sev != NULL ? sev : "?", detail != NULL ? detail : "?",
	    sgr(t->o.color, ART_EVTEXT_RESET));
}

/* A structured answer as a table, each line after the prefix. */
static int
on_answer(struct art_evtext *t, const jv *ev, struct art_buf *out)
{
	jv text;
	const char *p, *nl;
	char pre[512];
	int r;

	if (!(t->o.show & ART_EVTEXT_TEXT))
		return 0;
	prefix(t, ev, pre, sizeof(pre));
	text = art_answer_text(ev, t->o.width);
	r = art_evtext_break(t, out);
	/* art_answer_text ends every line, the last too, with a newline. */
	for (p = jv_string_value(text); r == 0 && *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		r = addf(out, "%s%.*s\n", nl > p ? pre : "", (int)(nl - p), p);
	}
	jv_free(text);
	return r;
}

/* "warning: MESSAGE", dim in the flow, plain in a buffer of its own. */
static int
on_warning(struct art_evtext *t, const jv *ev, struct art_buf *out,
    struct art_buf *err)
{
	const char *msg = art_json_str(ev, "message"), *code =
	    art_json_str(ev, "code");
	char pre[512];

	if (msg == NULL)
		msg = code != NULL ? code : "?";
	if (err != out)
		return art_evtext_break(t, out) == -1 ? -1 : addf(err,
		    "warning: %s\n", msg);
	prefix(t, ev, pre, sizeof(pre));
	return dim_line(t, out, pre, "warning: ", msg);
}

/* --- autonomous mode's plan -------------------------------------------- */

/* One todo line: pre, "  [x] ", its title cut to the width. */
static int
todo_line(struct art_evtext *t, struct art_buf *out, const char *pre,
    const char *mark, bool dim, const char *title)
{
	char *line;
	int r;

	if ((line = art_evtext_line(title != NULL ? title : "?", 6 +
	    strlen(pre), t->o.width)) == NULL)
		return -1;
	r = addf(out, "%s%s  %s %s%s\n", pre, sgr(t->o.color && dim,
	    ART_EVTEXT_DIM), mark, line, sgr(t->o.color && dim,
	    ART_EVTEXT_RESET));
	free(line);
	return r;
}

/* "Plan:" and the todos, unticked. */
static int
on_decomposition(struct art_evtext *t, const jv *ev, const char *pre,
    struct art_buf *out)
{
	jv todos = art_json_field(ev, "todos");
	int r;

	r = art_evtext_break(t, out) == -1 ? -1 : addf(out, "%s%sPlan:%s\n",
	    pre, sgr(t->o.color, ART_EVTEXT_BOLD), sgr(t->o.color,
	    ART_EVTEXT_RESET));
	if (jv_get_kind(todos) == JV_KIND_ARRAY)
		jv_array_foreach(todos, i, td) {
			if (r == 0)
				r = todo_line(t, out, pre, "[ ]", false,
				    art_json_str(&td, "title"));
			jv_free(td);
			(void)i;
		}
	jv_free(todos);
	return r;
}

/* A todo done is ticked off; one made active is named, dim. */
static int
on_todo(struct art_evtext *t, const jv *ev, const char *pre,
    struct art_buf *out)
{
	const char *status = art_json_str(ev, "status");
	bool done = status != NULL && strcmp(status, "done") == 0;

	if (!done && (status == NULL || strcmp(status, "active") != 0))
		return 0;
	if (art_evtext_break(t, out) == -1)
		return -1;
	return todo_line(t, out, pre, done ? "[x]" : "[>]", !done,
	    art_json_str(ev, "title"));
}

/*
 * Why a plan stopped, from its last step_progress: nothing while it goes
 * on.  The root's turn says it in its completion's error, so only a
 * stop that parks the turn instead (no completion) is drawn, when the
 * status comes; a sub-agent's completion is never drawn, so its stop is.
 */
static int
on_step_progress(struct art_evtext *t, const jv *ev, const char *pre,
    bool child, struct art_buf *out)
{
	const char *v = art_json_str(ev, "verdict");
	jv step = art_json_field(ev, "step");
	char line[256];
	int n = jv_get_kind(step) == JV_KIND_NUMBER ?
	    (int)jv_number_value(step) : 0;

	jv_free(step);
	if (v != NULL && strcmp(v, "stalled") == 0)
		snprintf(line, sizeof(line), "[stalled at step %d: no new "
		    "results and no todo done]", n);
	else if (v != NULL && strcmp(v, "max_steps") == 0)
		snprintf(line, sizeof(line), "[max_steps: stopped after step "
		    "%d]", n);
	else
		return 0;
	if (!child) {
		snprintf(t->stop, sizeof(t->stop), "%s", line);
		return 0;
	}
	return art_evtext_break(t, out) == -1 ? -1 : addf(out, "%s%s%s%s\n",
	    pre, sgr(t->o.color, ART_EVTEXT_DIM), line, sgr(t->o.color,
	    ART_EVTEXT_RESET));
}

/* The root's stop, drawn when its turn parks, forgotten when it ends. */
static int
plan_stop(struct art_evtext *t, const jv *ev, const char *type,
    struct art_buf *out)
{
	const char *status = art_json_str(ev, "status");
	int r = 0;

	if (t->stop[0] == '\0')
		return 0;
	if (strcmp(type, "status") == 0 && status != NULL &&
	    strcmp(status, "suspended") == 0 && (t->o.show & ART_EVTEXT_TOOLS))
		r = art_evtext_break(t, out) == -1 ? -1 : addf(out,
		    "%s%s%s\n", sgr(t->o.color, ART_EVTEXT_DIM), t->stop,
		    sgr(t->o.color, ART_EVTEXT_RESET));
	else if (strcmp(type, "completion") != 0 &&
	    strcmp(type, "status") != 0)
		return 0;
	t->stop[0] = '\0';
	return r;
}

/* decomposition, todo and step_progress; 1 when ev is none of them. */
static int
on_plan(struct art_evtext *t, const jv *ev, const char *type, bool child,
    struct art_buf *out)
{
	char pre[512];
	int which;

	if (strcmp(type, "decomposition") == 0)
		which = 0;
	else if (strcmp(type, "todo") == 0)
		which = 1;
	else if (strcmp(type, "step_progress") == 0)
		which = 2;
	else
		return 1;
	if (!(t->o.show & ART_EVTEXT_TOOLS))
		return 0;
	prefix(t, ev, pre, sizeof(pre));
	if (which == 0)
		return on_decomposition(t, ev, pre, out);
	if (which == 1)
		return on_todo(t, ev, pre, out);
	return on_step_progress(t, ev, pre, child, out);
}

int
art_evtext_event(struct art_evtext *t, const jv *ev, struct art_buf *out,
    struct art_buf *err)
{
	const char *type = art_json_str(ev, "type"),
	    *sid = art_json_str(ev, "session_id");
	bool child;
	int r;

	if (type == NULL)
		return 0;
	if (t->root[0] == '\0' && sid != NULL &&
	    strcmp(type, "turn.started") == 0)
		art_evtext_set_root(t, sid);
	child = sid != NULL && strcmp(sid, t->root) != 0;
	if ((r = on_plan(t, ev, type, child, out)) != 1)
		return r;
	if (!child && plan_stop(t, ev, type, out) == -1)
		return -1;
	if (strcmp(type, "error") == 0)
		return on_error(t, ev, out, err);
	if (strcmp(type, "completion") == 0)
		return child ? 0 : on_completion(t, ev, out, err);
	if (strcmp(type, "token") == 0)
		return on_token(t, ev, child, out);
	if (strcmp(type, "message") == 0)
		return on_message(t, ev, out);
	if (strcmp(type, "status") == 0)
		return on_status(t, ev, out);
	if (strcmp(type, "security") == 0)
		return on_security(t, ev, out);
	if (strcmp(type, "structured_answer") == 0)
		return on_answer(t, ev, out);
	if (strcmp(type, "warning") == 0)
		return on_warning(t, ev, out, err);
	return 0;
}

/* --- the log ------------------------------------------------------------ */

/*
 * "user: text" for message.new, "error: why" for a failure; else the
 * payload but its type and ids, compact.
 */
static char *
summary(const jv *p)
{
	static const char *const hidden[] = { "type", "id", "turn_id",
	    "decision_id", "parent_id", "call_id" };
	const char *type = art_json_str(p, "type");
	jv m, rest;
	char *s, *text;
	size_t n;

	if (type != NULL && strcmp(type, "message.new") == 0) {
		m = art_json_field(p, "message");
		rest = art_json_field(&m, "content");
		if (jv_get_kind(rest) == JV_KIND_NULL) {
			jv_free(rest);
			rest = art_json_field(&m, "tool_calls");
		}
		text = jv_get_kind(rest) == JV_KIND_STRING ?
		    strdup(jv_string_value(rest)) : art_json_dump(&rest, NULL);
		n = text != NULL ? strlen(text) + 64 : 0;
		s = text != NULL ? malloc(n) : NULL;
		if (s != NULL)
			snprintf(s, n, "%s: %s", art_json_str(&m, "role") !=
			    NULL ? art_json_str(&m, "role") : "?", text);
		free(text);
		jv_free(rest);
		jv_free(m);
		return s;
	}
	if ((text = (char *)art_json_str(p, "error")) != NULL) {
		n = strlen(text) + 8;
		if ((s = malloc(n)) != NULL)
			snprintf(s, n, "error: %s", text);
		return s;
	}
	/* Ids say little to a person and would fill the line. */
	rest = jv_copy(*p);
	for (n = 0; n < sizeof(hidden) / sizeof(hidden[0]); n++)
		rest = jv_object_delete(rest, jv_string(hidden[n]));
	s = jv_object_length(jv_copy(rest)) > 0 ? art_json_dump(&rest, NULL) :
	    strdup("");
	jv_free(rest);
	return s;
}

int
art_evtext_log_line(const jv *e, bool color, size_t width, struct art_buf *out)
{
	jv p = art_json_field(e, "payload"), seq = art_json_field(e, "seq");
	const char *at = art_json_str(e, "occurred_at"), *type, *tp;
	char when[64], clock[9] = "--:--:--", what[128], *sum, *line;
	int r = -1;

	if (jv_get_kind(p) != JV_KIND_OBJECT) {
		jv_free(p);
		p = jv_object();
	}
	type = art_json_str(&p, "type");
	if (at != NULL && (tp = strchr(at, 'T')) != NULL && strlen(tp) > 8)
		snprintf(clock, sizeof(clock), "%.8s", tp + 1);
	snprintf(when, sizeof(when), "%4.0f  %s  ",
	    jv_get_kind(seq) == JV_KIND_NUMBER ? jv_number_value(seq) : 0.0,
	    clock);
	snprintf(what, sizeof(what), "%-20s ", type != NULL ? type : "?");
	if ((sum = summary(&p)) != NULL && (line = art_evtext_line(sum,
	    strlen(when) + strlen(what), width)) != NULL) {
		r = addf(out, "%s%s%s%s%s\n", sgr(color, ART_EVTEXT_DIM), when,
		    sgr(color, ART_EVTEXT_RESET), what, line);
		free(line);
	}
	free(sum);
	jv_free(p);
	jv_free(seq);
	return r;
}
