/* evtext-test - client events and log events as text */
#include "evtext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tap.h"

#define ALL	(ART_EVTEXT_TEXT | ART_EVTEXT_TOOLS | ART_EVTEXT_USER | \
		    ART_EVTEXT_USAGE | ART_EVTEXT_PARKED | ART_EVTEXT_ENDED)

/* Feeds each line of ndjson to t; out and err hold the text. */
static void
feed(struct art_evtext *t, const char *ndjson, struct art_buf *out,
    struct art_buf *err)
{
	struct art_err e;
	const char *p = ndjson, *nl;
	char line[2048];
	jv ev;

	for (; *p != '\0'; p = *nl != '\0' ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		ev = art_json_parse_str(line, &e);
		if (!jv_is_valid(ev)) {
			printf("# bad test line: %s\n", line);
			exit(1);
		}
		if (art_evtext_event(t, &ev, out, err) == -1) {
			printf("# out of memory\n");
			exit(1);
		}
		jv_free(ev);
	}
}

/* The text of ndjson drawn with show (no colour, 80 columns). */
static char *
draw(unsigned show, const char *ndjson)
{
	struct art_evtext_opts o = { .show = show };
	struct art_evtext *t = art_evtext_new(&o);
	struct art_buf out = ART_BUF_INIT;

	feed(t, ndjson, &out, &out);
	art_evtext_free(t);
	art_buf_addstr(&out, "");
	return art_buf_detach(&out, NULL);
}

static int
same(char *got, const char *want)
{
	int eq = strcmp(got, want) == 0;

	if (!eq)
		printf("#   got  '%s'\n#   want '%s'\n", got, want);
	free(got);
	return eq;
}

static const char calc_turn[] =
    "{\"type\":\"turn.started\",\"session_id\":\"S\"}\n"
    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"role\":"
    "\"user\",\"content\":\"What is 17*23?\"}}\n"
    "{\"type\":\"status\",\"session_id\":\"S\",\"status\":\"thinking\"}\n"
    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"role\":"
    "\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\","
    "\"function\":{\"name\":\"calc\",\"arguments\":"
    "\"{\\\"expr\\\":\\\"17*23\\\"}\"}}]}}\n"
    "{\"type\":\"tool_call\",\"session_id\":\"S\",\"id\":\"c1\","
    "\"name\":\"calc\"}\n"
    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"role\":"
    "\"tool\",\"name\":\"calc\",\"content\":\"391\"}}\n"
    "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m2\",\"text\":"
    "\"17*23 \"}\n"
    "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m2\",\"text\":"
    "\"= 391\"}\n"
    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"id\":\"m2\","
    "\"role\":\"assistant\",\"content\":\"17*23 = 391\"}}\n"
    "{\"type\":\"completion\",\"session_id\":\"S\",\"text\":\"17*23 = 391\","
    "\"usage\":{\"input\":12,\"output\":7},\"cost\":\"0\","
    "\"duration_ms\":40}\n"
    "{\"type\":\"turn.finished\",\"session_id\":\"S\",\"status\":"
    "\"completed\"}\n";

static void
test_a_turn_reads_as_the_shell_draws_it(void)
{
	ok(same(draw(ALL, calc_turn),
	    "> What is 17*23?\n"
	    "\xe2\x86\x92 calc {\"expr\":\"17*23\"}\n"
	    "\xe2\x86\x90 calc: 391\n"
	    "17*23 = 391\n"
	    "[12 in \xc2\xb7 7 out \xc2\xb7 $0 \xc2\xb7 40 ms]\n"),
	    "user message, tool call, tool result, the streamed answer once, "
	    "usage");
}

static void
test_what_show_leaves_out(void)
{
	ok(same(draw(ART_EVTEXT_TEXT, calc_turn), "17*23 = 391\n"),
	    "text only: the reply, streamed, and its newline");
	ok(same(draw(0, calc_turn), ""), "nothing shown: nothing drawn");
	ok(same(draw(ART_EVTEXT_TEXT,
	    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"id\":"
	    "\"m1\",\"role\":\"assistant\",\"content\":\"whole\"}}"),
	    "whole\n"), "a reply that did not stream is drawn whole");
}

static void
test_colour(void)
{
	struct art_evtext_opts o = { .show = ALL, .color = true };
	struct art_evtext *t = art_evtext_new(&o);
	struct art_buf out = ART_BUF_INIT;

	feed(t, calc_turn, &out, &out);
	ok(out.p != NULL && strstr(out.p, "\033[2m\xe2\x86\x92 calc ") != NULL &&
	    strstr(out.p, "\033[0m\n") != NULL, "colour: tool lines dim");
	art_buf_release(&out);
	art_evtext_free(t);
}

static void
test_errors(void)
{
	struct art_evtext_opts o = { .show = ART_EVTEXT_TEXT };
	struct art_evtext *t = art_evtext_new(&o);
	struct art_buf out = ART_BUF_INIT, err = ART_BUF_INIT;

	feed(t, "{\"type\":\"turn.started\",\"session_id\":\"S\"}\n"
	    "{\"type\":\"token\",\"session_id\":\"S\",\"text\":\"par\"}\n"
	    "{\"type\":\"error\",\"session_id\":\"S\",\"code\":\"llm_error\","
	    "\"message\":\"boom\",\"retrying\":true}\n"
	    "{\"type\":\"error\",\"session_id\":\"S\",\"code\":\"llm_error\","
	    "\"message\":\"boom\",\"retrying\":true}\n"
	    "{\"type\":\"error\",\"session_id\":\"S\",\"code\":\"bad_input\","
	    "\"message\":\"refused\"}\n"
	    "{\"type\":\"completion\",\"session_id\":\"S\",\"text\":null,"
	    "\"error\":\"boom\"}\n", &out, &err);
	ok(out.p != NULL && strcmp(out.p, "par\n") == 0,
	    "an error ends the streamed line");
	ok(err.p != NULL && strcmp(err.p, "error: boom (retrying)\n") == 0,
	    "in a buffer of its own: plain, said once, refusals left out");
	art_buf_release(&out);
	art_buf_release(&err);
	art_evtext_free(t);
	o.show = ART_EVTEXT_REFUSALS;
	t = art_evtext_new(&o);
	feed(t, "{\"type\":\"error\",\"code\":\"bad_input\",\"message\":"
	    "\"refused\"}\n", &out, &out);
	ok(out.p != NULL && strcmp(out.p, "error: refused\n") == 0,
	    "ART_EVTEXT_REFUSALS draws a refusal");
	art_buf_release(&out);
	art_evtext_free(t);
	ok(same(draw(0, "{\"type\":\"completion\",\"error\":\"capped\","
	    "\"code\":\"max_loops\"}"), ""), "a turn a limit ended: left out "
	    "without ART_EVTEXT_ENDED");
	ok(same(draw(ART_EVTEXT_ENDED, "{\"type\":\"completion\",\"error\":"
	    "\"capped\",\"code\":\"max_loops\"}"), "error: capped\n"),
	    "with it, said");
}

/* As the engine writes a structured turn: the JSON streams, the message
 * carries the capped answer beside the raw content, then the event. */
#define ANSWER_JSON \
    "{\\\"summary\\\":\\\"Two files.\\\",\\\"columns\\\":[\\\"name\\\"," \
    "\\\"size\\\"],\\\"rows\\\":[{\\\"cells\\\":[\\\"a.txt\\\",\\\"3\\\"]}]," \
    "\\\"followups\\\":[\\\"Show more\\\"]}"
#define ANSWER_MEMBERS \
    "\"summary\":\"Two files.\",\"columns\":[\"name\",\"size\"]," \
    "\"rows\":[{\"cells\":[\"a.txt\",\"3\"]}],\"followups\":[\"Show more\"]"

static const char answer_turn[] =
    "{\"type\":\"turn.started\",\"session_id\":\"S\",\"turn_id\":\"t1\"}\n"
    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"role\":"
    "\"user\",\"content\":\"ls\"}}\n"
    "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m1\",\"text\":"
    "\" \\n\"}\n"
    "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m1\",\"text\":"
    "\"{\\\"summary\\\":\"}\n"
    "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m1\",\"text\":"
    "\"\\\"Two files.\\\"}\"}\n"
    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"id\":\"m1\","
    "\"role\":\"assistant\",\"content\":\"" ANSWER_JSON "\","
    "\"structured_answer\":{" ANSWER_MEMBERS "}}}\n"
    "{\"type\":\"warning\",\"session_id\":\"S\",\"turn_id\":\"t1\","
    "\"seq\":5,\"code\":\"answer_cap\",\"part\":\"note\",\"message\":"
    "\"note: 3000 bytes over the cap of 2048: dropped\"}\n"
    "{\"type\":\"structured_answer\",\"session_id\":\"S\",\"turn_id\":"
    "\"t1\",\"seq\":6,\"id\":\"m1\"," ANSWER_MEMBERS "}\n"
    "{\"type\":\"completion\",\"session_id\":\"S\",\"text\":\"Two files.\","
    "\"usage\":{\"input\":3,\"output\":9},\"cost\":\"0\"}\n"
    "{\"type\":\"turn.finished\",\"session_id\":\"S\",\"status\":"
    "\"completed\"}\n";

#define ANSWER_TEXT \
    "Two files.\n\nname   size\n-----  ----\na.txt  3\n\n  /1 Show more\n"

static void
test_a_structured_answer_is_drawn_once(void)
{
	ok(same(draw(ALL, answer_turn), "> ls\n"
	    "warning: note: 3000 bytes over the cap of 2048: dropped\n"
	    ANSWER_TEXT "[3 in \xc2\xb7 9 out \xc2\xb7 $0]\n"),
	    "structured turn: no JSON streamed, the answer as a table once, "
	    "the summary not again");
	ok(same(draw(ART_EVTEXT_TEXT, answer_turn),
	    "warning: note: 3000 bytes over the cap of 2048: dropped\n"
	    ANSWER_TEXT), "text only: the warning and the answer");
	ok(same(draw(0, answer_turn),
	    "warning: note: 3000 bytes over the cap of 2048: dropped\n"),
	    "nothing shown: the warning still is");
	ok(same(draw(ART_EVTEXT_TEXT,
	    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"id\":"
	    "\"m1\",\"role\":\"assistant\",\"content\":\"" ANSWER_JSON "\","
	    "\"structured_answer\":{" ANSWER_MEMBERS "}}}\n"
	    "{\"type\":\"structured_answer\",\"session_id\":\"S\",\"id\":"
	    "\"m1\"," ANSWER_MEMBERS "}\n"), ANSWER_TEXT),
	    "unstreamed: the message's raw JSON is not drawn");
}

static void
test_held_tokens(void)
{
	ok(same(draw(ART_EVTEXT_TEXT,
	    "{\"type\":\"turn.started\",\"session_id\":\"S\"}\n"
	    "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m1\",\"text\":"
	    "\"{oops\"}\n"
	    "{\"type\":\"warning\",\"session_id\":\"S\",\"code\":"
	    "\"answer_invalid\",\"message\":\"structured answer: not JSON\"}\n"
	    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"id\":"
	    "\"m1\",\"role\":\"assistant\",\"content\":\"{oops\"}}\n"),
	    "warning: structured answer: not JSON\n{oops\n"),
	    "a held reply that is no answer is drawn whole from its message");
	ok(same(draw(ART_EVTEXT_TEXT,
	    "{\"type\":\"turn.started\",\"session_id\":\"S\"}\n"
	    "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m1\",\"text\":"
	    "\"  \"}\n"
	    "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m1\",\"text\":"
	    "\"hi\"}\n"
	    "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m1\",\"text\":"
	    "\" {x}\"}\n"
	    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"id\":"
	    "\"m1\",\"role\":\"assistant\",\"content\":\"  hi {x}\"}}\n"),
	    "  hi {x}\n"), "prose streams, blanks before it kept, once");
}

static void
test_warnings(void)
{
	struct art_evtext_opts o = { .show = ART_EVTEXT_TEXT, .color = true };
	struct art_evtext *t = art_evtext_new(&o);
	struct art_buf out = ART_BUF_INIT, err = ART_BUF_INIT;

	feed(t, "{\"type\":\"turn.started\",\"session_id\":\"S\"}\n"
	    "{\"type\":\"token\",\"session_id\":\"S\",\"text\":\"par\"}\n"
	    "{\"type\":\"warning\",\"session_id\":\"S\",\"code\":"
	    "\"answer_cap\",\"part\":\"rows\",\"message\":\"rows: 201 rows "
	    "over the cap of 200: 1 dropped\"}\n", &out, &out);
	ok(out.p != NULL && strcmp(out.p, "par\n\033[2mwarning: rows: 201 rows "
	    "over the cap of 200: 1 dropped\033[0m\n") == 0,
	    "in the flow: dim, after the streamed line ends");
	art_buf_release(&out);
	feed(t, "{\"type\":\"warning\",\"code\":\"answer_invalid\","
	    "\"message\":\"structured answer: missing member 'summary'\"}\n",
	    &out, &err);
	ok(out.p == NULL && err.p != NULL && strcmp(err.p, "warning: "
	    "structured answer: missing member 'summary'\n") == 0,
	    "in a buffer of its own: plain");
	art_buf_release(&out);
	art_buf_release(&err);
	art_evtext_free(t);
}

static const char *
names(void *ctx, const char *sid)
{
	(void)ctx;
	return strcmp(sid, "K") == 0 ? "alpha" : NULL;
}

static void
test_sub_agents_are_prefixed(void)
{
	struct art_evtext_opts o = { .show = ALL, .agent_of = names };
	struct art_evtext *t = art_evtext_new(&o);
	struct art_buf out = ART_BUF_INIT;

	art_evtext_set_root(t, "S");
	feed(t, "{\"type\":\"token\",\"session_id\":\"K\",\"text\":\"x\"}\n"
	    "{\"type\":\"message\",\"session_id\":\"K\",\"message\":{\"role\":"
	    "\"assistant\",\"content\":\"alpha got it\"}}\n"
	    "{\"type\":\"message\",\"session_id\":\"Q\",\"message\":{\"role\":"
	    "\"assistant\",\"content\":\"who\"}}\n"
	    "{\"type\":\"completion\",\"session_id\":\"K\",\"text\":\"a\"}\n",
	    &out, &out);
	ok(out.p != NULL && strcmp(out.p, "[alpha] alpha got it\n"
	    "[sub-agent] who\n") == 0, "a child's tokens and completion are "
	    "not drawn; its messages carry its agent");
	ok(strcmp(art_evtext_root(t), "S") == 0, "the root is kept");
	art_buf_release(&out);
	art_evtext_free(t);
}

static void
test_parked(void)
{
	ok(same(draw(ALL, "{\"type\":\"status\",\"status\":\"suspended\","
	    "\"interrupt_id\":\"I1\",\"reason\":\"approval\"}"),
	    "[parked: approval (interrupt I1)]\n"), "a parked turn says why");
	ok(same(draw(ALL & ~ART_EVTEXT_PARKED, "{\"type\":\"status\","
	    "\"status\":\"suspended\",\"interrupt_id\":\"I1\"}"), ""),
	    "without ART_EVTEXT_PARKED it does not");
}

static void
test_lines_fit_the_width(void)
{
	char long_s[300], *l;

	memset(long_s, 'a', sizeof(long_s) - 1);
	long_s[sizeof(long_s) - 1] = '\0';
	l = art_evtext_line(long_s, 10, 40);
	ok(l != NULL && strlen(l) == 28 + 3 &&
	    strcmp(l + 28, "\xe2\x80\xa6") == 0, "cut with an ellipsis to fit");
	free(l);
	l = art_evtext_line("a\nb\tc", 0, 80);
	ok(l != NULL && strcmp(l, "a b c") == 0, "one line");
	free(l);
	/* 30 two-byte letters: the cut falls inside no sequence. */
	l = art_evtext_line("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 0, 20);
	ok(l != NULL && strlen(l) % 2 == 1 && (unsigned char)l[strlen(l) - 4] ==
	    0xa9, "never inside a UTF-8 sequence");
	free(l);
}

static void
test_log_lines(void)
{
	struct art_err e;
	struct art_buf out = ART_BUF_INIT;
	jv ev = art_json_parse_str("{\"session_id\":\"S\",\"seq\":3,"
	    "\"occurred_at\":\"2026-01-02T03:04:05.678Z\",\"payload\":{\"type\":"
	    "\"message.new\",\"message\":{\"role\":\"user\",\"content\":"
	    "\"hi\\nthere\"}}}", &e);

	ok(art_evtext_log_line(&ev, false, 80, &out) == 0 && out.p != NULL &&
	    strcmp(out.p, "   3  03:04:05  message.new          user: hi "
	    "there\n") == 0, "a message: seq, time, type, role and text");
	jv_free(ev);
	art_buf_clear(&out);
	ev = art_json_parse_str("{\"seq\":12,\"payload\":{\"type\":"
	    "\"tool.call.completed\",\"id\":\"c1\",\"result\":\"391\"}}", &e);
	ok(art_evtext_log_line(&ev, false, 80, &out) == 0 &&
	    strcmp(out.p, "  12  --:--:--  tool.call.completed  "
	    "{\"result\":\"391\"}\n") == 0,
	    "another: its payload but its type and ids");
	jv_free(ev);
	art_buf_clear(&out);
	ev = art_json_parse_str("{\"seq\":5,\"payload\":{\"type\":"
	    "\"llm.call.errored\",\"id\":\"c1\",\"error\":\"boom\"}}", &e);
	ok(art_evtext_log_line(&ev, false, 80, &out) == 0 &&
	    strcmp(out.p, "   5  --:--:--  llm.call.errored     error: boom\n") ==
	    0, "a failure: its error");
	jv_free(ev);
	art_buf_release(&out);
}

/* An autonomous turn: a plan of two todos, worked through. */
static const char plan_turn[] =
    "{\"type\":\"turn.started\",\"session_id\":\"S\",\"turn_id\":\"T\","
    "\"seq\":1,\"at\":\"2026-01-01T00:00:00Z\"}\n"
    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"role\":"
    "\"user\",\"content\":\"tidy the repo\"}}\n"
    "{\"type\":\"decomposition\",\"session_id\":\"S\",\"turn_id\":\"T\","
    "\"seq\":2,\"at\":\"x\",\"goal\":\"tidy the repo\",\"todos\":["
    "{\"id\":\"todo-1\",\"title\":\"List the files\",\"ordering\":0},"
    "{\"id\":\"todo-2\",\"title\":\"Remove the junk\",\"ordering\":1}]}\n"
    "{\"type\":\"todo\",\"session_id\":\"S\",\"id\":\"todo-1\",\"title\":"
    "\"List the files\",\"status\":\"active\"}\n"
    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"role\":"
    "\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\","
    "\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}]}}\n"
    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{\"role\":"
    "\"tool\",\"name\":\"ls\",\"content\":\"a b\"}}\n"
    "{\"type\":\"todo\",\"session_id\":\"S\",\"id\":\"todo-1\",\"title\":"
    "\"List the files\",\"status\":\"done\"}\n"
    "{\"type\":\"step_progress\",\"session_id\":\"S\",\"step\":1,\"todo\":"
    "\"todo-1\",\"made_tool_calls\":true,\"tool_calls_errored\":0,"
    "\"produced_new_artifacts\":true,\"todo_marked_complete_by_model\":"
    "true,\"todo_completed\":true,\"response_delta_hash\":\"ab\","
    "\"verdict\":\"continue\"}\n"
    "{\"type\":\"todo\",\"session_id\":\"S\",\"id\":\"todo-2\",\"title\":"
    "\"Remove the junk\",\"status\":\"active\"}\n"
    "{\"type\":\"todo\",\"session_id\":\"S\",\"id\":\"todo-2\",\"title\":"
    "\"Remove the junk\",\"status\":\"done\"}\n"
    "{\"type\":\"step_progress\",\"session_id\":\"S\",\"step\":2,\"todo\":"
    "\"todo-2\",\"made_tool_calls\":false,\"tool_calls_errored\":0,"
    "\"produced_new_artifacts\":true,\"todo_marked_complete_by_model\":"
    "true,\"todo_completed\":true,\"response_delta_hash\":\"cd\","
    "\"verdict\":\"completed\"}\n"
    "{\"type\":\"completion\",\"session_id\":\"S\",\"text\":\"Tidy.\","
    "\"reason\":\"completed\",\"usage\":{\"input\":1,\"output\":2},"
    "\"cost\":\"0\"}\n";

static void
test_a_plan_is_drawn_and_ticked_off(void)
{
	ok(same(draw(ALL, plan_turn),
	    "> tidy the repo\n"
	    "Plan:\n"
	    "  [ ] List the files\n"
	    "  [ ] Remove the junk\n"
	    "  [>] List the files\n"
	    "\xe2\x86\x92 ls {}\n"
	    "\xe2\x86\x90 ls: a b\n"
	    "  [x] List the files\n"
	    "  [>] Remove the junk\n"
	    "  [x] Remove the junk\n"
	    "[1 in \xc2\xb7 2 out \xc2\xb7 $0]\n"),
	    "the plan, each todo made active and ticked off; progress quiet");
	ok(same(draw(ART_EVTEXT_TEXT | ART_EVTEXT_ENDED, plan_turn), ""),
	    "without ART_EVTEXT_TOOLS: no plan");
}

static void
test_a_plan_in_colour(void)
{
	struct art_evtext_opts o = { .show = ALL, .color = true };
	struct art_evtext *t = art_evtext_new(&o);
	struct art_buf out = ART_BUF_INIT;

	feed(t, plan_turn, &out, &out);
	ok(out.p != NULL && strstr(out.p, "\033[1mPlan:\033[0m\n") != NULL &&
	    strstr(out.p, "\033[2m  [>] List the files\033[0m\n") != NULL &&
	    strstr(out.p, "  [x] List the files\n") != NULL,
	    "colour: Plan bold, the active todo dim, a done one plain");
	art_buf_release(&out);
	art_evtext_free(t);
}

static const char stalled_turn[] =
    "{\"type\":\"turn.started\",\"session_id\":\"S\"}\n"
    "{\"type\":\"step_progress\",\"session_id\":\"S\",\"step\":7,\"todo\":"
    "\"todo-1\",\"made_tool_calls\":true,\"tool_calls_errored\":0,"
    "\"produced_new_artifacts\":false,\"todo_marked_complete_by_model\":"
    "false,\"todo_completed\":false,\"response_delta_hash\":\"ab\","
    "\"verdict\":\"stalled\"}\n";

static void
test_a_stop_is_said_once(void)
{
	char ev[1024];

	snprintf(ev, sizeof(ev), "%s{\"type\":\"completion\",\"session_id\":"
	    "\"S\",\"text\":null,\"reason\":\"stalled\",\"code\":\"stalled\","
	    "\"error\":\"stalled: no progress in the last 3 steps\"}\n",
	    stalled_turn);
	ok(same(draw(ALL, ev), "error: stalled: no progress in the last 3 "
	    "steps\n[0 in \xc2\xb7 0 out]\n"),
	    "a stalled turn that ends: its completion's error says it");
	ok(same(draw(ALL & ~ART_EVTEXT_ENDED, ev),
	    "[0 in \xc2\xb7 0 out]\n"),
	    "beside the session's stderr: not said twice");
	snprintf(ev, sizeof(ev), "%s{\"type\":\"status\",\"session_id\":\"S\","
	    "\"status\":\"suspended\",\"reason\":\"stalled\","
	    "\"interrupt_id\":\"I\"}\n", stalled_turn);
	ok(same(draw(ALL, ev), "[stalled at step 7: no new results and no "
	    "todo done]\n[parked: stalled (interrupt I)]\n"),
	    "a stalled turn that parks: why, then the park");
	ok(same(draw(ALL, "{\"type\":\"turn.started\",\"session_id\":\"S\"}\n"
	    "{\"type\":\"step_progress\",\"session_id\":\"K\",\"step\":40,"
	    "\"verdict\":\"max_steps\"}\n"
	    "{\"type\":\"completion\",\"session_id\":\"K\",\"code\":"
	    "\"max_steps\",\"error\":\"out of steps\"}\n"),
	    "[sub-agent] [max_steps: stopped after step 40]\n"),
	    "a sub-agent's stop, whose completion is not drawn");
	ok(same(draw(ALL, "{\"type\":\"turn.started\",\"session_id\":\"S\"}\n"
	    "{\"type\":\"step_progress\",\"session_id\":\"S\",\"step\":2,"
	    "\"verdict\":\"continue\"}\n"
	    "{\"type\":\"status\",\"session_id\":\"S\",\"status\":"
	    "\"suspended\",\"reason\":\"approval\",\"interrupt_id\":\"I\"}\n"),
	    "[parked: approval (interrupt I)]\n"),
	    "a plan going on says nothing, even when the turn parks");
}

/* Tokens fed one by one: what is drawn after each. */
static void
test_markdown_is_drawn_a_block_at_a_time(void)
{
	struct art_evtext_opts o = { .show = ART_EVTEXT_TEXT, .markdown = true,
	    .width = 60 };
	struct art_evtext *t = art_evtext_new(&o);
	struct art_buf out = ART_BUF_INIT;
	char *got;

	feed(t, "{\"type\":\"turn.started\",\"session_id\":\"S\"}\n"
	    "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m\","
	    "\"text\":\"# Ti\"}\n", &out, &out);
	ok(out.len == 0, "half a heading: nothing drawn yet");
	feed(t, "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m\","
	    "\"text\":\"tle\\n\\nSome **b\"}\n", &out, &out);
	art_buf_addstr(&out, "");
	ok(same(strdup(out.p), "\033[1m\033[4mTitle\033[0m\n"),
	    "a whole block is drawn as soon as it is whole");
	art_buf_clear(&out);
	feed(t, "{\"type\":\"token\",\"session_id\":\"S\",\"id\":\"m\","
	    "\"text\":\"old** text\"}\n"
	    "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{"
	    "\"id\":\"m\",\"role\":\"assistant\",\"content\":"
	    "\"# Title\\n\\nSome **bold** text\"}}\n", &out, &out);
	art_buf_addstr(&out, "");
	ok(same(strdup(out.p), "\nSome \033[1mbold\033[22m text\n"),
	    "the rest when the reply ends, its bold whole though it came in "
	    "two tokens");
	art_evtext_free(t);
	art_buf_release(&out);
	o.markdown = false;
	t = art_evtext_new(&o);
	feed(t, "{\"type\":\"message\",\"session_id\":\"S\",\"message\":{"
	    "\"id\":\"m\",\"role\":\"assistant\",\"content\":"
	    "\"**raw**\"}}\n", &out, &out);
	art_buf_addstr(&out, "");
	got = art_buf_detach(&out, NULL);
	ok(same(got, "**raw**\n"), "without markdown, a reply as written");
	art_evtext_free(t);
}

int
main(void)
{
	test_a_turn_reads_as_the_shell_draws_it();
	test_what_show_leaves_out();
	test_colour();
	test_errors();
	test_a_structured_answer_is_drawn_once();
	test_held_tokens();
	test_warnings();
	test_sub_agents_are_prefixed();
	test_parked();
	test_lines_fit_the_width();
	test_log_lines();
	test_a_plan_is_drawn_and_ticked_off();
	test_a_plan_in_colour();
	test_a_stop_is_said_once();
	test_markdown_is_drawn_a_block_at_a_time();
	return tap_done();
}
