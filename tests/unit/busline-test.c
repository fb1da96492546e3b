/* busline-test - msg ids, ack keys, subjects and shards for agentrt-bus */
#include "busline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sha.h"
#include "tap.h"

/* The msg id of the line text; "" when there is none. */
static const char *
id_of(const char *text)
{
	static char out[ART_BUSLINE_ID_MAX];
	struct art_err err;
	jv v = art_json_parse_str(text, &err);
	bool r;

	memset(out, 'x', sizeof(out));
	r = art_busline_msg_id(&v, text, strlen(text), out);
	jv_free(v);
	if (!r && out[0] != '\0')
		return "(false but out not empty)";
	return out;
}

static const char *
ack_of(const char *text)
{
	static char out[ART_BUSLINE_ID_MAX];
	struct art_err err;
	jv v = art_json_parse_str(text, &err);
	bool r;

	memset(out, 'x', sizeof(out));
	r = art_busline_ack_key(&v, out);
	jv_free(v);
	if (!r && out[0] != '\0')
		return "(false but out not empty)";
	return out;
}

/* "PREFIX" followed by the first 16 hex digits of sha256(text). */
static int
is_hashed(const char *got, const char *prefix, const char *text)
{
	unsigned char d[ART_SHA256_LEN];
	char hex[2 * ART_SHA256_LEN + 1], want[ART_BUSLINE_ID_MAX];

	art_sha256(text, strlen(text), d);
	art_hex(d, ART_SHA256_LEN, hex);
	snprintf(want, sizeof(want), "%s%.16s", prefix, hex);
	if (strcmp(got, want) != 0)
		printf("#   got %s\n#  want %s\n", got, want);
	return strcmp(got, want) == 0;
}

static void
test_ids(void)
{
	char one[ART_BUSLINE_ID_MAX];
	const char *t;

	ok(strcmp(id_of("{\"type\":\"decision.request\",\"session_id\":\"s1\","
	    "\"decision_id\":\"d1\"}"), "decision.request:s1:d1:1") == 0,
	    "decision.request: decision_id and attempts, 1 when absent");
	ok(strcmp(id_of("{\"type\":\"decision.request\",\"session_id\":\"s1\","
	    "\"decision_id\":\"d1\",\"attempts\":3}"),
	    "decision.request:s1:d1:3") == 0,
	    "decision.request: another attempt is another id");
	ok(strcmp(id_of("{\"type\":\"llm.request\",\"session_id\":\"s1\","
	    "\"id\":\"c1\",\"attempt\":1}"), "llm.request:s1:c1:1") == 0,
	    "llm.request: id and attempt");
	ok(strcmp(id_of("{\"type\":\"llm.request\",\"session_id\":\"s1\","
	    "\"id\":\"c1\",\"attempt\":2}"), "llm.request:s1:c1:2") == 0,
	    "llm.request: attempt 2 changes the id");
	ok(strcmp(id_of("{\"type\":\"llm.result\",\"session_id\":\"s1\","
	    "\"id\":\"c1\",\"attempt\":4}"), "llm.result:s1:c1:4") == 0,
	    "llm.result: id and attempt");
	ok(strcmp(id_of("{\"type\":\"llm.error\",\"session_id\":\"s1\","
	    "\"id\":\"c1\"}"), "llm.error:s1:c1:1") == 0,
	    "llm.error: attempt 1 when absent");
	ok(strcmp(id_of("{\"type\":\"tool.result\",\"session_id\":\"s1\","
	    "\"id\":\"k\",\"attempt\":2}"), "tool.result:s1:k:2") == 0,
	    "tool.result: id and attempt");
	ok(strcmp(id_of("{\"type\":\"tool.error\",\"session_id\":\"s1\","
	    "\"id\":\"k\"}"), "tool.error:s1:k:1") == 0,
	    "tool.error: id and attempt 1");
	t = "{\"type\":\"decision.response\",\"session_id\":\"s1\","
	    "\"decision_id\":\"d1\",\"actions\":[]}";
	ok(is_hashed(id_of(t), "decision.response:s1:d1:", t),
	    "decision.response: decision_id and H of the bytes");
	t = "{\"type\":\"client.message\",\"session_id\":\"s1\","
	    "\"turn_id\":\"t1\"}";
	ok(strcmp(id_of(t), "client.message:s1:t1:b23cfb0c5e4e9cbc") == 0,
	    "client.message: turn_id and H (sha256 computed apart)");
	ok(is_hashed(id_of(t), "client.message:s1:t1:", t),
	    "client.message: H is the first 16 hex digits of the sha256");
	t = "{\"type\":\"client.action\",\"session_id\":\"s2\","
	    "\"turn_id\":\"t9\",\"x\":1}";
	ok(is_hashed(id_of(t), "client.action:s2:t9:", t),
	    "client.action: turn_id and H");
	t = "{\"type\":\"interrupt.resume\",\"session_id\":\"s1\","
	    "\"interrupt_id\":\"i1\"}";
	ok(is_hashed(id_of(t), "interrupt.resume:s1:i1:", t),
	    "interrupt.resume: interrupt_id and H");
	t = "{\"type\":\"error\",\"code\":\"x\"}";
	ok(strcmp(id_of(t), "error::4aa8cd5f33c47405") == 0,
	    "error: H only (sha256 computed apart)");
	t = "{\"type\":\"error\",\"code\":\"x\",\"session_id\":\"s1\"}";
	ok(is_hashed(id_of(t), "error:s1:", t), "error with a session: H");
	snprintf(one, sizeof(one), "%s", id_of("{\"type\":\"client.message\","
	    "\"session_id\":\"s1\",\"turn_id\":\"t1\",\"n\":2}"));
	ok(*one != '\0' && strcmp(one, id_of("{\"type\":\"client.message\","
	    "\"session_id\":\"s1\",\"turn_id\":\"t1\"}")) != 0,
	    "other bytes, other H");
	ok(*id_of("{\"type\":\"llm.token.delta\",\"session_id\":\"s1\","
	    "\"id\":\"c1\",\"delta\":{}}") == '\0', "no id for a token delta");
	ok(*id_of("{\"type\":\"client.message\",\"session_id\":\"s1\"}") ==
	    '\0', "no id for a client line without turn_id");
	ok(*id_of("{\"type\":\"some.thing\",\"session_id\":\"s1\","
	    "\"id\":\"c1\"}") == '\0', "no id for an unknown type");
	ok(*id_of("{\"session_id\":\"s1\"}") == '\0' && *id_of("[1]") == '\0',
	    "no id for a line with no type or not an object");
	ok(*id_of("{\"type\":\"llm.request\",\"session_id\":\"s1\"}") == '\0'
	    && *id_of("{\"type\":\"decision.request\"}") == '\0',
	    "no id when the id field is missing");
	ok(*id_of("{\"type\":\"llm.request\",\"id\":\"c\",\"attempt\":\"2\"}")
	    == '\0', "no id when attempt is not a number");
}

static void
test_long_id(void)
{
	char text[600];
	size_t n;

	n = (size_t)snprintf(text, sizeof(text), "{\"type\":\"llm.request\","
	    "\"session_id\":\"s\",\"id\":\"");
	memset(text + n, 'a', 300);
	snprintf(text + n + 300, sizeof(text) - n - 300, "\"}");
	ok(*id_of(text) == '\0', "an id that does not fit is none");
}

static void
test_acks(void)
{
	ok(strcmp(ack_of("{\"type\":\"decision.request\",\"session_id\":"
	    "\"s1\",\"decision_id\":\"d1\",\"attempts\":2}"), "s1:d1") == 0,
	    "ack key of a decision.request");
	ok(strcmp(ack_of("{\"type\":\"decision.response\",\"session_id\":"
	    "\"s1\",\"decision_id\":\"d1\"}"), "s1:d1") == 0,
	    "ack key of a decision.response matches its request");
	ok(strcmp(ack_of("{\"type\":\"llm.request\",\"session_id\":\"s1\","
	    "\"id\":\"c1\",\"attempt\":2}"), "s1:c1:2") == 0,
	    "ack key of an llm.request");
	ok(strcmp(ack_of("{\"type\":\"llm.result\",\"session_id\":\"s1\","
	    "\"id\":\"c1\",\"attempt\":2}"), "s1:c1:2") == 0,
	    "ack key of an llm.result");
	ok(strcmp(ack_of("{\"type\":\"llm.error\",\"session_id\":\"s1\","
	    "\"id\":\"c1\"}"), "s1:c1:1") == 0,
	    "ack key of an llm.error, attempt 1 when absent");
	ok(*ack_of("{\"type\":\"tool.result\",\"session_id\":\"s1\","
	    "\"id\":\"c1\"}") == '\0' && *ack_of("{\"type\":\"client.message\""
	    ",\"session_id\":\"s1\",\"turn_id\":\"t\"}") == '\0' &&
	    *ack_of("{\"type\":\"llm.token.delta\",\"session_id\":\"s1\","
	    "\"id\":\"c1\"}") == '\0' && *ack_of("{\"type\":\"error\"}") ==
	    '\0' && *ack_of("{\"x\":1}") == '\0',
	    "no ack key for any other line");
	ok(*ack_of("{\"type\":\"decision.request\",\"session_id\":\"s1\"}") ==
	    '\0', "no ack key without a decision_id");
}

static void
test_shard(void)
{
	const char *const three[] = { "a", "b", "c" };
	const char *const five[] = { "p", "q", "r", "s", "t" };
	const char *const seven[] = { "0", "1", "2", "3", "4", "5", "6" };
	const char *const two[] = { "x", "y" };

	/* FNV-1a 64 expectations computed with python3 apart from this. */
	ok(strcmp(art_busline_shard("", three, 3), "c") == 0,
	    "the empty id hashes to the offset basis, mod 3 = 2");
	ok(strcmp(art_busline_shard("a", three, 3), "b") == 0,
	    "\"a\" -> 0xaf63dc4c8601ec8c mod 3 = 1");
	ok(strcmp(art_busline_shard("s1", three, 3), "b") == 0,
	    "\"s1\" mod 3 = 1");
	ok(strcmp(art_busline_shard("0190f3a2-7c1e-7000-8000-000000000001",
	    five, 5), "t") == 0, "a UUID mod 5 = 4");
	ok(strcmp(art_busline_shard("sess-42", seven, 7), "6") == 0,
	    "\"sess-42\" mod 7 = 6");
	ok(strcmp(art_busline_shard("abc", two, 2), "y") == 0,
	    "\"abc\" mod 2 = 1");
	ok(strcmp(art_busline_shard("abc", three, 1), "a") == 0,
	    "one shard takes every session");
	ok(art_busline_shard("sess-42", seven, 7) ==
	    art_busline_shard("sess-42", seven, 7), "the same id, the same "
	    "shard");
}

/* Does expanding fail with bad_subject? */
static int
bad_subject(const char *t, const char *sid, const char *owner)
{
	char out[ART_BUSLINE_SUBJECT_MAX];
	struct art_err err;

	art_err_clear(&err);
	if (art_busline_subject(t, sid, owner, out, &err) != -1 ||
	    !art_err_is(&err, "bad_subject") || *err.msg == '\0') {
		printf("#   '%s' did not fail (%s)\n", t, out);
		return 0;
	}
	printf("#   %s\n", err.msg);
	return 1;
}

static void
test_subject(void)
{
	char out[ART_BUSLINE_SUBJECT_MAX], big[400], sid[300];
	struct art_err err;

	ok(art_busline_subject("agentrt.s.{session}", "s1", NULL, out, &err)
	    == 0 && strcmp(out, "agentrt.s.s1") == 0, "{session} expands");
	ok(art_busline_subject("agentrt.engine.{owner}", "s1", "h2", out,
	    &err) == 0 && strcmp(out, "agentrt.engine.h2") == 0,
	    "{owner} expands");
	ok(art_busline_subject("a.{owner}.{session}.{session}", "s", "o", out,
	    &err) == 0 && strcmp(out, "a.o.s.s") == 0,
	    "each placeholder expands, as often as named");
	ok(art_busline_subject("plain.subject", NULL, NULL, out, &err) == 0 &&
	    strcmp(out, "plain.subject") == 0, "other text is kept");
	ok(art_busline_subject("a.{x}.b{", "s", "o", out, &err) == 0 &&
	    strcmp(out, "a.{x}.b{") == 0, "unknown braces are kept");
	ok(art_busline_subject("a.pre{session}post", "s", NULL, out, &err) ==
	    0 && strcmp(out, "a.prespost") == 0,
	    "a placeholder inside a token expands");
	ok(bad_subject("a.{session}", NULL, "o"), "{session} with no session");
	ok(bad_subject("a.{owner}", "s", NULL), "{owner} with no owner");
	ok(bad_subject("a.{session}", "s.1", NULL), "a session id with '.'");
	ok(bad_subject("a.{session}", "s*", NULL), "a session id with '*'");
	ok(bad_subject("a.{session}", "s>", NULL), "a session id with '>'");
	ok(bad_subject("a.{session}", "s 1", NULL),
	    "a session id with a space");
	ok(bad_subject("a.{session}", "", NULL), "an empty session id");
	ok(bad_subject("", NULL, NULL), "an empty subject");
	ok(bad_subject("a..b", NULL, NULL), "an empty token inside");
	ok(bad_subject(".a", NULL, NULL) && bad_subject("a.", NULL, NULL),
	    "an empty first or last token");
	ok(bad_subject("a.{owner}.b", NULL, ""), "an empty owner leaves an "
	    "empty token");
	ok(bad_subject("a b", NULL, NULL), "a space");
	ok(bad_subject("a.*", NULL, NULL), "a '*' in a subject to publish to");
	ok(bad_subject("a.>", NULL, NULL), "a '>' in a subject to publish to");
	ok(bad_subject("a.{owner}", NULL, "*"), "an owner that is a wildcard");
	memset(big, 'a', 300);
	big[300] = '\0';
	ok(bad_subject(big, NULL, NULL), "a template too long");
	memset(sid, 's', 250);
	sid[250] = '\0';
	ok(bad_subject("agentrt.s.{session}", sid, NULL),
	    "an expansion too long");
	memset(big, 'a', 255);
	big[255] = '\0';
	ok(art_busline_subject(big, NULL, NULL, out, &err) == 0 &&
	    strlen(out) == 255, "255 bytes fit");
	ok(art_busline_subject_has("a.{owner}", "owner") &&
	    !art_busline_subject_has("a.{owner}", "session") &&
	    art_busline_subject_has("x{session}y", "session") &&
	    !art_busline_subject_has("a.owner", "owner"),
	    "subject_has finds a placeholder, only braced");
}

/* Does parsing fail with bad_shards? */
static int
bad_shards(const char *text)
{
	struct art_err err;
	size_t n = 99;
	char **v;

	art_err_clear(&err);
	if ((v = art_busline_shards(text, &n, &err)) != NULL) {
		art_busline_shards_free(v);
		printf("#   '%s' did not fail\n", text);
		return 0;
	}
	printf("#   %s\n", err.msg);
	return art_err_is(&err, "bad_shards") && *err.msg != '\0';
}

static void
test_shards(void)
{
	struct art_err err;
	size_t n = 0;
	char **v;

	v = art_busline_shards("a,b,c", &n, &err);
	ok(v != NULL && n == 3 && strcmp(v[0], "a") == 0 &&
	    strcmp(v[1], "b") == 0 && strcmp(v[2], "c") == 0 && v[3] == NULL,
	    "a,b,c parses into three names and a NULL");
	art_busline_shards_free(v);
	v = art_busline_shards("host-1", &n, &err);
	ok(v != NULL && n == 1 && strcmp(v[0], "host-1") == 0 && v[1] == NULL,
	    "one name");
	art_busline_shards_free(v);
	art_busline_shards_free(NULL);
	ok(bad_shards(""), "an empty list");
	ok(bad_shards(","), "only a comma");
	ok(bad_shards("a,,b"), "an empty name inside");
	ok(bad_shards(",a") && bad_shards("a,"), "an empty first or last name");
	ok(bad_shards("a,b,a"), "a duplicate");
	ok(bad_shards("a.b"), "a name with '.'");
	ok(bad_shards("a,*"), "a name '*'");
	ok(bad_shards("a>"), "a name with '>'");
	ok(bad_shards("a, b"), "a name with a space");
}

int
main(void)
{
	test_ids();
	test_long_id();
	test_acks();
	test_shard();
	test_subject();
	test_shards();
	return tap_done();
}
