/* spell.h - "did you mean": the nearest of some words to a misspelt one
 *
 * For an unknown agent, slash command or agent-file key: the candidate
 * fewest edits (insertions, deletions, substitutions of a byte) away,
 * within a bound, so a message can offer it.  No state: any thread may
 * call these.
 */
#ifndef ART_SPELL_H
#define ART_SPELL_H

#include <stddef.h>

#include <jv.h>

/*
 * The edit distance of a and b, or max + 1 as soon as it must be more
 * than max (or b is longer than 63 bytes).
 */
size_t	art_spell_distance(const char *a, const char *b, size_t max);
/*
 * The word of the NULL-terminated words nearest to word, within max
 * edits, the first of those as near; NULL when none is, or word is one
 * of them (nothing to suggest).
 */
const char *art_spell_nearest(const char *word, const char *const *words,
	    size_t max);
/* The same over an array of strings (borrowed); a pointer into it. */
const char *art_spell_nearest_jv(const char *word, const jv *words,
	    size_t max);

#endif
