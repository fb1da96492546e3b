/* shell-edit.c - agentrt-shell's line editor: libedit, history, completion
 *
 * libedit reads through our own character function so that Ctrl-C at
 * the prompt can end el_gets() (the wait fails with EINTR, we say so)
 * and the REPL can throw the line away, as a shell does.  libedit's own
 * signal handling stays off: it would re-raise SIGINT to our whole
 * process group.
 */
#include <config.h>

#include "shell.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

#include "diag.h"
#include "json.h"

#define HISTORY_SIZE	1000

static struct shell *
shell_of(EditLine *el)
{
	void *p = NULL;

	el_get(el, EL_CLIENTDATA, &p);
	return p;
}

static char *
prompt(EditLine *el)
{
	return shell_of(el)->prompt;
}

/*
 * One character from the terminal; -1 on Ctrl-C, so el_gets() returns.
 * SIGINT and SIGWINCH stay blocked here but while pselect() waits: a
 * Ctrl-C that came after the prompt was drawn but before read() began to
 * wait would only set its flag, and read() would wait on for a key, the
 * Ctrl-C lost.  Blocked, it comes in only once pselect() waits, after
 * the flags were looked at, and ends the wait.
 */
static int
getc_fn(EditLine *el, wchar_t *wc)
{
	struct shell *sh = shell_of(el);
	sigset_t block, old;
	fd_set in;
	mbstate_t ps;
	size_t r;
	ssize_t n;
	int rc = -1;
	char c;

	memset(&ps, 0, sizeof(ps));
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGWINCH);
	sigprocmask(SIG_BLOCK, &block, &old);
	for (;;) {
		if (shell_sigint) {
			shell_sigint = 0;
			sh->interrupted = true;
			errno = EINTR;	/* as an interrupted read() says */
			break;
		}
		if (shell_sigwinch) {
			shell_sigwinch = 0;
			el_resize(el);
		}
		FD_ZERO(&in);
		FD_SET(STDIN_FILENO, &in);
		if (pselect(STDIN_FILENO + 1, &in, NULL, NULL, NULL,
		    &old) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		n = read(STDIN_FILENO, &c, 1);
		if (n == 1) {
			r = mbrtowc(wc, &c, 1, &ps);
			if (r == (size_t)-2)
				continue;
			if (r == (size_t)-1)
				*wc = (unsigned char)c;
			rc = 1;
			break;
		}
		if (n == 0) {
			rc = 0;
			break;
		}
		if (errno != EINTR && errno != EAGAIN)
			break;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* $XDG_STATE_HOME/agentrt/history, else ~/.local/state/agentrt/history;
 * the directories made.  "" when there is no home. */
static void
history_path(struct shell *sh)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char dir[4000];
	char *p;

	if (state != NULL && *state == '/')
		snprintf(dir, sizeof(dir), "%s/agentrt", state);
	else if (home != NULL && *home != '\0')
		snprintf(dir, sizeof(dir), "%s/.local/state/agentrt", home);
	else
		return;
	for (p = dir + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(dir, 0700);
		*p = '/';
	}
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		art_warn("make '%s': %s", dir, strerror(errno));
		return;
	}
	snprintf(sh->histfile, sizeof(sh->histfile), "%s/history", dir);
}

/* --- completion ---------------------------------------------------------- */

/* The candidates for the word at start of line (its first word is cmd). */
static jv
candidates(struct shell *sh, const char *line, size_t start)
{
	const char *const *names;
	size_t n = strcspn(line, " \t");
	jv out = jv_array(), c, tools;

	if (line[0] == '/' && start == 0) {
		for (names = shell_slash_names(); *names != NULL; names++)
			out = jv_array_append(out, jv_string_fmt("/%s",
			    *names));
	} else if (n == 4 && strncmp(line, "/new", n) == 0) {
		jv_free(out);
		out = shell_agents(sh);
	}
	else if (n == 7 && strncmp(line, "/switch", n) == 0) {
		c = shell_sessions(sh);
		jv_array_foreach(c, i, s) {
			out = jv_array_append(out, art_json_field(&s, "id"));
			jv_free(s);
		}
		jv_free(c);
	} else if (n == 9 && strncmp(line, "/checkout", n) == 0) {
		jv_free(out);
		out = shell_node_ids(sh);
	} else if (line[0] != '/') {
		c = shell_config(sh);
		tools = art_json_field(&c, "tools");
		if (jv_get_kind(tools) == JV_KIND_ARRAY)
			jv_array_foreach(tools, i, t) {
				out = jv_array_append(out, art_json_field(&t,
				    "name"));
				jv_free(t);
			}
		jv_free(tools);
		jv_free(c);
	}
	return out;
}

/* The candidates (all, consumed) that start with word[0..len). */
static jv
matches(jv all, const char *word, size_t len)
{
	jv out = jv_array();

	jv_array_foreach(all, i, c) {
		if (jv_get_kind(c) == JV_KIND_STRING &&
		    strncmp(jv_string_value(c), word, len) == 0)
			out = jv_array_append(out, jv_copy(c));
		jv_free(c);
	}
	jv_free(all);
	return out;
}

/* The length of the prefix every string of m (not empty) shares. */
static size_t
common_prefix(const jv *m)
{
	jv first = jv_array_get(jv_copy(*m), 0);
	const char *f = jv_string_value(first), *s;
	size_t common = strlen(f), k;

	jv_array_foreach(*m, i, c) {
		s = jv_string_value(c);
		for (k = 0; k < common && s[k] == f[k]; k++)
			;
		common = k;
		jv_free(c);
	}
	jv_free(first);
	return common;
}

static void
list(jv m)
{
	fputs("\r\n", stdout);
	jv_array_foreach(m, i, c) {
		printf("%s  ", jv_string_value(c));
		jv_free(c);
	}
	fputs("\r\n", stdout);
	fflush(stdout);
	jv_free(m);
}

/*
 * The line and cursor a list was last shown for: a second Tab on the same
 * line would only show it again.
 */
static char	*listed;
static size_t	 listed_at;

static bool
already_listed(const char *line, size_t cur)
{
	return listed != NULL && listed_at == cur && strcmp(listed, line) == 0;
}

static void
remember_listed(const char *line, size_t cur)
{
	free(listed);
	listed = strdup(line);
	listed_at = cur;
}

static unsigned char
complete(EditLine *el, int ch)
{
	struct shell *sh = shell_of(el);
	const LineInfo *li = el_line(el);
	size_t cur = (size_t)(li->cursor - li->buffer), start = cur, common;
	char *line = strndup(li->buffer, cur), *ins;
	jv m, first;
	int n;

	(void)ch;
	if (line == NULL)
		return CC_ERROR;
	while (start > 0 && line[start - 1] != ' ' && line[start - 1] != '\t')
		start--;
	m = matches(candidates(sh, line, start), line + start, cur - start);
	n = jv_array_length(jv_copy(m));
	if (n == 0) {
		free(line);
		jv_free(m);
		return CC_REFRESH_BEEP;
	}
	common = common_prefix(&m);
	first = jv_array_get(jv_copy(m), 0);
	if (common > cur - start || n == 1) {
		free(line);
		ins = strndup(jv_string_value(first) + (cur - start),
		    common - (cur - start));
		if (ins != NULL)
			el_insertstr(el, ins);
		if (n == 1)
			el_insertstr(el, " ");
		free(ins);
		jv_free(first);
		jv_free(m);
		return CC_REFRESH;
	}
	jv_free(first);
	if (already_listed(line, cur)) {
		free(line);
		jv_free(m);
		return CC_REFRESH_BEEP;
	}
	remember_listed(line, cur);
	free(line);
	list(m);
	return CC_REDISPLAY;
}

/*
 * Ctrl-D: on an empty line the end of input, said by nothing (libedit's
 * own binding echoes "^D" first); else the character under the cursor
 * goes, as in emacs.
 */
static unsigned char
eof_or_delete(EditLine *el, int ch)
{
	const LineInfo *li = el_line(el);

	(void)ch;
	if (li->buffer == li->lastchar)
		return CC_EOF;
	if (li->cursor == li->lastchar)
		return CC_ERROR;
	el_cursor(el, 1);
	el_deletestr(el, 1);
	return CC_REFRESH;
}

/* --- the editor ---------------------------------------------------------- */

void
edit_init(struct shell *sh)
{
	HistEvent ev;

	history_path(sh);
	if ((sh->hist = history_init()) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	history(sh->hist, &ev, H_SETSIZE, HISTORY_SIZE);
	history(sh->hist, &ev, H_SETUNIQUE, 1);
	if (sh->histfile[0] != '\0')
		history(sh->hist, &ev, H_LOAD, sh->histfile);
	if ((sh->el = el_init("agentrt-shell", stdin, stdout, stderr)) == NULL)
		art_die(ART_EXIT_FAIL, "cannot start the line editor");
	el_set(sh->el, EL_CLIENTDATA, sh);
	el_set(sh->el, EL_EDITOR, "emacs");
	el_set(sh->el, EL_PROMPT, prompt);
	el_set(sh->el, EL_HIST, history, sh->hist);
	el_set(sh->el, EL_GETCFN, getc_fn);
	/* The wide calls: el_set() copies the name and help and libedit
	 * never frees the copies; el_wset() keeps these literals. */
	el_wset(sh->el, EL_ADDFN, L"agentrt-complete",
	    L"complete a command, agent, session, node or tool", complete);
	el_wset(sh->el, EL_BIND, L"^I", L"agentrt-complete", NULL);
	el_wset(sh->el, EL_ADDFN, L"agentrt-eof",
	    L"leave on an empty line, else delete a character",
	    eof_or_delete);
	el_wset(sh->el, EL_BIND, L"^D", L"agentrt-eof", NULL);
	/* Last, so ~/.editrc can change any of it. */
	el_source(sh->el, NULL);
}

void
edit_end(struct shell *sh)
{
	if (sh->el != NULL)
		el_end(sh->el);
	if (sh->hist != NULL)
		history_end(sh->hist);
	free(listed);
	listed = NULL;
	sh->el = NULL;
	sh->hist = NULL;
}

char *
edit_line(struct shell *sh, const char *p, const char *prefill)
{
	const char *line;
	char *out, *nl;
	int n;

	snprintf(sh->prompt, sizeof(sh->prompt), "%s", p);
	sh->interrupted = false;
	shell_sigint = 0;
	if (prefill != NULL && (out = strdup(prefill)) != NULL) {
		/* One line only: a newline would send it. */
		if ((nl = strchr(out, '\n')) != NULL)
			*nl = '\0';
		el_push(sh->el, out);
		free(out);
	}
	line = el_gets(sh->el, &n);
	if (sh->interrupted) {
		fputs("\n", stdout);
		fflush(stdout);
		return strdup("");
	}
	if (line == NULL || n <= 0)
		return NULL;
	if ((out = strdup(line)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	out[strcspn(out, "\n")] = '\0';
	return out;
}

void
edit_remember(struct shell *sh, const char *line)
{
	HistEvent ev;

	if (*line == '\0')
		return;
	history(sh->hist, &ev, H_ENTER, line);
	if (sh->histfile[0] != '\0' &&
	    history(sh->hist, &ev, H_SAVE, sh->histfile) == -1)
		art_warn("save history '%s': %s", sh->histfile, ev.str);
}
