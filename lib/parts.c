/* parts.c - the seed's ContentPart[] in a tool result: told, read, capped */
#include "parts.h"

#include <string.h>

#include "json.h"
#include "utf8.h"

static bool
is_type(const jv *part, const char *type)
{
	const char *t = art_json_str(part, "type");

	return t != NULL && strcmp(t, type) == 0;
}

/* An image part's URL, or NULL; valid while part is. */
static const char *
image_url(const jv *part)
{
	jv img = art_json_field(part, "image_url");
	const char *url = jv_get_kind(img) == JV_KIND_OBJECT ?
	    art_json_str(&img, "url") : NULL;

	jv_free(img);	/* part still holds the string */
	return url;
}

bool
art_parts_is(const jv *v)
{
	int images = 0, bad = 0;

	if (jv_get_kind(*v) != JV_KIND_ARRAY)
		return false;
	jv_array_foreach(*v, i, p) {
		if (jv_get_kind(p) != JV_KIND_OBJECT)
			bad++;
		else if (is_type(&p, "image_url") && image_url(&p) != NULL)
			images++;
		else if (!is_type(&p, "text") ||
		    art_json_str(&p, "text") == NULL)
			bad++;
		jv_free(p);
	}
	return images > 0 && bad == 0;
}

bool
art_parts_has_image(const jv *msg)
{
	jv c = art_json_field(msg, "content");
	bool yes = false;

	if (jv_get_kind(c) == JV_KIND_ARRAY)
		jv_array_foreach(c, j, part) {
			yes = yes || (jv_get_kind(part) == JV_KIND_OBJECT &&
			    is_type(&part, "image_url"));
			jv_free(part);
			(void)j;
		}
	jv_free(c);
	return yes;
}

/* Decoded size of base64 text, ignoring padding. */
static size_t
b64_size(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (*s != '=' && *s != '\n' && *s != '\r' && *s != ' ')
			n++;
	return n * 3 / 4;
}

/* "[image MIME, N bytes" of a data URL, or "[image URL" of another. */
static jv
image_note(const char *url)
{
	const char *semi, *b64;

	if (strncmp(url, "data:", 5) == 0 &&
	    (b64 = strstr(url, ";base64,")) != NULL) {
		semi = strchr(url + 5, ';');
		return jv_string_fmt("[image %.*s, %zu bytes", (int)(semi -
		    url - 5), url + 5, b64_size(b64 + 8));
	}
	return jv_string_fmt("[image %.200s", url);
}

jv
art_parts_text(const jv *parts)
{
	jv out = jv_string("");
	const char *url;

	jv_array_foreach(*parts, i, p) {
		if (i > 0)
			out = jv_string_append_str(out, "\n");
		if ((url = image_url(&p)) != NULL && is_type(&p, "image_url"))
			out = jv_string_append_str(jv_string_concat(out,
			    image_note(url)), "]");
		else
			out = jv_string_concat(out, art_json_field(&p,
			    "text"));
		jv_free(p);
	}
	return out;
}

jv
art_parts_texts(const jv *parts)
{
	jv out = jv_array();

	jv_array_foreach(*parts, i, p) {
		if (is_type(&p, "text"))
			out = jv_array_append(out, art_json_field(&p, "text"));
		jv_free(p);
	}
	return out;
}

jv
art_parts_set_texts(jv parts, jv texts)
{
	int n = jv_array_length(jv_copy(parts)), i, k = 0;
	jv p, t;

	for (i = 0; i < n; i++) {
		p = jv_array_get(jv_copy(parts), i);
		if (!is_type(&p, "text")) {
			jv_free(p);
			continue;
		}
		t = jv_array_get(jv_copy(texts), k++);
		if (jv_get_kind(t) == JV_KIND_STRING)
			parts = jv_array_set(parts, i, art_json_set(p, "text",
			    t));
		else {
			jv_free(t);
			jv_free(p);
		}
	}
	jv_free(texts);
	return parts;
}

static jv
text_part(jv text)
{
	return art_json_set(art_json_set(jv_object(), "type",
	    jv_string("text")), "text", text);
}

/* A text part cut to room bytes (less than its length), saying so. */
static jv
cut_text(const jv *p, size_t room, const char *why)
{
	const char *s = art_json_str(p, "text");
	size_t n = strlen(s), keep = art_utf8_whole(s, room);

	return text_part(jv_string_concat(jv_string_sized(s, (int)keep),
	    jv_string_fmt("\n[truncated: %zu of %zu bytes cut by %s]",
	    n - keep, n, why)));
}

jv
art_parts_cap(jv parts, size_t max, const char *why)
{
	int n = jv_array_length(jv_copy(parts)), i;
	size_t room = max, len;
	const char *url, *s;
	jv p, q;

	for (i = 0; i < n; i++) {
		p = jv_array_get(jv_copy(parts), i);
		url = is_type(&p, "image_url") ? image_url(&p) : NULL;
		s = url != NULL ? url : art_json_str(&p, "text");
		len = s != NULL ? strlen(s) : 0;
		if (len <= room) {
			room -= len;
			jv_free(p);
			continue;
		}
		if (url != NULL)
			q = text_part(jv_string_append_str(jv_string_concat(
			    image_note(url), jv_string_fmt(" cut by %s", why)),
			    "]"));
		else
			q = cut_text(&p, room, why);
		room = 0;
		jv_free(p);
		parts = jv_array_set(parts, i, q);
	}
	return parts;
}

jv
art_parts_with_images(jv content, const jv *images)
{
	jv out, url;

	if (jv_get_kind(*images) != JV_KIND_ARRAY)
		return content;
	out = jv_array();
	if (jv_get_kind(content) == JV_KIND_STRING &&
	    jv_string_length_bytes(jv_copy(content)) > 0)
		out = jv_array_append(out, jv_object_set(jv_object_set(
		    jv_object(), jv_string("type"), jv_string("text")),
		    jv_string("text"), jv_copy(content)));
	jv_array_foreach(*images, i, img) {
		url = jv_get_kind(img) == JV_KIND_OBJECT ? jv_object_get(
		    jv_copy(img), jv_string("url")) : jv_null();
		if (jv_get_kind(url) == JV_KIND_STRING)
			out = jv_array_append(out, jv_object_set(jv_object_set(
			    jv_object(), jv_string("type"),
			    jv_string("image_url")), jv_string("image_url"),
			    jv_object_set(jv_object(), jv_string("url"), url)));
		else
			jv_free(url);
		jv_free(img);
		(void)i;
	}
	if (!art_parts_is(&out)) {
		jv_free(out);
		return content;
	}
	jv_free(content);
	return out;
}

jv
art_parts_assistant(jv content)
{
	jv text;
	int images = 0;

	if (jv_get_kind(content) != JV_KIND_ARRAY)
		return content;
	jv_array_foreach(content, i, p) {
		images += is_type(&p, "image_url");
		jv_free(p);
		(void)i;
	}
	if (images == 0)
		return content;
	text = art_parts_join(&content);
	jv_free(content);
	if (jv_string_length_bytes(jv_copy(text)) > 0)
		return text;
	jv_free(text);
	return jv_null();
}

jv
art_parts_join(const jv *content)
{
	jv texts, out;

	if (jv_get_kind(*content) != JV_KIND_ARRAY)
		return jv_copy(*content);
	out = jv_string("");
	texts = art_parts_texts(content);
	jv_array_foreach(texts, i, t) {
		if (jv_get_kind(t) == JV_KIND_STRING)
			out = jv_string_concat(i > 0 ? jv_string_concat(out,
			    jv_string("\n")) : out, t);
		else
			jv_free(t);
	}
	jv_free(texts);
	return out;
}
