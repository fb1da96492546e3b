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

/* art_agent_check() of the JSON text: 0, or -1 with err. */
static int
check(const char *text, struct art_err *err)
{
	jv c = art_json_parse_str(text, NULL);
	int r = art_agent_check(&c, err);

	jv_free(c);
	return r;
}

/* Whether the text fails the check with exactly msg. */
static int
refused(const char *text, const char *msg)
{
	struct art_err err;

	if (check(text, &err) == 0) {
		printf("#   %s passed\n", text);
		return 0;
	}
	if (!art_err_is(&err, "bad_agent") || strcmp(err.msg, msg) != 0) {
		printf("#   got %s: %s\n#  want %s\n", err.code, err.msg, msg);
		return 0;
	}
	return 1;
}

static void
test_limits_are_checked_by_type(void)
{
	struct art_err err;

	ok(check("{\"model\":\"m\",\"max_loops\":1,\"max_tool_calls\":20,"
	    "\"max_turn_ms\":60000,\"tool_result_max_bytes\":16384,"
	    "\"prior_turns\":0,\"max_turn_cost\":\"0.50\","
	    "\"max_session_cost\":\"12\"}", &err) == 0,
	    "limits of the right types pass");
	ok(refused("{\"model\":\"m\",\"max_loops\":0}", "field 'max_loops': "
	    "expected a positive integer, not 0"), "max_loops 0 is refused");
	ok(refused("{\"model\":\"m\",\"max_tool_calls\":2.5}", "field "
	    "'max_tool_calls': expected a positive integer, not 2.5"),
	    "a fraction is refused");
	ok(refused("{\"model\":\"m\",\"max_turn_ms\":\"100\"}", "field "
	    "'max_turn_ms': expected a positive integer, not \"100\""),
	    "a count as a string is refused");
	ok(refused("{\"model\":\"m\",\"tool_result_max_bytes\":-1}", "field "
	    "'tool_result_max_bytes': expected a positive integer, not -1"),
	    "a negative size is refused");
	ok(refused("{\"model\":\"m\",\"prior_turns\":-1}", "field "
	    "'prior_turns': expected a non-negative integer, not -1"),
	    "prior_turns below 0 is refused");
	ok(refused("{\"model\":\"m\",\"max_turn_cost\":0.5}", "field "
	    "'max_turn_cost': expected a decimal string such as \"0.50\" "
	    "(quote the number), not 0.5"), "a cost as a number: quote it");
	ok(refused("{\"model\":\"m\",\"max_session_cost\":\"-1\"}", "field "
	    "'max_session_cost': expected a decimal string such as \"0.50\", "
	    "not \"-1\"") && refused("{\"model\":\"m\",\"max_session_cost\":"
	    "\"1.\"}", "field 'max_session_cost': expected a decimal string "
	    "such as \"0.50\", not \"1.\"") && refused("{\"model\":\"m\","
	    "\"max_turn_cost\":\"1e3\"}", "field 'max_turn_cost': expected a "
	    "decimal string such as \"0.50\", not \"1e3\""),
	    "a cost string that is no decimal is refused");
}

static void
test_a_tools_env_is_checked(void)
{
	struct art_err err;

	ok(check("{\"model\":\"m\",\"tools\":[{\"name\":\"mem\",\"env\":"
	    "[\"MEMORY_FILE_PATH\"]},\"calc\"]}", &err) == 0,
	    "an env of variable names passes");
	ok(refused("{\"model\":\"m\",\"tools\":[{\"name\":\"mem\",\"env\":"
	    "[\"OPENAI_API_KEY\"]}]}", "tool 'mem': env: 'OPENAI_API_KEY': a "
	    "provider key is never passed to a tool"),
	    "a provider key in env is refused");
	ok(refused("{\"model\":\"m\",\"providers\":{\"corp\":{\"api_key_env\":"
	    "\"CORP_KEY\"}},\"tools\":[{\"name\":\"mem\",\"env\":"
	    "[\"CORP_KEY\"]}]}", "tool 'mem': env: 'CORP_KEY': a provider key "
	    "is never passed to a tool"),
	    "so is the key variable of the agent's own provider block");
	ok(refused("{\"model\":\"m\",\"tools\":[{\"name\":\"mem\",\"env\":"
	    "[\"NOT-A-NAME\"]}]}", "tool 'mem': env: 'NOT-A-NAME': not an "
	    "environment variable name"), "a bad name is refused");
	ok(refused("{\"model\":\"m\",\"tools\":[{\"name\":\"mem\",\"env\":"
	    "\"HOME\"}]}", "tool 'mem': field 'env': expected an array of "
	    "variable names") && refused("{\"model\":\"m\",\"tools\":"
	    "[{\"name\":\"mem\",\"env\":[1]}]}", "tool 'mem': env[0]: expected a variable "
	    "name"), "an env that is no array of strings is refused");
}

static void
test_a_declaration_files_env_is_checked(void)
{
	char dir[256], *dirs[] = { dir, NULL };
	struct art_err err;
	jv c;

	scratch(dir, sizeof(dir));
	put(dir, "mem", "#!/bin/sh\necho\n", 0755);
	put(dir, "mem.json", "{\"env\":[\"MEMORY_FILE_PATH\"]}", 0644);
	c = art_agent_declare_tools(dirs, "a", art_json_parse_str(
	    "{\"model\":\"m\",\"tools\":[\"mem\"]}", NULL), &err);
	ok(is_json(art_json_field(&c, "tools"), "[{\"name\":\"mem\",\"env\":"
	    "[\"MEMORY_FILE_PATH\"]}]"), "a declaration file's env is kept");
	jv_free(c);
	put(dir, "mem.json", "{\"env\":[\"ANTHROPIC_AUTH_TOKEN\"]}", 0644);
	c = art_agent_declare_tools(dirs, "a", art_json_parse_str(
	    "{\"model\":\"m\",\"tools\":[\"mem\"]}", NULL), &err);
	ok(!jv_is_valid(c) && art_err_is(&err, "bad_agent") && strcmp(err.msg,
	    "agent 'a': tool 'mem' (its declaration file): env: "
	    "'ANTHROPIC_AUTH_TOKEN': a provider key is never passed to a "
	    "tool") == 0, "one naming a provider key is refused: %s",
	    err.msg);
	jv_free(c);
	testdb_rm(dir);
}

static void
test_unknown_keys_are_noted(void)
{
	jv c = art_json_parse_str("{\"model\":\"m\",\"tols\":[],\"max_loop\":"
	    "1,\"sytem\":\"x\",\"zzzzzzzz\":1,\"tools\":[]}", NULL);

	ok(is_json(art_agent_key_notes(&c), "[\"unknown key 'max_loop' (did "
	    "you mean 'max_loops'?)\",\"unknown key 'sytem' (did you mean "
	    "'system'?)\",\"unknown key 'tols' (did you mean 'tools'?)\","
	    "\"unknown key 'zzzzzzzz'\"]"),
	    "each unknown key, with the nearest within two edits");
	jv_free(c);
	c = art_json_parse_str("{\"model\":\"m\",\"system\":\"s\",\"stream\":"
	    "true,\"handler\":\"server\",\"format\":\"openai\",\"retry\":{},"
	    "\"tools\":[],\"sub_agents\":[],\"description\":\"d\","
	    "\"ask_user\":true,\"max_subagent_depth\":2,\"mock\":{},"
	    "\"providers\":{},\"fallback\":[],\"security\":{},\"max_loops\":1,"
	    "\"max_tool_calls\":1,\"max_turn_cost\":\"1\",\"max_session_cost\":"
	    "\"1\",\"max_turn_ms\":1,\"tool_result_max_bytes\":1,"
	    "\"prior_turns\":1,\"execution_mode\":\"chat\",\"autonomous\":"
	    "{},\"answer\":\"text\"}", NULL);
	ok(is_json(art_agent_key_notes(&c), "[]"), "every known key is quiet");
	jv_free(c);
	c = jv_string("x");
	ok(is_json(art_agent_key_notes(&c), "[]"), "not an object: no notes");
	jv_free(c);
}

static void
test_mcp_servers_are_checked(void)
{
	struct art_err err;

	ok(check("{\"model\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":"
	    "\"npx -y server /data\",\"tools\":[\"read_file\",\"list_*\"],"
	    "\"env\":[\"DATA_DIR\"]},\"ev\":{\"command\":\"node ev.js\"}}}",
	    &err) == 0, "mcp_servers: command, tools globs and env pass");
	ok(refused("{\"model\":\"m\",\"mcp_servers\":[\"fs\"]}",
	    "field 'mcp_servers': expected an object of NAME: {\"command\": "
	    "…}"), "mcp_servers: not an object is refused");
	ok(refused("{\"model\":\"m\",\"mcp_servers\":{\"fs\":{\"tools\":[]}}}",
	    "mcp_servers.fs.command: expected a non-empty string"),
	    "mcp_servers: no command is refused, naming the server");
	ok(refused("{\"model\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":"
	    "\"  \"}}}", "mcp_servers.fs.command: expected a non-empty "
	    "string"), "mcp_servers: a blank command is refused");
	ok(refused("{\"model\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":"
	    "\"x\",\"tools\":\"read_*\"}}}", "mcp_servers.fs.tools: expected "
	    "an array of glob strings"), "mcp_servers: tools not an array");
	ok(refused("{\"model\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":"
	    "\"x\",\"tools\":[1]}}}", "mcp_servers.fs.tools: expected an "
	    "array of glob strings"), "mcp_servers: a glob not a string");
	ok(refused("{\"model\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":"
	    "\"x\",\"env\":[\"OPENAI_API_KEY\"]}}}", "mcp_servers.fs: env: "
	    "'OPENAI_API_KEY': a provider key is never passed to a tool"),
	    "mcp_servers: a provider key in env is refused");
	ok(refused("{\"model\":\"m\",\"mcp_servers\":{\"a.b\":{\"command\":"
	    "\"x\"}}}", "field 'mcp_servers': 'a.b': not a server name "
	    "(letters, digits, '_', '-')"), "mcp_servers: a bad name");
	ok(refused("{\"model\":\"m\",\"mcp_servers\":{\"fs\":\"x\"}}",
	    "mcp_servers.fs: expected an object with a \"command\""),
	    "mcp_servers: an entry not an object");
}

static void
test_autonomous_members_are_checked(void)
{
	struct art_err err;

	ok(check("{\"model\":\"m\",\"execution_mode\":\"autonomous\","
	    "\"autonomous\":{\"max_todos\":3,\"stall_window\":2,"
	    "\"max_steps\":9,\"on_stall\":\"park\"},\"answer\":"
	    "\"structured\"}", &err) == 0,
	    "execution_mode, autonomous and answer pass");
	ok(refused("{\"model\":\"m\",\"execution_mode\":\"loop\"}",
	    "execution_mode: expected \"chat\" or \"autonomous\", got "
	    "\"loop\""), "a bad execution_mode is refused");
	ok(refused("{\"model\":\"m\",\"autonomous\":{\"stall_window\":0}}",
	    "autonomous.stall_window: expected an integer from 1 to 100, got "
	    "0"), "an autonomous member out of range is refused");
	ok(refused("{\"model\":\"m\",\"answer\":\"table\"}",
	    "answer: expected \"text\" or \"structured\", got \"table\""),
	    "a bad answer is refused");
}

static void
test_handlers_are_the_seeds(void)
{
	struct art_err err;

	ok(check("{\"model\":\"m\",\"handler\":\"worker\",\"format\":"
	    "\"anthropic\",\"tools\":[{\"name\":\"a\",\"handler\":"
	    "\"client\"},{\"name\":\"b\",\"handler\":\"worker\"},"
	    "{\"name\":\"c\"}]}", &err) == 0, "the seed's handlers pass");
	ok(refused("{\"model\":\"m\",\"tools\":[{\"name\":\"a\","
	    "\"handler\":\"server\"}]}", "tool 'a': handler must be "
	    "\"worker\" or \"client\" (the seed's AgentTool.handler)"),
	    "a tool's handler server is refused");
	ok(refused("{\"model\":\"m\",\"handler\":\"client\"}", "field "
	    "'handler': expected \"server\" or \"worker\""),
	    "a config's handler client is refused");
	ok(refused("{\"model\":\"m\",\"format\":\"openai\"}", "field "
	    "'format' needs \"handler\": \"worker\" (it is the wire format of "
	    "worker-run model calls)"), "format without handler worker is "
	    "refused");
	ok(refused("{\"model\":\"m\",\"handler\":\"worker\",\"format\":"
	    "\"grpc\"}", "field 'format': expected \"openai\" or "
	    "\"anthropic\""), "an unknown format is refused");
}

static void
test_the_builtin_chat_agent(void)
{
	char dir[256], *dirs[] = { dir, NULL }, *none[] = { NULL };
	struct art_err err;
	jv c;

	ok(is_json(art_agent_chat("mock/echo", NULL, &err),
	    "{\"model\":\"mock/echo\"}"), "no tool dirs: the model alone");
	ok(is_json(art_agent_chat("mock/echo", none, &err),
	    "{\"model\":\"mock/echo\"}"), "no dirs in the list: the same");
	scratch(dir, sizeof(dir));
	put(dir, "add", "#!/bin/sh\necho 3\n", 0755);
	put(dir, "add.json", "{\"description\":\"a + b\",\"input\":"
	    "{\"type\":\"object\"}}", 0644);
	put(dir, "neg.jq", "-.", 0644);
	put(dir, "stale", "#!/bin/sh\necho\n", 0644);
	put(dir, "README", "not a tool", 0644);
	c = art_agent_chat("openai/gpt-4o-mini", dirs, &err);
	ok(is_json(c, "{\"model\":\"openai/gpt-4o-mini\",\"tools\":["
	    "{\"name\":\"add\",\"description\":\"a + b\",\"input\":"
	    "{\"type\":\"object\"}},{\"name\":\"neg\"}]}"),
	    "every tool that can run, declared; a script that cannot run "
	    "and a README are not");
	put(dir, "add.json", "{\"env\":[\"OPENAI_API_KEY\"]}", 0644);
	c = art_agent_chat("m", dirs, &err);
	ok(!jv_is_valid(c) && art_err_is(&err, "bad_agent") &&
	    strstr(err.msg, "OPENAI_API_KEY") != NULL,
	    "a declaration the check refuses fails it: %s", err.msg);
	jv_free(c);
	put(dir, "add.json", "[1]", 0644);
	c = art_agent_chat("m", dirs, &err);
	ok(!jv_is_valid(c) && art_err_is(&err, "bad_declaration"),
	    "a declaration that cannot be read fails it");
	jv_free(c);
}

int
main(void)
{
	test_agent_dirs_come_in_order();
	test_tool_dirs_are_given_or_from_the_environment();
	test_tools_named_alone_are_declared();
	test_sub_agents_take_their_own_description();
	test_an_agent_loads_from_the_first_dir_that_has_it();
	test_limits_are_checked_by_type();
	test_a_tools_env_is_checked();
	test_a_declaration_files_env_is_checked();
	test_unknown_keys_are_noted();
	test_mcp_servers_are_checked();
	test_autonomous_members_are_checked();
	test_handlers_are_the_seeds();
	test_the_builtin_chat_agent();
	return tap_done();
}
