/* agent-test - where agents and tools are looked for, and what a config names */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent.h"
#include "json.h"
#include "tap.h"
#include "testdb.h"
#include "testjv.h"

/* A scratch directory for a test's files. */
static void
scratch(char *dir, size_t n)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, n, "%s/agentrt-agent-test-XXXXXX", tmp != NULL &&
	    *tmp != '\0' ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror("agent-test: mkdtemp");
		exit(99);
	}
}

/* Writes text to dir/name with mode; exits the test when it cannot. */
static void
put(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) == EOF || chmod(path, mode) == -1) {
		perror(path);
		exit(99);
	}
}

/* The list (borrowed) as one string, entries joined by '|'. */
static const char *
joined(const char *const *v, char *buf, size_t n)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; v[i] != NULL; i++)
		snprintf(buf + strlen(buf), n - strlen(buf), "%s%s",
		    i > 0 ? "|" : "", v[i]);
	return buf;
}

static void
test_agent_dirs_come_in_order(void)
{
	const char *given[] = { "mine", "yours" }, **d;
	char buf[512];
	size_t n = 0;

	d = art_agent_dirs(given, 2, "a::b:", "/x", "/h", &n, NULL);
	ok(d != NULL && n == 6 && strcmp(joined(d, buf, sizeof(buf)),
	    "mine|yours|a|b|/x/agentrt/agents|agents") == 0,
	    "--agents, $AGENTRT_AGENTS (empty entries skipped), the XDG "
	    "directory, ./agents");
	free(d);
	d = art_agent_dirs(NULL, 0, NULL, "relative", "/h", &n, NULL);
	ok(d != NULL && n == 2 && strcmp(joined(d, buf, sizeof(buf)),
	    "/h/.config/agentrt/agents|agents") == 0,
	    "an XDG_CONFIG_HOME that is not absolute gives way to HOME");
	free(d);
	d = art_agent_dirs(NULL, 0, "", NULL, "", &n, NULL);
	ok(d != NULL && n == 1 && strcmp(joined(d, buf, sizeof(buf)),
	    "agents") == 0, "with nothing set, ./agents alone");
	free(d);
}

static void
test_tool_dirs_are_given_or_from_the_environment(void)
{
	const char *given[] = { "t1", "t2" };
	char buf[512], **d;

	d = art_agent_tool_dirs(given, 2, "e1:e2", NULL);
	ok(d != NULL && strcmp(joined((const char *const *)d, buf,
	    sizeof(buf)), "t1|t2") == 0, "--tools, and then not "
	    "$AGENTRT_TOOLS");
	free(d);
	d = art_agent_tool_dirs(NULL, 0, ":e1::e2", NULL);
	ok(d != NULL && strcmp(joined((const char *const *)d, buf,
	    sizeof(buf)), "e1|e2") == 0, "else $AGENTRT_TOOLS, empty "
	    "entries skipped");
	free(d);
	d = art_agent_tool_dirs(NULL, 0, "::", NULL);
	ok(d != NULL && strcmp(joined((const char *const *)d, buf,
	    sizeof(buf)), "./tools") == 0, "else ./tools");
	free(d);
}

static void
test_tools_named_alone_are_declared(void)
{
	char dir[256], *dirs[] = { dir, NULL };
	struct art_err err;
	jv c;

	scratch(dir, sizeof(dir));
	put(dir, "add", "#!/bin/sh\necho 3\n", 0755);
	put(dir, "add.json", "{\"description\":\"a + b\",\"input\":"
	    "{\"type\":\"object\"}}", 0644);
	put(dir, "neg.jq", "-.", 0644);
	c = art_json_parse_str("{\"model\":\"m\",\"tools\":[\"add\",\"neg\","
	    "{\"name\":\"mine\"}]}", NULL);
	c = art_agent_declare_tools(dirs, "calc", c, &err);
	ok(is_json(art_json_field(&c, "tools"), "[{\"name\":\"add\","
	    "\"description\":\"a + b\",\"input\":{\"type\":\"object\"}},"
	    "{\"name\":\"neg\"},{\"name\":\"mine\"}]"),
	    "a name takes its declaration from beside the tool; an object "
	    "stays as it is");
	jv_free(c);
	c = art_agent_declare_tools(dirs, "calc", art_json_parse_str(
	    "{\"model\":\"m\",\"tools\":[\"add\",\"nope\"]}", NULL), &err);
	ok(!jv_is_valid(c) && art_err_is(&err, "bad_agent") &&
	    strcmp(err.msg, "agent 'calc': tool 'nope' is in no tools "
	    "directory (--tools, $AGENTRT_TOOLS, ./tools)") == 0,
	    "a name in no tools directory is the agent's fault: %s", err.msg);
	jv_free(c);
	c = art_agent_declare_tools(dirs, "calc", art_json_parse_str(
	    "{\"model\":\"m\",\"tools\":[\"../add\"]}", NULL), &err);
	ok(!jv_is_valid(c) && art_err_is(&err, "bad_agent"),
	    "a name that is a path finds nothing");
	jv_free(c);
	put(dir, "add.json", "[1]", 0644);
	c = art_agent_declare_tools(dirs, "calc", art_json_parse_str(
	    "{\"model\":\"m\",\"tools\":[\"add\"]}", NULL), &err);
	ok(!jv_is_valid(c) && art_err_is(&err, "bad_declaration"),
	    "a declaration that is not an object is said so");
	jv_free(c);
	ok(is_json(art_agent_declare_tools(dirs, "calc", art_json_parse_str(
	    "{\"model\":\"m\"}", NULL), &err), "{\"model\":\"m\"}"),
	    "a config without tools is left alone");
	testdb_rm(dir);
}

static void
test_sub_agents_take_their_own_description(void)
{
	char dir[256];
	const char *dirs[] = { "/nonexistent", dir };
	jv c;

	scratch(dir, sizeof(dir));
	put(dir, "child.json", "{\"model\":\"m\",\"description\":"
	    "\"does child things\"}", 0644);
	put(dir, "plain.json", "{\"model\":\"m\"}", 0644);
	c = art_json_parse_str("{\"model\":\"m\",\"sub_agents\":[\"child\","
	    "{\"id\":\"child\",\"description\":\"given\"},\"plain\","
	    "{\"id\":\"ghost\"}]}", NULL);
	c = art_agent_describe_sub_agents(dirs, 2, c);
	ok(is_json(art_json_field(&c, "sub_agents"), "[{\"id\":\"child\","
	    "\"description\":\"does child things\"},{\"id\":\"child\","
	    "\"description\":\"given\"},{\"id\":\"plain\"},{\"id\":"
	    "\"ghost\"}]"),
	    "from the child's file, unless the entry gives one; a file "
	    "without one or no file leaves none");
	jv_free(c);
	testdb_rm(dir);
}

static void
test_an_agent_loads_from_the_first_dir_that_has_it(void)
{
	char a[256], b[256];
	const char *dirs[] = { a, b };
	struct art_err err;
	char want[700];
	jv c;

	scratch(a, sizeof(a));
	scratch(b, sizeof(b));
	put(b, "calc.json", "{\"model\":\"mock/calc\"}", 0644);
	put(b, "bad.json", "{\"system\":\"no model\"}", 0644);
	c = art_agent_load(dirs, 2, "calc", &err);
	ok(is_json(c, "{\"model\":\"mock/calc\"}"), "found in the second");
	c = art_agent_load(dirs, 2, "nope", &err);
	snprintf(want, sizeof(want), "no agent 'nope' (looked in %s, %s)", a,
	    b);
	ok(!jv_is_valid(c) && art_err_is(&err, "no_agent") &&
	    strcmp(err.msg, want) == 0, "none: the dirs searched are named");
	jv_free(c);
	c = art_agent_load(dirs, 2, "bad", &err);
	ok(!jv_is_valid(c) && art_err_is(&err, "bad_agent"),
	    "a file that is no AgentConfig is bad_agent: %s", err.msg);
	jv_free(c);
	testdb_rm(a);
	testdb_rm(b);
}

int
main(void)
{
	test_agent_dirs_come_in_order();
	test_tool_dirs_are_given_or_from_the_environment();
	test_tools_named_alone_are_declared();
	test_sub_agents_take_their_own_description();
	test_an_agent_loads_from_the_first_dir_that_has_it();
	return tap_done();
}
