/* parts.h - the seed's ContentPart[] in a tool result: told, read, capped */
#ifndef ART_PARTS_H
#define ART_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include <jv.h>

/*
 * A tool's result is a plain value (a string, most often) unless it is a
 * ContentPart[] that holds an image: an array whose every element is
 * {"type":"text","text":STRING} or {"type":"image_url","image_url":
 * {"url":STRING}}, with at least one image_url part.  Such a result
 * becomes the tool message's content as it is; its text (below) is what
 * the seed's string-only places (tool.finished's result) carry.  A
 * result with no image is never read as parts, so a plain-string result
 * stays a plain string.  Every function here may be called from any
 * process or thread; none keeps state.
 */

/* Is v (borrowed) a ContentPart[] with an image, as above? */
bool	art_parts_is(const jv *v);

/*
 * Does msg's "content" (msg borrowed, a message of any shape) hold an
 * image_url part?  Looser than art_parts_is(): other parts may be there
 * too, as in a message a client or a worker wrote.
 */
bool	art_parts_has_image(const jv *msg);

/*
 * parts (borrowed; art_parts_is()) as one string the caller owns: the
 * text parts' texts and, for each image, "[image MIME, N bytes]" (N the
 * decoded size of a base64 data URL; "[image URL]" for another URL),
 * joined with "\n".
 */
jv	art_parts_text(const jv *parts);

/* The text parts' texts (parts borrowed), in order: a new array. */
jv	art_parts_texts(const jv *parts);

/*
 * parts (consumed) with its text parts' texts replaced, in order, by the
 * strings of texts (consumed; as many as art_parts_texts() gave).  A
 * missing or non-string element leaves that text as it was.
 */
jv	art_parts_set_texts(jv parts, jv texts);

/*
 * parts (consumed) kept within max bytes, counting each text part's text
 * and each image's URL: parts are kept in order while they fit; the text
 * part that does not is cut between characters and gets
 * "\n[truncated: X of Y bytes cut by WHY]"; an image that does not fit is
 * replaced by the text part "[image MIME, N bytes cut by WHY]".  After
 * the first cut, every later part is cut the same way.  why (borrowed)
 * names the limit ("tool_result_max_bytes 4096").  Returns parts as it
 * was when it fits.
 */
jv	art_parts_cap(jv parts, size_t max, const char *why);

/*
 * A model's reply with images (LlmResponse.images, borrowed: [{url}]) as
 * the assistant message's content: content (consumed, a string or null)
 * as a text part when not empty, then an image_url part for each image
 * with a string url.  content as it was when there are none.
 */
jv	art_parts_with_images(jv content, const jv *images);

/*
 * What a provider can take back in an assistant turn: content (consumed)
 * without its image_url parts (the APIs take images from users and tool
 * results only).  Parts that held an image become their texts joined
 * with "\n" (null when there are none); other content is returned as it
 * is.
 */
jv	art_parts_assistant(jv content);

/*
 * content's text (borrowed): a string (or any non-array) as it is, an
 * array's text parts' texts joined with "\n".
 */
jv	art_parts_join(const jv *content);

#endif
