/* mcp-test - an MCP client over stdio: the reference server, and fakes
 *
 * The real server is @modelcontextprotocol/server-everything, which
 * `make mcp-server` installs with npm into a cache directory
 * ($MCP_SERVER_JS names its script); where it is not installed, or node
 * is missing or too old, its tests are skipped, saying why, and the fakes
 * run all the same: the tests never reach the network.  What the real server
 * does not do on demand (out-of-order answers, requests of its own,
 * pagination, an exit with a status) a fake does: this program run again
 * as "mcp-test --fake-mcp-server MODE", speaking the protocol on stdio.
 */
#include "mcp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "tap.h"
#include "testjv.h"
#include "tools.h"

#define STARTUP_MS	30000
#define LONG_MS		30000	/* the most a test waits for anything */
#define SECRET		"sk-mcp-test-not-a-real-key"

static char self[2 * PATH_MAX];	/* this program, for the fakes */
static char server_js[PATH_MAX + 128];
static char path_var[4096];	/* "PATH=…", the servers' whole PATH */

/* One call's outcome, as its callback saw it. */
struct got {
	int			 n;		/* callbacks so far */
	int			 order;		/* when it came, from 1 */
	enum art_mcp_outcome	 outcome;
	bool			 retryable;
	char			*text;
	char			*parts;		/* d->parts as JSON */
	char			 progress[256];	/* "P/T msg;" each */
};

static int finished;		/* callbacks so far, over every call */

static void
on_done(void *ctx, const struct art_mcp_done *d)
{
	struct got *g = ctx;

	g->n++;
	g->order = ++finished;
	g->outcome = d->outcome;
	g->retryable = d->retryable;
	free(g->text);
	if ((g->text = malloc(d->len + 1)) == NULL)
		abort();
	memcpy(g->text, d->text, d->len);
	g->text[d->len] = '\0';
	free(g->parts);
	if ((g->parts = art_json_dump(d->parts, NULL)) == NULL)
		abort();
}

static void
on_progress(void *ctx, const struct art_mcp_progress *p)
{
	struct got *g = ctx;
	size_t n = strlen(g->progress);

	snprintf(g->progress + n, sizeof(g->progress) - n, "%g/%g %s;",
	    p->progress, p->has_total ? p->total : -1.0,
	    p->message != NULL ? p->message : "-");
}

static void
got_release(struct got *g)
{
	free(g->text);
	free(g->parts);
	memset(g, 0, sizeof(*g));
}

static bool
starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *
text(const struct got *g)
{
	return g->text != NULL ? g->text : "(none)";
}

/* Runs the client's poll loop until stop(m, arg) or ms pass. */
static bool
pump(struct art_mcp *m, bool (*stop)(struct art_mcp *, const void *),
    const void *arg, int64_t ms)
{
	int64_t end = art_clock_mono_ms() + ms, left;
	struct pollfd pfd[ART_MCP_POLLFDS];
	size_t n;
	int t;

	while (!stop(m, arg) && (left = end - art_clock_mono_ms()) > 0) {
		n = art_mcp_pollfds(m, pfd, ART_MCP_POLLFDS);
		t = art_mcp_timeout(m);
		if (t < 0 || t > left)
			t = (int)left;
		if (poll(pfd, (nfds_t)n, t) == -1)
			n = 0;
		art_mcp_work(m, pfd, n);
	}
	return stop(m, arg);
}

static bool
has_answer(struct art_mcp *m, const void *arg)
{
	(void)m;
	return ((const struct got *)arg)->n > 0;
}

static bool
all_answered(struct art_mcp *m, const void *arg)
{
	(void)arg;
	return art_mcp_pending(m) == 0;
}

static bool
is_dead(struct art_mcp *m, const void *arg)
{
	(void)arg;
	return art_mcp_is_dead(m);
}

static bool
never(struct art_mcp *m, const void *arg)
{
	(void)m;
	(void)arg;
	return false;
}

/* Makes one call and waits for its answer into g. */
static bool
call(struct art_mcp *m, const char *tool, const char *args, int64_t ms,
    struct got *g)
{
	struct art_err err;

	got_release(g);
	if (art_mcp_call(m, tool, art_json_parse_str(args, &err), ms, on_done,
	    g, &err) == -1) {
		printf("# call %s: %s\n", tool, err.msg);
		return false;
	}
	return pump(m, has_answer, g, LONG_MS);
}

/*
 * True when no process is left in the group pgid, within 2 s: a member
 * the leader left behind is killed with it, but reaped by init.
 */
static bool
group_is_gone(long pgid)
{
	struct timespec ts = { 0, 10000000L };
	int i;

	for (i = 0; pgid > 0 && i < 200; i++) {
		if (kill(-(pid_t)pgid, 0) == -1 && errno == ESRCH)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

static bool
has_tool(const jv *tools, const char *name)
{
	bool found = false;

	jv_array_foreach(*tools, i, t) {
		const char *s = art_json_str(&t, "name");

		if (s != NULL && strcmp(s, name) == 0)
			found = true;
		jv_free(t);
	}
	return found;
}

/* The tools' names, joined with ' '. */
static jv
tool_names(struct art_mcp *m)
{
	jv tools = art_mcp_tools(m), out = jv_string("");

	jv_array_foreach(tools, i, t) {
		if (i > 0)
			out = jv_string_append_str(out, " ");
		out = jv_string_append_str(out, art_json_str(&t, "name"));
		jv_free(t);
	}
	jv_free(tools);
	return out;
}

/* --- the reference server ----------------------------------------------- */

/* Finds the installed server; NULL, or why its tests cannot run. */
static const char *
find_server(void)
{
	const char *js = getenv("MCP_SERVER_JS");

	if (js == NULL || *js == '\0')
		return "MCP_SERVER_JS is not set (make check sets it)";
	snprintf(server_js, sizeof(server_js), "%s", js);
	if (system("command -v node >/dev/null 2>&1") != 0)
		return "node is not installed";
	/* The server's dependencies (glob 13, hono) need Node.js 20. */
	if (system("node -e 'process.exit(+process.versions.node.split(\".\")"
	    "[0] >= 20 ? 0 : 1)'") != 0)
		return "node is older than 20, which the server needs";
	if (access(server_js, R_OK) != 0)
		return "the server is not installed (make mcp-server)";
	return NULL;
}

static struct art_mcp *
start_real(const char *const *envp)
{
	const char *argv[] = { "node", server_js, "stdio", NULL };
	struct art_err err;
	struct art_mcp *m;

	if ((m = art_mcp_start(argv, envp, NULL, STARTUP_MS, &err)) == NULL)
		printf("# start: %s\n", err.msg);
	return m;
}

static void
test_real_ready_with_tools(struct art_mcp *m)
{
	bool r;
	struct art_err err;
	jv tools;

	r = art_mcp_wait_ready(m, &err) == 0;
	ok(r, "real: ready%s%s", r ? "" : ": ", r ? "" : err.msg);
	tools = art_mcp_tools(m);
	ok(jv_get_kind(tools) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(tools)) >= 10, "real: a tool list came");
	ok(has_tool(&tools, "echo"), "real: the list has echo");
	ok(has_tool(&tools, "get-env"), "real: the list has get-env");
	jv_free(tools);
}

static void
test_real_echo_and_unknown_tool(struct art_mcp *m)
{
	bool r;
	struct got g = { 0 };

	/* server-everything-stdio.responses.jsonl: "Echo: hello agentrt". */
	r = call(m, "echo", "{\"message\":\"hi\"}", 10000, &g);
	ok(r &&
	    g.outcome == ART_MCP_OK && strcmp(text(&g), "Echo: hi") == 0,
	    "real: echo {message:hi} is \"Echo: hi\" (%s)", text(&g));
	r = call(m, "no_such_tool", "{}", 10000, &g);
	ok(r &&
	    g.outcome == ART_MCP_TOOL_ERROR && !g.retryable &&
	    strcmp(text(&g), "MCP error -32602: Tool no_such_tool not found") ==
	    0, "real: an unknown tool is a tool error, not retryable (%s)",
	    text(&g));
	got_release(&g);
}

static void
test_real_calls_in_flight_match_by_id(struct art_mcp *m)
{
	static const char *const tool[] = { "trigger-long-running-operation",
	    "echo", "get-sum", "echo" };
	static const char *const args[] = { "{\"duration\":0.6,\"steps\":1}",
	    "{\"message\":\"a\"}", "{\"a\":2,\"b\":3}", "{\"message\":\"b\"}" };
	struct got g[4] = { { 0 } };
	struct art_err err;
	int i, made = 0;

	for (i = 0; i < 4; i++)
		made += art_mcp_call(m, tool[i], art_json_parse_str(args[i],
		    &err), 10000, on_done, &g[i], &err) == 0;
	ok(made == 4 && art_mcp_pending(m) == 4, "real: four calls in flight");
	ok(pump(m, all_answered, NULL, LONG_MS), "real: all four answered");
	ok(g[0].n == 1 && strstr(text(&g[0]), "Long running operation "
	    "completed") != NULL, "real: the slow one got its own answer "
	    "(%s)", text(&g[0]));
	ok(strcmp(text(&g[1]), "Echo: a") == 0 &&
	    strcmp(text(&g[3]), "Echo: b") == 0, "real: each echo got its own");
	ok(strcmp(text(&g[2]), "The sum of 2 and 3 is 5.") == 0,
	    "real: get-sum got its own (%s)", text(&g[2]));
	ok(g[0].order > g[1].order && g[0].order > g[2].order &&
	    g[0].order > g[3].order, "real: the slow one came last, out of "
	    "order");
	for (i = 0; i < 4; i++)
		got_release(&g[i]);
}

static void
test_real_env_is_the_one_given(struct art_mcp *m)
{
	bool r;
	struct got g = { 0 };

	r = call(m, "get-env", "{}", 10000, &g);
	ok(r && g.outcome == ART_MCP_OK,
	    "real: get-env answered");
	ok(strstr(text(&g), "\"AGENTRT_CALL_ID\": \"x\"") != NULL,
	    "real: the server sees AGENTRT_CALL_ID=x");
	ok(strstr(text(&g), "OPENAI_API_KEY") == NULL &&
	    strstr(text(&g), SECRET) == NULL,
	    "real: and not our OPENAI_API_KEY");
	ok(strstr(text(&g), "\"HOME\"") == NULL, "real: nor our HOME");
	got_release(&g);
}

static void
test_real_big_arguments_do_not_deadlock(struct art_mcp *m)
{
	size_t n = (size_t)2 << 20;
	struct art_err err;
	struct got g = { 0 };
	char *big = malloc(n + 1);

	if (big == NULL)
		abort();
	memset(big, 'x', n);
	big[n] = '\0';
	ok(art_mcp_call(m, "echo", jv_object_set(jv_object(),
	    jv_string("message"), jv_string(big)), 20000, on_done, &g,
	    &err) == 0 && pump(m, has_answer, &g, LONG_MS) &&
	    g.outcome == ART_MCP_OK && strlen(text(&g)) == n + 6 &&
	    strncmp(text(&g), "Echo: xxx", 9) == 0,
	    "real: a 2 MiB argument goes out and comes back");
	free(big);
	got_release(&g);
}

/* Makes a call that takes 20 s, and lets it go out. */
static void
slow_call(struct art_mcp *m, struct got *g)
{
	struct art_err err;

	ok(art_mcp_call(m, "trigger-long-running-operation",
	    art_json_parse_str("{\"duration\":20,\"steps\":2}", &err), 60000,
	    on_done, g, &err) == 0, "real: a slow call is made");
	pump(m, never, NULL, 300);
}

static void
test_real_kill_restarts_once(struct art_mcp *m)
{
	struct art_err err;
	struct got g = { 0 };
	long pgid = art_mcp_pid(m), pgid2;
	bool r;

	slow_call(m, &g);
	ok(pgid > 0 && kill(-(pid_t)pgid, SIGKILL) == 0, "real: kill -9 the "
	    "server's group");
	r = pump(m, has_answer, &g, LONG_MS);
	ok(r && g.outcome == ART_MCP_EXITED &&
	    g.retryable && starts_with(text(&g), "mcp: the server exited "
	    "(signal 9; last stderr: "), "real: the call fails, retryable "
	    "(%s)", text(&g));
	ok(strstr(text(&g), "Starting default (STDIO) server...") != NULL,
	    "real: the message quotes the server's stderr");
	ok(art_mcp_wait_ready(m, &err) == 0 && art_mcp_deaths(m) == 1,
	    "real: the server is started again and ready");
	pgid2 = art_mcp_pid(m);
	ok(pgid2 > 0 && pgid2 != pgid && group_is_gone(pgid),
	    "real: a new group; the old one is gone");
	r = call(m, "echo", "{\"message\":\"again\"}", 10000, &g);
	ok(r && strcmp(text(&g), "Echo: again") == 0,
	    "real: echo works again");
	got_release(&g);
}

static void
test_real_second_death_is_final(struct art_mcp *m)
{
	struct art_err err;
	struct got g = { 0 }, late = { 0 };
	long pgid = art_mcp_pid(m);

	slow_call(m, &late);
	kill(-(pid_t)pgid, SIGKILL);
	ok(pump(m, is_dead, NULL, LONG_MS), "real: a second death is final");
	ok(late.n == 1 && late.outcome == ART_MCP_EXITED && !late.retryable,
	    "real: its call fails, not retryable (%s)", text(&late));
	ok(art_mcp_call(m, "echo", art_json_parse_str("{\"message\":\"x\"}",
	    &err), 1000, on_done, &g, &err) == -1 &&
	    art_err_is(&err, "mcp_dead") &&
	    strcmp(err.msg, "mcp: the server died twice; giving up") == 0,
	    "real: the next call fails at once (%s)", err.msg);
	ok(g.n == 0, "real: and never calls back");
	ok(art_mcp_wait_ready(m, &err) == -1 &&
	    starts_with(err.msg, "mcp: the server died twice; giving up "
	    "(signal 9"), "real: wait_ready says why (%s)", err.msg);
	ok(art_mcp_pid(m) == -1 && group_is_gone(pgid) &&
	    art_mcp_pollfds(m, NULL, 0) == 0 && art_mcp_timeout(m) == -1,
	    "real: nothing left to run or poll");
	got_release(&late);
}

static void
test_real_free_leaves_no_process(const char *const *envp)
{
	struct art_mcp *m = start_real(envp);
	struct art_err err;
	int64_t t0;
	long pgid;

	if (!ok(m != NULL && art_mcp_wait_ready(m, &err) == 0,
	    "real: another server is ready"))
		return;
	pgid = art_mcp_pid(m);
	t0 = art_clock_mono_ms();
	art_mcp_free(m);
	ok(group_is_gone(pgid), "real: art_mcp_free leaves no process "
	    "(%lld ms)", (long long)(art_clock_mono_ms() - t0));
}

static void
test_real_server(void)
{
	const char *envp[] = { path_var, "AGENTRT_CALL_ID=x", NULL };
	struct art_mcp *m = start_real(envp);
	long first;

	if (!ok(m != NULL, "real: the server starts"))
		return;
	first = art_mcp_pid(m);
	test_real_ready_with_tools(m);
	test_real_echo_and_unknown_tool(m);
	test_real_calls_in_flight_match_by_id(m);
	test_real_env_is_the_one_given(m);
	test_real_big_arguments_do_not_deadlock(m);
	test_real_kill_restarts_once(m);
	test_real_second_death_is_final(m);
	art_mcp_free(m);
	ok(group_is_gone(first), "real: no process left after free");
	test_real_free_leaves_no_process(envp);
}

/* --- fakes ---------------------------------------------------------------- */

static struct art_mcp *
start_fake(const char *mode, int64_t timeout_ms)
{
	const char *argv[] = { self, "--fake-mcp-server", mode, NULL };
	const char *envp[] = { path_var, NULL };
	struct art_err err;
	struct art_mcp *m;

	if ((m = art_mcp_start(argv, envp, NULL, timeout_ms, &err)) == NULL)
		printf("# start fake: %s\n", err.msg);
	return m;
}

static void
test_fake_startup(struct art_mcp *m, struct got *early)
{
	bool r;
	struct art_err err;
	jv names;

	ok(!art_mcp_is_ready(m), "fake: not ready at once");
	ok(art_mcp_call(m, "echo2", art_json_parse_str("{\"s\":\"early\"}",
	    &err), 10000, on_done, early, &err) == 0,
	    "fake: a call may be made before ready");
	ok(art_mcp_wait_ready(m, &err) == 0, "fake: ready");
	names = tool_names(m);
	ok(strcmp(jv_string_value(names), "echo2 hold hang rpcerr blocks "
	    "structured replies exit fds") == 0, "fake: both pages of tools "
	    "(%s)", jv_string_value(names));
	jv_free(names);
	r = pump(m, has_answer, early, LONG_MS);
	ok(r &&
	    strcmp(text(early), "early") == 0,
	    "fake: the early call went out once ready (%s)", text(early));
	ok(art_mcp_bad_lines(m) == 2, "fake: two lines that are not JSON "
	    "objects were counted (%zu)", art_mcp_bad_lines(m));
}

static void
chain(void *ctx, const struct art_mcp_done *d)
{
	struct got *g = ctx;
	struct art_mcp *m = (struct art_mcp *)g[1].text;
	struct art_err err;

	(void)d;
	g[0].n++;
	art_mcp_call(m, "echo2", art_json_parse_str("{\"s\":\"chained\"}",
	    &err), 10000, on_done, &g[2], &err);
}

static void
test_fake_out_of_order_and_chained(struct art_mcp *m)
{
	bool r;
	struct got g[3] = { { 0 } }, c[3] = { { 0 } };
	struct art_err err;
	char args[32];
	int i;

	for (i = 0; i < 3; i++) {
		snprintf(args, sizeof(args), "{\"n\":%d}", i + 1);
		art_mcp_call(m, "hold", art_json_parse_str(args, &err), 10000,
		    on_done, &g[i], &err);
	}
	ok(pump(m, all_answered, NULL, LONG_MS), "fake: three held calls "
	    "answered");
	ok(strcmp(text(&g[0]), "held 1") == 0 &&
	    strcmp(text(&g[1]), "held 2") == 0 &&
	    strcmp(text(&g[2]), "held 3") == 0,
	    "fake: each got its own answer");
	ok(g[2].order < g[1].order && g[1].order < g[0].order,
	    "fake: they came in reverse order");
	for (i = 0; i < 3; i++)
		got_release(&g[i]);

	c[1].text = (char *)m;		/* chain() finds the client here */
	art_mcp_call(m, "echo2", art_json_parse_str("{\"s\":\"first\"}",
	    &err), 10000, chain, c, &err);
	r = pump(m, has_answer, &c[2], LONG_MS);
	ok(r && c[0].n == 1 &&
	    strcmp(text(&c[2]), "chained") == 0,
	    "fake: a callback may make a new call");
	c[1].text = NULL;
	got_release(&c[2]);
}

static void
test_fake_answers(struct art_mcp *m)
{
	bool r;
	struct got g = { 0 };
	int64_t t0;

	r = call(m, "rpcerr", "{}", 10000, &g);
	ok(r &&
	    g.outcome == ART_MCP_RPC_ERROR && !g.retryable &&
	    strcmp(text(&g), "mcp: -32000 boom") == 0,
	    "fake: a JSON-RPC error is \"mcp: <code> <message>\" (%s)",
	    text(&g));
	r = call(m, "blocks", "{}", 10000, &g);
	ok(r && g.outcome == ART_MCP_OK &&
	    strcmp(text(&g), "one\n[image image/png, 3 bytes]\n"
	    "[audio audio/wav, 4 bytes]\ninside\n"
	    "[resource file:///b.bin application/octet-stream, 3 bytes]\n"
	    "[resource link file:///c]\n[weird block]") == 0,
	    "fake: every kind of content block as text");
	ok(r && strcmp(g.parts, "[{\"type\":\"text\",\"text\":\"one\"},"
	    "{\"type\":\"image_url\",\"image_url\":{\"url\":"
	    "\"data:image/png;base64,AAAA\"}},{\"type\":\"text\",\"text\":"
	    "\"[audio audio/wav, 4 bytes]\"},{\"type\":\"text\",\"text\":"
	    "\"inside\"},{\"type\":\"text\",\"text\":\"[resource "
	    "file:///b.bin application/octet-stream, 3 bytes]\"},{\"type\":"
	    "\"text\",\"text\":\"[resource link file:///c]\"},{\"type\":"
	    "\"text\",\"text\":\"[weird block]\"}]") == 0,
	    "fake: with an image, parts: the image as a data URL, the rest "
	    "as text (%s)", g.parts);
	r = call(m, "echo2", "{\"s\":\"plain\"}", 10000, &g);
	ok(r && strcmp(g.parts, "null") == 0,
	    "fake: with no image, no parts (%s)", g.parts);
	art_mcp_set_progress(m, on_progress);
	r = call(m, "batch", "{}", 2000, &g);
	ok(r && g.outcome == ART_MCP_OK &&
	    strcmp(text(&g), "batched") == 0,
	    "fake: an answer in a JSON-RPC batch is taken (%s)", text(&g));
	ok(strcmp(g.progress, "1/2 half;3/-1 -;") == 0,
	    "fake: its progress, with our token, went to the callback, a "
	    "stranger's token did not (%s)", g.progress);
	art_mcp_set_progress(m, NULL);
	r = call(m, "structured", "{}", 10000, &g);
	ok(r && g.outcome == ART_MCP_OK &&
	    strcmp(text(&g), "{\"a\":1}") == 0,
	    "fake: structuredContent when there is no content (%s)", text(&g));
	t0 = art_clock_mono_ms();
	r = call(m, "hang", "{}", 200, &g);
	ok(r && g.outcome == ART_MCP_TIMEOUT &&
	    g.retryable && strcmp(text(&g), "mcp: no answer within 200 ms") ==
	    0 && art_clock_mono_ms() - t0 >= 200,
	    "fake: no answer is a retryable timeout (%s)", text(&g));
	r = call(m, "replies", "{}", 10000, &g);
	ok(r && starts_with(text(&g),
	    "{\"id\":\"s1\",\"jsonrpc\":\"2.0\",\"result\":{}}\n"
	    "{\"error\":{\"code\":-32601,\"message\":\"Method not found\"},"
	    "\"id\":7,\"jsonrpc\":\"2.0\"}\ninitialized\n"),
	    "fake: ping got {}, roots/list got -32601, then initialized");
	ok(strstr(text(&g), "\ncancelled ") != NULL,
	    "fake: the timed-out call was cancelled");
	got_release(&g);
}

static void
test_fake_inherits_only_its_pipes(struct art_mcp *m, int leak)
{
	struct pollfd pfd[1];
	struct got g = { 0 };
	bool r;

	r = call(m, "fds", "{}", 10000, &g);
	if (r && strcmp(text(&g), "no /proc") == 0)
		printf("ok %d - # SKIP no /proc/self/fd\n", ++tap_n);
	else
		ok(r && strcmp(text(&g), "0 1 2") == 0, "fake: it has only "
		    "stdin, stdout and stderr, not our fd %d (%s)", leak,
		    text(&g));
	ok(art_mcp_pollfds(m, pfd, 1) >= 2, "fake: pollfds says when it "
	    "needs more room");
	got_release(&g);
}

static void
test_fake_exits(struct art_mcp *m)
{
	bool r;
	struct art_err err;
	struct got g = { 0 };
	long pgid = art_mcp_pid(m);

	r = call(m, "exit", "{}", 10000, &g);
	ok(r && g.outcome == ART_MCP_EXITED &&
	    g.retryable && strcmp(text(&g), "mcp: the server exited (status "
	    "3; last stderr: fake: starting | fake: bye)") == 0,
	    "fake: an exit fails the call, retryable (%s)", text(&g));
	ok(group_is_gone(pgid) && art_mcp_deaths(m) == 1, "fake: reaped");
	r = call(m, "echo2", "{\"s\":\"back\"}", 10000, &g);
	ok(r &&
	    strcmp(text(&g), "back") == 0, "fake: restarted, a call works");
	r = call(m, "exit", "{}", 10000, &g);
	ok(r && g.outcome == ART_MCP_EXITED &&
	    !g.retryable && art_mcp_is_dead(m),
	    "fake: a second exit is final");
	ok(art_mcp_call(m, "echo2", jv_null(), 1000, on_done, &g, &err) ==
	    -1 && strcmp(err.msg, "mcp: the server died twice; giving up") ==
	    0, "fake: then calls fail at once");
	got_release(&g);
}

static void
test_fake_server(void)
{
	struct got early = { 0 };
	struct art_mcp *m;
	long pgid;
	int leak;

	/* Not close-on-exec, as a careless caller's might be. */
	leak = open("/dev/null", O_RDONLY);
	m = start_fake("proto", 10000);
	if (!ok(m != NULL, "fake: starts"))
		return;
	pgid = art_mcp_pid(m);
	test_fake_startup(m, &early);
	got_release(&early);
	test_fake_out_of_order_and_chained(m);
	test_fake_answers(m);
	test_fake_inherits_only_its_pipes(m, leak);
	close(leak);
	test_fake_exits(m);
	art_mcp_free(m);
	ok(group_is_gone(pgid), "fake: nothing left after free");
}

static bool
generation_past(struct art_mcp *m, const void *arg)
{
	return art_mcp_tools_generation(m) > *(const unsigned *)arg;
}

/* A refresh the server never answers is given up; the next one asks. */
static void
test_unanswered_relist_is_given_up(void)
{
	struct art_mcp *m = start_fake("relist", 300);
	struct art_err err;
	struct got g = { 0 };
	unsigned gen;

	if (!ok(m != NULL, "relist: starts"))
		return;
	ok(art_mcp_wait_ready(m, &err) == 0, "relist: ready");
	gen = art_mcp_tools_generation(m);
	ok(call(m, "change", "{}", LONG_MS, &g) && pump(m, never, NULL, 600) ==
	    false && art_mcp_tools_generation(m) == gen,
	    "relist: an unanswered refresh keeps the old list");
	ok(call(m, "change", "{}", LONG_MS, &g) && pump(m, generation_past,
	    &gen, LONG_MS), "relist: once given up, the next change refreshes "
	    "the list");
	got_release(&g);
	art_mcp_free(m);
}

static void
test_initialize_error_is_final(void)
{
	struct art_mcp *m = start_fake("initerr", 10000);
	struct art_err err;

	if (!ok(m != NULL, "initerr: starts"))
		return;
	ok(art_mcp_wait_ready(m, &err) == -1 && art_mcp_is_dead(m) &&
	    strcmp(err.msg, "mcp: initialize failed: -32602 Unsupported "
	    "protocol version") == 0, "initerr: wait_ready fails (%s)",
	    err.msg);
	art_mcp_free(m);
}

static void
test_silent_server_times_out(void)
{
	const char *argv[] = { "sh", "-c", "read x; echo not json; sleep 5",
	    NULL };
	const char *envp[] = { path_var, NULL };
	struct art_err err;
	struct art_mcp *m;
	int64_t t0 = art_clock_mono_ms(), took;
	long pgid;

	m = art_mcp_start(argv, envp, NULL, 1000, &err);
	if (!ok(m != NULL, "sh: starts"))
		return;
	pgid = art_mcp_pid(m);
	ok(art_mcp_wait_ready(m, &err) == -1 && art_err_is(&err, "mcp") &&
	    strcmp(err.msg, "mcp: the server did not answer initialize "
	    "within 1000 ms") == 0, "sh: wait_ready fails on the timeout (%s)",
	    err.msg);
	took = art_clock_mono_ms() - t0;
	ok(took >= 1000 && took < 4000, "sh: after about a second (%lld ms)",
	    (long long)took);
	ok(art_mcp_bad_lines(m) == 1, "sh: its line was counted as bad");
	ok(art_mcp_is_dead(m) && group_is_gone(pgid),
	    "sh: dead, and its group (sleep too) is gone");
	art_mcp_free(m);
}

static void
test_cannot_run(void)
{
	const char *missing[] = { "/nonexistent/mcp-server", NULL };
	const char *unknown[] = { "no-such-mcp-server-xyz", NULL };
	const char *envp[] = { path_var, NULL };
	struct art_err err;

	ok(art_mcp_start(missing, envp, NULL, 1000, &err) == NULL &&
	    art_err_is(&err, "mcp_exec") && strstr(err.msg, "No such file") !=
	    NULL, "exec: a missing file is mcp_exec (%s)", err.msg);
	ok(art_mcp_start(unknown, envp, NULL, 1000, &err) == NULL &&
	    art_err_is(&err, "mcp_exec") && strcmp(err.msg, "run "
	    "'no-such-mcp-server-xyz': not found in PATH") == 0,
	    "exec: a name not in PATH is mcp_exec (%s)", err.msg);
	ok(art_mcp_start(unknown, envp, "/nonexistent-dir", 1000, &err) ==
	    NULL, "exec: a bad cwd fails too");
}

/* --- the fake server, run as a child ----------------------------------- */

static void
say(const char *line)
{
	fputs(line, stdout);
	fputc('\n', stdout);
	fflush(stdout);
}

/* Writes v (consumed) as one line, its keys sorted. */
static void
say_jv(jv v)
{
	jv s = jv_dump_string(v, JV_PRINT_SORTED);

	say(jv_string_value(s));
	jv_free(s);
}

static void
answer(const jv *id, jv result)
{
	jv v = jv_object_set(jv_object(), jv_string("jsonrpc"),
	    jv_string("2.0"));

	v = jv_object_set(v, jv_string("id"), jv_copy(*id));
	say_jv(jv_object_set(v, jv_string("result"), result));
}

static jv
text_result(const char *s)
{
	jv block = jv_object_set(jv_object(), jv_string("type"),
	    jv_string("text"));

	block = jv_object_set(block, jv_string("text"), jv_string(s));
	return jv_object_set(jv_object(), jv_string("content"),
	    jv_array_append(jv_array(), block));
}

static void
fake_initialize(const jv *id, const char *mode)
{
	struct art_err err;

	say("{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}");
	say("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}");
	if (strcmp(mode, "initerr") == 0) {
		say_jv(jv_object_set(art_json_parse_str("{\"jsonrpc\":"
		    "\"2.0\",\"error\":{\"code\":-32602,\"message\":"
		    "\"Unsupported protocol version\"}}", &err),
		    jv_string("id"), jv_copy(*id)));
		return;
	}
	answer(id, art_json_parse_str("{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":"
	    "\"fake\",\"version\":\"0\"}}", &err));
}

static void
fake_list(const jv *id, const jv *params)
{
	struct art_err err;

	if (art_json_str(params, "cursor") == NULL)
		answer(id, art_json_parse_str("{\"tools\":[{\"name\":"
		    "\"echo2\"},{\"name\":\"hold\"}],\"nextCursor\":\"p2\"}",
		    &err));
	else
		answer(id, art_json_parse_str("{\"tools\":[{\"name\":\"hang\"},"
		    "{\"name\":\"rpcerr\"},{\"name\":\"blocks\"},{\"name\":"
		    "\"structured\"},{\"name\":\"replies\"},{\"name\":"
		    "\"exit\"},{\"name\":\"fds\"}]}", &err));
}

static void
fake_blocks(const jv *id)
{
	struct art_err err;

	/* An answer to an id nobody asked for comes first; it is ignored. */
	say("{\"jsonrpc\":\"2.0\",\"id\":9999,\"result\":{}}");
	answer(id, art_json_parse_str("{\"content\":["
	    "{\"type\":\"text\",\"text\":\"one\"},"
	    "{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/png\"},"
	    "{\"type\":\"audio\",\"data\":\"AAAAAA==\",\"mimeType\":"
	    "\"audio/wav\"},"
	    "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///a.txt\","
	    "\"mimeType\":\"text/plain\",\"text\":\"inside\"}},"
	    "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///b.bin\","
	    "\"mimeType\":\"application/octet-stream\",\"blob\":\"AAAA\"}},"
	    "{\"type\":\"resource_link\",\"uri\":\"file:///c\",\"name\":\"c\"},"
	    "{\"type\":\"weird\"}]}", &err));
}

/*
 * One line, a batch: progress for the call's token (and for a token that
 * is no call's), then its answer.
 */
static void
fake_batch(const jv *id, const jv *params)
{
	jv meta = art_json_field(params, "_meta");
	jv tok = art_json_field(&meta, "progressToken"), b, n;
	struct art_err err;

	n = art_json_parse_str("{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/progress\",\"params\":{\"progress\":1,"
	    "\"total\":2,\"message\":\"half\"}}", &err);
	b = jv_array_append(jv_array(), jv_object_set(n, jv_string("params"),
	    art_json_set(art_json_field(&n, "params"), "progressToken",
	    jv_copy(tok))));
	n = art_json_parse_str("{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/progress\",\"params\":{\"progress\":2,"
	    "\"progressToken\":424242}}", &err);
	b = jv_array_append(b, n);
	n = art_json_parse_str("{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/progress\",\"params\":{\"progress\":3}}",
	    &err);
	b = jv_array_append(b, jv_object_set(n, jv_string("params"),
	    art_json_set(art_json_field(&n, "params"), "progressToken", tok)));
	b = jv_array_append(b, jv_object_set(jv_object_set(jv_object_set(
	    jv_object(), jv_string("jsonrpc"), jv_string("2.0")),
	    jv_string("id"), jv_copy(*id)), jv_string("result"),
	    text_result("batched")));
	say_jv(b);
	jv_free(meta);
}

/* The descriptors open here, as "0 1 2", or "no /proc". */
static void
fake_fds(const jv *id)
{
	bool open_fd[64] = { false };
	char buf[512] = "";
	struct dirent *de;
	size_t len = 0;
	int i, fd;
	DIR *d;

	if ((d = opendir("/proc/self/fd")) == NULL) {
		answer(id, text_result("no /proc"));
		return;
	}
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		if (de->d_name[0] != '.' && fd != dirfd(d))
			open_fd[fd >= 0 && fd < 64 ? fd : 63] = true;
	}
	closedir(d);
	for (i = 0; i < 64; i++)
		if (open_fd[i])
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
			    "%s%d", len > 0 ? " " : "", i);
	answer(id, text_result(buf));
}

/* The fake's memory of the session, for the "replies" tool. */
struct fake {
	const char	*mode;
	jv		 held;		/* [[id, n], …] of "hold" calls */
	jv		 log;		/* what the client sent us, as text */
	int		 lists;		/* tools/list requests seen */
};

static void
fake_hold(struct fake *f, const jv *id, const jv *args)
{
	jv n = art_json_field(args, "n"), e;
	char buf[32];

	f->held = jv_array_append(f->held, jv_array_append(jv_array_append(
	    jv_array(), jv_copy(*id)), n));
	if (jv_array_length(jv_copy(f->held)) < 3)
		return;
	while (jv_array_length(jv_copy(f->held)) > 0) {
		e = jv_array_get(jv_copy(f->held),
		    jv_array_length(jv_copy(f->held)) - 1);
		f->held = jv_array_slice(f->held, 0,
		    jv_array_length(jv_copy(f->held)) - 1);
		n = jv_array_get(jv_copy(e), 1);
		snprintf(buf, sizeof(buf), "held %.0f", jv_number_value(n));
		jv_free(n);
		n = jv_array_get(e, 0);
		answer(&n, text_result(buf));
		jv_free(n);
	}
}

static void
fake_call(struct fake *f, const jv *id, const jv *params)
{
	const char *name = art_json_str(params, "name");
	jv args = art_json_field(params, "arguments");
	struct art_err err;

	if (strcmp(name, "echo2") == 0)
		answer(id, text_result(art_json_str(&args, "s")));
	else if (strcmp(name, "hold") == 0)
		fake_hold(f, id, &args);
	else if (strcmp(name, "rpcerr") == 0)
		say_jv(jv_object_set(art_json_parse_str("{\"jsonrpc\":\"2.0\","
		    "\"error\":{\"code\":-32000,\"message\":\"boom\"}}", &err),
		    jv_string("id"), jv_copy(*id)));
	else if (strcmp(name, "blocks") == 0)
		fake_blocks(id);
	else if (strcmp(name, "batch") == 0)
		fake_batch(id, params);
	else if (strcmp(name, "structured") == 0)
		answer(id, art_json_parse_str("{\"content\":[],"
		    "\"structuredContent\":{\"a\":1}}", &err));
	else if (strcmp(name, "fds") == 0)
		fake_fds(id);
	else if (strcmp(name, "replies") == 0)
		answer(id, text_result(jv_string_value(f->log)));
	else if (strcmp(name, "change") == 0) {
		say("{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/tools/list_changed\"}");
		answer(id, text_result("changed"));
	} else if (strcmp(name, "exit") == 0) {
		fputs("fake: bye\n", stderr);
		_exit(3);	/* no leak check in a child that quits early */
	}
	jv_free(args);
}

static void
fake_message(struct fake *f, jv msg)
{
	const char *method = art_json_str(&msg, "method");
	jv id = art_json_field(&msg, "id"), params, s;

	params = art_json_field(&msg, "params");
	if (method == NULL) {
		s = jv_dump_string(jv_copy(msg), JV_PRINT_SORTED);
		f->log = jv_string_concat(f->log, s);
		f->log = jv_string_append_str(f->log, "\n");
	} else if (strcmp(method, "initialize") == 0)
		fake_initialize(&id, f->mode);
	else if (strcmp(method, "notifications/initialized") == 0)
		f->log = jv_string_append_str(f->log, "initialized\n");
	else if (strcmp(method, "notifications/cancelled") == 0)
		f->log = jv_string_concat(f->log, jv_string_fmt("cancelled "
		    "%.0f\n", jv_number_value(jv_object_get(jv_copy(params),
		    jv_string("requestId")))));
	else if (strcmp(method, "tools/list") == 0) {
		/* "relist": the first refresh (after the two startup
		 * pages) is never answered. */
		if (strcmp(f->mode, "relist") != 0 || ++f->lists != 3)
			fake_list(&id, &params);
	}
	else if (strcmp(method, "tools/call") == 0)
		fake_call(f, &id, &params);
	jv_free(params);
	jv_free(id);
	jv_free(msg);
}

static int
fake_server(const char *mode)
{
	struct fake f = { mode, jv_array(), jv_string(""), 0 };
	struct art_err err;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	jv msg;

	fputs("fake: starting\n", stderr);
	say("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
	    "\"params\":{\"level\":\"info\",\"data\":\"hello\"}}");
	say("this is not json");
	say("[1,2]");
	while ((n = getline(&line, &cap, stdin)) > 0) {
		msg = art_json_parse(line, (size_t)n, &err);
		if (jv_get_kind(msg) == JV_KIND_OBJECT)
			fake_message(&f, msg);
		else
			jv_free(msg);
	}
	free(line);
	jv_free(f.held);
	jv_free(f.log);
	return 0;
}

/* A server's tools/list as an agent's declarations: mapped, narrowed. */
static void
test_declarations(void)
{
	struct art_err err;
	jv tools = art_json_parse_str("[{\"name\":\"read_file\","
	    "\"description\":\"reads\",\"inputSchema\":{\"type\":"
	    "\"object\",\"properties\":{\"path\":{\"type\":\"string\"}}},"
	    "\"outputSchema\":{\"type\":\"object\"},\"annotations\":"
	    "{\"readOnlyHint\":true},\"title\":\"Read\"},"
	    "{\"name\":\"list_dir\"},{\"name\":\"write_file\","
	    "\"inputSchema\":{\"type\":\"object\"}},"
	    "{\"name\":\"bad/name\"},{\"description\":\"no name\"},7]",
	    &err);
	jv globs = art_json_parse_str("[\"read_file\",\"list_*\"]", &err);
	jv none = jv_null(), notarray = jv_number(3);

	ok(is_json(art_mcp_declarations(&tools, &globs, "fs"),
	    "[{\"name\":\"read_file\",\"description\":\"reads\","
	    "\"input\":{\"type\":\"object\",\"properties\":{\"path\":"
	    "{\"type\":\"string\"}}},\"output\":{\"type\":\"object\"},"
	    "\"annotations\":{\"readOnlyHint\":true},\"mcp_server\":\"fs\"},"
	    "{\"name\":\"list_dir\",\"input\":{\"type\":\"object\"},"
	    "\"mcp_server\":\"fs\"}]"),
	    "declarations: inputSchema is input, outputSchema output, "
	    "annotations kept, globs narrow");
	ok(is_json(art_mcp_declarations(&tools, &none, NULL),
	    "[{\"name\":\"read_file\",\"description\":\"reads\","
	    "\"input\":{\"type\":\"object\",\"properties\":{\"path\":"
	    "{\"type\":\"string\"}}},\"output\":{\"type\":\"object\"},"
	    "\"annotations\":{\"readOnlyHint\":true}},"
	    "{\"name\":\"list_dir\",\"input\":{\"type\":\"object\"}},"
	    "{\"name\":\"write_file\",\"input\":{\"type\":\"object\"}}]"),
	    "declarations: no globs, every valid name; no server, no "
	    "mcp_server");
	ok(is_json(art_mcp_declarations(&notarray, &globs, "fs"), "[]"),
	    "declarations: not an array, none");
	ok(art_mcp_tool_is_matched(&globs, "list_files") &&
	    !art_mcp_tool_is_matched(&globs, "read_files") &&
	    !art_mcp_tool_is_matched(&globs, "xlist_a") &&
	    art_mcp_tool_is_matched(&none, "anything") &&
	    art_mcp_tool_is_matched(&notarray, "anything"),
	    "globs: fnmatch, whole names; none given passes all");
	jv_free(tools);
	jv_free(globs);
}

int
main(int argc, char *argv[])
{
	const char *path = getenv("PATH"), *skip;
	char cwd[PATH_MAX];

	if (argc == 3 && strcmp(argv[1], "--fake-mcp-server") == 0)
		return fake_server(argv[2]);
	signal(SIGPIPE, SIG_IGN);
	if (argv[0][0] == '/')
		snprintf(self, sizeof(self), "%s", argv[0]);
	else if (getcwd(cwd, sizeof(cwd)) != NULL)
		snprintf(self, sizeof(self), "%s/%s", cwd, argv[0]);
	else {
		printf("Bail out! getcwd: %s\n", strerror(errno));
		return 1;
	}
	snprintf(path_var, sizeof(path_var), "PATH=%s",
	    path != NULL ? path : "/usr/bin:/bin");
	/* The server must not see it: its environment is only what we give. */
	setenv("OPENAI_API_KEY", SECRET, 1);
	test_declarations();
	test_cannot_run();
	test_silent_server_times_out();
	test_initialize_error_is_final();
	test_fake_server();
	test_unanswered_relist_is_given_up();
	if ((skip = find_server()) != NULL)
		tap_skip("real: %s", skip);
	else
		test_real_server();
	return tap_done();
}
