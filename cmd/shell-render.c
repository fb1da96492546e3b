/* shell-render.c - a turn's client events on the shell's screen
 *
 * lib/evtext draws the events; this file says where the text goes.  In
 * the REPL: tokens as they stream, tool calls and results one line each,
 * errors in one line, and a dim usage line at the end, all on stdout.
 * Elsewhere (-c, piped input) stdout gets only the reply, so scripts can
 * use it, streamed when stdout is a terminal, and errors go to stderr.
 * While a turn shows nothing, a terminal gets a spinner with the seconds
 * gone, erased before anything else is drawn.
 */
#include <config.h>

#include "shell.h"

#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "clock.h"
#include "diag.h"
#include "json.h"

/* The spinner shows after this much quiet, one frame this often. */
#define SPIN_AFTER_MS	300
#define SPIN_EVERY_MS	100

static const char *
sgr(const struct shell *sh, const char *code)
{
	return sh->color ? code : "";
}

size_t
render_columns(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
		return ws.ws_col;
	return 0;
}

bool
render_streams(const struct shell *sh)
{
	return !sh->tty && isatty(STDOUT_FILENO);
}

/* The agent of child session sid, for lib/evtext's prefix. */
static const char *
agent_of(void *ctx, const char *sid)
{
	struct render *r = ctx;
	struct art_strvec a = ART_STRVEC_INIT;
	jv s, show;
	const char *agent;

	args_add(&a, "agentrt-session"), args_add(&a, "show");
	args_add(&a, sid);
	s = shell_json(r->sh, &a, true);
	show = jv_is_valid(s) ? jv_array_get(s, 0) : (jv_free(s), jv_null());
	agent = art_json_str(&show, "agent_id");
	snprintf(r->agent, sizeof(r->agent), "%s", agent != NULL ? agent :
	    "sub-agent");
	jv_free(show);
	return r->agent;
}

void
render_init(struct render *r, struct shell *sh)
{
	struct art_evtext_opts eo = { .color = sh->color, .width = render_columns(),
	    .agent_of = agent_of, .ctx = r };

	*r = (struct render){ .sh = sh, .doing = "waiting" };
	/* Colour is for a person: so is Markdown drawn, not shown raw. */
	eo.markdown = sh->color;
	/* The session's "turn failed" line is not passed on: this says it. */
	eo.show = ART_EVTEXT_ENDED;
	if (sh->tty)
		eo.show |= ART_EVTEXT_TEXT | ART_EVTEXT_TOOLS | ART_EVTEXT_USAGE;
	else if (render_streams(sh))
		eo.show |= ART_EVTEXT_TEXT;
	if ((r->text = art_evtext_new(&eo)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	snprintf(r->root, sizeof(r->root), "%s", sh->sid);
	art_evtext_set_root(r->text, sh->sid);
	/* The follow-ups are the last reply's: a new turn forgets them. */
	sh->nfollowups = 0;
	r->screen = isatty(STDOUT_FILENO);
	r->started = r->quiet_since = art_clock_mono_ms();
	r->completion = jv_null();
	r->answer = jv_null();
	r->interrupt = jv_null();
	if (sh->events != NULL && sh->o->events_format != NULL &&
	    strcmp(sh->o->events_format, "ag-ui") == 0 &&
	    (r->agui = art_agui_new(NULL)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
}

void
render_release(struct render *r)
{
	art_evtext_free(r->text);
	art_agui_free(r->agui);
	jv_free(r->completion);
	jv_free(r->answer);
	jv_free(r->interrupt);
	art_buf_release(&r->errline);
}

/* Takes the spinner off the screen, before anything else is drawn. */
static void
unspin(struct render *r)
{
	if (r->spinning)
		fputs("\r\033[K", stdout);
	r->spinning = false;
	r->quiet_since = art_clock_mono_ms();
}

void
render_tick(struct render *r)
{
	static const char *const frames[] = { "\xe2\xa0\x8b", "\xe2\xa0\x99",
	    "\xe2\xa0\xb9", "\xe2\xa0\xb8", "\xe2\xa0\xbc", "\xe2\xa0\xb4",
	    "\xe2\xa0\xa6", "\xe2\xa0\xa7", "\xe2\xa0\x87", "\xe2\xa0\x8f" };
	int64_t now = art_clock_mono_ms();

	/* Nothing more to wait for once the turn ended or parked. */
	if (!r->screen || art_evtext_is_midline(r->text) ||
	    jv_get_kind(r->completion) != JV_KIND_NULL ||
	    jv_get_kind(r->interrupt) != JV_KIND_NULL ||
	    now - r->quiet_since < SPIN_AFTER_MS ||
	    (r->spinning && now - r->drawn_at < SPIN_EVERY_MS))
		return;
	printf("\r%s%s %s %llds%s\033[K", sgr(r->sh, ART_EVTEXT_DIM),
	    frames[r->frame++ % (sizeof(frames) / sizeof(frames[0]))],
	    r->doing, (long long)((now - r->started) / 1000),
	    sgr(r->sh, ART_EVTEXT_RESET));
	fflush(stdout);
	r->spinning = true;
	r->drawn_at = now;
}

static void
vsay(const struct shell *sh, FILE *f, const char *code, const char *fmt,
    va_list ap)
{
	fputs(sgr(sh, code), f);
	vfprintf(f, fmt, ap);
	fprintf(f, "%s\n", sgr(sh, ART_EVTEXT_RESET));
	fflush(f);
}

void
render_dim(const struct shell *sh, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(sh, stdout, ART_EVTEXT_DIM, fmt, ap);
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
		vsay(sh, stdout, ART_EVTEXT_RED, fmt, ap);
	else {
		vsnprintf(buf, sizeof(buf), fmt, ap);
		art_warn("%s", buf);
	}
	va_end(ap);
}

/* A structured answer's follow-ups, for /1, /2, ... (shell-cmds.c). */
static void
keep_followups(struct shell *sh, const jv *ev)
{
	jv fs = art_json_field(ev, "followups");

	sh->nfollowups = 0;
	if (jv_get_kind(fs) == JV_KIND_ARRAY)
		jv_array_foreach(fs, i, f) {
			if (jv_get_kind(f) == JV_KIND_STRING &&
			    sh->nfollowups < ART_ANSWER_FOLLOWUPS_MAX)
				snprintf(sh->followups[sh->nfollowups++],
				    sizeof(sh->followups[0]), "%s",
				    jv_string_value(f));
			jv_free(f);
		}
	jv_free(fs);
}

/* What the turn leaves: its interrupt, its completion, its activity. */
static void
keep(struct render *r, const jv *ev, const char *type, bool child)
{
	const char *status = art_json_str(ev, "status");

	if (strcmp(type, "structured_answer") == 0 && !child) {
		keep_followups(r->sh, ev);
		jv_free(r->answer);
		r->answer = jv_copy(*ev);
	}
	if (strcmp(type, "completion") == 0 && !child) {
		jv_free(r->completion);
		r->completion = jv_copy(*ev);
	}
	if (strcmp(type, "status") != 0 || status == NULL)
		return;
	if (strcmp(status, "thinking") == 0)
		r->doing = "thinking";
	else if (strcmp(status, "acting") == 0)
		r->doing = "running tools";
	if (strcmp(status, "suspended") != 0)
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

/* Error lines out of the REPL: each our own stderr line. */
static void
warn_lines(struct art_buf *b)
{
	char *line, *nl;

	for (line = b->p; line != NULL && *line != '\0'; line = nl + 1) {
		if ((nl = strchr(line, '\n')) == NULL)
			nl = line + strlen(line) - 1;
		else
			*nl = '\0';
		art_warn("%s", line);
	}
}

/* Writes what lib/evtext drew: out on stdout, err there or on stderr. */
static void
draw(struct render *r, struct art_buf *out, struct art_buf *err)
{
	if (out->len > 0 || (err != out && err->len > 0))
		unspin(r);
	fwrite(out->p != NULL ? out->p : "", 1, out->len, stdout);
	fflush(stdout);
	if (err != out)
		warn_lines(err);
}

/*
 * --events: each event appended as the session wrote it, or as AG-UI's
 * (a turn is a run; lib/agui).  A write that fails is said once a turn.
 */
static void
keep_event(struct render *r, const jv *ev, bool end)
{
	struct art_buf b = ART_BUF_INIT;
	char *s = NULL;
	size_t len = 0;
	int rc = 0;

	if (r->sh->events == NULL)
		return;
	if (r->agui != NULL)
		rc = end ? art_agui_end(r->agui, NULL, &b) :
		    art_agui_event(r->agui, ev, &b);
	else if (!end && (s = art_json_dump(ev, &len)) != NULL)
		rc = art_buf_add(&b, s, len) == -1 || art_buf_addc(&b, '\n') ==
		    -1 ? -1 : 0;
	free(s);
	if (rc == -1)
		art_die(ART_EXIT_FAIL, "out of memory");
	if ((b.len > 0 && fwrite(b.p, 1, b.len, r->sh->events) != b.len) ||
	    fflush(r->sh->events) == EOF) {
		if (!r->events_failed)
			art_warn("write events '%s': %s", r->sh->o->events,
			    strerror(errno));
		r->events_failed = true;
	}
	art_buf_release(&b);
}

/* Is ev the completion of a turn that was cancelled? */
static bool
stopped_completion(const jv *ev)
{
	const char *type = art_json_str(ev, "type"),
	    *e = art_json_str(ev, "error"), *code = art_json_str(ev, "code");

	return type != NULL && strcmp(type, "completion") == 0 &&
	    ((e != NULL && strcmp(e, "cancelled") == 0) ||
	    (code != NULL && strcmp(code, "cancelled") == 0));
}

void
render_event(struct render *r, jv ev)
{
	struct art_buf out = ART_BUF_INIT, err = ART_BUF_INIT;
	const char *type = art_json_str(&ev, "type"),
	    *sid = art_json_str(&ev, "session_id");

	keep_event(r, &ev, false);
	/* A turn Ctrl-C stopped ends in one line, render_end()'s. */
	if (!(r->stopped && stopped_completion(&ev)) &&
	    art_evtext_event(r->text, &ev, &out, r->sh->tty ? &out : &err) ==
	    -1)
		art_die(ART_EXIT_FAIL, "out of memory");
	if (r->root[0] == '\0')
		snprintf(r->root, sizeof(r->root), "%s",
		    art_evtext_root(r->text));
	if (type != NULL)
		keep(r, &ev, type, sid != NULL && strcmp(sid, r->root) != 0);
	draw(r, &out, r->sh->tty ? &out : &err);
	art_buf_release(&out);
	art_buf_release(&err);
	jv_free(ev);
}

/* Ends a streamed line and the spinner before other text is drawn. */
static void
newline(struct render *r)
{
	struct art_buf out = ART_BUF_INIT;

	unspin(r);
	if (art_evtext_break(r->text, &out) == -1)
		art_die(ART_EXIT_FAIL, "out of memory");
	draw(r, &out, &out);
	art_buf_release(&out);
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
	static const char parked[] = "' is parked on interrupt ";
	static const char interrupted[] = "agentrt-session: interrupted (";

	/* The completion's error says it (lib/evtext). */
	if (strncmp(line, failed, sizeof(failed) - 1) == 0)
		return;
	/*
	 * The shell says how to go on from a parked turn itself, or asks
	 * at once (shell-cmds.c): one recipe, not the ring's too.
	 */
	if (strncmp(line, notice, sizeof(notice) - 1) == 0 &&
	    strstr(line, parked) != NULL)
		return;
	/* Ctrl-C here stopped the ring: render_end() says so, once. */
	if (r->stopped && strncmp(line, interrupted,
	    sizeof(interrupted) - 1) == 0)
		return;
	if (strncmp(line, notice, sizeof(notice) - 1) == 0 &&
	    strchr(line + sizeof(notice) - 1, ' ') == NULL) {
		if (r->root[0] == '\0') {
			snprintf(r->root, sizeof(r->root), "%s",
			    line + sizeof(notice) - 1);
			art_evtext_set_root(r->text, r->root);
		}
		return;
	}
	newline(r);
	fprintf(stderr, "%s%s%s\n", r->sh->tty ? sgr(r->sh, ART_EVTEXT_RED) :
	    "", line, r->sh->tty ? sgr(r->sh, ART_EVTEXT_RESET) : "");
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

void
render_end(struct render *r, int status)
{
	keep_event(r, NULL, true);
	newline(r);
	if (r->sh->tty && status == SHELL_STOPPED)
		render_dim(r->sh, "[stopped]");
	else if (status == SHELL_STOPPED)
		art_warn("stopped: the turn%s%s%s is cancelled", r->root[0] !=
		    '\0' ? " of session '" : "", r->root, r->root[0] != '\0' ?
		    "'" : "");
	fflush(stdout);
}
