/* toolrun-test - tool calls answered: slots, the queue, tapes, passing on */
#include "toolrun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "tap.h"
#include "testdir.h"

extern char **environ;

#define FROZEN	"2026-01-02T03:04:05Z"

static char tools[300];
static char *dirs[] = { tools, NULL };

/* What the warn callback heard, one message a line. */
static char heard[4096];

static void
hear(void *ctx, const char *msg)
{
	size_t n = strlen(heard);

	(void)ctx;
	snprintf(heard + n, sizeof(heard) - n, "%s\n", msg);
}

#define bail(what)	test_dir_bail(what)
#define at(name)	test_dir_path(name)

/* Writes a tool; text is a format for the scratch directory's path. */
static void
tool(const char *name, const char *text, mode_t mode)
{
	char path[300], body[1024];

	snprintf(path, sizeof(path), "tools/%s", name);
	snprintf(body, sizeof(body), text, test_dir);
	test_dir_put(path, body, mode);
}

/* One test's toolrun, writing to a file read back by lines(). */
struct bench {
	struct art_clock	 clock;
	struct art_outq		*out;
	int			 out_fd;
	struct art_toolrun_conf	 c;
	struct art_toolrun	*tr;
	size_t			 lineno;
};

static void
open_bench(struct bench *b, size_t jobs, struct art_tooltape *replay,
    int record_fd)
{
	struct art_err err;

	memset(b, 0, sizeof(*b));
	heard[0] = '\0';
	art_clock_init(&b->clock, FROZEN, &err);
	if ((b->out_fd = open(at("out"), O_RDWR | O_CREAT | O_TRUNC, 0600))
	    == -1 || (b->out = art_outq_new(b->out_fd)) == NULL)
		bail("out");
	b->c = (struct art_toolrun_conf){ .dirs = dirs, .env = environ,
	    .timeout_ms = 10000, .kill_grace_ms = 100, .jobs = jobs,
	    .max_output = ART_TOOLS_MAX_OUTPUT, .replay = replay,
	    .record_fd = record_fd, .record = "tape", .clock = &b->clock,
	    .out = b->out, .warn = hear };
	if ((b->tr = art_toolrun_new(&b->c, &err)) == NULL)
		bail(err.msg);
}

static void
close_bench(struct bench *b)
{
	art_toolrun_free(b->tr);
	art_outq_free(b->out);
	close(b->out_fd);
}

/* Hands text over as a line read from "in". */
static int
give(struct bench *b, const char *text)
{
	struct art_err err;
	jv line = jv_parse(text);

	return art_toolrun_line(b->tr, line, text, strlen(text), "in",
	    ++b->lineno, &err);
}

/* A tool.execute request for name; more is added to its trigger. */
static const char *
req(const char *id, const char *name, const char *args, const char *more)
{
	static char text[1024];
	jv a = jv_dump_string(jv_string(args), 0);

	snprintf(text, sizeof(text), "{\"type\":\"decision.request\","
	    "\"session_id\":\"s1\",\"decision_id\":\"d-%s\",\"trigger\":"
	    "{\"type\":\"tool.execute\",\"id\":\"%s\",\"name\":\"%s\","
	    "\"arguments\":%s,\"input\":{},\"attempt\":1%s%s}}", id, id, name,
	    jv_string_value(a), *more != '\0' ? "," : "", more);
	jv_free(a);
	return text;
}

/* One turn of a poll loop, waiting at most max_ms. */
static void
turn(struct bench *b, int max_ms)
{
	struct pollfd pfd[64];
	struct art_err err;
	size_t n = art_toolrun_pollfds(b->tr, pfd, 64);
	int t = art_toolrun_timeout(b->tr);

	if (n > 64)
		bail("pollfds");
	/* No SIGCHLD here to wake us: look again soon. */
	poll(pfd, (nfds_t)n, t < 0 || t > max_ms ? max_ms : t);
	if (art_toolrun_work(b->tr, pfd, n, &err) == -1)
		bail(err.msg);
}

/* Runs the poll loop until no call is left (or until ten seconds). */
static void
settle_all(struct bench *b)
{
	int i;

	for (i = 0; i < 1000 && art_toolrun_active(b->tr) > 0; i++)
		turn(b, 10);
}

/* Output line i (from 1) as canonical JSON, or "" when there is none. */
static const char *
line(struct bench *b, int i)
{
	static char text[4096];
	struct art_err err;
	FILE *f;
	int n = 0;

	art_outq_flush(b->out, &err);
	text[0] = '\0';
	if ((f = fopen(at("out"), "r")) == NULL)
		return text;
	while (fgets(text, sizeof(text), f) != NULL && ++n < i)
		;
	if (n < i)
		text[0] = '\0';
	fclose(f);
	text[strcspn(text, "\n")] = '\0';
	return text;
}

/* Field path of output line i, as compact JSON ("" when none). */
static const char *
field(struct bench *b, int i, const char *key)
{
	static char text[4096];
	jv v = jv_parse(line(b, i)), f;

	if (!jv_is_valid(v)) {
		jv_free(v);
		return "";
	}
	f = jv_getpath(v, jv_array_append(jv_array(), jv_string(key)));
	if (jv_get_kind(f) != JV_KIND_NULL && jv_get_kind(f) !=
	    JV_KIND_INVALID) {
		jv s = jv_dump_string(f, JV_PRINT_SORTED);

		snprintf(text, sizeof(text), "%s", jv_string_value(s));
		jv_free(s);
	} else {
		jv_free(f);
		text[0] = '\0';
	}
	return text;
}

/*
 * Lets one gate tool through, once it waits at the gate, the loop going
 * on meanwhile; bails out after ten seconds rather than hang.
 */
static void
open_gate(struct bench *b)
{
	int fd, i;

	for (i = 0; (fd = open(at("gate"), O_WRONLY | O_NONBLOCK)) == -1 &&
	    errno == ENXIO && i < 1000; i++)
		turn(b, 10);
	if (fd == -1 || write(fd, "go\n", 3) != 3)
		bail("gate");
	close(fd);
}

static void
test_an_executable_is_answered_at_once_and_settles_later(void)
{
	struct bench b;

	open_bench(&b, 0, NULL, -1);
	ok(give(&b, req("c1", "echo", "{\"a\":1}", "")) == 0 &&
	    strcmp(line(&b, 1), "{\"type\":\"decision.response\",\"session_id\""
	    ":\"s1\",\"decision_id\":\"d-c1\",\"actions\":[]}") == 0 &&
	    art_toolrun_active(b.tr) == 1, "an executable's decision is "
	    "answered at once with no actions, the call running");
	settle_all(&b);
	ok(strcmp(line(&b, 2), "{\"type\":\"tool.result\",\"session_id\":"
	    "\"s1\",\"id\":\"c1\",\"attempt\":1,\"result\":\"{\\\"a\\\":1}\"}")
	    == 0 && art_toolrun_active(b.tr) == 0,
	    "its settle follows when it ends: %s", line(&b, 2));
	close_bench(&b);
}

static void
test_a_jq_tool_answers_in_the_decision(void)
{
	struct bench b;

	open_bench(&b, 0, NULL, -1);
	give(&b, req("c1", "upper", "{\"text\":\"hi\"}", ""));
	ok(strcmp(field(&b, 1, "actions"), "[{\"result\":\"HI\",\"type\":"
	    "\"tool.result\"}]") == 0 && art_toolrun_active(b.tr) == 0 &&
	    strcmp(line(&b, 2), "") == 0,
	    "a jq tool's result is in the decision, and nothing follows");
	close_bench(&b);
}

static void
test_lines_not_ours_pass_on_byte_for_byte(void)
{
	const char *other = "{\"type\":\"decision.request\", \"session_id\":"
	    "\"s1\",\"decision_id\":\"d\",\"trigger\":{\"type\":"
	    "\"tool.execute\",\"id\":\"c\",\"name\":\"elsewhere\","
	    "\"arguments\":\"{}\",\"attempt\":1.0}}";
	const char *llm = "{\"type\":\"decision.request\",\"trigger\":"
	    "{\"type\":\"llm.execute\"},\"n\":1.50}";
	struct bench b;

	open_bench(&b, 0, NULL, -1);
	ok(give(&b, other) == 0 && strcmp(line(&b, 1), other) == 0 &&
	    art_toolrun_active(b.tr) == 0,
	    "a tool found nowhere is passed on as it came (1.0, the blank)");
	ok(give(&b, llm) == 0 && strcmp(line(&b, 2), llm) == 0,
	    "so is a line that is no tool call (1.50)");
	ok(art_toolrun_wants("decision.request", "tool.execute", NULL) &&
	    !art_toolrun_wants("decision.request", "llm.execute", NULL) &&
	    !art_toolrun_wants("tool.result", "", NULL),
	    "the reader's filter wants tool.execute decisions only");
	close_bench(&b);
}

static void
test_with_one_slot_the_next_call_waits_its_turn(void)
{
	struct bench b;
	int i;

	open_bench(&b, 1, NULL, -1);
	give(&b, req("c1", "gate", "{}", ""));
	give(&b, req("c2", "gate", "{}", ""));
	for (i = 0; i < 5; i++)
		turn(&b, 0);
	ok(art_toolrun_active(b.tr) == 2 && art_toolrun_waiting(b.tr) == 1 &&
	    strcmp(field(&b, 2, "actions"), "[]") == 0,
	    "with -j 1 the second call is answered and waits for the slot");
	open_gate(&b);
	for (i = 0; i < 1000 && art_toolrun_waiting(b.tr) > 0; i++)
		turn(&b, 10);
	ok(art_toolrun_waiting(b.tr) == 0 && art_toolrun_active(b.tr) == 1 &&
	    strcmp(field(&b, 3, "id"), "\"c1\"") == 0 &&
	    strcmp(field(&b, 3, "result"), "\"gated\"") == 0,
	    "the first settles, then the second starts in its slot");
	open_gate(&b);
	settle_all(&b);
	ok(strcmp(field(&b, 4, "id"), "\"c2\"") == 0 &&
	    strcmp(field(&b, 4, "type"), "\"tool.result\"") == 0,
	    "and settles after it");
	close_bench(&b);
}

static void
test_a_call_whose_deadline_passes_while_it_waits_is_not_run(void)
{
	struct bench b;
	int i;

	open_bench(&b, 1, NULL, -1);
	give(&b, req("c1", "gate", "{}", ""));
	give(&b, req("c2", "spy", "{}",
	    "\"deadline\":\"2026-01-02T03:04:05.200Z\""));
	for (i = 0; i < 1000 && art_toolrun_waiting(b.tr) > 0; i++)
		turn(&b, 50);
	ok(strcmp(line(&b, 3), "{\"type\":\"tool.error\",\"session_id\":\"s1\","
	    "\"id\":\"c2\",\"attempt\":1,\"error\":\"deadline exceeded\","
	    "\"retryable\":true}") == 0 && art_toolrun_active(b.tr) == 1,
	    "a waiting call is settled when its deadline passes: %s",
	    line(&b, 3));
	open_gate(&b);
	settle_all(&b);
	ok(access(at("spied"), F_OK) == -1 &&
	    strcmp(field(&b, 4, "id"), "\"c1\"") == 0, "it never ran");
	give(&b, req("c3", "spy", "{}", "\"deadline\":\"" FROZEN "\""));
	ok(strcmp(field(&b, 5, "actions"), "[{\"error\":\"deadline exceeded\","
	    "\"retryable\":true,\"type\":\"tool.error\"}]") == 0 &&
	    access(at("spied"), F_OK) == -1,
	    "a deadline already passed is answered at once, unrun");
	close_bench(&b);
}

static void
test_a_tool_that_cannot_start_is_a_tool_error(void)
{
	struct bench b;

	/* Under valgrind a child whose execve() fails dies in valgrind. */
	if (getenv("ART_VALGRIND") != NULL) {
		tap_skip("a failed exec under valgrind (make check-valgrind)");
		return;
	}
	open_bench(&b, 0, NULL, -1);
	give(&b, req("c1", "broken", "{}", ""));
	ok(strstr(field(&b, 1, "actions"), "\"type\":\"tool.error\"") != NULL &&
	    strstr(heard, "broken") != NULL && art_toolrun_active(b.tr) == 0,
	    "answered with a tool.error, and warned of");
	close_bench(&b);
}

static void
test_a_bad_request_is_an_error_line_naming_where(void)
{
	const char *bad = "{\"type\":\"decision.request\",\"session_id\":"
	    "\"s1\",\"decision_id\":\"d\",\"trigger\":{\"type\":"
	    "\"tool.execute\",\"name\":\"echo\",\"arguments\":\"{}\"}}";
	struct bench b;

	open_bench(&b, 0, NULL, -1);
	give(&b, req("c0", "upper", "{\"text\":\"\"}", ""));
	give(&b, bad);
	ok(strcmp(field(&b, 2, "message"),
	    "\"in:2: trigger: missing field 'id'\"") == 0 &&
	    strcmp(field(&b, 2, "session_id"), "\"s1\"") == 0 &&
	    strcmp(heard, "in:2: trigger: missing field 'id'\n") == 0,
	    "an error line and a warning, naming the line: %s", line(&b, 2));
	close_bench(&b);
}

static void
test_record_then_replay_runs_nothing(void)
{
	struct art_tooltape *tape;
	struct bench b;
	struct art_err err;
	int fd = open(at("tape"), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND,
	    0600);

	open_bench(&b, 0, NULL, fd);
	give(&b, req("c1", "echo", "{\"q\":1}", ""));
	give(&b, req("c2", "upper", "{\"text\":\"x\"}", ""));
	settle_all(&b);
	close_bench(&b);
	close(fd);
	if ((tape = art_tooltape_load(at("tape"), &err)) == NULL)
		bail(err.msg);
	ok(art_tooltape_size(tape) == 2, "each answer is taped");

	open_bench(&b, 0, tape, -1);
	tool("echo", "#!/bin/sh\ntouch '%s/spied'\n", 0755);
	give(&b, req("c9", "echo", "{\"q\":1}", ""));
	give(&b, req("c8", "upper", "{\"text\":\"x\"}", ""));
	ok(strcmp(field(&b, 1, "actions"), "[{\"result\":\"{\\\"q\\\":1}\","
	    "\"type\":\"tool.result\"}]") == 0 &&
	    strcmp(field(&b, 2, "actions"), "[{\"result\":\"X\",\"type\":"
	    "\"tool.result\"}]") == 0 && art_toolrun_active(b.tr) == 0 &&
	    access(at("spied"), F_OK) == -1,
	    "a replay answers in the decision from the tape, running nothing");
	give(&b, req("c7", "echo", "{\"q\":2}", ""));
	ok(strcmp(field(&b, 3, "actions"), "[{\"error\":\"no recorded answer "
	    "for tool 'echo' with these arguments (replay)\",\"retryable\":"
	    "false,\"type\":\"tool.error\"}]") == 0 &&
	    strcmp(heard, "in:3: no recorded answer for tool 'echo' with "
	    "these arguments (replay)\n") == 0 &&
	    access(at("spied"), F_OK) == -1,
	    "a call the tape lacks is an error, not a tool run for real");
	close_bench(&b);
	art_tooltape_free(tape);
	tool("echo", "#!/bin/sh\ncat\n", 0755);
}

static void
test_stop_ends_the_running_and_the_waiting(void)
{
	struct bench b;

	open_bench(&b, 1, NULL, -1);
	give(&b, req("c1", "gate", "{}", ""));
	give(&b, req("c2", "gate", "{}", ""));
	art_toolrun_stop(b.tr);
	ok(art_toolrun_active(b.tr) == 0 && strcmp(line(&b, 3), "") == 0,
	    "stopped: nothing runs or waits, and nothing is settled");
	close_bench(&b);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_dir_make("toolrun-test");
	snprintf(tools, sizeof(tools), "%s", at("tools"));
	if (mkdir(tools, 0755) == -1 || mkfifo(at("gate"), 0600) == -1)
		bail(tools);
	tool("echo", "#!/bin/sh\ncat\n", 0755);
	tool("gate", "#!/bin/sh\nread x <'%s/gate'\necho gated\n", 0755);
	tool("spy", "#!/bin/sh\ntouch '%s/spied'\n", 0755);
	tool("broken", "#!/nonexistent/interpreter\n", 0755);
	tool("upper.jq", ".text | ascii_upcase\n", 0644);

	test_an_executable_is_answered_at_once_and_settles_later();
	test_a_jq_tool_answers_in_the_decision();
	test_lines_not_ours_pass_on_byte_for_byte();
	test_with_one_slot_the_next_call_waits_its_turn();
	test_a_call_whose_deadline_passes_while_it_waits_is_not_run();
	test_a_tool_that_cannot_start_is_a_tool_error();
	test_a_bad_request_is_an_error_line_naming_where();
	test_record_then_replay_runs_nothing();
	test_stop_ends_the_running_and_the_waiting();
	test_dir_remove();
	return tap_done();
}
