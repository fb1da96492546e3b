/* utf8-test - UTF-8 checked, and cut only between characters */
#include "utf8.h"

#include <string.h>

#include "tap.h"

/* Is s (NUL-terminated) valid, and if not, where does it go bad? */
static int
bad_at(const char *s)
{
	size_t bad = (size_t)-1;

	return art_utf8_valid(s, strlen(s), &bad) ? -1 : (int)bad;
}

static void
test_valid(void)
{
	ok(bad_at("") == -1 && bad_at("plain ascii") == -1,
	    "ASCII is valid");
	ok(bad_at("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == -1,
	    "two-, three- and four-byte characters are valid");
	ok(art_utf8_valid("a\0b", 3, NULL), "a NUL byte is valid UTF-8");
	ok(bad_at("ab\xc3") == 2, "a character cut short is bad where it "
	    "starts");
	ok(bad_at("a\x80") == 1, "a lone continuation byte is bad");
	ok(bad_at("\xc0\xaf") == 0 && bad_at("\xe0\x80\xaf") == 0 &&
	    bad_at("\xf0\x80\x80\xaf") == 0, "overlong forms are bad");
	ok(bad_at("x\xed\xa0\x80") == 1, "a surrogate is bad");
	ok(bad_at("\xf4\x90\x80\x80") == 0 && bad_at("\xf5\x80\x80\x80") == 0,
	    "code points past U+10FFFF are bad");
	ok(bad_at("\xf4\x8f\xbf\xbf") == -1 && bad_at("\xed\x9f\xbf") == -1,
	    "U+10FFFF and U+D7FF are valid");
	ok(bad_at("\xe2\x82x") == 0, "a continuation that is not one is bad");
}

static void
test_cuts(void)
{
	const char *s = "a\xe2\x82\xac" "b";	/* a € b: 5 bytes */
	const char *e = "\xf0\x9f\x98\x80";	/* 😀 */

	ok(art_utf8_whole(s, 5) == 5 && art_utf8_whole(s, 4) == 4,
	    "a cut after a whole character keeps it");
	ok(art_utf8_whole(s, 3) == 1 && art_utf8_whole(s, 2) == 1,
	    "a cut inside the euro sign leaves it out");
	ok(art_utf8_whole(e, 3) == 0 && art_utf8_whole(e, 4) == 4,
	    "a four-byte character cut at 3 goes, whole it stays");
	ok(art_utf8_whole("\x80\x80", 2) == 2, "bytes that are not UTF-8 stay");
	ok(art_utf8_back(s, 4) == 4 && art_utf8_back(s, 3) == 1 &&
	    art_utf8_back(s, 2) == 1 && art_utf8_back(s, 1) == 1,
	    "back moves a cut to the start of its character");
	ok(art_utf8_fwd(s, 2, 5) == 4 && art_utf8_fwd(s, 1, 5) == 1 &&
	    art_utf8_fwd(s, 3, 5) == 4 && art_utf8_fwd(s, 5, 5) == 5,
	    "fwd moves a start past the rest of a character");
	ok(art_utf8_fwd(e, 1, 2) == 2, "fwd stops at the end");
}

int
main(void)
{
	test_valid();
	test_cuts();
	return tap_done();
}
