/* tools.c - tools: executables and jq programs in the tools directories
 *
 * An executable tool is started by art_spawn() (spawn.h): fork and
 * execve, never a shell, a failed execve reported at once rather than as
 * an exit status 127, every signal default, no descriptor of ours
 * inherited.  The tool leads a new process group, and every signal we
 * send goes to the group, so a tool's children die with it.  When the
 * leader exits we see it with art_spawn_poll() first, kill what is left
 * of its group while the unreaped leader still holds the group's id (so
 * the id cannot have been reused), and only then reap it.
 *
 * Our ends of a tool's pipes are non-blocking: the caller's poll loop
 * moves every call along at once.
 *
 * Resource limits are set in the child between fork and execve, lowered
 * to the hard limits we have.  Which of them killed a tool is read from
 * its CPU time: RUSAGE_CHILDREN before and after reaping it differ by
 * exactly its usage, as nothing else is reaped in between.
 */
#include "tools.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jq.h>

#include "buf.h"
#include "json.h"
#include "llm.h"
#include "providers.h"
#include "spawn.h"
#include "utf8.h"
#include "wire.h"

#define READ_CHUNK	65536
#define READS_PER_STEP	16	/* so one chatty tool cannot starve the rest */

/* --- names and directories ------------------------------------------- */

static bool
name_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	    (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
}

bool
art_tools_name_is_valid(const char *name)
{
	size_t n;

	if (name == NULL || name[0] == '.' || name[0] == '-')
		return false;
	for (n = 0; name[n] != '\0'; n++)
		if (n >= ART_TOOLS_NAME_MAX || !name_char(name[n]))
			return false;
	if (n == 0)
		return false;
	return !(n >= 3 && strcmp(name + n - 3, ".jq") == 0);
}

/* dir "/" name suffix, malloc'd; NULL when out of memory. */
static char *
join(const char *dir, const char *name, const char *suffix)
{
	size_t n = strlen(dir) + strlen(name) + strlen(suffix) + 2;
	char *p;

	if ((p = malloc(n)) != NULL)
		snprintf(p, n, "%s/%s%s", dir, name, suffix);
	return p;
}

static bool
is_regular(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* What dir holds of name: an executable, else NAME.jq, else a plain file. */
static int
find_in(const char *dir, const char *name, char **path, struct art_err *err)
{
	char *p, *jq;

	if ((p = join(dir, name, "")) == NULL ||
	    (jq = join(dir, name, ".jq")) == NULL) {
		free(p);
		return art_err_set(err, "nomem", "out of memory");
	}
	*path = p;
	if (art_spawn_is_executable(p)) {
		free(jq);
		return ART_TOOLS_EXEC;
	}
	*path = jq;
	if (is_regular(jq)) {
		free(p);
		return ART_TOOLS_JQ;
	}
	free(jq);
	*path = p;
	if (is_regular(p))
		return ART_TOOLS_NOEXEC;
	free(p);
	*path = NULL;
	return ART_TOOLS_NONE;
}

int
art_tools_find(char *const *dirs, const char *name, char **path,
    struct art_err *err)
{
	size_t i;
	int kind;

	*path = NULL;
	if (!art_tools_name_is_valid(name))
		return ART_TOOLS_NONE;
	for (i = 0; dirs[i] != NULL; i++)
		if ((kind = find_in(dirs[i], name, path, err)) != ART_TOOLS_NONE)
			return kind;
	return ART_TOOLS_NONE;
}

/*
 * Whether the plain file path is meant as a tool: a script
 * (it starts with "#!") or one with a declaration NAME.json beside it.
 * A README or a declaration file itself is neither.
 */
static bool
looks_like_tool(const char *path)
{
	char head[2], *decl;
	size_t n;
	bool yes;
	FILE *f;

	if ((f = fopen(path, "r")) != NULL) {
		yes = fread(head, 1, 2, f) == 2 && head[0] == '#' &&
		    head[1] == '!';
		fclose(f);
		if (yes)
			return true;
	}
	n = strlen(path) + sizeof(".json");
	if ((decl = malloc(n)) == NULL)
		return false;
	snprintf(decl, n, "%s.json", path);
	yes = is_regular(decl);
	free(decl);
	return yes;
}

const char *
art_tools_noexec_msg(const char *name, const char *path, char *buf, size_t n)
{
	snprintf(buf, n, "tool '%s' is not executable (chmod +x %s)", name,
	    path);
	return buf;
}

/* Adds dir's tools to found (name -> path) where it has no such name. */
static int
list_dir(const char *dir, jv *found, struct art_err *err)
{
	char *const one[] = { (char *)dir, NULL };
	char name[ART_TOOLS_NAME_MAX + 4], *path;
	struct dirent *de;
	jv here = jv_object();
	size_t n;
	int kind = ART_TOOLS_NONE;
	DIR *d;

	if ((d = opendir(dir)) == NULL) {
		jv_free(here);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if ((n = strlen(de->d_name)) >= sizeof(name))
			continue;
		memcpy(name, de->d_name, n + 1);
		if (n > 3 && strcmp(name + n - 3, ".jq") == 0)
			name[n - 3] = '\0';
		if (jv_object_has(jv_copy(here), jv_string(name)))
			continue;
		if ((kind = art_tools_find(one, name, &path, err)) == -1)
			break;
		if (kind == ART_TOOLS_NOEXEC && !looks_like_tool(path))
			kind = ART_TOOLS_NONE;
		if (kind != ART_TOOLS_NONE)
			here = jv_object_set(here, jv_string(name),
			    JV_ARRAY(jv_string(path), jv_bool(kind !=
			    ART_TOOLS_NOEXEC)));
		free(path);
	}
	closedir(d);
	if (kind == -1) {
		jv_free(here);
		return -1;
	}
	jv_object_foreach(here, k, v) {
		if (jv_object_has(jv_copy(*found), jv_copy(k))) {
			jv_free(k);
			jv_free(v);
		} else
			*found = jv_object_set(*found, k, v);
	}
	jv_free(here);
	return 0;
}

jv
art_tools_list(char *const *dirs, struct art_err *err)
{
	jv found = jv_object(), keys, out = jv_array();
	size_t i;

	for (i = 0; dirs[i] != NULL; i++)
		if (list_dir(dirs[i], &found, err) == -1) {
			jv_free(found);
			jv_free(out);
			return jv_invalid();
		}
	keys = jv_keys(jv_copy(found));		/* sorted */
	jv_array_foreach(keys, j, k) {
		jv e = jv_object(), pe = jv_object_get(jv_copy(found),
		    jv_copy(k));

		e = jv_object_set(e, jv_string("name"), k);
		e = jv_object_set(e, jv_string("path"),
		    jv_array_get(jv_copy(pe), 0));
		e = jv_object_set(e, jv_string("executable"),
		    jv_array_get(pe, 1));
		out = jv_array_append(out, e);
	}
	jv_free(keys);
	jv_free(found);
	return out;
}

/* Reads all of path into a NUL-terminated buffer; -1 with errno set. */
static int
slurp(const char *path, char **buf, size_t *len)
{
	struct art_buf b = ART_BUF_INIT;
	struct art_err e;
	int saved;

	if (art_buf_read_file(&b, path, 0, &e) == -1) {
		saved = art_err_is(&e, "nomem") ? ENOMEM : errno;
		art_buf_release(&b);
		errno = saved;
		return -1;
	}
	*buf = art_buf_detach(&b, len);
	return 0;
}

jv
art_tools_declaration(const char *path, const char *name,
    struct art_err *err)
{
	const char *slash = strrchr(path, '/');
	char *dir, *decl, *text;
	size_t len;
	jv v;

	if ((dir = strdup(path)) == NULL)
		return art_err_set(err, "nomem", "out of memory"), jv_invalid();
	if (slash != NULL)
		dir[slash - path] = '\0';
	else
		strcpy(dir, ".");
	decl = join(dir, name, ".json");
	free(dir);
	if (decl == NULL)
		return art_err_set(err, "nomem", "out of memory"), jv_invalid();
	if (slurp(decl, &text, &len) == -1) {
		if (errno == ENOENT) {
			free(decl);
			return jv_object_set(jv_object(), jv_string("name"),
			    jv_string(name));
		}
		art_err_set(err, "bad_declaration", "read '%s': %s", decl,
		    strerror(errno));
		free(decl);
		return jv_invalid();
	}
	v = art_json_parse(text, len, err);
	free(text);
	if (jv_is_valid(v) && jv_get_kind(v) != JV_KIND_OBJECT) {
		jv_free(v);
		v = jv_invalid();
		art_err_set(err, "bad_declaration", "not a JSON object");
	}
	if (!jv_is_valid(v)) {
		art_err_prefix(err, "read '%s'", decl);
		err->code = "bad_declaration";
		free(decl);
		return v;
	}
	free(decl);
	return jv_object_set(v, jv_string("name"), jv_string(name));
}

/* --- the environment ---------------------------------------------------- */

static const char *const env_allowed[] = {
	"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "USER",
	NULL
};

/* What a tool is told of its call: set here, never passed through. */
static const char *const env_own[] = {
	"AGENTRT_SESSION_ID", "AGENTRT_CALL_ID", "AGENTRT_ATTEMPT", NULL
};

/* Credentials that are no provider table entry's own key variable. */
static const char *const env_keys[] = { "ANTHROPIC_AUTH_TOKEN", NULL };

/* Whether entry ("NAME=...") names name. */
static bool
env_names(const char *entry, const char *name)
{
	size_t n = strlen(name);

	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

static bool
is_listed(const char *const *list, const char *name)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, name) == 0)
			return true;
	return false;
}

/* The allow-listed name "NAME=..." starts with, or NULL. */
static const char *
env_allowed_name(const char *entry)
{
	size_t i;

	for (i = 0; env_allowed[i] != NULL; i++)
		if (env_names(entry, env_allowed[i]))
			return env_allowed[i];
	return NULL;
}

bool
art_tools_env_name_is_valid(const char *name)
{
	size_t i;

	if (name == NULL || *name == '\0' || (*name >= '0' && *name <= '9'))
		return false;
	for (i = 0; name[i] != '\0'; i++)
		if (i == ART_TOOLS_ENV_NAME_MAX || !(name[i] == '_' ||
		    (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

bool
art_tools_env_is_key(const char *name)
{
	const struct art_wire *w;
	size_t i;

	if (is_listed(env_keys, name))
		return true;
	/* Each provider that sends a key says which variable holds it. */
	for (i = 0; i < ART_NPROVIDERS; i++)
		if ((w = art_wire_find(art_providers[i]->name)) != NULL &&
		    w->key_env != NULL && strcmp(w->key_env, name) == 0)
			return true;
	return false;
}

int
art_tools_env_check(const char *name, struct art_err *err)
{
	if (!art_tools_env_name_is_valid(name))
		return art_err_set(err, "bad_env", "'%.*s': not an environment "
		    "variable name", ART_TOOLS_ENV_NAME_MAX, name);
	if (art_tools_env_is_key(name))
		return art_err_set(err, "bad_env", "'%s': a provider key is "
		    "never passed to a tool", name);
	return 0;
}

static char *
env_pair(const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;
	char *p;

	if ((p = malloc(n)) != NULL)
		snprintf(p, n, "%s=%s", name, value);
	return p;
}

/* The first entry of env that sets name (as getenv() finds), or NULL. */
static const char *
env_find(char *const *env, const char *name)
{
	size_t i;

	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (env_names(env[i], name))
			return env[i];
	return NULL;
}

/* Whether pass names a variable a tool may get, not yet in out[0..n). */
static bool
env_passes(char *const *out, size_t n, const char *name)
{
	struct art_err err;
	size_t i;

	if (art_tools_env_check(name, &err) == -1 || is_listed(env_own, name))
		return false;
	for (i = 0; i < n; i++)
		if (env_names(out[i], name))
			return false;
	return true;
}

char **
art_tools_env(char *const *env, const char *const *pass,
    const char *session_id, const char *call_id, int64_t attempt)
{
	const char *seen[sizeof(env_allowed) / sizeof(env_allowed[0])];
	const char *name, *entry;
	char num[24], **out;
	size_t i, j, n = 0, nseen = 0, npass = 0;

	for (i = 0; env != NULL && env[i] != NULL; i++)
		;
	while (pass != NULL && pass[npass] != NULL)
		npass++;
	if ((out = calloc(i + npass + 4, sizeof(*out))) == NULL)
		return NULL;
	for (i = 0; env != NULL && env[i] != NULL; i++) {
		if ((name = env_allowed_name(env[i])) == NULL)
			continue;
		/* The first of a duplicated name is the one getenv() sees. */
		for (j = 0; j < nseen && seen[j] != name; j++)
			;
		if (j < nseen)
			continue;
		seen[nseen++] = name;
		if ((out[n++] = strdup(env[i])) == NULL)
			goto nomem;
	}
	for (i = 0; i < npass; i++)
		if (env_passes(out, n, pass[i]) &&
		    (entry = env_find(env, pass[i])) != NULL &&
		    (out[n++] = strdup(entry)) == NULL)
			goto nomem;
	snprintf(num, sizeof(num), "%lld", (long long)attempt);
	if ((out[n++] = env_pair("AGENTRT_SESSION_ID", session_id)) == NULL ||
	    (out[n++] = env_pair("AGENTRT_CALL_ID", call_id)) == NULL ||
	    (out[n++] = env_pair("AGENTRT_ATTEMPT", num)) == NULL)
		goto nomem;
	return out;
nomem:
	art_tools_env_free(out);
	return NULL;
}

void
art_tools_env_free(char **env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

/* --- output and the stderr tail -------------------------------------- */

void
art_tools_out_init(struct art_tools_out *o, size_t max)
{
	memset(o, 0, sizeof(*o));
	o->max = max > 0 ? max : ART_TOOLS_MAX_OUTPUT;
}

void
art_tools_out_release(struct art_tools_out *o)
{
	free(o->buf);
	o->buf = NULL;
	o->len = o->cap = o->total = 0;
}

int
art_tools_out_add(struct art_tools_out *o, const char *p, size_t n,
    struct art_err *err)
{
	o->total += n;
	if (o->len >= o->max)
		return 0;
	if (n > o->max - o->len)
		n = o->max - o->len;
	if (n == 0)
		return 0;
	if (art_grow(&o->buf, &o->cap, o->len + n, 1) == -1)
		return art_err_set(err, "nomem", "out of memory");
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return 0;
}

bool
art_tools_out_is_truncated(const struct art_tools_out *o)
{
	return o->total > o->len;
}

/* Whether s[0..n) is well-formed UTF-8 holding no NUL byte. */
static bool
is_text(const char *s, size_t n)
{
	return n == 0 || (memchr(s, '\0', n) == NULL &&
	    art_utf8_valid(s, n, NULL));
}

bool
art_tools_out_is_text(const struct art_tools_out *o)
{
	size_t n = o->len;

	if (art_tools_out_is_truncated(o))
		n = art_utf8_whole(o->buf, n);
	return is_text(o->buf, n);
}

static jv
out_text(const struct art_tools_out *o, bool strip_newline)
{
	bool cut = art_tools_out_is_truncated(o);
	size_t n = o->len;
	char marker[64];
	jv s;

	if (cut)
		n = art_utf8_whole(o->buf, n);
	if (strip_newline && n > 0 && o->buf[n - 1] == '\n')
		n--;
	s = jv_string_sized(n > 0 ? o->buf : "", (int)n);
	if (cut) {
		snprintf(marker, sizeof(marker),
		    "\n[output truncated at %zu bytes]", o->max);
		s = jv_string_append_str(s, marker);
	}
	return s;
}

jv
art_tools_out_text(const struct art_tools_out *o)
{
	return out_text(o, true);
}

void
art_tools_tail_init(struct art_tools_tail *t)
{
	t->len = 0;
}

void
art_tools_tail_add(struct art_tools_tail *t, const char *p, size_t n)
{
	size_t drop;

	if (n >= sizeof(t->buf)) {
		memcpy(t->buf, p + n - sizeof(t->buf), sizeof(t->buf));
		t->len = sizeof(t->buf);
		return;
	}
	if (t->len + n > sizeof(t->buf)) {
		drop = t->len + n - sizeof(t->buf);
		memmove(t->buf, t->buf + drop, t->len - drop);
		t->len -= drop;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

static bool
is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' ||
	    ch == '\v' || ch == '\f';
}

jv
art_tools_tail_text(const struct art_tools_tail *t, size_t max)
{
	size_t start = t->len > max ? t->len - max : 0, end = t->len;

	/* The tail may begin inside a character: start at the next one. */
	start = art_utf8_fwd(t->buf, start, end);
	while (start < end && is_space(t->buf[start]))
		start++;
	while (end > start && is_space(t->buf[end - 1]))
		end--;
	return jv_string_sized(end > start ? t->buf + start : "",
	    (int)(end - start));
}

/* --- jq tools ---------------------------------------------------------- */

/*
 * The program is wrapped so that it sees {} for env and $ENV (a binding of
 * $ENV hides jq's own; a named argument would not) and stderr writes
 * nothing.  The wrapper's text stays on line 1 so line numbers in errors
 * are the file's; the closing parenthesis goes on a line of its own in
 * case the file ends in a comment.
 */
#define JQ_PRELUDE	"def env: {}; def stderr: .; {} as $ENV | ("
#define JQ_POSTLUDE	"\n)"

struct jq_entry {
	char		*path;
	jq_state	*jq;
	struct jq_entry	*next;
};

struct art_tools_jq {
	struct jq_entry	*head;
};

struct art_tools_jq *
art_tools_jq_new(void)
{
	return calloc(1, sizeof(struct art_tools_jq));
}

void
art_tools_jq_free(struct art_tools_jq *c)
{
	struct jq_entry *e, *next;

	if (c == NULL)
		return;
	for (e = c->head; e != NULL; e = next) {
		next = e->next;
		jq_teardown(&e->jq);
		free(e->path);
		free(e);
	}
	free(c);
}

static jv
error_action(jv msg)
{
	jv a = jv_object();

	a = jv_object_set(a, jv_string("type"), jv_string("tool.error"));
	a = jv_object_set(a, jv_string("error"), msg);
	return jv_object_set(a, jv_string("retryable"), jv_false());
}

/* Keeps the first compile error libjq reports; the rest are counts. */
static void
keep_first_error(void *data, jv msg)
{
	jv *first = data;

	if (jv_get_kind(*first) == JV_KIND_NULL &&
	    jv_get_kind(msg) == JV_KIND_STRING)
		*first = jv_copy(msg);
	jv_free(msg);
}

static void
drop_error(void *data, jv msg)
{
	(void)data;
	jv_free(msg);
}

/* "compile 'x.jq': <the first line of msg, without "jq: error: ">". */
static jv
compile_error(const char *path, jv first)
{
	const char *base = strrchr(path, '/'), *m;
	char buf[512];
	size_t n;

	base = base != NULL ? base + 1 : path;
	m = jv_get_kind(first) == JV_KIND_STRING ? jv_string_value(first) :
	    "compile error";
	if (strncmp(m, "jq: error: ", 11) == 0)
		m += 11;
	n = strcspn(m, "\n");
	snprintf(buf, sizeof(buf), "compile '%s': %.*s", base, (int)n, m);
	jv_free(first);
	return jv_string(buf);
}

/* The compiled tool at path, or NULL with *msg (a jv string) saying why. */
static jq_state *
jq_tool(struct art_tools_jq *c, const char *path, jv *msg)
{
	struct jq_entry *e;
	char *text, *prog;
	size_t len;
	jv first = jv_null();
	jq_state *jq;

	for (e = c->head; e != NULL; e = e->next)
		if (strcmp(e->path, path) == 0)
			return e->jq;
	if (slurp(path, &text, &len) == -1) {
		*msg = jv_string_fmt("read '%s': %s", path, strerror(errno));
		return NULL;
	}
	prog = malloc(strlen(JQ_PRELUDE) + len + strlen(JQ_POSTLUDE) + 1);
	e = calloc(1, sizeof(*e));
	if (prog == NULL || e == NULL || (e->path = strdup(path)) == NULL ||
	    (jq = jq_init()) == NULL) {
		free(text), free(prog), free(e != NULL ? e->path : NULL);
		free(e);
		*msg = jv_string("out of memory");
		return NULL;
	}
	sprintf(prog, "%s%s%s", JQ_PRELUDE, text, JQ_POSTLUDE);
	free(text);
	/* Without a library path, libjq 1.6 asserts on an include. */
	jq_set_attr(jq, jv_string("JQ_LIBRARY_PATH"), jv_array());
	jq_set_error_cb(jq, keep_first_error, &first);
	if (!jq_compile(jq, prog)) {
		free(prog);
		jq_teardown(&jq);
		free(e->path);
		free(e);
		*msg = compile_error(path, first);
		return NULL;
	}
	free(prog);
	jv_free(first);
	/* NULL would restore libjq's default, which prints on our stderr. */
	jq_set_error_cb(jq, drop_error, NULL);
	e->jq = jq;
	e->next = c->head;
	c->head = e;
	return jq;
}

/* A jq error's message as text: a string as it is, else compact JSON. */
static jv
message_text(jv msg)
{
	if (jv_get_kind(msg) == JV_KIND_STRING)
		return msg;
	return jv_dump_string(msg, 0);
}

/* The arguments as jq's input: "" and white space are null. */
static jv
jq_input(const char *args, size_t len)
{
	struct art_err err;
	size_t i;

	for (i = 0; i < len && is_space(args[i]); i++)
		;
	if (i == len)
		return jv_null();
	return art_json_parse(args, len, &err);
}

/* Runs jq over its started input, collecting the outputs into out. */
static jv
jq_collect(jq_state *jq, struct art_tools_out *out)
{
	struct art_err err;
	size_t len;
	int n = 0;
	jv r, text, code;

	while (jv_is_valid(r = jq_next(jq))) {
		text = message_text(r);
		len = (size_t)jv_string_length_bytes(jv_copy(text));
		if ((n++ > 0 && art_tools_out_add(out, "\n", 1, &err) == -1) ||
		    art_tools_out_add(out, jv_string_value(text), len,
		    &err) == -1) {
			jv_free(text);
			return error_action(jv_string("out of memory"));
		}
		jv_free(text);
		if (art_tools_out_is_truncated(out))
			return jv_true();	/* an endless generator stops */
	}
	if (jq_halted(jq)) {
		jv_free(r);
		code = jq_get_exit_code(jq);
		if (jv_get_kind(code) != JV_KIND_NUMBER ||
		    jv_number_value(code) == 0)
			return jv_free(code), jv_true();
		jv_free(code);
		return error_action(message_text(jq_get_error_message(jq)));
	}
	if (jv_invalid_has_msg(jv_copy(r)))
		return error_action(message_text(jv_invalid_get_msg(r)));
	jv_free(r);
	return jv_true();
}

jv
art_tools_jq_run(struct art_tools_jq *c, const char *path, const char *args,
    size_t len, size_t max_output)
{
	struct art_tools_out out;
	jq_state *jq;
	jv input, msg, r, a;

	input = jq_input(args, len);
	if (!jv_is_valid(input)) {
		jv_free(input);
		return error_action(jv_string("arguments are not JSON"));
	}
	if ((jq = jq_tool(c, path, &msg)) == NULL) {
		jv_free(input);
		return error_action(msg);
	}
	art_tools_out_init(&out, max_output);
	jq_start(jq, input, 0);
	r = jq_collect(jq, &out);
	if (jv_get_kind(r) == JV_KIND_TRUE) {
		a = jv_object_set(jv_object(), jv_string("type"),
		    jv_string("tool.result"));
		r = jv_object_set(a, jv_string("result"),
		    out_text(&out, false));
	}
	art_tools_out_release(&out);
	return r;
}

/* --- executable tools ------------------------------------------------ */

struct art_tools_call {
	pid_t			 pid;
	int			 in_fd, out_fd, err_fd;
	char			*input;
	size_t			 input_len, input_off;
	struct art_tools_out	 out;
	struct art_tools_tail	 tail;
	int64_t			 deadline, kill_at, drain_until, grace;
	bool			 exited, timed_out, term_sent, kill_sent;
	bool			 lost;		/* reaped by someone else */
	int			 status;	/* from waitpid() */
	struct art_tools_limits	 limits;
	int64_t			 cpu_ms;	/* its CPU time, once reaped */
	char			*session_id, *call_id;
	int64_t			 attempt;
};

int
art_tools_pipe(int p[2])
{
	return art_spawn_pipe(p);
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void
art_tools_nonblock(int fd)
{
	art_spawn_nonblock(fd);
}

#define MAX_LIMITS	4

/* Fills ls (MAX_LIMITS of room) with the limits set; returns how many. */
static int
plan_limits(const struct art_tools_limits *lim, struct art_spawn_limit *ls)
{
	int n = 0;

	if (lim->cpu_secs > 0)
		ls[n++] = (struct art_spawn_limit){ RLIMIT_CPU, lim->cpu_secs,
		    lim->cpu_secs + 1 };
	if (lim->memory > 0)
		ls[n++] = (struct art_spawn_limit){ RLIMIT_AS, lim->memory,
		    lim->memory };
	if (lim->files > 0)
		ls[n++] = (struct art_spawn_limit){ RLIMIT_NOFILE, lim->files,
		    lim->files };
	/* A tool killed by a limit leaves no core file in --cwd. */
	ls[n++] = (struct art_spawn_limit){ RLIMIT_CORE, 0, 0 };
	return n;
}

/* Forks and execs; 0, or -1 with err and every descriptor closed. */
static int
spawn(struct art_tools_call *c, const struct art_tools_spec *s,
    struct art_err *err)
{
	char *argv[2] = { (char *)s->path, NULL }, name[ART_TOOLS_NAME_MAX * 2];
	struct art_spawn_limit ls[MAX_LIMITS];
	struct art_spawn sp = { .file = s->path, .argv = argv, .env = s->env,
	    .cwd = s->cwd, .name = name, .busy_code = "tool_busy",
	    .exec_code = "tool_exec", .pgid = ART_SPAWN_NEW_GROUP,
	    .nonblock = true, .limits = ls, .die_with_parent = true };
	struct art_child ch;

	snprintf(name, sizeof(name), "tool '%s'", s->name);
	sp.io[0].how = sp.io[1].how = sp.io[2].how = ART_SPAWN_PIPE;
	sp.nlimits = plan_limits(&s->limits, ls);
	if (art_spawn(&sp, &ch, err) == -1)
		return -1;
	c->pid = ch.pid;
	c->in_fd = ch.fd[0], c->out_fd = ch.fd[1], c->err_fd = ch.fd[2];
	return 0;
}

static void
pump_in(struct art_tools_call *c)
{
	ssize_t n;

	while (c->in_fd >= 0 && c->input_off < c->input_len) {
		n = write(c->in_fd, c->input + c->input_off,
		    c->input_len - c->input_off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == -1)
			break;		/* EPIPE: the tool does not read */
		c->input_off += (size_t)n;
	}
	close_fd(&c->in_fd);
	free(c->input);
	c->input = NULL;
}

/* Reads what fd has; -1 with err on out of memory. */
static int
pump_read(struct art_tools_call *c, int *fd, struct art_err *err)
{
	char buf[READ_CHUNK];
	ssize_t n;
	int i;

	for (i = 0; *fd >= 0 && i < READS_PER_STEP; i++) {
		n = read(*fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			close_fd(fd);
			return 0;
		}
		if (fd == &c->err_fd)
			art_tools_tail_add(&c->tail, buf, (size_t)n);
		else if (art_tools_out_add(&c->out, buf, (size_t)n, err) == -1)
			return -1;
	}
	return 0;
}

static void
call_release(struct art_tools_call *c)
{
	close_fd(&c->in_fd), close_fd(&c->out_fd), close_fd(&c->err_fd);
	art_tools_out_release(&c->out);
	free(c->input);
	free(c->session_id);
	free(c->call_id);
	free(c);
}

struct art_tools_call *
art_tools_call_start(const struct art_tools_spec *s, int64_t now_ms,
    struct art_err *err)
{
	struct art_tools_call *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return art_err_set(err, "tool_busy", "out of memory"), NULL;
	c->in_fd = c->out_fd = c->err_fd = -1;
	art_tools_out_init(&c->out, s->max_output);
	art_tools_tail_init(&c->tail);
	c->attempt = s->attempt;
	c->limits = s->limits;
	c->grace = s->kill_grace_ms > 0 ? s->kill_grace_ms : 0;
	c->deadline = now_ms + (s->timeout_ms > 0 ? s->timeout_ms : 1);
	c->session_id = strdup(s->session_id);
	c->call_id = strdup(s->call_id);
	if (s->input_len > 0 && (c->input = malloc(s->input_len)) != NULL)
		memcpy(c->input, s->input, s->input_len);
	c->input_len = s->input_len;
	if (c->session_id == NULL || c->call_id == NULL ||
	    (s->input_len > 0 && c->input == NULL)) {
		call_release(c);
		art_err_set(err, "tool_busy", "out of memory");
		return NULL;
	}
	if (spawn(c, s, err) == -1) {
		call_release(c);
		return NULL;
	}
	pump_in(c);
	return c;
}

void
art_tools_call_free(struct art_tools_call *c)
{
	if (c == NULL)
		return;
	if (c->pid > 0 && !c->exited)
		art_spawn_reap_group(c->pid);
	call_release(c);
}

int
art_tools_call_pollfds(const struct art_tools_call *c, struct pollfd *fds)
{
	int n = 0;

	if (c->in_fd >= 0)
		fds[n].fd = c->in_fd, fds[n].events = POLLOUT, n++;
	if (c->out_fd >= 0)
		fds[n].fd = c->out_fd, fds[n].events = POLLIN, n++;
	if (c->err_fd >= 0)
		fds[n].fd = c->err_fd, fds[n].events = POLLIN, n++;
	while (n < ART_TOOLS_POLLFDS) {
		fds[n].fd = -1, fds[n].events = 0, fds[n].revents = 0;
		n++;
	}
	return (c->in_fd >= 0) + (c->out_fd >= 0) + (c->err_fd >= 0);
}

static int64_t
children_cpu_ms(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru) == -1)
		return 0;
	return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
	    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

/* Notices the leader's exit, ends its group, and only then reaps it. */
static int
reap(struct art_tools_call *c, int64_t now, struct art_err *err)
{
	int64_t cpu;
	int st;

	if (c->exited || (st = art_spawn_poll(c->pid)) == 0)
		return 0;
	if (st == -1) {
		/* Not ours to wait for any more: the group id may be reused. */
		c->lost = c->exited = true;
		c->drain_until = now + c->grace;
		close_fd(&c->in_fd);
		return 0;
	}
	cpu = children_cpu_ms();
	st = art_spawn_reap_group(c->pid);
	c->cpu_ms = children_cpu_ms() - cpu;
	c->exited = true;
	c->status = st == -1 ? 0 : st;
	c->drain_until = now + c->grace;
	close_fd(&c->in_fd);
	if (pump_read(c, &c->out_fd, err) == -1)
		return -1;
	return pump_read(c, &c->err_fd, err);
}

static void
timers(struct art_tools_call *c, int64_t now)
{
	if (c->exited) {
		/* A process that left the group may still hold the pipes. */
		if (now >= c->drain_until)
			close_fd(&c->out_fd), close_fd(&c->err_fd);
		return;
	}
	if (!c->term_sent && now >= c->deadline) {
		art_spawn_signal_group(c->pid, SIGTERM);
		c->term_sent = c->timed_out = true;
		c->kill_at = now + c->grace;
	}
	if (c->term_sent && !c->kill_sent && now >= c->kill_at) {
		art_spawn_signal_group(c->pid, SIGKILL);
		c->kill_sent = true;
	}
}

int
art_tools_call_step(struct art_tools_call *c, const struct pollfd *fds,
    int nfds, int64_t now_ms, struct art_err *err)
{
	int i, fd;

	for (i = 0; i < nfds; i++) {
		if ((fd = fds[i].fd) < 0 || fds[i].revents == 0)
			continue;
		if (fd == c->in_fd)
			pump_in(c);
		else if (fd == c->out_fd) {
			if (pump_read(c, &c->out_fd, err) == -1)
				return -1;
		} else if (fd == c->err_fd)
			pump_read(c, &c->err_fd, err);
	}
	if (reap(c, now_ms, err) == -1)
		return -1;
	timers(c, now_ms);
	return 0;
}

int64_t
art_tools_call_due_ms(const struct art_tools_call *c)
{
	if (art_tools_call_is_done(c))
		return INT64_MAX;
	if (c->exited)
		return c->drain_until;
	if (!c->term_sent)
		return c->deadline;
	return c->kill_sent ? INT64_MAX : c->kill_at;
}

bool
art_tools_call_is_done(const struct art_tools_call *c)
{
	return c->exited && c->out_fd < 0 && c->err_fd < 0;
}

long
art_tools_call_pid(const struct art_tools_call *c)
{
	return (long)c->pid;
}

static jv
settle_error(jv line, jv msg, bool retryable)
{
	line = jv_object_set(line, jv_string("type"), jv_string("tool.error"));
	line = jv_object_set(line, jv_string("error"), msg);
	return jv_object_set(line, jv_string("retryable"),
	    jv_bool(retryable));
}

/* v in bytes as --memory would take it: 64M rather than 67108864. */
static void
size_text(char *buf, size_t n, uint64_t v)
{
	const char *units = "KMGT";
	int u = 0;

	while (u < 4 && v >= 1024 && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%llu", (unsigned long long)v);
	else
		snprintf(buf, n, "%llu%c", (unsigned long long)v, units[u - 1]);
}

/* Whether the CPU time limit killed the tool: SIGXCPU, or the hard limit. */
static bool
cpu_killed(const struct art_tools_call *c)
{
	if (!WIFSIGNALED(c->status))
		return false;
	if (WTERMSIG(c->status) == SIGXCPU)
		return true;
	return WTERMSIG(c->status) == SIGKILL && c->limits.cpu_secs > 0 &&
	    (uint64_t)c->cpu_ms >= c->limits.cpu_secs * 1000;
}

static jv
cpu_message(const struct art_tools_call *c)
{
	const char *sig = WTERMSIG(c->status) == SIGXCPU ? "XCPU" : "KILL";

	if (c->limits.cpu_secs == 0)
		return jv_string_fmt("killed by signal %s: CPU time limit",
		    sig);
	return jv_string_fmt("killed by signal %s: CPU time limit (--cpu %llu)",
	    sig, (unsigned long long)c->limits.cpu_secs);
}

/* "exit status N" or "killed by signal S", and the limits that may be why. */
static jv
status_message(const struct art_tools_call *c)
{
	char buf[128], size[32];
	int n;

	if (WIFSIGNALED(c->status))
		n = snprintf(buf, sizeof(buf), "killed by signal %d",
		    WTERMSIG(c->status));
	else
		n = snprintf(buf, sizeof(buf), "exit status %d",
		    WEXITSTATUS(c->status));
	if (c->limits.memory > 0) {
		size_text(size, sizeof(size), c->limits.memory);
		n += snprintf(buf + n, sizeof(buf) - (size_t)n,
		    " (under --memory %s", size);
	}
	if (c->limits.files > 0)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n,
		    "%s--files %llu", c->limits.memory > 0 ? ", " : " (under ",
		    (unsigned long long)c->limits.files);
	if (c->limits.memory > 0 || c->limits.files > 0)
		snprintf(buf + n, sizeof(buf) - (size_t)n, ")");
	return jv_string(buf);
}

jv
art_tools_call_settle(const struct art_tools_call *c)
{
	jv line = jv_object(), msg;

	line = jv_object_set(line, jv_string("type"), jv_null());
	line = jv_object_set(line, jv_string("session_id"),
	    jv_string(c->session_id));
	line = jv_object_set(line, jv_string("id"), jv_string(c->call_id));
	line = jv_object_set(line, jv_string("attempt"),
	    jv_number((double)c->attempt));
	if (c->timed_out)
		return settle_error(line, jv_string("deadline exceeded"), true);
	if (c->lost)
		return settle_error(line, jv_string("tool process lost"),
		    false);
	if (cpu_killed(c))
		return settle_error(line, cpu_message(c), false);
	if (WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0) {
		if (!art_tools_out_is_text(&c->out))
			return settle_error(line, jv_string_fmt("output is not "
			    "UTF-8 text (%zu bytes)", c->out.total), false);
		line = jv_object_set(line, jv_string("type"),
		    jv_string("tool.result"));
		return jv_object_set(line, jv_string("result"),
		    art_tools_out_text(&c->out));
	}
	msg = art_tools_tail_text(&c->tail, ART_TOOLS_ERROR_MAX);
	if (jv_string_length_bytes(jv_copy(msg)) == 0) {
		jv_free(msg);
		msg = status_message(c);
	}
	return settle_error(line, msg, WIFEXITED(c->status) &&
	    WEXITSTATUS(c->status) == ART_TOOLS_EX_TEMPFAIL);
}
