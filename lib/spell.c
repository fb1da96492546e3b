/* spell.c - "did you mean": the nearest of some words to a misspelt one */
#include "spell.h"

#include <string.h>

size_t
art_spell_distance(const char *a, const char *b, size_t max)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[64], prev, t;

	if (lb >= sizeof(row) / sizeof(row[0]) || (la > lb ? la - lb :
	    lb - la) > max)
		return max + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			t = row[j];
			row[j] = a[i - 1] == b[j - 1] ? prev : 1 + (prev <
			    row[j] ? (prev < row[j - 1] ? prev : row[j - 1]) :
			    (row[j] < row[j - 1] ? row[j] : row[j - 1]));
			prev = t;
		}
	}
	return row[lb] > max ? max + 1 : row[lb];
}

const char *
art_spell_nearest(const char *word, const char *const *words, size_t max)
{
	const char *best = NULL;
	size_t i, d, bd = max + 1;

	for (i = 0; words[i] != NULL; i++) {
		if ((d = art_spell_distance(word, words[i], max)) == 0)
			return NULL;
		if (d < bd) {
			bd = d;
			best = words[i];
		}
	}
	return best;
}

const char *
art_spell_nearest_jv(const char *word, const jv *words, size_t max)
{
	const char *best = NULL, *w;
	size_t d, bd = max + 1;
	jv e;
	int i, n;

	if (jv_get_kind(*words) != JV_KIND_ARRAY)
		return NULL;
	n = jv_array_length(jv_copy(*words));
	for (i = 0; i < n; i++) {
		e = jv_array_get(jv_copy(*words), i);
		/* words holds the string, so w outlives e. */
		w = jv_get_kind(e) == JV_KIND_STRING ? jv_string_value(e) :
		    NULL;
		jv_free(e);
		if (w == NULL)
			continue;
		if ((d = art_spell_distance(word, w, max)) == 0)
			return NULL;
		if (d < bd) {
			bd = d;
			best = w;
		}
	}
	return best;
}
