/* err-test - failures as a code and one line */
#include <string.h>

#include "err.h"
#include "tap.h"

static void
test_set_fills_code_and_message_and_returns_minus_one(void)
{
	struct art_err err;

	ok(art_err_set(&err, "store", "open store '%s': %s", "d", "denied") ==
	    -1, "art_err_set returns -1");
	ok(strcmp(err.code, "store") == 0 &&
	    strcmp(err.msg, "open store 'd': denied") == 0, "code and message");
	ok(art_err_is(&err, "store") && !art_err_is(&err, "io"), "art_err_is");
	ok(art_err_set(NULL, "x", "y") == -1, "a NULL err is allowed");
}

static void
test_long_messages_are_cut_not_overrun(void)
{
	struct art_err err;
	char big[1000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	art_err_set(&err, "x", "%s", big);
	ok(strlen(err.msg) == sizeof(err.msg) - 1, "cut at %zu bytes",
	    sizeof(err.msg) - 1);
	art_err_prefix(&err, "what");
	ok(strncmp(err.msg, "what: xxx", 9) == 0 &&
	    strlen(err.msg) == sizeof(err.msg) - 1, "a prefix on a full "
	    "message keeps the prefix and the length");
}

static void
test_prefix_and_clear(void)
{
	struct art_err err;

	art_err_set(&err, "bad_json", "not valid JSON");
	ok(art_err_prefix(&err, "line %d", 3) == -1 &&
	    strcmp(err.msg, "line 3: not valid JSON") == 0 &&
	    art_err_is(&err, "bad_json"), "the prefix goes first, code kept");
	art_err_clear(&err);
	ok(err.code == NULL && err.msg[0] == '\0' && !art_err_is(&err, "x"),
	    "clear empties it");
}

int
main(void)
{
	test_set_fills_code_and_message_and_returns_minus_one();
	test_long_messages_are_cut_not_overrun();
	test_prefix_and_clear();
	return tap_done();
}
