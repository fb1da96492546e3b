/* parts-test - ContentPart[] told from plain results, read and capped */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "parts.h"
#include "tap.h"

static jv
j(const char *s)
{
	return art_json_parse_str(s, NULL);
}

static bool
is(const char *s)
{
	jv v = j(s);
	bool r = art_parts_is(&v);

	jv_free(v);
	return r;
}

/* Is the text of parts (given as JSON) want? */
static int
text_is(const char *parts, const char *want)
{
	jv p = j(parts), t = art_parts_text(&p);
	int r = strcmp(jv_string_value(t), want) == 0;

	if (!r)
		printf("# got '%s'\n", jv_string_value(t));
	jv_free(t);
	jv_free(p);
	return r;
}

#define IMG	"{\"type\":\"image_url\",\"image_url\":{\"url\":" \
		"\"data:image/png;base64,AAAAAAAA\"}}"

static void
test_only_parts_with_an_image_are_parts(void)
{
	ok(is("[{\"type\":\"text\",\"text\":\"a\"}," IMG "]"),
	    "text and an image are parts");
	ok(is("[" IMG "]"), "an image alone is parts");
	ok(!is("[{\"type\":\"text\",\"text\":\"a\"}]"),
	    "text parts alone stay a plain result");
	ok(!is("\"a string\""), "a string is not parts");
	ok(!is("[" IMG ",1]"), "an array with a number is not parts");
	ok(!is("[" IMG ",{\"type\":\"text\"}]"),
	    "a text part without text is not parts");
	ok(!is("[{\"type\":\"image_url\",\"image_url\":{}}]"),
	    "an image without a url is not parts");
}

static void
test_text_names_each_image(void)
{
	ok(text_is("[{\"type\":\"text\",\"text\":\"see\"}," IMG "]",
	    "see\n[image image/png, 6 bytes]"), "text, then the image noted");
	ok(text_is("[{\"type\":\"image_url\",\"image_url\":{\"url\":"
	    "\"https://x.example/a.png\"}}]",
	    "[image https://x.example/a.png]"), "a remote image by its URL");
}

static void
test_texts_go_out_and_back(void)
{
	jv p = j("[{\"type\":\"text\",\"text\":\"a\"}," IMG ","
	    "{\"type\":\"text\",\"text\":\"b\"}]");
	jv t = art_parts_texts(&p), want = j("[\"a\",\"b\"]");

	ok(jv_equal(jv_copy(t), want), "the texts, in order");
	jv_free(t);
	p = art_parts_set_texts(p, j("[\"A\",\"B\"]"));
	t = art_parts_text(&p);
	ok(strcmp(jv_string_value(t), "A\n[image image/png, 6 bytes]\nB") ==
	    0, "texts put back in place, the image untouched");
	jv_free(t);
	jv_free(p);
}

static void
test_cap_keeps_what_fits_and_says_what_not(void)
{
	jv p = j("[{\"type\":\"text\",\"text\":\"hello\"}," IMG "]"), q, t;

	q = art_parts_cap(jv_copy(p), 1000, "limit");
	ok(jv_equal(jv_copy(q), jv_copy(p)), "parts that fit are as they were");
	jv_free(q);
	q = art_parts_cap(jv_copy(p), 10, "limit 10");
	t = art_parts_text(&q);
	ok(strcmp(jv_string_value(t), "hello\n[image image/png, 6 bytes cut "
	    "by limit 10]") == 0, "an image over the limit becomes a note");
	ok(!art_parts_is(&q), "and no image is left");
	jv_free(t);
	jv_free(q);
	q = art_parts_cap(p, 3, "limit 3");
	t = art_parts_text(&q);
	ok(strncmp(jv_string_value(t), "hel\n[truncated: 2 of 5 bytes cut by "
	    "limit 3]", 41) == 0, "a text over the limit is cut, saying so");
	jv_free(t);
	jv_free(q);
}

static bool
has_image(const char *msg)
{
	jv v = j(msg);
	bool r = art_parts_has_image(&v);

	jv_free(v);
	return r;
}

static void
test_a_message_holds_an_image(void)
{
	ok(has_image("{\"role\":\"tool\",\"content\":[\"bare\",{\"type\":"
	    "\"file\"}," IMG "]}"), "an image among other parts is seen");
	ok(!has_image("{\"content\":[{\"type\":\"text\",\"text\":\"a\"},7]}"),
	    "no image_url part: none");
	ok(!has_image("{\"content\":\"image_url\"}"), "a string content: none");
	ok(!has_image("[1]"), "not a message: none");
}

/* Is jv v (consumed) the JSON text want? */
static int
same(jv v, const char *want)
{
	jv w = j(want);
	int r = jv_equal(jv_copy(v), jv_copy(w));

	if (!r) {
		jv d = jv_dump_string(jv_copy(v), 0);

		printf("#   got %s\n#  want %s\n", jv_string_value(d), want);
		jv_free(d);
	}
	jv_free(w);
	jv_free(v);
	return r;
}

static void
test_a_reply_with_images_and_back(void)
{
	jv imgs = j("[{\"url\":\"data:image/png;base64,AAAA\"},{\"url\":7},"
	    "{\"url\":\"https://e.com/b.png\"}]"), none = j("[]"), c;

	ok(same(art_parts_with_images(jv_string("look"), &imgs),
	    "[{\"type\":\"text\",\"text\":\"look\"},{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}},"
	    "{\"type\":\"image_url\",\"image_url\":{\"url\":"
	    "\"https://e.com/b.png\"}}]"),
	    "a reply's text, then each image with a url, as parts");
	ok(same(art_parts_with_images(jv_null(), &imgs),
	    "[{\"type\":\"image_url\",\"image_url\":{\"url\":"
	    "\"data:image/png;base64,AAAA\"}},{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"https://e.com/b.png\"}}]"),
	    "no text: the images alone");
	ok(same(art_parts_with_images(jv_string("x"), &none), "\"x\""),
	    "no images: the content as it was");
	c = art_parts_with_images(jv_string("look"), &imgs);
	ok(same(art_parts_assistant(c), "\"look\""),
	    "back to a provider: the images left out, the text a string");
	ok(same(art_parts_assistant(j("[{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"u\"}}]")), "null"),
	    "images alone: null");
	ok(same(art_parts_assistant(j("[{\"type\":\"text\",\"text\":\"a\"}]")),
	    "[{\"type\":\"text\",\"text\":\"a\"}]"),
	    "parts without an image are left as they are");
	c = j("[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"u\"}},{\"type\":\"text\",\"text\":\"b\"}]");
	ok(same(art_parts_join(&c), "\"a\\nb\""), "join: the texts, one a line");
	jv_free(c);
	c = jv_string("s");
	ok(same(art_parts_join(&c), "\"s\""), "join: a string as it is");
	jv_free(c);
	jv_free(imgs);
	jv_free(none);
}

int
main(void)
{
	test_only_parts_with_an_image_are_parts();
	test_text_names_each_image();
	test_texts_go_out_and_back();
	test_cap_keeps_what_fits_and_says_what_not();
	test_a_message_holds_an_image();
	test_a_reply_with_images_and_back();
	return tap_done();
}
