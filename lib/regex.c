/* regex.c - regular expressions as JSON Schema and JavaScript write them
 *
 * One PCRE2 code object per expression, JIT-compiled for complete and for
 * hard partial matching when the JIT is there (pcre2_match() picks the
 * JIT code by itself, or interprets when there is none), and one match
 * data block of a single pair, since callers only ask where the whole
 * match is.  PCRE2_MATCH_INVALID_UTF lets the subject hold any bytes:
 * PCRE2 then never matches across a bad sequence instead of refusing the
 * subject, so nothing needs checking first.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include "regex.h"

#include <stdlib.h>

#include <pcre2.h>

#include "config.h"
#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND	0
#endif

#include "utf8.h"

struct art_regex {
	pcre2_code		*code;
	pcre2_match_data	*md;
	uint32_t		 match_opts;	/* PCRE2_NOTEMPTY or 0 */
};

/* JavaScript's reading of the ways the two syntaxes differ (regex.h). */
#define JS_OPTIONS	(PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | \
	PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX | PCRE2_ALLOW_EMPTY_CLASS)

int
art_regex_new(const char *pattern, size_t len, int flags,
    struct art_regex **out, struct art_err *err)
{
	struct art_regex *re;
	PCRE2_UCHAR why[160];
	PCRE2_SIZE at;
	uint32_t opts = JS_OPTIONS;
	int code;

	*out = NULL;
	if (flags & ART_REGEX_CASELESS)
		opts |= PCRE2_CASELESS;
	if (flags & ART_REGEX_MULTILINE)
		opts |= PCRE2_MULTILINE;
	if ((re = calloc(1, sizeof(*re))) == NULL)
		return art_err_set(err, "nomem", "compile a regular expression");
	re->match_opts = flags & ART_REGEX_NOTEMPTY ? PCRE2_NOTEMPTY : 0;
	re->code = pcre2_compile((PCRE2_SPTR)pattern, len, opts, &code, &at,
	    NULL);
	if (re->code == NULL) {
		free(re);
		if (pcre2_get_error_message(code, why, sizeof(why)) < 0)
			return art_err_set(err, "bad_regex", "at offset %zu: "
			    "error %d", (size_t)at, code);
		return art_err_set(err, "bad_regex", "at offset %zu: %s",
		    (size_t)at, (const char *)why);
	}
	/* A JIT that fails (no JIT here, no executable memory) is no error:
	 * pcre2_match() interprets instead.  Under valgrind it interprets
	 * too: JIT code reads a vector past the subject's end, within its
	 * page and harmlessly, which memcheck reports as an error. */
	if (!(flags & ART_REGEX_NOJIT) && !RUNNING_ON_VALGRIND)
		(void)pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE |
		    PCRE2_JIT_PARTIAL_HARD);
	if ((re->md = pcre2_match_data_create(1, NULL)) == NULL) {
		art_regex_free(re);
		return art_err_set(err, "nomem", "compile a regular expression");
	}
	*out = re;
	return 0;
}

void
art_regex_free(struct art_regex *re)
{
	if (re == NULL)
		return;
	pcre2_match_data_free(re->md);
	pcre2_code_free(re->code);
	free(re);
}

static int
search(struct art_regex *re, const char *s, size_t n, size_t from,
    uint32_t opts, size_t *start, size_t *end)
{
	PCRE2_SIZE *ov;
	int rc;

	if (from > n)
		return ART_REGEX_NOMATCH;
	from = art_utf8_fwd(s, from, n);
	rc = pcre2_match(re->code, (PCRE2_SPTR)(s == NULL ? "" : s), n, from,
	    opts | re->match_opts, re->md, NULL);
	if (rc == PCRE2_ERROR_NOMATCH)
		return ART_REGEX_NOMATCH;
	if (rc < 0 && rc != PCRE2_ERROR_PARTIAL)
		return ART_REGEX_ERROR;
	ov = pcre2_get_ovector_pointer(re->md);
	*start = ov[0];
	*end = ov[1];
	/* \K can put the reported start after the end; PCRE2 refuses it
	 * only in lookarounds. */
	if (*start > *end)
		*start = *end;
	return rc == PCRE2_ERROR_PARTIAL ? ART_REGEX_PARTIAL : ART_REGEX_MATCH;
}

size_t
art_regex_began(const struct art_regex *re)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(re->md);
	PCRE2_SIZE at = pcre2_get_startchar(re->md);

	return at < ov[0] ? at : ov[0];
}

int
art_regex_search(struct art_regex *re, const char *s, size_t n, size_t from,
    size_t *start, size_t *end)
{
	return search(re, s, n, from, 0, start, end);
}

int
art_regex_search_partial(struct art_regex *re, const char *s, size_t n,
    size_t from, size_t *start, size_t *end)
{
	return search(re, s, n, from, PCRE2_PARTIAL_HARD, start, end);
}
