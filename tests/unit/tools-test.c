/* tools-test - tool names, lookup, environment, output caps, jq tools, runs */
#include "tools.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "tap.h"
#include "testjv.h"

static char tmp[256];
static size_t cap = 64;		/* the output cap of start() */

/* Writes text to tmp/name with the given mode; returns the path. */
static const char *
put(const char *name, const char *text, mode_t mode)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) == EOF || chmod(path, mode) == -1) {
		printf("Bail out! write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return path;
}

static const char *
sub(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	if (mkdir(path, 0755) == -1 && errno != EEXIST) {
		printf("Bail out! mkdir %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return path;
}

/* The member key of each entry of a list (consumed). */
static jv
fields(jv l, const char *key)
{
	jv out = jv_array();

	jv_array_foreach(l, i, e) {
		out = jv_array_append(out, jv_object_get(e, jv_string(key)));
	}
	jv_free(l);
	return out;
}

static jv
names(jv l)
{
	return fields(l, "name");
}

static void
test_names(void)
{
	char longest[ART_TOOLS_NAME_MAX + 2];
	const char *good[] = { "calc", "a", "_x", "a.b-c_9", "calc.json",
	    "jq", "x.jq2", "9lives" };
	const char *bad[] = { "", ".hidden", "-opt", "a/b", "..", "x.jq",
	    "a b", "caf\xc3\xa9", "a\nb", "a:b", "/etc/passwd" };
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok(art_tools_name_is_valid(good[i]), "name '%s' is valid",
		    good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(!art_tools_name_is_valid(bad[i]), "bad name %zu (%s) is "
		    "refused", i, strchr(bad[i], '\n') ? "a newline" : bad[i]);
	ok(!art_tools_name_is_valid(NULL), "NULL is refused");
	memset(longest, 'n', sizeof(longest));
	longest[ART_TOOLS_NAME_MAX] = '\0';
	ok(art_tools_name_is_valid(longest), "a 64-byte name is valid");
	longest[ART_TOOLS_NAME_MAX] = 'n';
	longest[ART_TOOLS_NAME_MAX + 1] = '\0';
	ok(!art_tools_name_is_valid(longest), "a 65-byte name is refused");
}

static void
test_find_and_list(void)
{
	char one[512], two[512], msg[128], *path;
	char *dirs[3];
	struct art_err err;
	jv l, d;
	int k;

	snprintf(one, sizeof(one), "%s", sub("one"));
	snprintf(two, sizeof(two), "%s", sub("two"));
	dirs[0] = one, dirs[1] = two, dirs[2] = NULL;
	put("one/both", "#!/bin/sh\n", 0755);
	put("one/both.jq", ".", 0644);
	put("one/plain", "not executable", 0644);
	put("one/script", "#!/bin/sh\n", 0644);
	put("two/script", "#!/bin/sh\n", 0755);
	put("two/declared", "not a script", 0644);
	put("two/declared.json", "{}", 0644);
	put("one/upper.jq", ".text | ascii_upcase", 0644);
	put("one/shadow", "#!/bin/sh\n", 0755);
	put("two/shadow", "#!/bin/sh\n", 0755);
	put("two/deep", "#!/bin/sh\n", 0755);
	put("two/deep.json", "{\"name\":\"wrong\",\"description\":\"d\"}",
	    0644);
	put("two/broken", "#!/bin/sh\n", 0755);
	put("two/broken.json", "{nope", 0644);
	put("two/.hidden", "#!/bin/sh\n", 0755);
	sub("one/adir");

	k = art_tools_find(dirs, "both", &path, &err);
	ok(k == ART_TOOLS_EXEC && strstr(path, "/one/both") != NULL &&
	    strstr(path, ".jq") == NULL, "an executable beats NAME.jq");
	free(path);
	k = art_tools_find(dirs, "upper", &path, &err);
	ok(k == ART_TOOLS_JQ && strstr(path, "/one/upper.jq") != NULL,
	    "NAME.jq is a jq tool");
	free(path);
	k = art_tools_find(dirs, "shadow", &path, &err);
	ok(k == ART_TOOLS_EXEC && strstr(path, "/one/shadow") != NULL,
	    "the first directory wins");
	free(path);
	k = art_tools_find(dirs, "deep", &path, &err);
	ok(k == ART_TOOLS_EXEC && strstr(path, "/two/deep") != NULL,
	    "later directories are searched");
	free(path);
	k = art_tools_find(dirs, "plain", &path, &err);
	ok(k == ART_TOOLS_NOEXEC && strstr(path, "/one/plain") != NULL,
	    "a file that is not executable is a tool that cannot run");
	free(path);
	k = art_tools_find(dirs, "script", &path, &err);
	ok(k == ART_TOOLS_NOEXEC && strstr(path, "/one/script") != NULL,
	    "one that cannot run hides a later directory's, as any tool");
	free(path);
	ok(strcmp(art_tools_noexec_msg("wc", "t/wc", msg, sizeof(msg)),
	    "tool 'wc' is not executable (chmod +x t/wc)") == 0,
	    "the message names the tool and the chmod to run");
	ok(art_tools_find(dirs, "adir", &path, &err) == ART_TOOLS_NONE,
	    "a directory is no tool");
	ok(art_tools_find(dirs, "missing", &path, &err) == ART_TOOLS_NONE,
	    "a missing tool is none");
	ok(art_tools_find(dirs, "../one/both", &path, &err) ==
	    ART_TOOLS_NONE, "a bad name finds nothing, even where a file is");

	l = art_tools_list(dirs, &err);
	ok(is_json(names(jv_copy(l)), "[\"both\",\"broken\",\"declared\","
	    "\"deep\",\"script\",\"shadow\",\"upper\"]"),
	    "list: sorted by name; hidden, plain and directories left out");
	d = jv_array_get(jv_copy(l), 5);
	ok(strstr(art_json_str(&d, "path"), "/one/shadow") != NULL,
	    "list: a name in an earlier directory hides a later one");
	jv_free(d);
	ok(is_json(fields(jv_copy(l), "executable"),
	    "[true,true,false,true,false,true,true]"),
	    "list: a script or a declared file without its exec bit is "
	    "there, not executable");
	jv_free(l);

	snprintf(one, sizeof(one), "%s/two/deep", tmp);
	ok(is_json(art_tools_declaration(one, "deep", &err),
	    "{\"name\":\"deep\",\"description\":\"d\"}"),
	    "declaration: NAME.json, its name the tool's");
	snprintf(one, sizeof(one), "%s/one/both", tmp);
	ok(is_json(art_tools_declaration(one, "both", &err),
	    "{\"name\":\"both\"}"), "declaration: none is just the name");
	snprintf(one, sizeof(one), "%s/two/broken", tmp);
	d = art_tools_declaration(one, "broken", &err);
	ok(!jv_is_valid(d) && art_err_is(&err, "bad_declaration") &&
	    strstr(err.msg, "broken.json") != NULL,
	    "declaration: bad JSON is an error naming the file (%s)", err.msg);
	jv_free(d);
	sub("two/dir.json");
	snprintf(one, sizeof(one), "%s/two/dir", tmp);
	d = art_tools_declaration(one, "dir", &err);
	ok(!jv_is_valid(d) && art_err_is(&err, "bad_declaration") &&
	    strstr(err.msg, "dir.json") != NULL &&
	    strstr(err.msg, strerror(EISDIR)) != NULL,
	    "declaration: one that cannot be read says why (%s)", err.msg);
	jv_free(d);
}

/* True when env (a NULL-terminated array) holds exactly entry. */
static bool
env_has(char **env, const char *entry)
{
	size_t i;

	for (i = 0; env[i] != NULL; i++)
		if (strcmp(env[i], entry) == 0)
			return true;
	return false;
}

static size_t
env_count(char **env)
{
	size_t n = 0;

	while (env[n] != NULL)
		n++;
	return n;
}

static void
test_env_is_scrubbed(void)
{
	char *in[] = { "OPENAI_API_KEY=sk-secret", "PATH=/bin:/usr/bin",
	    "HOME=/home/u", "PATHX=no", "LC_ALL=C", "PATH=/second",
	    "AGENTRT_CALL_ID=forged", "NOEQUALS", "TZ=UTC", "USER=u",
	    "LANG=C.UTF-8", "LC_CTYPE=C", "TMPDIR=/tmp", "SHELL=/bin/sh",
	    "ANTHROPIC_API_KEY=x", NULL };
	char **env = art_tools_env(in, NULL, "s1", "call-7", 3);

	if (!ok(env != NULL, "env: built"))
		return;
	ok(env_has(env, "PATH=/bin:/usr/bin") && !env_has(env, "PATH=/second"),
	    "env: the first PATH, as getenv() sees it");
	ok(env_has(env, "HOME=/home/u") && env_has(env, "LC_ALL=C") &&
	    env_has(env, "TZ=UTC") && env_has(env, "USER=u") &&
	    env_has(env, "LANG=C.UTF-8") && env_has(env, "LC_CTYPE=C") &&
	    env_has(env, "TMPDIR=/tmp"), "env: the allow-list passes");
	ok(!env_has(env, "OPENAI_API_KEY=sk-secret") &&
	    !env_has(env, "ANTHROPIC_API_KEY=x") && !env_has(env, "PATHX=no") &&
	    !env_has(env, "SHELL=/bin/sh") && !env_has(env, "NOEQUALS"),
	    "env: keys and everything else are dropped");
	ok(env_has(env, "AGENTRT_SESSION_ID=s1") &&
	    env_has(env, "AGENTRT_CALL_ID=call-7") &&
	    env_has(env, "AGENTRT_ATTEMPT=3") &&
	    !env_has(env, "AGENTRT_CALL_ID=forged"),
	    "env: the call's own AGENTRT_ variables, not inherited ones");
	ok(env_count(env) == 11, "env: nothing else (%zu entries)",
	    env_count(env));
	art_tools_env_free(env);
	env = art_tools_env(NULL, NULL, "s", "c", 1);
	ok(env != NULL && env_count(env) == 3,
	    "env: from an empty environment");
	art_tools_env_free(env);
}

static void
test_env_names_and_keys(void)
{
	struct art_err err;
	char long_name[ART_TOOLS_ENV_NAME_MAX + 2];

	ok(art_tools_env_name_is_valid("MEMORY_FILE_PATH") &&
	    art_tools_env_name_is_valid("_x1") &&
	    art_tools_env_name_is_valid("a"), "env name: letters, digits, _");
	memset(long_name, 'A', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	ok(!art_tools_env_name_is_valid("1X") &&
	    !art_tools_env_name_is_valid("") &&
	    !art_tools_env_name_is_valid(NULL) &&
	    !art_tools_env_name_is_valid("A=B") &&
	    !art_tools_env_name_is_valid("A-B") &&
	    !art_tools_env_name_is_valid("A B") &&
	    !art_tools_env_name_is_valid(long_name),
	    "env name: a digit first, '=', '-', blanks, empty, too long: no");
	long_name[ART_TOOLS_ENV_NAME_MAX] = '\0';
	ok(art_tools_env_name_is_valid(long_name), "env name: the longest");
	ok(art_tools_env_is_key("OPENAI_API_KEY") &&
	    art_tools_env_is_key("ANTHROPIC_API_KEY") &&
	    art_tools_env_is_key("ANTHROPIC_AUTH_TOKEN"),
	    "env: the providers' key variables are keys");
	ok(!art_tools_env_is_key("OPENAI_BASE_URL") &&
	    !art_tools_env_is_key("PATH") &&
	    !art_tools_env_is_key("openai_api_key"),
	    "env: other variables are not");
	ok(art_tools_env_check("MEMORY_FILE_PATH", &err) == 0,
	    "env check: a plain name passes");
	ok(art_tools_env_check("OPENAI_API_KEY", &err) == -1 &&
	    art_err_is(&err, "bad_env") && strcmp(err.msg, "'OPENAI_API_KEY': "
	    "a provider key is never passed to a tool") == 0,
	    "env check: a key is refused, saying why: %s", err.msg);
	ok(art_tools_env_check("1X", &err) == -1 && strcmp(err.msg,
	    "'1X': not an environment variable name") == 0,
	    "env check: a bad name is refused: %s", err.msg);
}

static void
test_env_passes_what_is_named(void)
{
	char *in[] = { "PATH=/bin", "MEMORY_FILE_PATH=/m", "OTHER=o",
	    "OPENAI_API_KEY=sk-proj-SENTINELsecret0000000000000000",
	    "ANTHROPIC_AUTH_TOKEN=SENTINEL", "AGENTRT_CALL_ID=forged",
	    "MEMORY_FILE_PATH=/second", "X1=x", NULL };
	const char *pass[] = { "MEMORY_FILE_PATH", "OPENAI_API_KEY",
	    "ANTHROPIC_AUTH_TOKEN", "AGENTRT_CALL_ID", "PATH", "UNSET",
	    "1X", "X1", "MEMORY_FILE_PATH", NULL };
	char **env = art_tools_env(in, pass, "s1", "c1", 1);
	size_t i;
	int secret = 0;

	if (!ok(env != NULL, "env pass: built"))
		return;
	ok(env_has(env, "MEMORY_FILE_PATH=/m") &&
	    !env_has(env, "MEMORY_FILE_PATH=/second") && env_has(env, "X1=x"),
	    "env pass: a named variable passes, once, as getenv() sees it");
	for (i = 0; env[i] != NULL; i++)
		if (strstr(env[i], "SENTINEL") != NULL)
			secret = 1;
	ok(!secret, "env pass: a provider key never does, even named");
	ok(!env_has(env, "OTHER=o") &&
	    !env_has(env, "AGENTRT_CALL_ID=forged") &&
	    env_has(env, "AGENTRT_CALL_ID=c1"),
	    "env pass: unnamed ones stay out; the call's own cannot be forged");
	ok(env_count(env) == 6, "env pass: PATH once, two passed, three of "
	    "the call (%zu)", env_count(env));
	art_tools_env_free(env);
}

/* The result text of bytes added in the given chunks, cap max. */
static jv
capped(size_t max, const char *a, const char *b)
{
	struct art_tools_out o;
	struct art_err err;
	jv t;

	art_tools_out_init(&o, max);
	art_tools_out_add(&o, a, strlen(a), &err);
	if (b != NULL)
		art_tools_out_add(&o, b, strlen(b), &err);
	t = art_tools_out_text(&o);
	art_tools_out_release(&o);
	return t;
}

static void
test_output_cap(void)
{
	ok(is_json(capped(100, "391\n", NULL), "\"391\""),
	    "out: one trailing newline removed");
	ok(is_json(capped(100, "a\n\n", NULL), "\"a\\n\""),
	    "out: only one");
	ok(is_json(capped(100, "", NULL), "\"\""), "out: empty is \"\"");
	ok(is_json(capped(4, "ab", "cd"), "\"abcd\""),
	    "out: exactly the cap is not truncated");
	ok(is_json(capped(4, "abc", "def\n"),
	    "\"abcd\\n[output truncated at 4 bytes]\""),
	    "out: past the cap, kept bytes then the marker");
	ok(is_json(capped(4, "abc\n", "x"),
	    "\"abc\\n[output truncated at 4 bytes]\""),
	    "out: a kept newline does not double before the marker");
	ok(is_json(capped(5, "abcd\xc3\xa9z", NULL),
	    "\"abcd\\n[output truncated at 5 bytes]\""),
	    "out: a character cut at the cap is dropped whole");
	ok(is_json(capped(6, "abcd\xc3\xa9z", NULL),
	    "\"abcd\xc3\xa9\\n[output truncated at 6 bytes]\""),
	    "out: a whole character at the cap stays");
	ok(is_json(capped(100, "bad \xff byte", NULL),
	    "\"bad \xef\xbf\xbd byte\""), "out: invalid UTF-8 becomes U+FFFD");
	ok(is_json(capped(0, "x", NULL), "\"x\""), "out: cap 0 is the default");
}

/* Whether n bytes of s, cap max, are text to art_tools_out_is_text(). */
static bool
texty(size_t max, const char *s, size_t n)
{
	struct art_tools_out o;
	struct art_err err;
	bool r;

	art_tools_out_init(&o, max);
	art_tools_out_add(&o, s, n, &err);
	r = art_tools_out_is_text(&o);
	art_tools_out_release(&o);
	return r;
}

static void
test_output_is_text(void)
{
	ok(texty(100, "", 0), "text: nothing is text");
	ok(texty(100, "caf\xc3\xa9 \xf0\x9f\x98\x80\n", 11),
	    "text: well-formed UTF-8 is");
	ok(!texty(100, "a\0b", 3), "text: a NUL byte is not");
	ok(!texty(100, "bad \xff", 5), "text: a stray byte is not");
	ok(!texty(100, "\xc0\xaf", 2), "text: an overlong form is not");
	ok(!texty(100, "\xed\xa0\x80", 3), "text: a surrogate is not");
	ok(!texty(100, "ab\xc3", 3), "text: a character cut short is not");
	ok(texty(3, "ab\xc3\xa9", 4),
	    "text: a character cut by the cap is left out, not held against");
}

static jv
tail_of(const char *chunks[], size_t n, size_t max)
{
	struct art_tools_tail t;
	size_t i;

	art_tools_tail_init(&t);
	for (i = 0; i < n; i++)
		art_tools_tail_add(&t, chunks[i], strlen(chunks[i]));
	return art_tools_tail_text(&t, max);
}

static void
test_stderr_tail(void)
{
	char big[6000];
	const char *c[3];
	jv t;

	c[0] = "  warning: x\n", c[1] = "error: boom\n\n";
	ok(is_json(tail_of(c, 2, 1024), "\"warning: x\\nerror: boom\""),
	    "tail: trimmed at both ends");
	c[0] = " \n\t";
	ok(is_json(tail_of(c, 1, 1024), "\"\""), "tail: white space is \"\"");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big + sizeof(big) - 6, "THEND", 5);
	c[0] = big;
	t = tail_of(c, 1, 1024);
	ok(jv_string_length_bytes(jv_copy(t)) == 1024 &&
	    strcmp(jv_string_value(t) + 1019, "THEND") == 0,
	    "tail: the last 1 KiB of a long stderr");
	jv_free(t);
	c[0] = "first-", c[1] = big + 1000, c[2] = "-last";
	t = tail_of(c, 3, 5000);
	ok(jv_string_length_bytes(jv_copy(t)) == ART_TOOLS_STDERR_KEEP &&
	    strstr(jv_string_value(t), "first") == NULL &&
	    strcmp(jv_string_value(t) + ART_TOOLS_STDERR_KEEP - 5,
	    "-last") == 0,
	    "tail: only the last 4 KiB are kept, across writes");
	jv_free(t);
	c[0] = "\xc3\xa9\xc3\xa9";
	ok(is_json(tail_of(c, 1, 3), "\"\xc3\xa9\""),
	    "tail: starts at a whole character");
}

/* Runs a jq tool written from text over args. */
static jv
jq_tool(struct art_tools_jq *c, const char *name, const char *prog,
    const char *args, size_t max)
{
	const char *path = put(name, prog, 0644);

	return art_tools_jq_run(c, path, args, strlen(args), max);
}

static void
test_jq_tools(void)
{
	struct art_tools_jq *c = art_tools_jq_new();
	const char *path;
	jv a;

	ok(is_json(jq_tool(c, "upper.jq", ".text | ascii_upcase\n",
	    "{\"text\":\"hi there\"}", 0),
	    "{\"type\":\"tool.result\",\"result\":\"HI THERE\"}"),
	    "jq: a string output is the result as it is");
	setenv("ART_TOOLS_TEST_SECRET", "sk-do-not-leak", 1);
	ok(is_json(jq_tool(c, "env.jq", "[env, $ENV, (env|length), "
	    "($ENV|length), (def f: $ENV; f)]", "{}", 0),
	    "{\"type\":\"tool.result\",\"result\":\"[{},{},0,0,{}]\"}"),
	    "jq: env and $ENV are empty though the process has variables");
	ok(getenv("ART_TOOLS_TEST_SECRET") != NULL, "(the variable is set)");
	ok(is_json(jq_tool(c, "many.jq", ".a, \"two\\n\", {\"b\": [1, 2]}",
	    "{\"a\":1}", 0), "{\"type\":\"tool.result\","
	    "\"result\":\"1\\ntwo\\n\\n{\\\"b\\\":[1,2]}\"}"),
	    "jq: outputs joined by newlines, other JSON compact");
	ok(is_json(jq_tool(c, "none.jq", "empty", "{}", 0),
	    "{\"type\":\"tool.result\",\"result\":\"\"}"),
	    "jq: no output is \"\"");
	ok(is_json(jq_tool(c, "null.jq", "[., type]", "  ", 0),
	    "{\"type\":\"tool.result\",\"result\":\"[null,\\\"null\\\"]\"}"),
	    "jq: empty arguments are null");
	ok(is_json(jq_tool(c, "bad-args.jq", ".", "{not json", 0),
	    "{\"type\":\"tool.error\",\"error\":\"arguments are not JSON\","
	    "\"retryable\":false}"), "jq: arguments that are not JSON");
	ok(is_json(jq_tool(c, "two-args.jq", ".", "1 2", 0),
	    "{\"type\":\"tool.error\",\"error\":\"arguments are not JSON\","
	    "\"retryable\":false}"), "jq: two JSON texts are not arguments");
	ok(is_json(jq_tool(c, "err.jq", "error(\"no \\(.x)\")", "{\"x\":5}", 0),
	    "{\"type\":\"tool.error\",\"error\":\"no 5\",\"retryable\":false}"),
	    "jq: error(msg) is a tool.error");
	ok(is_json(jq_tool(c, "errobj.jq", "error({code: 1})", "{}", 0),
	    "{\"type\":\"tool.error\",\"error\":\"{\\\"code\\\":1}\","
	    "\"retryable\":false}"), "jq: error(object) is compact JSON");
	a = jq_tool(c, "idx.jq", ".text", "[1]", 0);
	ok(strcmp(art_json_str(&a, "type"), "tool.error") == 0 &&
	    strstr(art_json_str(&a, "error"), "Cannot index array") != NULL,
	    "jq: a runtime error is a tool.error (%s)",
	    art_json_str(&a, "error"));
	jv_free(a);
	ok(is_json(jq_tool(c, "halt.jq", "1, halt, 2", "{}", 0),
	    "{\"type\":\"tool.result\",\"result\":\"1\"}"),
	    "jq: halt ends the outputs");
	ok(is_json(jq_tool(c, "halterr.jq", "\"stop\" | halt_error(3)", "{}",
	    0),
	    "{\"type\":\"tool.error\",\"error\":\"stop\",\"retryable\":false}"),
	    "jq: halt_error is a tool.error");
	ok(is_json(jq_tool(c, "endless.jq", "repeat(\"ab\")", "{}", 7),
	    "{\"type\":\"tool.result\","
	    "\"result\":\"ab\\nab\\na\\n[output truncated at 7 bytes]\"}"),
	    "jq: output is capped, and an endless generator stops");
	ok(is_json(jq_tool(c, "nl.jq", "\"x\\n\"", "{}", 0),
	    "{\"type\":\"tool.result\",\"result\":\"x\\n\"}"),
	    "jq: a string's own trailing newline stays");
	ok(is_json(jq_tool(c, "stderr.jq", "\"quiet\" | stderr", "{}", 0),
	    "{\"type\":\"tool.result\",\"result\":\"quiet\"}"),
	    "jq: stderr writes nothing and passes its input");
	ok(is_json(jq_tool(c, "comment.jq", ".a # no newline at the end",
	    "{\"a\":\"x\"}", 0), "{\"type\":\"tool.result\",\"result\":\"x\"}"),
	    "jq: a program ending in a comment");
	a = jq_tool(c, "syntax.jq", ".a |", "{}", 0);
	ok(strcmp(art_json_str(&a, "type"), "tool.error") == 0 &&
	    strncmp(art_json_str(&a, "error"), "compile 'syntax.jq': ", 21) ==
	    0 && strchr(art_json_str(&a, "error"), '\n') == NULL,
	    "jq: a compile error names the file, on one line (%s)",
	    art_json_str(&a, "error"));
	jv_free(a);
	a = jq_tool(c, "inc.jq", "include \"x\"; .", "{}", 0);
	ok(strcmp(art_json_str(&a, "type"), "tool.error") == 0,
	    "jq: include is refused, not a crash");
	jv_free(a);
	a = jq_tool(c, "undef.jq", "$__prog_args", "{}", 0);
	ok(strcmp(art_json_str(&a, "type"), "tool.error") == 0,
	    "jq: an undefined variable is a compile error");
	jv_free(a);
	path = put("cached.jq", "\"first\"", 0644);
	ok(is_json(art_tools_jq_run(c, path, "{}", 2, 0),
	    "{\"type\":\"tool.result\",\"result\":\"first\"}"), "jq: compiled");
	put("cached.jq", "\"second\"", 0644);
	ok(is_json(art_tools_jq_run(c, path, "{}", 2, 0),
	    "{\"type\":\"tool.result\",\"result\":\"first\"}"),
	    "jq: compiled once per cache, by path");
	ok(is_json(art_tools_jq_run(c, "/nonexistent/x.jq", "{}", 2, 0),
	    "{\"type\":\"tool.error\",\"error\":\"read '/nonexistent/x.jq': "
	    "No such file or directory\",\"retryable\":false}"),
	    "jq: a file that is gone");
	art_tools_jq_free(c);
	art_tools_jq_free(NULL);
}

/* --- running executables ----------------------------------------------- */

/* Drives a call to its end as the command's loop would, and settles it. */
static jv
finish(struct art_tools_call *c)
{
	struct pollfd fds[ART_TOOLS_POLLFDS];
	struct art_err err;
	int64_t due, now;
	int to;

	while (!art_tools_call_is_done(c)) {
		art_tools_call_pollfds(c, fds);
		now = art_clock_mono_ms();
		due = art_tools_call_due_ms(c);
		/* No SIGCHLD here: look for the exit every 10 ms. */
		to = due - now < 10 ? (int)(due > now ? due - now : 0) : 10;
		poll(fds, ART_TOOLS_POLLFDS, to);
		if (art_tools_call_step(c, fds, ART_TOOLS_POLLFDS,
		    art_clock_mono_ms(), &err) == -1)
			return jv_invalid();
	}
	jv t = art_tools_call_settle(c);
	art_tools_call_free(c);
	return t;
}

/* Starts the script text as tool NAME with input; NULL on failure. */
static struct art_tools_call *
start(const char *name, const char *script, const char *input,
    int64_t timeout_ms, struct art_err *err)
{
	char *env[] = { "PATH=/usr/bin:/bin", "OPENAI_API_KEY=sk-x", NULL };
	struct art_tools_spec s = {
		.name = name, .input = input, .input_len = strlen(input),
		.max_output = cap, .timeout_ms = timeout_ms,
		.kill_grace_ms = 100, .session_id = "s1", .call_id = "c1",
		.attempt = 2,
	};
	struct art_tools_call *c;
	char **e = art_tools_env(env, NULL, "s1", "c1", 2);

	s.path = put(name, script, 0755);
	s.env = e;
	c = art_tools_call_start(&s, art_clock_mono_ms(), err);
	art_tools_env_free(e);
	return c;
}

static jv
run(const char *name, const char *script, const char *input,
    int64_t timeout_ms)
{
	struct art_err err;
	struct art_tools_call *c = start(name, script, input, timeout_ms, &err);

	if (c == NULL) {
		printf("# start %s: %s\n", name, err.msg);
		return jv_invalid();
	}
	return finish(c);
}

#define SETTLE(t, rest) "{\"type\":\"" t "\",\"session_id\":\"s1\"," \
	"\"id\":\"c1\",\"attempt\":2," rest "}"

/* Whether pid runs: a zombie waiting for a reaper that never comes (no
 * init reaps in some containers) has stopped running all the same. */
static bool
alive(pid_t pid)
{
	char path[64], state = 'Z';
	FILE *f;

	if (kill(pid, 0) == -1)
		return false;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return true;
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = '?';
	fclose(f);
	return state != 'Z' && state != 'X';
}

/* Waits up to 2 s for a killed pid to stop: SIGKILL takes a moment. */
static bool
gone(pid_t pid)
{
	int i;

	for (i = 0; i < 200 && alive(pid); i++)
		poll(NULL, 0, 10);
	return !alive(pid);
}

static void
test_exit_statuses(void)
{
	struct art_err err;
	struct art_tools_call *c;
	char script[2048], pidfile[300], big[200001];
	FILE *f;
	long pid = 0;

	ok(is_json(run("ok", "#!/bin/sh\necho 391\n", "", 5000),
	    SETTLE("tool.result", "\"result\":\"391\"")),
	    "exit 0: stdout is the result");
	ok(is_json(run("cat", "#!/bin/sh\nexec cat\n", "{\"x\":1}", 5000),
	    SETTLE("tool.result", "\"result\":\"{\\\"x\\\":1}\"")),
	    "the arguments arrive on stdin");
	ok(is_json(run("fail", "#!/bin/sh\necho partial\n"
	    "echo 'noise' >&2\necho '  it broke  ' >&2\nexit 3\n", "", 5000),
	    SETTLE("tool.error", "\"error\":\"noise\\n  it broke\","
	    "\"retryable\":false")), "exit 3: the stderr tail is the error");
	ok(is_json(run("quiet", "#!/bin/sh\nexit 4\n", "", 5000),
	    SETTLE("tool.error", "\"error\":\"exit status 4\","
	    "\"retryable\":false")), "exit 4 with no stderr");
	ok(is_json(run("again", "#!/bin/sh\necho busy >&2\nexit 75\n", "",
	    5000), SETTLE("tool.error", "\"error\":\"busy\","
	    "\"retryable\":true")), "exit 75 is retryable");
	ok(is_json(run("sig", "#!/bin/sh\nkill -9 $$\n", "", 5000),
	    SETTLE("tool.error", "\"error\":\"killed by signal 9\","
	    "\"retryable\":false")), "killed by a signal");
	cap = 1024;
	ok(is_json(run("env", "#!/bin/sh\nenv | grep -E "
	    "'^(AGENTRT|OPENAI|PATH)' | sort\n", "", 5000),
	    SETTLE("tool.result", "\"result\":\"AGENTRT_ATTEMPT=2\\n"
	    "AGENTRT_CALL_ID=c1\\nAGENTRT_SESSION_ID=s1\\n"
	    "PATH=/usr/bin:/bin\"")), "the tool sees the scrubbed environment");
	cap = 64;
	ok(is_json(run("big", "#!/bin/sh\nhead -c 100000 /dev/zero | "
	    "tr '\\0' x\n", "", 5000), SETTLE("tool.result", "\"result\":\""
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "\\n[output truncated at 64 bytes]\"")),
	    "output past the cap is read to the end and marked");
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ok(is_json(run("wc", "#!/bin/sh\nwc -c | tr -d ' '\n", big, 5000),
	    SETTLE("tool.result", "\"result\":\"200000\"")),
	    "a large input is written without blocking");
	ok(is_json(run("deaf", "#!/bin/sh\necho done\n", big, 5000),
	    SETTLE("tool.result", "\"result\":\"done\"")),
	    "a tool that does not read its input");
	ok(is_json(run("slow", "#!/bin/sh\nsleep 10\n", "", 50),
	    SETTLE("tool.error", "\"error\":\"deadline exceeded\","
	    "\"retryable\":true")), "past the time limit: deadline exceeded");

	/* A child that ignores SIGTERM, of a tool that ignores it too. */
	snprintf(pidfile, sizeof(pidfile), "%s/stubborn.pid", tmp);
	snprintf(script, sizeof(script), "#!/bin/sh\ntrap '' TERM\n"
	    "sh -c 'trap \"\" TERM; while :; do sleep 1; done' &\n"
	    "echo $! >%s\nwait\n", pidfile);
	c = start("stubborn", script, "", 200, &err);
	if (ok(c != NULL, "start a tool whose child ignores SIGTERM")) {
		ok(is_json(finish(c), SETTLE("tool.error",
		    "\"error\":\"deadline exceeded\",\"retryable\":true")),
		    "it times out");
		if ((f = fopen(pidfile, "r")) != NULL) {
			if (fscanf(f, "%ld", &pid) != 1)
				pid = 0;
			fclose(f);
		}
		ok(pid > 0 && gone((pid_t)pid),
		    "its child is gone too (pid %ld)", pid);
	}

	/* A tool that exits and leaves a child behind in its group. */
	snprintf(pidfile, sizeof(pidfile), "%s/orphan.pid", tmp);
	snprintf(script, sizeof(script), "#!/bin/sh\n"
	    "sleep 30 >/dev/null 2>&1 &\necho $! >%s\necho bye\n", pidfile);
	ok(is_json(run("orphan", script, "", 5000),
	    SETTLE("tool.result", "\"result\":\"bye\"")),
	    "a tool that leaves a child behind ends when it exits");
	pid = 0;
	if ((f = fopen(pidfile, "r")) != NULL) {
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	ok(pid > 0 && gone((pid_t)pid), "and the child is killed");
}

static void
test_start_failures(void)
{
	char *env[] = { NULL };
	struct art_tools_spec s = { .name = "t", .env = env,
	    .timeout_ms = 1000, .session_id = "s", .call_id = "c" };
	struct art_err err;
	struct art_tools_call *c;

	s.path = put("noshebang", "echo hi\n", 0755);
	c = art_tools_call_start(&s, art_clock_mono_ms(), &err);
	ok(c == NULL && art_err_is(&err, "tool_exec") &&
	    strcmp(err.msg, "run tool 't': Exec format error") == 0,
	    "no shell: a script without #! does not run (%s)", err.msg);
	s.path = put("ok2", "#!/bin/sh\npwd\n", 0755);
	s.cwd = "/nonexistent-dir";
	c = art_tools_call_start(&s, art_clock_mono_ms(), &err);
	ok(c == NULL && art_err_is(&err, "tool_exec") &&
	    strstr(err.msg, "chdir '/nonexistent-dir'") != NULL,
	    "a bad cwd is an error (%s)", err.msg);
	s.cwd = "/";
	s.session_id = "s1", s.call_id = "c1", s.attempt = 2;
	c = art_tools_call_start(&s, art_clock_mono_ms(), &err);
	ok(c != NULL && is_json(finish(c), SETTLE("tool.result",
	    "\"result\":\"/\"")), "--cwd is where the tool runs");
	art_tools_call_free(NULL);
}

int
main(void)
{
	const char *t = getenv("TMPDIR");
	char cmd[300];

	signal(SIGPIPE, SIG_IGN);
	snprintf(tmp, sizeof(tmp), "%s/agentrt-tools-XXXXXX",
	    t != NULL && *t != '\0' ? t : "/tmp");
	if (mkdtemp(tmp) == NULL) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_names();
	test_find_and_list();
	test_env_is_scrubbed();
	test_env_names_and_keys();
	test_env_passes_what_is_named();
	test_output_cap();
	test_output_is_text();
	test_stderr_tail();
	test_jq_tools();
	test_exit_statuses();
	test_start_failures();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmp);
	return tap_done();
}
