/* base64-test - RFC 4648's vectors, and every way a text is no base64 */
#include "base64.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

/* s decoded, or NULL when it is refused; in a buffer freed next call. */
static const char *
dec(const char *s)
{
	static struct art_buf b;

	art_buf_release(&b);
	if (art_base64_decode(s, strlen(s), &b) == -1)
		return NULL;
	return b.p != NULL ? b.p : "";
}

static void
test_vectors(void)
{
	/* RFC 4648 §10. */
	static const char *const v[][2] = {
		{ "", "" }, { "Zg==", "f" }, { "Zm8=", "fo" },
		{ "Zm9v", "foo" }, { "Zm9vYg==", "foob" },
		{ "Zm9vYmE=", "fooba" }, { "Zm9vYmFy", "foobar" },
	};
	size_t i;
	int good = 1;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		good &= dec(v[i][0]) != NULL && strcmp(dec(v[i][0]),
		    v[i][1]) == 0;
	ok(good, "RFC 4648's test vectors");
	ok(dec("Zg") != NULL && strcmp(dec("Zg"), "f") == 0 &&
	    strcmp(dec("Zm8"), "fo") == 0, "padding may be left out");
	ok(dec("+/+/") != NULL && memcmp(dec("+/+/"), "\xfb\xff\xbf", 3) == 0,
	    "+ and / are 62 and 63");
}

static void
test_refused(void)
{
	static const char *const bad[] = {
		"Z", "Zg=", "Zg===", "Z===", "Zm9v\n", "Zm 9v", "-_-_",
		"Zh==", "Zm9=", "Zg==Zg==", "Zm9vY", "=", "Zm9v!",
	};
	struct art_buf b = ART_BUF_INIT;
	size_t i;
	int refused = 1;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		refused &= dec(bad[i]) == NULL && errno == EINVAL;
		if (dec(bad[i]) != NULL)
			printf("# taken: '%s'\n", bad[i]);
	}
	ok(refused, "a lone letter, wrong padding, white space, URL-safe "
	    "letters, bits left over, padding inside: refused, EINVAL");
	art_buf_addstr(&b, "kept");
	ok(art_base64_decode("Zm9v", 4, &b) == 0 && b.len == 7 &&
	    strcmp(b.p, "keptfoo") == 0, "decoded bytes are appended");
	ok(art_base64_decode("Zm9v!", 5, &b) == -1 && b.len == 7 &&
	    strcmp(b.p, "keptfoo") == 0, "a refusal leaves the buffer as it was");
	ok(art_base64_decode("AAEC", 4, &b) == 0 && b.len == 10 &&
	    memcmp(b.p + 7, "\0\1\2", 3) == 0, "NUL bytes decode like any");
	art_buf_release(&b);
	dec("");
}

int
main(void)
{
	test_vectors();
	test_refused();
	return tap_done();
}
