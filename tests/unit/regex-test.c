/* regex-test - JavaScript-style patterns, UTF-8 subjects, partial matches */
#include "regex.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"

static struct art_regex *
compile(const char *pat, int flags)
{
	struct art_regex *re;
	struct art_err err;

	if (art_regex_new(pat, strlen(pat), flags, &re, &err) == -1) {
		printf("# %s: %s: %s\n", pat, err.code, err.msg);
		return NULL;
	}
	return re;
}

/*
 * The first match of pat in s at or after from, as "start-end", "none",
 * "partial@start" (partial set) or "error"; "bad" when pat does not
 * compile.
 */
static const char *
find(const char *pat, int flags, const char *s, size_t from, int partial)
{
	static char buf[64];
	struct art_regex *re = compile(pat, flags);
	size_t a = 0, b = 0;
	int rc;

	if (re == NULL)
		return "bad";
	rc = partial ? art_regex_search_partial(re, s, strlen(s), from, &a, &b) :
	    art_regex_search(re, s, strlen(s), from, &a, &b);
	art_regex_free(re);
	if (rc == ART_REGEX_MATCH)
		snprintf(buf, sizeof(buf), "%zu-%zu", a, b);
	else if (rc == ART_REGEX_PARTIAL)
		snprintf(buf, sizeof(buf), "partial@%zu", a);
	else
		snprintf(buf, sizeof(buf), "%s", rc == ART_REGEX_NOMATCH ?
		    "none" : "error");
	return buf;
}

static int
is(const char *got, const char *want)
{
	if (strcmp(got, want) != 0)
		printf("#   got %s, want %s\n", got, want);
	return strcmp(got, want) == 0;
}

static void
test_javascript_syntax(void)
{
	ok(is(find("^\\d{3}$", 0, "123", 0, 0), "0-3"), "\\d is a digit");
	ok(is(find("^\\d{3}$", 0, "ddd", 0, 0), "none"), "\\d is not a d");
	ok(is(find("\\s+", 0, "a \t\nb", 0, 0), "1-4"), "\\s is white space");
	ok(is(find("\\bcat\\b", 0, "concat cat", 0, 0), "7-10"),
	    "\\b is a word boundary");
	ok(is(find("<.*?>", 0, "<a><b>", 0, 0), "0-3"), "*? is lazy");
	ok(is(find("<.*>", 0, "<a><b>", 0, 0), "0-6"), "* is greedy");
	ok(is(find("(?:ab)+c", 0, "xababc", 0, 0), "1-6"),
	    "(?:...) groups without capturing");
	ok(is(find("(?<y>\\d{4})-(?=\\d)", 0, "in 2024-01", 0, 0), "3-8"),
	    "named groups and lookahead");
	ok(is(find("^a$", 0, "a\n", 0, 0), "none"),
	    "$ is the very end, as in JavaScript, not before a final newline");
	ok(is(find("^b$", ART_REGEX_MULTILINE, "a\nb\nc", 0, 0), "2-3"),
	    "with MULTILINE ^ and $ are line starts and ends");
	ok(is(find("\\u0041\\x42", 0, "xAB", 0, 0), "1-3"),
	    "\\uhhhh and \\xhh are JavaScript's escapes");
	ok(is(find("a[^]b", 0, "a\nb", 0, 0), "0-3"), "[^] is any character");
	ok(is(find("HELLO", ART_REGEX_CASELESS, "say hello", 0, 0), "4-9"),
	    "CASELESS ignores case");
	ok(is(find("(?i)hello", 0, "HeLLo", 0, 0), "0-5"),
	    "inline flags work");
	ok(is(find("\\/path\\-x", 0, "a/path-x", 0, 0), "1-8"),
	    "escaped punctuation is literal");
}

static void
test_utf8_subjects(void)
{
	/* "é" is 2 bytes, "€" 3, "😀" 4. */
	ok(is(find("^.$", 0, "\xc3\xa9", 0, 0), "0-2"),
	    ". is one character, not one byte");
	ok(is(find("x", 0, "\xe2\x82\xacx\xf0\x9f\x98\x80", 0, 0), "3-4"),
	    "offsets are bytes");
	ok(is(find("caf\xc3\xa9", ART_REGEX_CASELESS, "CAF\xc3\x89", 0, 0),
	    "0-5"), "CASELESS folds non-ASCII letters too");
	ok(is(find("b", 0, "a\xff\xfe" "b", 0, 0), "3-4"),
	    "a subject with bad bytes is still searched");
	ok(is(find("a.b", 0, "a\xff" "b", 0, 0), "none"),
	    ". never matches a bad byte");
	ok(is(find("\\d", 0, "\xc3\xa9" "5", 1, 0), "2-3"),
	    "a search from inside a character starts at the next one");
	ok(is(find("\\d", 0, "\xd9\xa3", 0, 0), "none"),
	    "\\d is ASCII only, as in JavaScript (not Arabic-Indic three)");
}

static void
test_offsets(void)
{
	ok(is(find("ab", 0, "abxab", 1, 0), "3-5"),
	    "a search from an offset skips what is before it");
	ok(is(find("\\bb", 0, "ab b", 1, 0), "3-4"),
	    "\\b still sees the byte before the offset");
	ok(is(find("(?<=a)b", 0, "ab", 1, 0), "1-2"),
	    "lookbehind still sees the bytes before the offset");
	ok(is(find("a", 0, "a", 2, 0), "none"), "an offset past the end");
	ok(is(find("x*", 0, "abx", 0, 0), "0-0"), "empty matches are found");
	ok(is(find("x*", ART_REGEX_NOTEMPTY, "abx", 0, 0), "2-3"),
	    "unless NOTEMPTY is asked for");
	ok(is(find("Authorization: Bearer \\K\\w+", 0,
	    "Authorization: Bearer abc def", 0, 0), "22-25"),
	    "\\K moves the start");
}

static void
test_partial(void)
{
	const char *key = "sk-[A-Za-z0-9]{10,}";

	ok(is(find(key, 0, "text sk-abc", 0, 1), "partial@5"),
	    "the start of a key at the end is a partial match");
	ok(is(find(key, 0, "text s", 0, 1), "partial@5"),
	    "so is its first letter");
	ok(is(find(key, 0, "text sk-abcdefghijkl", 0, 1), "partial@5"),
	    "a match that reaches the end may go on: partial");
	ok(is(find(key, 0, "text sk-abcdefghijkl, more", 0, 1), "5-20"),
	    "a match that cannot go on is a match");
	ok(is(find(key, 0, "text sk-abcdefghijkl", 0, 0), "5-20"),
	    "the complete search takes it as it is");
	ok(is(find(key, 0, "sk-abcdefghijkl sk-x", 0, 1), "0-15"),
	    "an earlier match comes before a later partial one");
	ok(is(find(key, 0, "nothing here.", 0, 1), "none"),
	    "text that cannot begin a match is no match");
	ok(is(find("ab|b{3}", 0, "xab", 0, 1), "1-3"),
	    "a whole match that cannot be extended is a match");
}

static void
test_bad_patterns(void)
{
	struct art_regex *re = NULL;
	struct art_err err = { NULL, "" };

	ok(art_regex_new("a(b", 3, 0, &re, &err) == -1 && re == NULL &&
	    art_err_is(&err, "bad_regex") &&
	    strncmp(err.msg, "at offset 3: ", 13) == 0 &&
	    strstr(err.msg, "missing closing parenthesis") != NULL,
	    "an unclosed group: bad_regex, the offset and why (%s)", err.msg);
	ok(art_regex_new("[z-a]", 5, 0, &re, &err) == -1 &&
	    strncmp(err.msg, "at offset ", 10) == 0,
	    "a reversed range (%s)", err.msg);
	ok(art_regex_new("a{2,1}", 6, 0, &re, &err) == -1,
	    "a reversed count (%s)", err.msg);
	ok(art_regex_new("\xff", 1, 0, &re, &err) == -1,
	    "a pattern that is not UTF-8 (%s)", err.msg);
	ok(art_regex_new("a\0b", 3, 0, &re, &err) == 0, "a NUL in a pattern");
	art_regex_free(re);
	art_regex_free(NULL);
}

static void
test_reuse(void)
{
	struct art_regex *re = compile("\\d+", 0);
	const char *s = "a1 b22 c333";
	size_t from = 0, a, b, got = 0;

	while (re != NULL && art_regex_search(re, s, strlen(s), from, &a,
	    &b) == ART_REGEX_MATCH) {
		got = got * 10 + (b - a);
		from = b;
	}
	ok(got == 123, "one compiled expression, searched again and again");
	art_regex_free(re);
}

int
main(void)
{
	test_javascript_syntax();
	test_utf8_subjects();
	test_offsets();
	test_partial();
	test_bad_patterns();
	test_reuse();
	return tap_done();
}
