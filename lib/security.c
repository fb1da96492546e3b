/* security.c - the security pipeline: detectors over a turn's text
 *
 * art_security_new() turns the config into detectors, each compiled once,
 * and into three lists of uses, one per scope: a detector and the
 * severity it has there (a model reply's secret may be redacted where a
 * client's is blocked).  A scan runs every use of its scope over a string
 * and gathers the hits; the redact hits, sorted and merged, become the new
 * string.  Validators (Luhn, mod 97, a phone's digit count) judge a whole
 * match, and a match they refuse is passed over, the search going on from
 * the next character.
 *
 * The system prompt is a detector of its own: the prompt, whitespace
 * normalised, is cut into every window of LEAK_MIN bytes, hashed into a
 * table; a text's windows (normalised the same way) that are found there
 * mark the bytes they cover, and every run of marked bytes that holds at
 * least LEAK_MIN characters is a leak.  A run of a text that appears in
 * the prompt is made of such windows, so the marked runs are exactly the
 * long common runs, found in one pass over the text.
 *
 * Detectors match a view of the text: the text itself, or, when it holds
 * a format character (a zero-width space inside a key), a copy without
 * them and each byte's offset in the text, so that a hit redacts the span
 * it came from.  The view's base64 and hex runs are decoded, and the
 * secret detectors search what is text among them; their hits cover the
 * whole run.  Both cost one pass over the text when there is nothing to
 * do, and decoding is bounded per run, so a scan stays linear.
 *
 * A stream is scanned with partial matching (regex.h): whatever may still
 * become a match is kept back, and what comes before it is final.  An
 * encoded run at the end may still grow, and a rest cut inside one would
 * decode as another, so the cut moves to the run's start.
 */
#include "security.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "regex.h"
#include "utf8.h"

#define LEAK_MIN	40	/* characters of the system prompt that leak */

enum sev { SEV_LOG, SEV_REDACT, SEV_BLOCK, SEV_NONE };
static const char *const sev_names[] = { "log_only", "redact", "block" };

/* Filter modes, in the order that they take more. */
enum mode { MODE_DISABLED, MODE_PERMISSIVE, MODE_STANDARD, MODE_STRICT };
static const char *const mode_names[] = { "disabled", "permissive",
    "standard", "strict", NULL };

enum check { CHECK_NONE, CHECK_LUHN, CHECK_IBAN, CHECK_PHONE };
enum group { G_SECRET, G_PII, G_INJECT };

struct builtin {
	const char	*id;
	const char	*code;		/* violation_code */
	const char	*what;		/* the detail's noun */
	int		 group;
	int		 mode;		/* injection: the least mode taking it */
	int		 flags;		/* ART_REGEX_* */
	int		 check;
	const char	*re;
};

#define SECRET	"secret_detected"
#define PII	"pii_detected"
#define INJECT	"input_injection_detected"
#define CI	ART_REGEX_CASELESS

/* In the order of agentrt(7)'s list, which names a tie between two. */
static const struct builtin builtins[] = {
	{ "anthropic_key", SECRET, "Anthropic API key", G_SECRET, 0, 0, 0,
	    "\\bsk-ant-[A-Za-z0-9_-]{20,}" },
	{ "openai_key", SECRET, "OpenAI API key", G_SECRET, 0, 0, 0,
	    "\\bsk-(?!ant-)[A-Za-z0-9_-]{20,}" },
	{ "aws_access_key", SECRET, "AWS access key ID", G_SECRET, 0, 0, 0,
	    "\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b" },
	{ "github_token", SECRET, "GitHub token", G_SECRET, 0, 0, 0,
	    "\\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})" },
	{ "slack_token", SECRET, "Slack token", G_SECRET, 0, 0, 0,
	    "\\bxox[abpr]-[A-Za-z0-9-]{10,}" },
	{ "google_api_key", SECRET, "Google API key", G_SECRET, 0, 0, 0,
	    "\\bAIza[0-9A-Za-z_-]{35}" },
	/* An unterminated block goes to the end of the text, or to a quote
	 * when the text is JSON that holds it. */
	{ "private_key", SECRET, "private key block", G_SECRET, 0, 0, 0,
	    "-----BEGIN[A-Z ]*PRIVATE KEY-----(?:[\\s\\S]*?"
	    "-----END[A-Z ]*PRIVATE KEY-----|[^\"]*)" },
	{ "bearer_token", SECRET, "bearer credential", G_SECRET, 0, CI, 0,
	    "\\bauthorization[\"']?\\s*[:=]\\s*[\"']?bearer\\s+"
	    "\\K[A-Za-z0-9._~+/-]{8,}=*" },
	{ "jwt", SECRET, "JSON Web Token", G_SECRET, 0, 0, 0,
	    "\\beyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]{5,}" },
	{ "email", PII, "e-mail address", G_PII, 0, 0, 0,
	    "(?<![\\w.%+-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\\.)+"
	    "[A-Za-z]{2,}(?![\\w-])" },
	{ "phone", PII, "phone number", G_PII, 0, 0, CHECK_PHONE,
	    "(?<![\\w+])\\+[1-9]\\d{0,2}(?:[ .-]?(?:\\(\\d{1,4}\\)|\\d{1,4}))"
	    "{2,5}(?!\\d)"
	    "|(?<![\\w+.-])(?:1[ .-])?(?:\\([2-9]\\d\\d\\) ?|[2-9]\\d\\d[ .-])"
	    "[2-9]\\d\\d[ .-]\\d{4}(?![\\w-]|\\.\\d)" },
	{ "payment_card", PII, "payment card number", G_PII, 0, 0, CHECK_LUHN,
	    "(?<![\\d-])[2-6]\\d{3}(?:[ -]?\\d){9,15}(?!\\d)" },
	{ "iban", PII, "IBAN", G_PII, 0, 0, CHECK_IBAN,
	    "\\b[A-Z]{2}\\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\\b" },
	{ "us_ssn", PII, "US social security number", G_PII, 0, 0, 0,
	    "(?<![\\d-])(?!000|666|9\\d\\d)\\d{3}-(?!00)\\d{2}-(?!0000)\\d{4}"
	    "(?![\\d-])" },
	{ "ignore_instructions", INJECT, "instruction override", G_INJECT,
	    MODE_PERMISSIVE, CI, 0,
	    "\\bignore\\s+(?:all\\s+)?(?:the\\s+|your\\s+|any\\s+)?"
	    "(?:previous|prior|above|earlier)\\s+instructions\\b" },
	{ "disregard_instructions", INJECT, "instruction override", G_INJECT,
	    MODE_PERMISSIVE, CI, 0,
	    "\\bdisregard\\s+(?:all\\s+)?(?:the\\s+|your\\s+|any\\s+)?"
	    "(?:previous|prior|above|earlier)\\s+(?:instructions|rules)\\b" },
	{ "role_change", INJECT, "role change", G_INJECT, MODE_STANDARD, CI, 0,
	    "\\byou\\s+are\\s+now\\s+(?:an?|DAN|in\\s+\\w+\\s+mode)\\b" },
	{ "system_message", INJECT, "text posing as a system message",
	    G_INJECT, MODE_STANDARD, CI | ART_REGEX_MULTILINE, 0,
	    "^\\s*system\\s*:|<\\|im_start\\|>\\s*system|\\[/?INST\\]"
	    "|<</?SYS>>" },
	{ "forget_instructions", INJECT, "instruction override", G_INJECT,
	    MODE_STRICT, CI, 0,
	    "\\bforget\\s+(?:everything|all)\\s+(?:you|above|previous|prior)"
	    "\\b" },
	{ "reveal_prompt", INJECT, "request for the system prompt", G_INJECT,
	    MODE_STRICT, CI, 0,
	    "\\breveal\\s+(?:your|the)\\s+(?:system\\s+)?(?:prompt|"
	    "instructions)\\b" },
	{ "jailbreak_persona", INJECT, "jailbreak persona", G_INJECT,
	    MODE_STRICT, CI, 0,
	    "\\bact\\s+as\\s+(?:an?\\s+)?(?:unfiltered|jailbroken|"
	    "unrestricted|uncensored)\\b" },
	{ "developer_mode", INJECT, "developer mode request", G_INJECT,
	    MODE_STRICT, CI, 0, "\\bdeveloper\\s+mode\\b" },
	{ "pretend_persona", INJECT, "role-play request", G_INJECT,
	    MODE_STRICT, CI, 0, "\\bpretend\\s+(?:you\\s+are|to\\s+be)\\b" },
};
#define NBUILTIN	(sizeof(builtins) / sizeof(builtins[0]))
#define PROMPT_ID	"system_prompt"

struct det {
	char			*id;
	const char		*code;
	char			*what;
	struct art_regex	*re;	/* NULL: the system prompt */
	int			 check;
	bool			 secret;	/* scans decoded runs */
};

/* A detector as one scope uses it. */
struct use {
	size_t		det;
	enum sev	sev;
};

struct uses {
	struct use	*v;
	size_t		 n, cap;
};

/* A window of the system prompt: its hash and where it starts. */
struct win {
	uint64_t	h;
	size_t		pos;		/* SIZE_MAX: an empty slot */
};

struct art_security {
	struct det	*dets;
	size_t		 ndets, capdets;
	struct uses	 scopes[3];
	char		*prompt;	/* normalised; NULL when not watched */
	size_t		 nprompt;
	struct win	*wins;
	size_t		 mask;		/* wins has mask + 1 slots */
};

/* What a config asks for, once read. */
struct conf {
	int	in, out;		/* enum mode */
	int	secrets, pii, prompt, tool;
};

static const char *const scope_names[] = { "input", "output", "tool" };

/* --- validators ----------------------------------------------------- */

static bool
luhn(const char *s, size_t n)
{
	size_t i, digits = 0;
	int sum = 0, d;

	for (i = n; i-- > 0;) {
		if (s[i] < '0' || s[i] > '9')
			continue;
		d = s[i] - '0';
		if (digits++ % 2 == 1 && (d *= 2) > 9)
			d -= 9;
		sum += d;
	}
	return digits >= 13 && digits <= 19 && sum % 10 == 0;
}

/* ISO 13616: the first four characters moved to the end, letters as
 * 10..35, the whole number mod 97 is 1. */
static bool
iban(const char *s, size_t n)
{
	char c[40];
	size_t i, k = 0;
	unsigned rem = 0;

	for (i = 0; i < n; i++)
		if (s[i] != ' ') {
			if (k == sizeof(c))
				return false;
			c[k++] = s[i];
		}
	if (k < 15 || k > 34)
		return false;
	for (i = 0; i < k; i++) {
		char x = c[(i + 4) % k];

		if (x >= '0' && x <= '9')
			rem = (rem * 10 + (unsigned)(x - '0')) % 97;
		else
			rem = (rem * 100 + (unsigned)(x - 'A' + 10)) % 97;
	}
	return rem == 1;
}

/* E.164 allows 15 digits; fewer than 8 is an extension or a sum. */
static bool
phone(const char *s, size_t n)
{
	size_t i, digits = 0;

	for (i = 0; i < n; i++)
		digits += s[i] >= '0' && s[i] <= '9';
	return digits >= 8 && digits <= 15;
}

static bool
passes(int check, const char *s, size_t n)
{
	switch (check) {
	case CHECK_LUHN:
		return luhn(s, n);
	case CHECK_IBAN:
		return iban(s, n);
	case CHECK_PHONE:
		return phone(s, n);
	}
	return true;
}

/* --- the system prompt's windows ------------------------------------ */

#define HASH_BASE	1099511628211ULL

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	    c == '\v';
}

/*
 * s[0..n) with each run of white space as one space, into out (n bytes of
 * room); at (n + 1 entries, or NULL) gets each output byte's offset in s,
 * and at[len] = n.  Returns len.
 */
static size_t
normalise(const char *s, size_t n, char *out, size_t *at)
{
	size_t i, len = 0;

	for (i = 0; i < n; i++) {
		if (is_space(s[i]) && len > 0 && out[len - 1] == ' ' &&
		    i > 0 && is_space(s[i - 1]))
			continue;
		if (at != NULL)
			at[len] = i;
		out[len++] = is_space(s[i]) ? ' ' : s[i];
	}
	if (at != NULL)
		at[len] = n;
	return len;
}

static uint64_t
hash_window(const char *s)
{
	uint64_t h = 0;
	size_t i;

	for (i = 0; i < LEAK_MIN; i++)
		h = h * HASH_BASE + (unsigned char)s[i];
	return h;
}

static size_t
slot(uint64_t h, size_t mask)
{
	return (size_t)((h ^ (h >> 29)) * 0x9e3779b97f4a7c15ULL >> 7) & mask;
}

/* Whether the window at s is one of the prompt's. */
static bool
in_prompt(const struct art_security *sec, const char *s, uint64_t h)
{
	size_t i = slot(h, sec->mask);

	for (; sec->wins[i].pos != SIZE_MAX; i = (i + 1) & sec->mask)
		if (sec->wins[i].h == h && memcmp(sec->prompt +
		    sec->wins[i].pos, s, LEAK_MIN) == 0)
			return true;
	return false;
}

static size_t
count_chars(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

/* Watches for system (n bytes): 0, or -1 when out of memory. */
static int
watch_prompt(struct art_security *sec, const char *system, size_t n)
{
	size_t len, i, k, slots = 16;
	uint64_t h, top = 1;
	char *p;

	if ((p = malloc(n + 1)) == NULL)
		return -1;
	len = normalise(system, n, p, NULL);
	while (len > 0 && p[len - 1] == ' ')
		len--;
	k = len > 0 && p[0] == ' ';
	memmove(p, p + k, len -= k);
	if (count_chars(p, len) < LEAK_MIN) {
		free(p);
		return 0;
	}
	while (slots < 2 * (len - LEAK_MIN + 1))
		slots *= 2;
	if ((sec->wins = malloc(slots * sizeof(*sec->wins))) == NULL) {
		free(p);
		return -1;
	}
	for (i = 0; i < slots; i++)
		sec->wins[i].pos = SIZE_MAX;
	sec->prompt = p;
	sec->nprompt = len;
	sec->mask = slots - 1;
	for (i = 1; i < LEAK_MIN; i++)
		top *= HASH_BASE;
	for (i = 0, h = hash_window(p); ; i++) {
		if (!in_prompt(sec, p + i, h)) {
			for (k = slot(h, sec->mask); sec->wins[k].pos !=
			    SIZE_MAX; k = (k + 1) & sec->mask)
				;
			sec->wins[k].h = h;
			sec->wins[k].pos = i;
		}
		if (i + LEAK_MIN >= len)
			break;
		h = (h - (unsigned char)p[i] * top) * HASH_BASE +
		    (unsigned char)p[i + LEAK_MIN];
	}
	return 0;
}

/* --- compiling the config ------------------------------------------- */

static int
add_det(struct art_security *sec, const char *id, const char *code,
    const char *what, const char *re, size_t relen, int flags, int check,
    struct art_err *err)
{
	struct det *d;

	if (art_grow(&sec->dets, &sec->capdets, sec->ndets + 1,
	    sizeof(*sec->dets)) == -1)
		return art_err_set(err, "nomem", "security: out of memory");
	d = &sec->dets[sec->ndets];
	memset(d, 0, sizeof(*d));
	d->code = code;
	d->check = check;
	d->secret = re != NULL && strcmp(code, SECRET) == 0;
	if ((d->id = strdup(id)) == NULL || (d->what = strdup(what)) == NULL) {
		free(d->id);
		return art_err_set(err, "nomem", "security: out of memory");
	}
	if (re != NULL && art_regex_new(re, relen, flags | ART_REGEX_NOTEMPTY,
	    &d->re, err) == -1) {
		free(d->id);
		free(d->what);
		return -1;
	}
	sec->ndets++;
	return 0;
}

static int
add_use(struct art_security *sec, enum art_sec_scope sc, size_t det,
    enum sev sev, struct art_err *err)
{
	struct uses *u = &sec->scopes[sc];

	if (sev == SEV_NONE)
		return 0;
	if (art_grow(&u->v, &u->cap, u->n + 1, sizeof(*u->v)) == -1)
		return art_err_set(err, "nomem", "security: out of memory");
	u->v[u->n].det = det;
	u->v[u->n++].sev = sev;
	return 0;
}

/* The severity output_filter_mode gives built-in detectors. */
static enum sev
out_sev(const struct conf *c)
{
	return c->out == MODE_STRICT ? SEV_BLOCK : c->out == MODE_STANDARD ?
	    SEV_REDACT : c->out == MODE_PERMISSIVE ? SEV_LOG : SEV_NONE;
}

static int
add_builtin(struct art_security *sec, const struct conf *c,
    const struct builtin *b, struct art_err *err)
{
	enum sev in = SEV_NONE, out = SEV_NONE, tool = SEV_NONE;
	bool on;

	if (b->group == G_INJECT) {
		if (c->in != MODE_DISABLED && b->mode <= c->in)
			in = SEV_BLOCK;
		tool = c->tool ? in : SEV_NONE;
	} else {
		on = b->group == G_SECRET ? c->secrets : c->pii;
		in = on && c->in != MODE_DISABLED ? SEV_REDACT : SEV_NONE;
		out = on ? out_sev(c) : SEV_NONE;
		tool = c->tool ? out : SEV_NONE;
	}
	if (in == SEV_NONE && out == SEV_NONE && tool == SEV_NONE)
		return 0;
	if (add_det(sec, b->id, b->code, b->what, b->re, strlen(b->re),
	    b->flags, b->check, err) == -1)
		return art_err_prefix(err, "security: built-in '%s'", b->id);
	return add_use(sec, ART_SEC_INPUT, sec->ndets - 1, in, err) == -1 ||
	    add_use(sec, ART_SEC_OUTPUT, sec->ndets - 1, out, err) == -1 ||
	    add_use(sec, ART_SEC_TOOL, sec->ndets - 1, tool, err) == -1 ? -1 : 0;
}

static int
add_prompt(struct art_security *sec, const jv *config, const struct conf *c,
    struct art_err *err)
{
	jv sys = art_json_field(config, "system");
	enum sev sev = out_sev(c);
	int rc = 0;

	if (c->prompt && sev != SEV_NONE && jv_get_kind(sys) ==
	    JV_KIND_STRING) {
		if (watch_prompt(sec, jv_string_value(sys),
		    (size_t)jv_string_length_bytes(jv_copy(sys))) == -1)
			rc = art_err_set(err, "nomem", "security: out of memory");
		else if (sec->prompt != NULL)
			rc = add_det(sec, PROMPT_ID, "system_prompt_leak",
			    "system prompt text", NULL, 0, 0, 0, err) == -1 ||
			    add_use(sec, ART_SEC_OUTPUT, sec->ndets - 1, sev,
			    err) == -1 || add_use(sec, ART_SEC_TOOL, sec->ndets -
			    1, c->tool ? sev : SEV_NONE, err) == -1 ? -1 : 0;
	}
	jv_free(sys);
	return rc;
}

static int __attribute__((format(printf, 3, 4)))
bad(struct art_err *err, const char *member, const char *fmt, ...)
{
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return art_err_set(err, "bad_agent", "security.%s: %s", member, why);
}

/* A string member that must be one of names (NULL-ended): its index. */
static int
get_choice(const jv *sec, const char *member, const char *const *names,
    const char *list, int dflt, int *out, struct art_err *err)
{
	jv v = art_json_field(sec, member);
	int i, rc = 0;

	*out = dflt;
	if (jv_get_kind(v) == JV_KIND_NULL)
		;
	else if (jv_get_kind(v) != JV_KIND_STRING)
		rc = bad(err, member, "expected one of %s, got %s", list,
		    art_json_kind_name(jv_get_kind(v)));
	else {
		for (i = 0; names[i] != NULL &&
		    strcmp(names[i], jv_string_value(v)) != 0; i++)
			;
		if (names[i] == NULL)
			rc = bad(err, member, "unknown mode '%s' (expected %s)",
			    jv_string_value(v), list);
		else
			*out = i;
	}
	jv_free(v);
	return rc;
}

static int
get_flag(const jv *sec, const char *member, int *out, struct art_err *err)
{
	jv v = art_json_field(sec, member);
	jv_kind k = jv_get_kind(v);

	jv_free(v);
	if (k == JV_KIND_NULL)
		*out = 1;
	else if (k == JV_KIND_TRUE || k == JV_KIND_FALSE)
		*out = k == JV_KIND_TRUE;
	else
		return bad(err, member, "expected true or false, got %s",
		    art_json_kind_name(k));
	return 0;
}

static int
check_size(const jv *sec, struct art_err *err)
{
	jv v = art_json_field(sec, "tool_result_max_bytes");
	double d = jv_get_kind(v) == JV_KIND_NUMBER ? jv_number_value(v) : 0;
	jv_kind k = jv_get_kind(v);

	jv_free(v);
	if (k != JV_KIND_NULL && (k != JV_KIND_NUMBER || d < 1 ||
	    d > 2147483647.0 || d != (double)(int64_t)d))
		return bad(err, "tool_result_max_bytes", "expected a positive "
		    "integer, got %s", k == JV_KIND_NUMBER ? "another number" :
		    art_json_kind_name(k));
	return 0;
}

static const char *const members[] = {
	"input_filter_mode", "output_filter_mode", "redact_secrets",
	"redact_pii", "redact_system_prompt", "tool_scan_enabled",
	"tool_result_max_bytes", "schema_validation_mode",
	"custom_block_patterns", "custom_pii_patterns", NULL
};
static const char *const pattern_members[] = { "id", "regex", "severity",
    "category", "description", NULL };

/* The first key of o not in names, or NULL; borrowed from o. */
static const char *
unknown_key(const jv *o, const char *const *names)
{
	const char *bad_key = NULL;
	int i;

	jv_object_foreach(*o, k, v) {
		for (i = 0; names[i] != NULL &&
		    strcmp(names[i], jv_string_value(k)) != 0; i++)
			;
		if (names[i] == NULL && bad_key == NULL)
			bad_key = jv_string_value(k);	/* o holds the key */
		jv_free(k);
		jv_free(v);
	}
	return bad_key;
}

static int
read_conf(const jv *s, struct conf *c, struct art_err *err)
{
	static const char *const schema_modes[] = { "log_only", "warn",
	    "block", NULL };
	const char *k;
	int dummy;

	if (jv_get_kind(*s) != JV_KIND_OBJECT)
		return art_err_set(err, "bad_agent", "field 'security': "
		    "expected an object");
	if ((k = unknown_key(s, members)) != NULL)
		return art_err_set(err, "bad_agent", "security: unknown member "
		    "'%s'", k);
	if (get_choice(s, "input_filter_mode", mode_names, "strict, standard, "
	    "permissive, disabled", MODE_STANDARD, &c->in, err) == -1 ||
	    get_choice(s, "output_filter_mode", mode_names, "strict, "
	    "standard, permissive, disabled", MODE_STANDARD, &c->out,
	    err) == -1 ||
	    get_choice(s, "schema_validation_mode", schema_modes, "log_only, "
	    "warn, block", 2, &dummy, err) == -1 ||
	    get_flag(s, "redact_secrets", &c->secrets, err) == -1 ||
	    get_flag(s, "redact_pii", &c->pii, err) == -1 ||
	    get_flag(s, "redact_system_prompt", &c->prompt, err) == -1 ||
	    get_flag(s, "tool_scan_enabled", &c->tool, err) == -1 ||
	    check_size(s, err) == -1)
		return -1;
	return 0;
}

/* --- custom patterns ------------------------------------------------ */

static bool
id_taken(const struct art_security *sec, const char *id)
{
	size_t i;

	for (i = 0; i < NBUILTIN; i++)
		if (strcmp(builtins[i].id, id) == 0)
			return true;
	for (i = 0; i < sec->ndets; i++)
		if (strcmp(sec->dets[i].id, id) == 0)
			return true;
	return strcmp(id, PROMPT_ID) == 0;
}

/* A pattern's optional string member, or dflt. */
static int
pat_str(const jv *p, const char *member, const char *dflt, const char **out)
{
	jv v = art_json_field(p, member);
	jv_kind k = jv_get_kind(v);

	*out = k == JV_KIND_STRING ? art_json_str(p, member) : dflt;
	jv_free(v);
	return k == JV_KIND_STRING || (k == JV_KIND_NULL && dflt != NULL) ? 0 :
	    -1;
}

static int
category_code(const char *cat, const char **code)
{
	static const char *const cats[][2] = {
		{ "injection", "input_injection_detected" },
		{ "secret", "secret_detected" },
		{ "pii", "pii_detected" },
		{ "custom", "custom_pattern_matched" },
	};
	size_t i;

	for (i = 0; i < sizeof(cats) / sizeof(cats[0]); i++)
		if (strcmp(cats[i][0], cat) == 0) {
			*code = cats[i][1];
			return 0;
		}
	return -1;
}

static int
add_custom(struct art_security *sec, const struct conf *c, const jv *p,
    const char *where, bool pii, struct art_err *err)
{
	const char *id, *re, *sevname, *cat, *desc, *code, *k;
	char what[128], why[sizeof(err->msg)];
	int i;

	if (jv_get_kind(*p) != JV_KIND_OBJECT)
		return art_err_set(err, "bad_agent", "%s: expected an object",
		    where);
	if (pat_str(p, "id", NULL, &id) == -1 || *id == '\0')
		return art_err_set(err, "bad_agent", "%s: expected a non-empty "
		    "string 'id'", where);
	if ((k = unknown_key(p, pattern_members)) != NULL)
		return art_err_set(err, "bad_agent", "%s '%s': unknown member "
		    "'%s'", where, id, k);
	if (id_taken(sec, id))
		return art_err_set(err, "bad_agent", "%s: id '%s' is taken",
		    where, id);
	if (pat_str(p, "regex", NULL, &re) == -1)
		return art_err_set(err, "bad_agent", "%s '%s': expected a "
		    "string 'regex'", where, id);
	if (pat_str(p, "severity", pii ? "redact" : "block", &sevname) == -1)
		return art_err_set(err, "bad_agent", "%s '%s': expected "
		    "severity block, redact or log_only", where, id);
	for (i = 0; i < 3 && strcmp(sev_names[i], sevname) != 0; i++)
		;
	if (i == 3)
		return art_err_set(err, "bad_agent", "%s '%s': unknown "
		    "severity '%s'", where, id, sevname);
	if (pat_str(p, "category", pii ? "pii" : "custom", &cat) == -1 ||
	    category_code(cat, &code) == -1)
		return art_err_set(err, "bad_agent", "%s '%s': expected "
		    "category injection, secret, pii or custom", where, id);
	if (pat_str(p, "description", "", &desc) == -1)
		return art_err_set(err, "bad_agent", "%s '%s': description: "
		    "expected a string", where, id);
	if (*desc != '\0')
		snprintf(what, sizeof(what), "%s", desc);
	else
		snprintf(what, sizeof(what), "pattern '%s'", id);
	if (add_det(sec, id, code, what, re, strlen(re), 0, CHECK_NONE,
	    err) == -1) {
		if (!art_err_is(err, "bad_regex"))
			return -1;
		snprintf(why, sizeof(why), "%s", err->msg);
		return art_err_set(err, "bad_agent", "%s '%s': regex does not "
		    "compile: %s", where, id, why);
	}
	return add_use(sec, ART_SEC_INPUT, sec->ndets - 1, c->in !=
	    MODE_DISABLED ? (enum sev)i : SEV_NONE, err) == -1 ||
	    add_use(sec, ART_SEC_OUTPUT, sec->ndets - 1, c->out !=
	    MODE_DISABLED ? (enum sev)i : SEV_NONE, err) == -1 ||
	    add_use(sec, ART_SEC_TOOL, sec->ndets - 1, c->tool ? (enum sev)i :
	    SEV_NONE, err) == -1 ? -1 : 0;
}

static int
add_customs(struct art_security *sec, const struct conf *c, const jv *s,
    const char *member, bool pii, struct art_err *err)
{
	jv list = art_json_field(s, member);
	char where[64];
	int rc = 0;

	if (jv_get_kind(list) != JV_KIND_NULL && jv_get_kind(list) !=
	    JV_KIND_ARRAY)
		rc = art_err_set(err, "bad_agent", "security.%s: expected an "
		    "array of patterns", member);
	else if (jv_get_kind(list) == JV_KIND_ARRAY)
		jv_array_foreach(list, i, p) {
			snprintf(where, sizeof(where), "security.%s[%d]",
			    member, i);
			if (rc == 0)
				rc = add_custom(sec, c, &p, where, pii, err);
			jv_free(p);
		}
	jv_free(list);
	return rc;
}

int
art_security_new(const jv *config, struct art_security **out,
    struct art_err *err)
{
	struct art_security *sec;
	struct conf c;
	size_t i;
	struct art_err local;
	jv s = art_json_field(config, "security");
	int rc = 0;

	*out = NULL;
	if (err == NULL)
		err = &local;
	if (jv_get_kind(*config) != JV_KIND_OBJECT || (jv_get_kind(s) ==
	    JV_KIND_NULL && !jv_object_has(jv_copy(*config),
	    jv_string("security")))) {
		jv_free(s);
		return 0;
	}
	if (read_conf(&s, &c, err) == -1) {
		jv_free(s);
		return -1;
	}
	if ((sec = calloc(1, sizeof(*sec))) == NULL) {
		jv_free(s);
		return art_err_set(err, "nomem", "security: out of memory");
	}
	for (i = 0; i < NBUILTIN && rc == 0; i++)
		rc = add_builtin(sec, &c, &builtins[i], err);
	if (rc == 0)
		rc = add_prompt(sec, config, &c, err);
	if (rc == 0)
		rc = add_customs(sec, &c, &s, "custom_block_patterns", false,
		    err);
	if (rc == 0)
		rc = add_customs(sec, &c, &s, "custom_pii_patterns", true, err);
	jv_free(s);
	if (rc != 0) {
		art_security_free(sec);
		return -1;
	}
	*out = sec;
	return 0;
}

void
art_security_free(struct art_security *sec)
{
	size_t i;

	if (sec == NULL)
		return;
	for (i = 0; i < sec->ndets; i++) {
		free(sec->dets[i].id);
		free(sec->dets[i].what);
		art_regex_free(sec->dets[i].re);
	}
	for (i = 0; i < 3; i++)
		free(sec->scopes[i].v);
	free(sec->dets);
	free(sec->prompt);
	free(sec->wins);
	free(sec);
}

/* --- finding hits --------------------------------------------------- */

struct hit {
	size_t	s, e;		/* bytes [s, e) of the text */
	size_t	b;		/* where what it depends on begins: <= s */
	size_t	use;		/* in the scope's uses */
	int	enc;		/* enum enc: found decoded from a run */
};

struct hits {
	struct hit	*v;
	size_t		 n, cap;
};

static void
push(struct hits *h, size_t b, size_t s, size_t e, size_t use)
{
	if (art_grow(&h->v, &h->cap, h->n + 1, sizeof(*h->v)) == -1)
		abort();	/* out of memory is fatal, as in libjq */
	h->v[h->n].b = b;
	h->v[h->n].s = s;
	h->v[h->n].e = e;
	h->v[h->n].enc = 0;
	h->v[h->n++].use = use;
}

/*
 * Every match of d in text[0..n) that its check passes.  partial: the
 * text may go on, and *hold comes down to where a match may be under way.
 */
static void
find_regex(const struct det *d, size_t use, const char *text, size_t n,
    bool partial, struct hits *h, size_t *hold)
{
	size_t from = 0, s, e;
	int rc;

	for (;;) {
		rc = partial ? art_regex_search_partial(d->re, text, n, from,
		    &s, &e) : art_regex_search(d->re, text, n, from, &s, &e);
		if (rc == ART_REGEX_PARTIAL && s < *hold)
			*hold = s;
		if (rc != ART_REGEX_MATCH)
			return;
		if (e > s && passes(d->check, text + s, e - s)) {
			push(h, art_regex_began(d->re), s, e, use);
			from = e;
		} else
			from = s + 1;
	}
}

/* Whether needle[0..nn) is somewhere in hay[0..nh). */
static bool
contains(const char *hay, size_t nh, const char *needle, size_t nn)
{
	const char *p = hay, *end = hay + nh;

	while ((size_t)(end - p) >= nn &&
	    (p = memchr(p, needle[0], (size_t)(end - p) - nn + 1)) != NULL) {
		if (memcmp(p, needle, nn) == 0)
			return true;
		p++;
	}
	return false;
}

/*
 * Where a leak may still begin in normalised t[0..nt): the longest tail
 * shorter than a window that the prompt holds could grow into one.
 */
static size_t
leak_tail(const struct art_security *sec, const char *t, size_t nt)
{
	size_t len;

	for (len = 1; len < LEAK_MIN && len <= nt; len++)
		if (!contains(sec->prompt, sec->nprompt, t + nt - len, len))
			break;
	return nt - (len - 1);
}

/*
 * A run [a, b) of normalised text that windows of the prompt cover: a
 * leak when, without the spaces at its ends, it is long enough.
 */
static void
leak_run(const char *text, size_t n, const char *t, const size_t *at,
    size_t a, size_t b, size_t use, struct hits *h)
{
	while (a < b && t[a] == ' ')
		a++;
	while (b > a && t[b - 1] == ' ')
		b--;
	if (count_chars(t + a, b - a) >= LEAK_MIN)
		push(h, art_utf8_back(text, at[a]), art_utf8_back(text, at[a]),
		    art_utf8_fwd(text, at[b], n), use);
}

/* The system prompt's runs in text[0..n), as find_regex. */
static void
find_leaks(const struct art_security *sec, size_t use, const char *text,
    size_t n, bool partial, struct hits *h, size_t *hold)
{
	size_t *at, nt, i, a = 0, b = 0, t_hold;
	uint64_t hs = 0, top = 1;
	char *t;

	if ((t = malloc(n + 1)) == NULL || (at = malloc((n + 1) *
	    sizeof(*at))) == NULL)
		abort();
	nt = normalise(text, n, t, at);
	for (i = 1; i < LEAK_MIN; i++)
		top *= HASH_BASE;
	for (i = 0; i + LEAK_MIN <= nt; i++) {
		hs = i == 0 ? hash_window(t) : (hs - (unsigned char)t[i - 1] *
		    top) * HASH_BASE + (unsigned char)t[i + LEAK_MIN - 1];
		if (!in_prompt(sec, t + i, hs))
			continue;
		if (b > a && i <= b)
			b = i + LEAK_MIN;
		else {
			if (b > a)
				leak_run(text, n, t, at, a, b, use, h);
			a = i;
			b = i + LEAK_MIN;
		}
	}
	if (b > a)
		leak_run(text, n, t, at, a, b, use, h);
	if (partial) {
		t_hold = b > a && b == nt ? a : leak_tail(sec, t, nt);
		if (at[t_hold] < *hold)
			*hold = at[t_hold] < n ? art_utf8_back(text,
			    at[t_hold]) : n;
	}
	free(t);
	free(at);
}

/* The hits of every use in uses (skipping log_only ones when told). */
static void
find_all(const struct art_security *sec, const struct uses *u,
    const char *text, size_t n, bool partial, bool skip_log, struct hits *h,
    size_t *hold)
{
	const struct det *d;
	size_t i;

	for (i = 0; i < u->n; i++) {
		if (skip_log && u->v[i].sev == SEV_LOG)
			continue;
		d = &sec->dets[u->v[i].det];
		if (d->re != NULL)
			find_regex(d, i, text, n, partial, h, hold);
		else
			find_leaks(sec, i, text, n, partial, h, hold);
	}
}

/* --- what the detectors see ----------------------------------------- */

/*
 * Unicode's format characters (General Category Cf, Unicode 15.1): zero
 * width, soft hyphen, joiners, bidi controls, tags.  None shows, so a key
 * with one inside looks whole to a reader; the detectors do not see them.
 */
static const struct range {
	uint32_t	lo, hi;
} format_chars[] = {
	{ 0x00ad, 0x00ad }, { 0x0600, 0x0605 }, { 0x061c, 0x061c },
	{ 0x06dd, 0x06dd }, { 0x070f, 0x070f }, { 0x0890, 0x0891 },
	{ 0x08e2, 0x08e2 }, { 0x180e, 0x180e }, { 0x200b, 0x200f },
	{ 0x202a, 0x202e }, { 0x2060, 0x2064 }, { 0x2066, 0x206f },
	{ 0xfeff, 0xfeff }, { 0xfff9, 0xfffb }, { 0x110bd, 0x110bd },
	{ 0x110cd, 0x110cd }, { 0x13430, 0x1343f }, { 0x1bca0, 0x1bca3 },
	{ 0x1d173, 0x1d17a }, { 0xe0001, 0xe0001 }, { 0xe0020, 0xe007f },
};

/* The bytes of the format character at s[i] (of n), or 0. */
static size_t
format_at(const char *s, size_t i, size_t n)
{
	const unsigned char *u = (const unsigned char *)s + i;
	size_t k, len;
	uint32_t c;

	if (u[0] < 0xc2 || u[0] > 0xf4)
		return 0;		/* ASCII, or not a lead byte */
	len = u[0] < 0xe0 ? 2 : u[0] < 0xf0 ? 3 : 4;
	if (n - i < len)
		return 0;
	c = u[0] & (0x7f >> len);
	for (k = 1; k < len; k++) {
		if ((u[k] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (u[k] & 0x3f);
	}
	for (k = 0; k < sizeof(format_chars) / sizeof(format_chars[0]) &&
	    c >= format_chars[k].lo; k++)
		if (c <= format_chars[k].hi)
			return len;
	return 0;
}

/*
 * The text the detectors match: text itself (at NULL) when it has no
 * format character, else a copy without them, at[i] being the offset in
 * text of the copy's byte i.
 */
struct view {
	const char	*p;
	size_t		 n;
	char		*copy;
	size_t		*at;
};

static void
view_make(struct view *v, const char *text, size_t n)
{
	size_t i, k, first;

	memset(v, 0, sizeof(*v));
	v->p = text;
	v->n = n;
	/* Most text is ASCII, which holds none. */
	for (first = 0; first < n && ((unsigned char)text[first] < 0xc2 ||
	    format_at(text, first, n) == 0); first++)
		;
	if (first == n)
		return;
	if ((v->copy = malloc(n)) == NULL || (v->at = malloc(n *
	    sizeof(*v->at))) == NULL)
		abort();	/* out of memory is fatal, as in libjq */
	for (i = 0, v->n = 0; i < n; ) {
		if (i >= first && (k = format_at(text, i, n)) > 0) {
			i += k;
			continue;
		}
		v->at[v->n] = i;
		v->copy[v->n++] = text[i++];
	}
	v->p = v->copy;
}

static void
view_release(struct view *v)
{
	free(v->copy);
	free(v->at);
}

/* Where the view's byte i begins in the text (i = v->n: its end). */
static size_t
view_start(const struct view *v, size_t i, size_t n)
{
	return v->at == NULL ? i : i < v->n ? v->at[i] : n;
}

/* Where a span of the view that ends at i (> 0) ends in the text: after
 * its last byte, so format characters inside it are in it. */
static size_t
view_end(const struct view *v, size_t i)
{
	return v->at == NULL ? i : v->at[i - 1] + 1;
}

/*
 * Encoded runs.  A run is a longest stretch of base64's letters (either
 * alphabet: + / or - _) with up to two = after it.  One of RUN_B64_MIN to
 * RUN_MAX letters that is base64 as an encoder writes it (one alphabet, a
 * length that is not 1 mod 4, the unused bits 0) is decoded, and so
 * is one of RUN_HEX_MIN to RUN_MAX hex digits, even in number, after an
 * optional 0x.  What it decodes to is scanned by the secret detectors
 * only when it is text (UTF-8 with no control character but tab, CR and
 * LF): the bytes random data or a digest decode to are not, which keeps
 * their cost to the decoding.  A hit redacts the whole run.
 */
#define RUN_B64_MIN	20	/* the base64 of 15 bytes: the least key */
#define RUN_HEX_MIN	32
#define RUN_MAX		4096	/* longer runs are not decoded */

enum enc { ENC_NONE, ENC_BASE64, ENC_HEX };
static const char *const enc_names[] = { "", "base64", "hex" };

/* Each byte's value in base64, either alphabet, or -1. */
static const signed char b64_values[256] = {
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 62, -1, 62, -1, 63,
	52, 53, 54, 55, 56, 57, 58, 59, 60, 61, -1, -1, -1, -1, -1, -1,
	-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
	15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, -1, -1, -1, -1, 63,
	-1, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
	41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};

/* c's value in base64, either alphabet, or -1. */
static int
b64_value(unsigned char c)
{
	return b64_values[c];
}

static int
hex_value(unsigned char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c -
	    'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * The letters s[0..n) decoded into out (room for n bytes): the length, or
 * -1 when they are not base64 as an encoder writes it.  The = padding is
 * not asked for: one more or less hides nothing.
 */
static ssize_t
b64_decode(const char *s, size_t n, unsigned char *out)
{
	bool std = false, url = false;
	uint32_t acc = 0;
	size_t i, len = 0;

	if (n % 4 == 1)
		return -1;
	for (i = 0; i < n; i++) {
		std |= s[i] == '+' || s[i] == '/';
		url |= s[i] == '-' || s[i] == '_';
		acc = acc << 6 | (uint32_t)b64_value((unsigned char)s[i]);
		if (i % 4 == 3) {
			out[len++] = (unsigned char)(acc >> 16);
			out[len++] = (unsigned char)(acc >> 8);
			out[len++] = (unsigned char)acc;
			acc = 0;
		}
	}
	if (std && url)
		return -1;
	if (n % 4 == 2) {
		if ((acc & 0xf) != 0)
			return -1;
		out[len++] = (unsigned char)(acc >> 4);
	} else if (n % 4 == 3) {
		if ((acc & 0x3) != 0)
			return -1;
		out[len++] = (unsigned char)(acc >> 10);
		out[len++] = (unsigned char)(acc >> 2);
	}
	return (ssize_t)len;
}

/* s[0..n) as hex into out: the length, or -1 when it is not hex. */
static ssize_t
hex_decode(const char *s, size_t n, unsigned char *out)
{
	size_t i;
	int hi, lo;

	if (n % 2 != 0)
		return -1;
	for (i = 0; i < n; i += 2) {
		if ((hi = hex_value((unsigned char)s[i])) < 0 ||
		    (lo = hex_value((unsigned char)s[i + 1])) < 0)
			return -1;
		out[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	return (ssize_t)(n / 2);
}

static bool
is_text(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' &&
		    p[i] != '\r') || p[i] == 0x7f)
			return false;
	return art_utf8_valid((const char *)p, n, NULL);
}

/*
 * The secret detectors' hits in d[0..n), decoded from the run [s, e) of
 * the view: one hit on the whole run for each.
 */
static void
find_decoded(const struct art_security *sec, const struct uses *u,
    bool skip_log, const unsigned char *d, size_t n, size_t s, size_t e,
    enum enc enc, struct hits *h, struct hits *tmp)
{
	struct view dv;
	size_t i, k, hold = 0;

	if (!is_text(d, n))
		return;
	view_make(&dv, (const char *)d, n);
	for (i = 0; i < u->n; i++) {
		if ((skip_log && u->v[i].sev == SEV_LOG) ||
		    !sec->dets[u->v[i].det].secret)
			continue;
		tmp->n = 0;
		find_regex(&sec->dets[u->v[i].det], i, dv.p, dv.n, false, tmp,
		    &hold);
		for (k = 0; k < tmp->n; k++) {
			push(h, s, s, e, i);
			h->v[h->n - 1].enc = enc;
		}
	}
	view_release(&dv);
}

/* The run of letters s[0..n) (pad = signs after it), decoded both ways. */
static void
find_run(const struct art_security *sec, const struct uses *u, bool skip_log,
    const char *s, size_t n, size_t pad, size_t at, unsigned char *buf,
    struct hits *h, struct hits *tmp)
{
	ssize_t len;
	size_t x = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 2 : 0;

	if (n >= RUN_B64_MIN && (len = b64_decode(s, n, buf)) >= 0)
		find_decoded(sec, u, skip_log, buf, (size_t)len, at, at + n +
		    pad, ENC_BASE64, h, tmp);
	if (n - x >= RUN_HEX_MIN && pad == 0 && (len = hex_decode(s + x,
	    n - x, buf)) >= 0)
		find_decoded(sec, u, skip_log, buf, (size_t)len, at, at + n,
		    ENC_HEX, h, tmp);
}

/* Whether any of the uses looks inside encoded runs. */
static bool
decodes(const struct art_security *sec, const struct uses *u)
{
	size_t i;

	for (i = 0; i < u->n; i++)
		if (sec->dets[u->v[i].det].secret)
			return true;
	return false;
}

/*
 * The encoded runs of the view text[0..n), as find_regex; partial: a run
 * at the end may go on, and is left for art_security_stream to hold.
 */
static void
find_encoded(const struct art_security *sec, const struct uses *u,
    const char *text, size_t n, bool partial, bool skip_log, struct hits *h)
{
	struct hits tmp = { NULL, 0, 0 };
	unsigned char *buf = NULL;
	size_t i, j, pad;

	if (!decodes(sec, u))
		return;
	for (i = 0; i < n; ) {
		if (b64_value((unsigned char)text[i]) < 0) {
			i++;
			continue;
		}
		for (j = i; j < n && b64_value((unsigned char)text[j]) >= 0;
		    j++)
			;
		for (pad = 0; pad < 2 && j + pad < n && text[j + pad] == '=';
		    pad++)
			;
		if (j - i >= RUN_B64_MIN && j - i <= RUN_MAX && (!partial ||
		    j + pad < n || pad == 2)) {
			if (buf == NULL && (buf = malloc(RUN_MAX)) == NULL)
				abort();
			find_run(sec, u, skip_log, text + i, j - i, pad, i, buf,
			    h, &tmp);
		}
		i = j + pad;
	}
	free(buf);
	free(tmp.v);
}

/*
 * Every hit of the uses in text[0..n), as find_all, but matched in the
 * text's view and in its encoded runs, and mapped back to the text.
 */
static void
find_text(const struct art_security *sec, const struct uses *u,
    const char *text, size_t n, bool partial, bool skip_log, struct hits *h,
    size_t *hold)
{
	struct view v;
	size_t i, vhold = n;

	view_make(&v, text, n);
	if (v.at != NULL)
		vhold = v.n;
	find_all(sec, u, v.p, v.n, partial, skip_log, h, &vhold);
	find_encoded(sec, u, v.p, v.n, partial, skip_log, h);
	if (v.at != NULL)
		for (i = 0; i < h->n; i++) {
			h->v[i].b = view_start(&v, h->v[i].b, n);
			h->v[i].s = view_start(&v, h->v[i].s, n);
			h->v[i].e = view_end(&v, h->v[i].e);
		}
	vhold = view_start(&v, vhold, n);
	if (vhold < *hold)
		*hold = vhold;
	view_release(&v);
}

static int
by_start(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->use != y->use)
		return x->use < y->use ? -1 : 1;
	return x->e < y->e ? -1 : x->e > y->e;
}

/*
 * text[0..upto) with the redact hits (sorted by start) that end by upto
 * replaced, a span of overlapping or touching ones at a time.
 */
static jv
redact(const struct art_security *sec, const struct uses *u,
    const char *text, size_t upto, const struct hits *h)
{
	struct art_buf b = ART_BUF_INIT;
	size_t i, pos = 0, s = 0, e = 0;
	const char *id = NULL;
	int enc = ENC_NONE;
	jv out;

	for (i = 0; i <= h->n; i++) {
		const struct hit *x = i < h->n ? &h->v[i] : NULL;

		if (x != NULL && (u->v[x->use].sev != SEV_REDACT || x->e > upto))
			continue;
		if (x != NULL && id != NULL && x->s <= e) {
			if (x->e > e)
				e = x->e;
			continue;
		}
		if (id != NULL && (art_buf_add(&b, text + pos, s - pos) == -1 ||
		    art_buf_addstr(&b, "[redacted:") == -1 ||
		    art_buf_addstr(&b, id) == -1 || (enc != ENC_NONE &&
		    (art_buf_addc(&b, '(') == -1 || art_buf_addstr(&b,
		    enc_names[enc]) == -1 || art_buf_addc(&b, ')') == -1)) ||
		    art_buf_addc(&b, ']') == -1))
			abort();
		if (id != NULL)
			pos = e;
		if (x != NULL) {
			id = sec->dets[u->v[x->use].det].id;
			enc = x->enc;
			s = x->s;
			e = x->e;
		}
	}
	if (art_buf_add(&b, text + pos, upto - pos) == -1)
		abort();
	out = jv_string_sized(b.p != NULL ? b.p : "", (int)b.len);
	art_buf_release(&b);
	return out;
}

static bool
has_sev(const struct uses *u, const struct hits *h, enum sev sev)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		if (u->v[h->v[i].use].sev == sev)
			return true;
	return false;
}

/* --- scanning values ------------------------------------------------ */

/* A use's hits over a whole value. */
struct tally {
	size_t	count;
	size_t	encoded;	/* of count, found in an encoded run */
	size_t	str, off;	/* the first: which string, where */
};

struct scan {
	const struct art_security	*sec;
	const struct uses		*u;
	struct tally			*t;
	struct hits			 h;
	size_t				 nstr;
};

static jv
scan_string(struct scan *sc, jv s, bool *changed)
{
	const char *text = jv_string_value(s);
	size_t n = (size_t)jv_string_length_bytes(jv_copy(s)), i, hold = n;
	struct tally *t;
	jv out;

	sc->h.n = 0;
	find_text(sc->sec, sc->u, text, n, false, false, &sc->h, &hold);
	/* A use's hits come in order, but those in encoded runs after. */
	for (i = 0; i < sc->h.n; i++) {
		t = &sc->t[sc->h.v[i].use];
		t->encoded += sc->h.v[i].enc != ENC_NONE;
		if (t->count++ == 0 || (t->str == sc->nstr &&
		    sc->h.v[i].s < t->off)) {
			t->str = sc->nstr;
			t->off = sc->h.v[i].s;
		}
	}
	sc->nstr++;
	if (!has_sev(sc->u, &sc->h, SEV_REDACT))
		return s;
	if (sc->h.n > 0)
		qsort(sc->h.v, sc->h.n, sizeof(*sc->h.v), by_start);
	out = redact(sc->sec, sc->u, text, n, &sc->h);
	jv_free(s);
	*changed = true;
	return out;
}

static jv
scan_value(struct scan *sc, jv v, bool *changed)
{
	bool sub;
	jv x, keys;

	switch (jv_get_kind(v)) {
	case JV_KIND_STRING:
		return scan_string(sc, v, changed);
	case JV_KIND_ARRAY:
		jv_array_foreach(v, i, e) {
			sub = false;
			x = scan_value(sc, e, &sub);
			if (sub) {
				v = jv_array_set(v, i, x);
				*changed = true;
			} else
				jv_free(x);
		}
		return v;
	case JV_KIND_OBJECT:
		keys = jv_keys_unsorted(jv_copy(v));
		jv_array_foreach(keys, i, k) {
			sub = false;
			x = scan_value(sc, jv_object_get(jv_copy(v),
			    jv_copy(k)), &sub);
			if (sub) {
				v = jv_object_set(v, k, x);
				*changed = true;
			} else {
				jv_free(k);
				jv_free(x);
			}
		}
		jv_free(keys);
		return v;
	default:
		return v;
	}
}

static jv
event(const struct det *d, enum sev sev, enum art_sec_scope scope,
    const char *where, const struct tally *t)
{
	char detail[256], enc[32] = "";
	jv ev = jv_object();

	if (t->encoded > 0)
		snprintf(enc, sizeof(enc), ", %zu encoded", t->encoded);
	snprintf(detail, sizeof(detail), "%s in %s (%zu match%s%s)", d->what,
	    where != NULL ? where : "text", t->count, t->count == 1 ? "" :
	    "es", enc);
	ev = art_json_set(ev, "type", jv_string("security"));
	ev = art_json_set(ev, "violation_code", jv_string(d->code));
	ev = art_json_set(ev, "severity", jv_string(sev_names[sev]));
	ev = art_json_set(ev, "pattern_id", jv_string(d->id));
	ev = art_json_set(ev, "scope", jv_string(scope_names[scope]));
	return art_json_set(ev, "detail", jv_string(detail));
}

/* The uses that hit, in order of their first hit. */
static jv
events(const struct scan *sc, enum art_sec_scope scope, const char *where,
    int *blocked, const char **block_id)
{
	const struct tally *t = sc->t, *best;
	size_t i, left = 0, pick;
	char *done;
	jv out = jv_array();

	for (i = 0; i < sc->u->n; i++)
		left += t[i].count > 0;
	if ((done = calloc(sc->u->n + 1, 1)) == NULL)
		abort();
	for (; left > 0; left--) {
		best = NULL;
		pick = 0;
		for (i = 0; i < sc->u->n; i++)
			if (t[i].count > 0 && !done[i] && (best == NULL ||
			    t[i].str < best->str || (t[i].str == best->str &&
			    t[i].off < best->off))) {
				best = &t[i];
				pick = i;
			}
		done[pick] = 1;
		if (sc->u->v[pick].sev == SEV_BLOCK && !*blocked) {
			*blocked = 1;
			*block_id = sc->sec->dets[sc->u->v[pick].det].id;
		}
		out = jv_array_append(out, event(&sc->sec->dets[
		    sc->u->v[pick].det], sc->u->v[pick].sev, scope, where,
		    best));
	}
	free(done);
	return out;
}

jv
art_security_scan(const struct art_security *sec, enum art_sec_scope scope,
    jv value, const char *where, jv *hits, int *blocked,
    const char **block_id)
{
	struct scan sc = { sec, NULL, NULL, { NULL, 0, 0 }, 0 };
	bool changed = false;

	*blocked = 0;
	*block_id = NULL;
	if (sec == NULL || sec->scopes[scope].n == 0) {
		*hits = jv_array();
		return value;
	}
	sc.u = &sec->scopes[scope];
	if ((sc.t = calloc(sc.u->n, sizeof(*sc.t))) == NULL)
		abort();
	value = scan_value(&sc, value, &changed);
	*hits = events(&sc, scope, where, blocked, block_id);
	free(sc.t);
	free(sc.h.v);
	return value;
}

/* --- streams -------------------------------------------------------- */

/*
 * Moves cut back to the start of any redaction it would split, and with
 * touch, of one that ends at it (the rest may begin with a match that
 * joins it, and the two make one replacement): to where what the match
 * depends on begins, so the rest matches again (bearer_token's \K drops
 * the "Authorization: Bearer" its token is found by).
 */
static size_t
settle(const struct uses *u, const struct hits *h, size_t cut, bool touch)
{
	bool moved = true;
	size_t i;

	while (moved) {
		moved = false;
		for (i = 0; i < h->n; i++)
			if (u->v[h->v[i].use].sev == SEV_REDACT &&
			    h->v[i].b < cut && (h->v[i].e > cut ||
			    (touch && h->v[i].e == cut))) {
				cut = h->v[i].b;
				moved = true;
			}
	}
	return cut;
}

/*
 * Whether a stream cut at cut of text[0..n) (more: the text goes on) is
 * inside an encoded run, format characters in it seen through: then *rs
 * is where the run begins and *letters how many it has, *after of them
 * after the cut.
 */
static bool
in_run(const char *text, size_t n, size_t cut, bool more, size_t *rs,
    size_t *letters, size_t *after)
{
	size_t p = cut, q, pads = 0, k;

	*letters = *after = 0;
	while (p > 0) {
		q = art_utf8_back(text, p - 1);
		if (format_at(text, q, n) > 0)
			p = q;
		else if (text[p - 1] == '=' && *letters == 0 && pads < 2) {
			pads++;
			p--;
		} else if (b64_value((unsigned char)text[p - 1]) >= 0) {
			++*letters;
			p--;
		} else
			break;
	}
	if (*letters == 0)
		return false;
	*rs = p;
	for (q = cut; q < n; q += k) {
		if ((k = format_at(text, q, n)) > 0)
			continue;
		k = 1;
		if (text[q] == '=' && pads < 2)
			pads++;
		else if (pads == 0 && b64_value((unsigned char)text[q]) >= 0)
			++*after;
		else
			break;
	}
	*letters += *after;
	return q > cut || (q == n && more && pads < 2);
}

/*
 * cut, or earlier, so that the rest sees each encoded run as the whole
 * text does: not a run cut short, which could decode where the whole one
 * does not, nor the end of one too long to decode that would be short
 * enough.
 */
static size_t
run_cut(const char *text, size_t n, size_t cut, bool more)
{
	size_t rs, letters, after;

	if (!in_run(text, n, cut, more, &rs, &letters, &after))
		return cut;
	if (letters <= RUN_MAX)
		return rs;
	while (after <= RUN_MAX && cut > rs) {
		cut = art_utf8_back(text, cut - 1);
		after += b64_value((unsigned char)text[cut]) >= 0;
	}
	return cut;
}

jv
art_security_stream(const struct art_security *sec, enum art_sec_scope scope,
    const char *pending, size_t n, int final, jv *show, int *blocked)
{
	const struct uses *u = sec != NULL ? &sec->scopes[scope] : NULL;
	struct hits h = { NULL, 0, 0 };
	size_t whole = final ? n : art_utf8_whole(pending, n), keep = whole, i,
	    cut = SIZE_MAX;
	jv rest;

	*blocked = 0;
	if (u != NULL && u->n > 0)
		find_text(sec, u, pending, whole, !final, true, &h, &keep);
	for (i = 0; i < h.n; i++)
		if (u->v[h.v[i].use].sev == SEV_BLOCK && h.v[i].s < cut)
			cut = h.v[i].s;
	if (h.n > 0)
		qsort(h.v, h.n, sizeof(*h.v), by_start);
	if (cut != SIZE_MAX) {
		*blocked = 1;
		cut = settle(u, &h, cut < keep ? cut : keep, false);
		*show = redact(sec, u, pending, cut, &h);
		free(h.v);
		return jv_string("");
	}
	keep = settle(u, &h, keep, keep < n);
	if (u != NULL && decodes(sec, u))
		while ((cut = run_cut(pending, whole, keep, !final)) != keep)
			keep = settle(u, &h, cut, keep < n);
	*show = u != NULL ? redact(sec, u, pending, keep, &h) :
	    jv_string_sized(pending, (int)keep);
	rest = jv_string_sized(pending + keep, (int)(n - keep));
	free(h.v);
	return rest;
}
