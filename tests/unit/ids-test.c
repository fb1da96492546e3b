/* ids-test - minting UUIDv7 and UUIDv5, parsing UUIDs, checking user ids */
#include "ids.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"

#define PINNED		"2026-01-02T03:04:05.123Z"
#define PINNED_MS	INT64_C(1767323045123)
#define V7_MAX_MS	(INT64_C(1) << 48)

/* The 48-bit timestamp of a v7 id, or -1 if id does not parse. */
static int64_t
v7_ms(const char *id)
{
	unsigned char u[16];
	int64_t ms = 0;
	int i;

	if (art_uuid_parse(id, u) == -1)
		return -1;
	for (i = 0; i < 6; i++)
		ms = ms << 8 | u[i];
	return ms;
}

/* Lowercase 8-4-4-4-12 with the given version and the RFC variant. */
static int
is_canonical(const char *id, char version)
{
	size_t i;

	if (strlen(id) != 36 || id[14] != version ||
	    strchr("89ab", id[19]) == NULL)
		return 0;
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (id[i] != '-')
				return 0;
		} else if (strchr("0123456789abcdef", id[i]) == NULL) {
			return 0;
		}
	}
	return 1;
}

/* s with control characters as '?', for a one-line test name. */
static const char *
shown(const char *s)
{
	static char buf[128];
	size_t i;

	for (i = 0; s[i] != '\0' && i < sizeof(buf) - 1; i++)
		buf[i] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

static void
pin(struct art_clock *c, const char *spec)
{
	struct art_err err;

	if (art_clock_init(c, spec, &err) == -1)
		abort();
}

/* Mints n ids; returns how many were not greater than the one before. */
static int
count_out_of_order(struct art_ids *ids, int n, int *bad_form)
{
	char prev[ART_ID_BUFSZ] = "", id[ART_ID_BUFSZ];
	int i, bad = 0;

	*bad_form = 0;
	for (i = 0; i < n; i++) {
		if (art_ids_v7(ids, id) == -1) {
			bad++;
			continue;
		}
		*bad_form += !is_canonical(id, '7');
		bad += strcmp(prev, id) >= 0;
		memcpy(prev, id, sizeof(id));
	}
	return bad;
}

static void
test_v7_has_version_and_variant(void)
{
	struct art_clock c;
	struct art_ids ids;
	struct art_err err;
	char id[ART_ID_BUFSZ];

	pin(&c, PINNED);
	ok(art_ids_init(&ids, &c, NULL, &err) == 0, "a generator starts");
	ok(art_ids_v7(&ids, id) == 0 && is_canonical(id, '7'),
	    "a v7 id is lowercase 8-4-4-4-12 with version 7 and variant 10 "
	    "(%s)", id);
}

static void
test_v7_timestamp_is_the_pinned_time(void)
{
	struct art_clock c;
	struct art_ids ids;
	struct art_err err;
	char id[ART_ID_BUFSZ];

	pin(&c, PINNED);
	art_ids_init(&ids, &c, "seed", &err);
	art_ids_v7(&ids, id);
	ok(v7_ms(id) == PINNED_MS, "the timestamp field is the pinned clock "
	    "(%s)", id);
	ok(strncmp(id, "019b7ca9-8d03-7", 15) == 0,
	    "the first 48 bits spell the pinned ms in hex (%s)", id);
}

static void
test_v7_timestamp_follows_the_real_clock(void)
{
	struct art_clock c;
	struct art_ids ids;
	struct art_err err;
	char id[ART_ID_BUFSZ];
	int64_t before, after;

	pin(&c, NULL);
	art_ids_init(&ids, &c, NULL, &err);
	/* The clock the ids read, not time(2): glibc's time() reads the
	 * coarse clock, a tick behind, so at a second's turn the id could
	 * be later than time()'s "after". */
	before = art_clock_now_ms(&art_clock_real);
	art_ids_v7(&ids, id);
	after = art_clock_now_ms(&art_clock_real);
	ok(v7_ms(id) >= before && v7_ms(id) <= after,
	    "with the real clock the timestamp is now");
}

static void
test_frozen_clock_still_mints_increasing_ids(void)
{
	struct art_clock c;
	struct art_ids ids;
	struct art_err err;
	char id[ART_ID_BUFSZ];
	int bad_form;

	pin(&c, PINNED);
	art_ids_init(&ids, &c, NULL, &err);
	ok(count_out_of_order(&ids, 10000, &bad_form) == 0 && bad_form == 0,
	    "10000 ids from a frozen clock increase strictly");
	art_ids_v7(&ids, id);
	ok(v7_ms(id) > PINNED_MS && v7_ms(id) <= PINNED_MS + 10,
	    "a spent counter moves the timestamp a little ahead of the clock");
	art_ids_init(&ids, &c, "seed", &err);
	ok(count_out_of_order(&ids, 10000, &bad_form) == 0 && bad_form == 0,
	    "10000 seeded ids from a frozen clock increase strictly");
}

static void
test_real_clock_mints_increasing_ids(void)
{
	struct art_clock c;
	struct art_ids ids;
	struct art_err err;
	int bad_form;

	pin(&c, NULL);
	art_ids_init(&ids, &c, NULL, &err);
	ok(count_out_of_order(&ids, 10000, &bad_form) == 0 && bad_form == 0,
	    "10000 ids from the real clock increase strictly");
}

static void
test_clock_going_back_does_not_reorder_ids(void)
{
	struct art_clock c;
	struct art_ids ids;
	struct art_err err;
	char a[ART_ID_BUFSZ], b[ART_ID_BUFSZ], d[ART_ID_BUFSZ];

	pin(&c, PINNED);
	art_ids_init(&ids, &c, "seed", &err);
	art_ids_v7(&ids, a);
	c.pinned_ms -= 60000;		/* the clock steps back a minute */
	art_ids_v7(&ids, b);
	c.pinned_ms += 120000;
	art_ids_v7(&ids, d);
	ok(strcmp(a, b) < 0 && v7_ms(b) == PINNED_MS,
	    "after the clock steps back, the next id is still greater");
	ok(strcmp(b, d) < 0 && v7_ms(d) == PINNED_MS + 60000,
	    "when the clock moves forward again, ids take its time");
}

static void
mint(const char *seed, int n, char (*out)[ART_ID_BUFSZ])
{
	struct art_clock c;
	struct art_ids ids;
	struct art_err err;
	int i;

	pin(&c, PINNED);
	art_ids_init(&ids, &c, seed, &err);
	for (i = 0; i < n; i++)
		art_ids_v7(&ids, out[i]);
}

static void
test_same_seed_and_clock_mint_the_same_ids(void)
{
	static char a[5000][ART_ID_BUFSZ], b[5000][ART_ID_BUFSZ];

	mint("run-1", 5000, a);
	mint("run-1", 5000, b);
	ok(memcmp(a, b, sizeof(a)) == 0,
	    "the same seed and pinned clock mint the same 5000 ids");
	mint("run-2", 5000, b);
	ok(strcmp(a[0], b[0]) != 0 && strcmp(a[4999], b[4999]) != 0,
	    "a different seed mints different ids");
	mint("", 5000, b);
	ok(is_canonical(b[0], '7') && strcmp(a[0], b[0]) != 0,
	    "the empty seed is a seed like any other");
	mint(NULL, 1, a);
	mint(NULL, 1, b);
	ok(strcmp(a[0], b[0]) != 0,
	    "unseeded generators on one pinned clock mint different ids");
}

static void
test_times_a_v7_cannot_hold_are_refused(void)
{
	struct art_clock c;
	struct art_ids ids;
	struct art_err err;
	char id[ART_ID_BUFSZ], last[ART_ID_BUFSZ];
	int i, rc = 0;

	pin(&c, "1969-12-31T23:59:59.999Z");
	ok(art_ids_init(&ids, &c, NULL, &err) == -1 && art_err_is(&err, "ids"),
	    "a clock pinned before 1970 cannot mint ids: %s", err.msg);
	pin(&c, "281474976710656");
	ok(art_ids_init(&ids, &c, "s", &err) == -1 && art_err_is(&err, "ids"),
	    "a clock pinned at 2^48 ms cannot mint ids");
	pin(&c, "281474976710655");
	ok(art_ids_init(&ids, &c, "s", &err) == 0 &&
	    art_ids_v7(&ids, id) == 0 &&
	    strncmp(id, "ffffffff-ffff-7", 15) == 0,
	    "the last millisecond a v7 holds mints an id (%s)", id);
	for (i = 0; i < 5000 && rc == 0; i++) {
		memcpy(last, id, sizeof(id));
		rc = art_ids_v7(&ids, id);
	}
	ok(rc == -1 && errno == ERANGE && strcmp(last, id) == 0,
	    "when its counter is spent the next id is refused with ERANGE, "
	    "out untouched");
	ok(art_ids_v7(&ids, id) == -1,
	    "and the generator keeps refusing rather than wrapping");
}

static void
test_v5_matches_rfc9562(void)
{
	char id[ART_ID_BUFSZ];

	art_ids_v5(ART_UUID_NS_DNS, "www.example.com", 15, id);
	ok(strcmp(id, "2ed6657d-e927-568b-95e1-2665a8aea6a2") == 0,
	    "v5 of www.example.com in the DNS namespace is RFC 9562's (%s)",
	    id);
	ok(is_canonical(id, '5'), "a v5 id has version 5 and variant 10");
}

static void
test_v5_uses_exactly_len_bytes(void)
{
	char a[ART_ID_BUFSZ], b[ART_ID_BUFSZ];

	art_ids_v5(ART_UUID_NS_DNS, "www.example.com.junk", 15, a);
	ok(strcmp(a, "2ed6657d-e927-568b-95e1-2665a8aea6a2") == 0,
	    "v5 reads only len bytes of name");
	art_ids_v5(ART_UUID_NS_AGENTRT, "d1:t1", 5, a);
	art_ids_v5(ART_UUID_NS_AGENTRT, "d1:t1", 5, b);
	ok(strcmp(a, b) == 0, "v5 is the same for the same name");
	art_ids_v5(ART_UUID_NS_AGENTRT, "d1:t2", 5, b);
	ok(strcmp(a, b) != 0, "v5 differs for another name");
	art_ids_v5(ART_UUID_NS_URL, "d1:t1", 5, b);
	ok(strcmp(a, b) != 0, "v5 differs in another namespace");
	art_ids_v5(ART_UUID_NS_AGENTRT, "", 0, b);
	ok(is_canonical(b, '5'), "v5 of the empty name is an id");
}

static void
test_agentrt_namespace_is_derived_as_documented(void)
{
	unsigned char u[16];
	char id[ART_ID_BUFSZ];

	art_ids_v5(ART_UUID_NS_URL, "https://agentrt.invalid/", 24, id);
	ok(strcmp(id, "92f1fa1c-2f7e-5ca9-860a-6a6f3c38d1f8") == 0 &&
	    art_uuid_parse(id, u) == 0 &&
	    memcmp(u, ART_UUID_NS_AGENTRT, 16) == 0,
	    "agentrt's namespace is the v5 of its URL in the URL namespace");
}

static void
test_uuid_parse_accepts_canonical_forms(void)
{
	static const unsigned char want[16] = {
		0x2e, 0xd6, 0x65, 0x7d, 0xe9, 0x27, 0x56, 0x8b,
		0x95, 0xe1, 0x26, 0x65, 0xa8, 0xae, 0xa6, 0xa2
	};
	unsigned char u[16];

	ok(art_uuid_parse("2ed6657d-e927-568b-95e1-2665a8aea6a2", u) == 0 &&
	    memcmp(u, want, 16) == 0, "a lowercase uuid parses to its bytes");
	ok(art_uuid_parse("2ED6657D-E927-568B-95E1-2665A8AEA6A2", u) == 0 &&
	    memcmp(u, want, 16) == 0, "an uppercase uuid parses the same");
	ok(art_uuid_parse("2Ed6657d-e927-568B-95e1-2665a8aeA6a2", u) == 0 &&
	    memcmp(u, want, 16) == 0, "mixed case parses the same");
	ok(art_uuid_parse("00000000-0000-0000-0000-000000000000", u) == 0,
	    "the nil uuid parses");
	ok(art_uuid_parse("ffffffff-ffff-ffff-ffff-ffffffffffff", u) == 0,
	    "the max uuid parses");
	ok(art_uuid_parse("6ba7b810-9dad-11d1-80b4-00c04fd430c8", u) == 0 &&
	    memcmp(u, ART_UUID_NS_DNS, 16) == 0,
	    "the DNS namespace constant matches its text");
}

static void
test_uuid_parse_rejects_other_forms(void)
{
	static const char *bad[] = {
		"", "2ed6657d", "2ed6657d-e927-568b-95e1-2665a8aea6a",
		"2ed6657d-e927-568b-95e1-2665a8aea6a2a",
		"2ed6657de927568b95e12665a8aea6a2",
		"2ed6657d-e927-568b-95e12665a8aea6a2-",
		"2ed6657-de927-568b-95e1-2665a8aea6a2",
		"2ed6657d_e927_568b_95e1_2665a8aea6a2",
		"2ed6657g-e927-568b-95e1-2665a8aea6a2",
		"{2ed6657d-e927-568b-95e1-2665a8aea6a2}",
		"urn:uuid:2ed6657d-e927-568b-95e1-2665a8aea6a2",
		"2ed6657d-e927-568b-95e1-2665a8aea6a2\n",
		" 2ed6657d-e927-568b-95e1-2665a8aea6a2",
		"2ed6657d-e927-568b-95e1-2665a8aea6 2",
	};
	unsigned char u[16], before[16];
	size_t i;

	memset(u, 0x5a, sizeof(u));
	memcpy(before, u, sizeof(u));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(art_uuid_parse(bad[i], u) == -1 &&
		    memcmp(u, before, 16) == 0,
		    "'%s' is not a uuid, and out is untouched", shown(bad[i]));
}

static void
test_user_ids_follow_the_rule(void)
{
	static const char *good[] = {
		"a", "0", "session-1", "turn_2.x:y", "A.B", "_x", ":x",
		"2ed6657d-e927-568b-95e1-2665a8aea6a2", "a..b", "x-",
	};
	static const char *bad[] = {
		"", ".", "..", ".hidden", "-x", "--help", "a/b", "a b",
		"a\tb", "a\n", "a*", "a@b", "caf\xc3\xa9", "a\\b", "a,b",
	};
	char big[ART_ID_MAX + 2];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok(art_id_is_valid(good[i]), "'%s' is a valid id", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(!art_id_is_valid(bad[i]), "'%s' is not a valid id",
		    shown(bad[i]));
	ok(!art_id_is_valid(NULL), "NULL is not a valid id");
	memset(big, 'x', ART_ID_MAX);
	big[ART_ID_MAX] = '\0';
	ok(art_id_is_valid(big), "an id of %d bytes is valid", ART_ID_MAX);
	big[ART_ID_MAX] = 'x';
	big[ART_ID_MAX + 1] = '\0';
	ok(!art_id_is_valid(big), "an id of %d bytes is too long",
	    ART_ID_MAX + 1);
}

static void
test_hex_values(void)
{
	ok(art_hex_value('0') == 0 && art_hex_value('9') == 9 &&
	    art_hex_value('a') == 10 && art_hex_value('F') == 15,
	    "hex digits of either case have their values");
	ok(art_hex_value('g') == -1 && art_hex_value('/') == -1 &&
	    art_hex_value(':') == -1 && art_hex_value('\0') == -1,
	    "other characters are not hex digits");
}

int
main(void)
{
	test_hex_values();
	test_v7_has_version_and_variant();
	test_v7_timestamp_is_the_pinned_time();
	test_v7_timestamp_follows_the_real_clock();
	test_frozen_clock_still_mints_increasing_ids();
	test_real_clock_mints_increasing_ids();
	test_clock_going_back_does_not_reorder_ids();
	test_same_seed_and_clock_mint_the_same_ids();
	test_times_a_v7_cannot_hold_are_refused();
	test_v5_matches_rfc9562();
	test_v5_uses_exactly_len_bytes();
	test_agentrt_namespace_is_derived_as_documented();
	test_uuid_parse_accepts_canonical_forms();
	test_uuid_parse_rejects_other_forms();
	test_user_ids_follow_the_rule();
	return tap_done();
}
