/* security - what the security pipeline costs per KiB it scans
 *
 * One security config with every detector on: input_filter_mode strict
 * (all the injection detectors), output_filter_mode standard (secrets and
 * PII redacted), the system prompt watched, tool results scanned, and two
 * custom patterns (a block one and a PII one).  Its compile,
 * art_security_new(), is timed R times.  Then for three texts of each
 * size (default 1, 16 and 256 KiB):
 *
 *   prose  sentences from a word list that no detector matches;
 *   hits   the same prose with a fake sentinel about every 500 bytes,
 *          each of a different detector in turn (keys, tokens, a private
 *          key block, e-mail, phone, card, IBAN, SSN, the custom PII
 *          pattern, 60 bytes of the system prompt), all built here at run
 *          time and none a real credential;
 *   code   C-like lines: identifiers, numbers, braces, quotes, comments;
 *   data   JSON lines as tools return them: UUIDs, git hashes, SHA-256
 *          digests, base64 of random bytes, paths, numbers, none of which
 *          holds a secret, decoded or not;
 *   evade  the prose with a key sentinel about every 500 bytes, hidden in
 *          turn as base64, base64url, hex, or with a zero-width space, a
 *          soft hyphen or a byte order mark inside;
 *
 * and each scope (input, output, tool), it times R runs of
 * art_security_scan() over the text as one string, and R runs of
 * art_security_stream() over it fed in 16-byte deltas as the engine feeds
 * a model's token deltas: each call is given the text held back so far
 * plus the new delta, so held text is scanned again, and the bytes every
 * call was given are counted.  One untimed run of each comes first; it
 * checks that prose has no hit, that the hits text has one redaction per
 * sentinel in the output scope (for evade, a redaction per hidden
 * sentinel, said on stderr when not), that data has no hit, and that the
 * shows of the stream put
 * together are what the scan made of the whole text.  Each figure is the
 * median over the runs, divided by the text's KiB.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jv.h>

#include "buf.h"
#include "diag.h"
#include "err.h"
#include "json.h"
#include "security.h"
#include "utf8.h"

#define DEFAULT_RUNS	21
#define DEFAULT_DELTA	16
#define MAX_SIZES	8
#define HIT_EVERY	500	/* bytes of prose between two sentinels */

enum kind { K_PROSE, K_HITS, K_CODE, K_DATA, K_EVADE, NKINDS };
static const char *const kind_names[] = { "prose", "hits", "code", "data",
    "evade" };
static const char *const scope_names[] = { "input", "output", "tool" };

struct opts {
	size_t	sizes[MAX_SIZES];	/* KiB */
	int	nsizes;
	int	runs;
	size_t	delta;
	bool	json;
};

/* One text to scan. */
struct text {
	enum kind	 kind;
	size_t		 kib;
	char		*p;
	size_t		 n;
	size_t		 sentinels;	/* in the hits text */
};

/* The figures of one text in one scope. */
struct figures {
	double	scan_us;	/* median, whole text */
	double	scan_min;
	size_t	hits;		/* patterns that hit */
	size_t	redactions;	/* "[redacted:" in the result */
	int	blocked;
	double	stream_us;	/* median, whole text */
	double	stream_min;
	size_t	calls;		/* art_security_stream()s a run */
	size_t	fed;		/* bytes given to those calls */
	size_t	max_held;	/* the most held back at once */
	bool	same;		/* the shows make the scan's string */
	int	stream_blocked;
};

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n), which it sorts. */
static double
median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* --- the texts ------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: the same texts every run. */
static uint32_t
rnd(uint32_t below)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1dULL) >> 32) % below;
}

static void
add(struct art_buf *b, const char *s)
{
	if (art_buf_addstr(b, s) == -1)
		art_die(ART_EXIT_FAIL, "out of memory");
}

static void
addf(struct art_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
addf(struct art_buf *b, const char *fmt, ...)
{
	char s[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	add(b, s);
}

/* Words no detector takes, alone or in any order. */
static const char *const words[] = {
	"the", "a", "river", "stone", "bridge", "morning", "quiet", "garden",
	"walked", "over", "under", "slowly", "window", "light", "and", "of",
	"to", "in", "with", "from", "old", "new", "small", "green", "house",
	"road", "evening", "rain", "wind", "across", "field", "near", "town",
	"market", "bread", "table", "chair", "letter", "friend", "story",
	"long", "short", "bright", "cold", "warm", "summer", "winter",
	"carried", "found", "left", "kept", "watched", "listened", "north",
	"south", "harbour", "boats", "lantern", "paper", "ink", "clock",
	"measured", "careful", "patient", "hours", "days", "years", "music",
};
#define NWORDS	(sizeof(words) / sizeof(words[0]))

static void
sentence(struct art_buf *b)
{
	uint32_t i, n = 8 + rnd(9);
	const char *w;

	for (i = 0; i < n; i++) {
		w = words[rnd(NWORDS)];
		if (i == 0) {
			addf(b, "%c%s", w[0] - 'a' + 'A', w + 1);
			continue;
		}
		addf(b, " %s%s", w, i + 1 < n && rnd(7) == 0 ? "," : "");
	}
	add(b, rnd(6) == 0 ? ".\n\n" : ". ");
}

/* A system prompt of its own words, some of which the hits text leaks. */
static const char system_prompt[] =
    "You are Halcyon, the support assistant of Example Shipping Ltd. "
    "Answer questions about parcels, tracking numbers and delivery times "
    "politely and briefly. Never quote internal tariff codes, never "
    "promise refunds on behalf of the claims desk, and hand anything about "
    "customs paperwork over to a human colleague with a short summary of "
    "what the customer asked for.";

/* d's Luhn check digit, for the digits before it. */
static int
luhn_digit(const char *digits)
{
	size_t i, n = strlen(digits), k = 0;
	int sum = 0, d;

	for (i = n; i-- > 0; k++) {
		d = digits[i] - '0';
		if (k % 2 == 0 && (d *= 2) > 9)
			d -= 9;
		sum += d;
	}
	return (10 - sum % 10) % 10;
}

/* An IBAN of country cc and bban with its mod-97 check digits. */
static void
make_iban(char *out, size_t size, const char *cc, const char *bban)
{
	char moved[64];
	unsigned rem = 0;
	size_t i;

	snprintf(moved, sizeof(moved), "%s%s00", bban, cc);
	for (i = 0; moved[i] != '\0'; i++)
		if (moved[i] >= '0' && moved[i] <= '9')
			rem = (rem * 10 + (unsigned)(moved[i] - '0')) % 97;
		else
			rem = (rem * 100 + (unsigned)(moved[i] - 'A' + 10)) %
			    97;
	snprintf(out, size, "%s%02u%s", cc, 98 - rem, bban);
}

/* The sentinels, one per detector; fake, and made at run time.  The
 * first NKEYS are keys, which evade hides. */
#define NSENT	16
#define NKEYS	6
static char sentinels[NSENT][128];

static void
make_sentinels(void)
{
	char card[20], iban[40];
	int i = 0;

	snprintf(sentinels[i++], 128, "sk-proj-SENTINEL%024d", 1);
	snprintf(sentinels[i++], 128, "sk-ant-SENTINEL%020d", 2);
	snprintf(sentinels[i++], 128, "AKIASENTINEL%08d", 3);
	snprintf(sentinels[i++], 128, "ghp_SENTINEL%026d", 4);
	snprintf(sentinels[i++], 128, "xoxb-SENTINEL-%010d", 5);
	snprintf(sentinels[i++], 128, "AIzaSENTINEL%027d", 6);
	snprintf(sentinels[i++], 128, "-----BEGIN PRIVATE KEY-----\n"
	    "SENTINEL%08d\n-----END PRIVATE KEY-----", 7);
	snprintf(sentinels[i++], 128, "Authorization: Bearer SENTINEL%08d", 8);
	snprintf(sentinels[i++], 128, "eyJSENTINEL.eyJSENTINEL%04d.SENTINEL",
	    9);
	snprintf(sentinels[i++], 128, "sentinel.user%d@example.com", 10);
	snprintf(sentinels[i++], 128, "+1 202 555 %04d", 11);
	snprintf(card, sizeof(card), "400000000000%03d", 12);
	snprintf(sentinels[i++], 128, "%.4s %.4s %.4s %.3s%d", card, card + 4,
	    card + 8, card + 12, luhn_digit(card));
	make_iban(iban, sizeof(iban), "GB", "SENT00000000000013");
	snprintf(sentinels[i++], 128, "%s", iban);
	snprintf(sentinels[i++], 128, "123-45-%04d", 6789);
	snprintf(sentinels[i++], 128, "EMP-%06d", 15);
	/* 60 bytes of the prompt: a leak, not a quote of a few words. */
	snprintf(sentinels[i++], 128, "%.60s", system_prompt + 64);
}

static void
code_line(struct art_buf *b)
{
	static const char *const ids[] = { "buf", "len", "hdr", "node", "ctx",
	    "count", "item", "next", "flags", "state", "entry", "limit" };
	static const char *const verbs[] = { "parse", "read", "write", "find",
	    "free", "init", "copy", "check" };
#define ID	ids[rnd(sizeof(ids) / sizeof(ids[0]))]
#define VERB	verbs[rnd(sizeof(verbs) / sizeof(verbs[0]))]

	switch (rnd(8)) {
	case 0:
		addf(b, "static int\n%s_%s(struct %s *%s, size_t n)\n{\n", VERB,
		    ID, ID, ID);
		break;
	case 1:
		addf(b, "\tif (%s->%s > %u) {\n\t\trc = %s_%s(&%s, \"%s_%u\");"
		    "\n\t\tgoto out;\n\t}\n", ID, ID, rnd(8192), VERB, ID, ID,
		    ID, rnd(100));
		break;
	case 2:
		addf(b, "\t/* %s the %s before the %s is %s. */\n", VERB, ID,
		    ID, VERB);
		break;
	case 3:
		addf(b, "\t{ \"id\": %u, \"name\": \"%s-%s\", \"ok\": "
		    "true },\n", rnd(100000), ID, ID);
		break;
	case 4:
		addf(b, "\t%s = 0x%04x + %u * (%s - %u);\n", ID, rnd(65536),
		    rnd(64), ID, rnd(1000));
		break;
	case 5:
		addf(b, "\tfor (i = 0; i < %s->%s; i++)\n\t\t%s[i] = %s_%s(%s,"
		    " i);\n", ID, ID, ID, VERB, ID, ID);
		break;
	case 6:
		addf(b, "\treturn %s_%s(%s, %s, sizeof(*%s));\n}\n\n", VERB,
		    ID, ID, ID, ID);
		break;
	default:
		addf(b, "#define %s_MAX\t%u\n", "ITEM", 1 + rnd(4096));
		break;
	}
#undef ID
#undef VERB
}

/* n random bytes as base64 (url: the URL-safe alphabet, no padding). */
static void
add_base64(struct art_buf *b, const unsigned char *p, size_t n, bool url)
{
	static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789";
	char abc[65];
	char q[5];
	size_t i;
	uint32_t v;

	snprintf(abc, sizeof(abc), "%s%s", letters, url ? "-_" : "+/");
	for (i = 0; i < n; i += 3) {
		v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] <<
		    8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		q[0] = abc[v >> 18 & 63];
		q[1] = abc[v >> 12 & 63];
		q[2] = i + 1 < n ? abc[v >> 6 & 63] : url ? '\0' : '=';
		q[3] = i + 2 < n ? abc[v & 63] : url ? '\0' : '=';
		q[4] = '\0';
		add(b, q);
	}
}

static void
add_hex(struct art_buf *b, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		addf(b, "%02x", p[i]);
}

static void
random_bytes(unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)rnd(256);
}

static void	data_fields(struct art_buf *);

/* Whether s[0..n) has 12 digits in a row, one space or dash between two
 * allowed, which may pass for a card. */
static bool
has_digit_run(const char *s, size_t n)
{
	size_t i, run = 0;

	for (i = 0; i < n && run < 12; i++)
		if (s[i] >= '0' && s[i] <= '9')
			run++;
		else if ((s[i] != ' ' && s[i] != '-') || i == 0 ||
		    s[i - 1] < '0' || s[i - 1] > '9')
			run = 0;
	return run >= 12;
}

/*
 * A JSON line as a tool returns it: ids, digests, blobs, no secret (a
 * digest with a long run of digits is made again: a card number may hide
 * in one, and every detector is to pass these lines over).
 */
static void
data_line(struct art_buf *b)
{
	size_t from = b->len;

	do {
		b->len = from;
		data_fields(b);
	} while (has_digit_run(b->p + from, b->len - from));
}

static void
data_fields(struct art_buf *b)
{
	unsigned char r[96];
	size_t n = 24 + rnd(72);

	random_bytes(r, sizeof(r));
	addf(b, "{\"id\": \"%02x%02x%02x%02x-%02x%02x-4%01x%02x-a%01x%02x-",
	    r[0], r[1], r[2], r[3], r[4], r[5], r[6] & 15, r[7], r[8] & 15,
	    r[9]);
	add_hex(b, r + 10, 6);
	add(b, "\", \"commit\": \"");
	random_bytes(r, sizeof(r));
	add_hex(b, r, 20);
	add(b, "\", \"sha256\": \"");
	add_hex(b, r + 20, 32);
	addf(b, "\", \"path\": \"/srv/%s/releases/%s-%u.tar.gz\", \"etag\": \"",
	    words[rnd(NWORDS)], words[rnd(NWORDS)], rnd(1000));
	random_bytes(r, sizeof(r));
	add_base64(b, r, 16, false);
	add(b, "\", \"thumb\": \"");
	add_base64(b, r + 16, n < 80 ? n : 80, rnd(2) == 0);
	addf(b, "\", \"size\": %u, \"note\": \"%s %s %s\"}\n", rnd(1 << 20),
	    words[rnd(NWORDS)], words[rnd(NWORDS)], words[rnd(NWORDS)]);
}

/* Key sentinel key hidden the way number i says. */
static void
add_hidden(struct art_buf *b, const char *key, size_t i)
{
	const unsigned char *p = (const unsigned char *)key;
	size_t n = strlen(key);
	static const char *const inside[] = { "\xe2\x80\x8b", "\xc2\xad",
	    "\xef\xbb\xbf" };

	/* Each key in turn, each in a way the key before it was not. */
	i = (i + i / NKEYS) % 6;
	switch (i) {
	case 0:
		add_base64(b, p, n, false);
		break;
	case 1:
		add_base64(b, p, n, true);
		break;
	case 2:
		add_hex(b, p, n);
		break;
	default:
		addf(b, "%.6s%s%s", key, inside[i - 3], key + 6);
		break;
	}
}

/*
 * A text of kind k of exactly kib KiB (cut in ASCII, so whole: what is not
 * ASCII is in a sentinel, which prose follows).
 */
static void
make_text(struct text *t, enum kind k, size_t kib)
{
	struct art_buf b = ART_BUF_INIT;
	size_t want = kib * 1024, next = HIT_EVERY;

	rng = 0x9e3779b97f4a7c15ULL + kib;
	t->kind = k;
	t->kib = kib;
	t->sentinels = 0;
	while (b.len < want) {
		if (k == K_CODE || k == K_DATA) {
			(k == K_CODE ? code_line : data_line)(&b);
			continue;
		}
		sentence(&b);
		if (k == K_HITS && b.len >= next && b.len + 140 < want) {
			addf(&b, "Note %s there. ",
			    sentinels[t->sentinels++ % NSENT]);
			next = b.len + HIT_EVERY;
		}
		if (k == K_EVADE && b.len >= next && b.len + 140 < want) {
			add(&b, "Note ");
			add_hidden(&b, sentinels[t->sentinels % NKEYS],
			    t->sentinels);
			t->sentinels++;
			add(&b, " there. ");
			next = b.len + HIT_EVERY;
		}
	}
	t->p = art_buf_detach(&b, NULL);
	t->n = want;
	t->p[want] = '\0';
}

/* --- the config ------------------------------------------------------ */

static jv
config(void)
{
	static const char sec[] = "{"
	    "\"input_filter_mode\": \"strict\","
	    "\"output_filter_mode\": \"standard\","
	    "\"redact_secrets\": true, \"redact_pii\": true,"
	    "\"redact_system_prompt\": true, \"tool_scan_enabled\": true,"
	    "\"custom_block_patterns\": [{\"id\": \"project_codename\","
	    "  \"regex\": \"\\\\bPROJECT[- ]NIGHTJAR\\\\b\","
	    "  \"category\": \"custom\", \"severity\": \"block\"}],"
	    "\"custom_pii_patterns\": [{\"id\": \"employee_id\","
	    "  \"regex\": \"\\\\bEMP-\\\\d{6}\\\\b\","
	    "  \"description\": \"employee number\"}]}";
	struct art_err err;
	jv s = art_json_parse_str(sec, &err), c;

	if (!jv_is_valid(s))
		art_die(ART_EXIT_FAIL, "the bench's config: %s", err.msg);
	c = jv_object();
	c = art_json_set(c, "system", jv_string(system_prompt));
	return art_json_set(c, "security", s);
}

static struct art_security *
compile(const jv *cfg)
{
	struct art_security *sec;
	struct art_err err;

	if (art_security_new(cfg, &sec, &err) == -1)
		art_die(ART_EXIT_FAIL, "art_security_new: %s", err.msg);
	if (sec == NULL)
		art_die(ART_EXIT_FAIL, "art_security_new: no pipeline");
	return sec;
}

/* The median of runs compiles, us. */
static double
time_compile(const jv *cfg, int runs)
{
	double *v = calloc((size_t)runs, sizeof(*v)), m, t0;
	int i;

	if (v == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	art_security_free(compile(cfg));
	for (i = 0; i < runs; i++) {
		t0 = now_us();
		art_security_free(compile(cfg));
		v[i] = now_us() - t0;
	}
	m = median(v, (size_t)runs);
	free(v);
	return m;
}

/* --- scanning -------------------------------------------------------- */

/* How often needle is in s (a jv string's: ours hold no NUL). */
static size_t
count_of(const char *s, const char *needle)
{
	size_t c = 0, k = strlen(needle);
	const char *p = s;

	while ((p = strstr(p, needle)) != NULL) {
		c++;
		p += k;
	}
	return c;
}

/* One scan of t; with f, what it found. */
static double
scan_once(const struct art_security *sec, enum art_sec_scope sc,
    const jv *text, struct figures *f, jv *result)
{
	const char *block_id;
	int blocked;
	double t0 = now_us(), us;
	jv hits, out;

	out = art_security_scan(sec, sc, jv_copy(*text), "bench text", &hits,
	    &blocked, &block_id);
	us = now_us() - t0;
	if (f != NULL) {
		f->hits = (size_t)jv_array_length(jv_copy(hits));
		if (getenv("BENCH_SECURITY_DEBUG") != NULL)
			jv_array_foreach(hits, i, h) {
				art_warn("hit %d: %s", i, art_json_str(&h,
				    "detail"));
				jv_free(h);
			}
		f->redactions = count_of(jv_string_value(out), "[redacted:");
		f->blocked = blocked;
	}
	jv_free(hits);
	if (result != NULL)
		*result = out;
	else
		jv_free(out);
	return us;
}

/*
 * One stream of t in deltas of d bytes, the engine's way: the held text
 * and the delta joined, art_security_stream() over them, the rest held.
 * With f and shown, what it did and what it showed, put together.
 */
static double
stream_once(const struct art_security *sec, enum art_sec_scope sc,
    const struct text *t, size_t d, struct figures *f, struct art_buf *shown)
{
	size_t at = 0, len, calls = 0, fed = 0, max_held = 0;
	int blocked = 0, final;
	double t0 = now_us(), us;
	jv held = jv_string(""), show, rest;

	for (;;) {
		final = at >= t->n;
		if (!final) {
			/* Deltas are jv strings: whole characters. */
			len = art_utf8_fwd(t->p, at + (t->n - at < d ? t->n -
			    at : d), t->n) - at;
			held = jv_string_append_buf(held, t->p + at, (int)len);
			at += len;
		}
		len = (size_t)jv_string_length_bytes(jv_copy(held));
		rest = art_security_stream(sec, sc, jv_string_value(held), len,
		    final, &show, &blocked);
		jv_free(held);
		held = rest;
		calls++;
		fed += len;
		if (shown != NULL && art_buf_add(shown, jv_string_value(show),
		    (size_t)jv_string_length_bytes(jv_copy(show))) == -1)
			art_die(ART_EXIT_FAIL, "out of memory");
		jv_free(show);
		len = (size_t)jv_string_length_bytes(jv_copy(held));
		if (len > max_held)
			max_held = len;
		if (final || blocked)
			break;
	}
	jv_free(held);
	us = now_us() - t0;
	if (f != NULL) {
		f->calls = calls;
		f->fed = fed;
		f->max_held = max_held;
		f->stream_blocked = blocked;
	}
	return us;
}

/* Where the stream's shows and the scan's string part, on stderr. */
static void
differ(const struct text *t, enum art_sec_scope sc, const char *a, size_t na,
    const char *b, size_t nb)
{
	size_t i, from;

	for (i = 0; i < na && i < nb && a[i] == b[i]; i++)
		;
	from = i > 40 ? i - 40 : 0;
	art_warn("%s, %zu KiB, %s: the stream shows differ from the scan at "
	    "byte %zu of %zu / %zu", kind_names[t->kind], t->kib,
	    scope_names[sc], i, na, nb);
	if (getenv("BENCH_SECURITY_DEBUG") != NULL)
		art_warn("scan:   \"%.*s\" stream: \"%.*s\"",
		    (int)(na - from < 120 ? na - from : 120), a + from,
		    (int)(nb - from < 120 ? nb - from : 120), b + from);
}

static void
measure(const struct art_security *sec, enum art_sec_scope sc,
    const struct text *t, const struct opts *o, struct figures *f)
{
	double *v = calloc((size_t)o->runs, sizeof(*v));
	struct art_buf shown = ART_BUF_INIT;
	jv text = jv_string_sized(t->p, (int)t->n), whole;
	int i;

	if (v == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	memset(f, 0, sizeof(*f));
	/* The untimed runs, which are also the checks. */
	scan_once(sec, sc, &text, f, &whole);
	stream_once(sec, sc, t, o->delta, f, &shown);
	f->same = !f->stream_blocked && !f->blocked &&
	    (size_t)jv_string_length_bytes(jv_copy(whole)) == shown.len &&
	    memcmp(jv_string_value(whole), shown.p != NULL ? shown.p : "",
	    shown.len) == 0;
	if (!f->same && !f->stream_blocked && !f->blocked)
		differ(t, sc, jv_string_value(whole), (size_t)
		    jv_string_length_bytes(jv_copy(whole)), shown.p != NULL ?
		    shown.p : "", shown.len);
	jv_free(whole);
	art_buf_release(&shown);
	if ((t->kind == K_PROSE || t->kind == K_DATA) && f->hits != 0)
		art_die(ART_EXIT_FAIL, "%zu KiB of %s, %s: %zu patterns hit",
		    t->kib, kind_names[t->kind], scope_names[sc], f->hits);
	/* Said, not fatal, so that a build without the decoder is measured. */
	if (t->kind == K_EVADE && sc == ART_SEC_OUTPUT &&
	    f->redactions != t->sentinels)
		art_warn("evade, %zu KiB: %zu redactions of %zu hidden keys in "
		    "the output scope", t->kib, f->redactions, t->sentinels);
	if (t->kind == K_HITS && sc == ART_SEC_OUTPUT &&
	    f->redactions != t->sentinels)
		art_die(ART_EXIT_FAIL, "%zu KiB with %zu sentinels: %zu "
		    "redactions in the output scope", t->kib, t->sentinels,
		    f->redactions);

	for (i = 0; i < o->runs; i++)
		v[i] = scan_once(sec, sc, &text, NULL, NULL);
	f->scan_us = median(v, (size_t)o->runs);
	f->scan_min = v[0];
	for (i = 0; i < o->runs; i++)
		v[i] = stream_once(sec, sc, t, o->delta, NULL, NULL);
	f->stream_us = median(v, (size_t)o->runs);
	f->stream_min = v[0];
	jv_free(text);
	free(v);
}

/* --- output ---------------------------------------------------------- */

static jv
num(double x)
{
	return jv_number(round(x * 100) / 100);
}

static void
put_json(jv o)
{
	size_t len;
	char *s = art_json_dump(&o, &len);

	if (s == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	fwrite(s, 1, len, stdout);
	putchar('\n');
	free(s);
	jv_free(o);
}

static void
report(const struct opts *o, const struct text *t, enum art_sec_scope sc,
    const struct figures *f)
{
	double kib = (double)t->n / 1024;
	jv j, s;

	if (!o->json) {
		printf("%-5s %4zu %-6s %9.2f %9.2f %5zu %5zu %10.2f %10.2f "
		    "%6zu %7.2f %5zu %s\n", kind_names[t->kind], t->kib,
		    scope_names[sc], f->scan_us / kib, f->scan_min / kib,
		    f->hits, f->redactions, f->stream_us / kib, f->stream_min /
		    kib, f->calls, (double)f->fed / (double)t->n, f->max_held,
		    f->same ? "yes" : f->stream_blocked ? "blocked" : "NO");
		return;
	}
	j = jv_object();
	j = art_json_set(j, "text", jv_string(kind_names[t->kind]));
	j = art_json_set(j, "kib", jv_number((double)t->kib));
	j = art_json_set(j, "scope", jv_string(scope_names[sc]));
	j = art_json_set(j, "runs", jv_number(o->runs));
	s = jv_object();
	s = art_json_set(s, "median_us", num(f->scan_us));
	s = art_json_set(s, "us_per_kib", num(f->scan_us / kib));
	s = art_json_set(s, "min_us_per_kib", num(f->scan_min / kib));
	s = art_json_set(s, "hits", jv_number((double)f->hits));
	s = art_json_set(s, "redactions", jv_number((double)f->redactions));
	s = art_json_set(s, "blocked", jv_bool(f->blocked));
	j = art_json_set(j, "scan", s);
	s = jv_object();
	s = art_json_set(s, "delta_bytes", jv_number((double)o->delta));
	s = art_json_set(s, "median_us", num(f->stream_us));
	s = art_json_set(s, "us_per_kib", num(f->stream_us / kib));
	s = art_json_set(s, "min_us_per_kib", num(f->stream_min / kib));
	s = art_json_set(s, "calls", jv_number((double)f->calls));
	s = art_json_set(s, "us_per_call", num(f->stream_us /
	    (double)f->calls));
	s = art_json_set(s, "fed_per_byte", num((double)f->fed /
	    (double)t->n));
	s = art_json_set(s, "max_held_bytes", jv_number((double)f->max_held));
	s = art_json_set(s, "blocked", jv_bool(f->stream_blocked));
	s = art_json_set(s, "shows_match_scan", jv_bool(f->same));
	j = art_json_set(j, "stream", s);
	put_json(j);
}

/* --- main ------------------------------------------------------------ */

static const struct option longopts[] = {
	{ "size",	required_argument,	NULL, 's' },
	{ "runs",	required_argument,	NULL, 'r' },
	{ "delta",	required_argument,	NULL, 'd' },
	{ "json",	no_argument,		NULL, 'j' },
	{ "help",	no_argument,		NULL, 'h' },
	{ NULL,		0,			NULL, 0 }
};

static _Noreturn void
help(void)
{
	fputs(
"Usage: security [-s KIB]... [-r RUNS] [-d BYTES] [-j]\n"
"\n"
"Compile a security config with every detector on and time it; then time\n"
"art_security_scan() and art_security_stream() over prose with no hits,\n"
"prose with a fake sentinel every ~500 bytes, C-like code, JSON lines of\n"
"ids, digests and base64, and prose with keys hidden (base64, hex,\n"
"format characters), in each scope (input, output, tool).  Figures are\n"
"medians in microseconds per KiB of text.\n"
"\n"
"Options:\n"
"  -s, --size KIB      a text size; repeat it for several (default 1, 16,\n"
"                      256)\n"
"  -r, --runs RUNS     timed runs per figure, after one untimed run\n"
"                      (default 21)\n"
"  -d, --delta BYTES   the stream's delta size (default 16)\n"
"  -j, --json          print NDJSON: the compile, then one object per\n"
"                      text, size and scope\n"
"  -h, --help          print this help and exit\n"
"\n"
"With BENCH_SECURITY_DEBUG set, a stream whose shows differ from the scan\n"
"also prints the text around the first difference (fake sentinels only).\n"
"\n"
"Exit status: 0 success, 1 failure, 2 usage error.\n", stdout);
	exit(ferror(stdout) || fflush(stdout) == EOF ? ART_EXIT_FAIL :
	    ART_EXIT_OK);
}

static _Noreturn void
usage(void)
{
	fprintf(stderr, "usage: security [-s KIB]... [-r RUNS] [-d BYTES] "
	    "[-j]\nTry 'security --help' for more information.\n");
	exit(ART_EXIT_USAGE);
}

static size_t
count_arg(const char *opt, const char *arg, size_t min, size_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' ||
	    v < min || v > max)
		art_die(ART_EXIT_USAGE, "bad %s '%s': expected a count from "
		    "%zu to %zu", opt, arg, min, max);
	return (size_t)v;
}

static void
parse_opts(struct opts *o, int argc, char *argv[])
{
	int c;

	while ((c = getopt_long(argc, argv, "s:r:d:jh", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 's':
			if (o->nsizes == MAX_SIZES)
				art_die(ART_EXIT_USAGE, "at most %d sizes",
				    MAX_SIZES);
			o->sizes[o->nsizes++] = count_arg("-s", optarg, 1,
			    1 << 20);
			break;
		case 'r':
			o->runs = (int)count_arg("-r", optarg, 1, 100000);
			break;
		case 'd':
			o->delta = count_arg("-d", optarg, 1, 1 << 20);
			break;
		case 'j': o->json = true; break;
		case 'h': help();
		default:  usage();
		}
	}
	if (optind != argc)
		usage();
	if (o->nsizes == 0) {
		o->sizes[o->nsizes++] = 1;
		o->sizes[o->nsizes++] = 16;
		o->sizes[o->nsizes++] = 256;
	}
}

int
main(int argc, char *argv[])
{
	struct opts o = { .runs = DEFAULT_RUNS, .delta = DEFAULT_DELTA };
	struct art_security *sec;
	struct figures f;
	struct text t;
	double c;
	jv cfg, j;
	enum art_sec_scope sc;
	int i, k;

	art_diag_init(argv[0]);
	parse_opts(&o, argc, argv);
	make_sentinels();
	cfg = config();
	c = time_compile(&cfg, o.runs);
	if (o.json) {
		j = jv_object();
		j = art_json_set(j, "runs", jv_number(o.runs));
		j = art_json_set(j, "median_us", num(c));
		put_json(art_json_set(jv_object(), "compile", j));
	} else {
		printf("bench/security: art_security_new, median of %d: "
		    "%.1f us\nscan and stream (deltas of %zu bytes): us per "
		    "KiB, median and min of %d runs\n\n", o.runs, c, o.delta,
		    o.runs);
		printf("%-5s %4s %-6s %9s %9s %5s %5s %10s %10s %6s %7s %5s "
		    "%s\n", "text", "KiB", "scope", "scan", "min", "hits",
		    "redac", "stream", "min", "calls", "fed/B", "held",
		    "same");
	}
	sec = compile(&cfg);
	for (i = 0; i < o.nsizes; i++)
		for (k = 0; k < NKINDS; k++) {
			make_text(&t, (enum kind)k, o.sizes[i]);
			for (sc = ART_SEC_INPUT; sc <= ART_SEC_TOOL; sc++) {
				measure(sec, sc, &t, &o, &f);
				report(&o, &t, sc, &f);
				fflush(stdout);
			}
			free(t.p);
		}
	art_security_free(sec);
	jv_free(cfg);
	if (ferror(stdout) || fflush(stdout) == EOF)
		art_die(ART_EXIT_FAIL, "write output: %s", strerror(errno));
	return ART_EXIT_OK;
}
