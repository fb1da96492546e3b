/* spell-test - the nearest word to a misspelt one, within a bound */
#include "spell.h"

#include <string.h>

#include "tap.h"

int
main(void)
{
	static const char *const cmds[] = { "help", "history", "quit",
	    "retry", "model", "models", NULL };
	static const char *const none[] = { NULL };
	jv agents = jv_array();

	ok(art_spell_distance("calc", "cacl", 2) == 2 &&
	    art_spell_distance("tols", "tools", 2) == 1 &&
	    art_spell_distance("", "abc", 3) == 3,
	    "edits: a swap is two, a missing letter one");
	ok(art_spell_distance("a", "abcdef", 2) == 3 &&
	    art_spell_distance("abcdef", "xyzuvw", 2) == 3,
	    "more than max is max + 1");
	ok(strcmp(art_spell_nearest("hepl", cmds, 2), "help") == 0,
	    "a swap is found");
	ok(strcmp(art_spell_nearest("modle", cmds, 2), "model") == 0,
	    "of two as near (model, models: 2 edits), the first");
	ok(strcmp(art_spell_nearest("modelss", cmds, 2), "models") == 0,
	    "the nearest wins (models 1 edit, model 2)");
	ok(art_spell_nearest("model", cmds, 2) == NULL,
	    "a word that is one: nothing to suggest");
	ok(art_spell_nearest("frobnicate", cmds, 2) == NULL &&
	    art_spell_nearest("x", none, 2) == NULL, "nothing near: NULL");
	agents = jv_array_append(agents, jv_string("calc"));
	agents = jv_array_append(agents, jv_number(1));
	agents = jv_array_append(agents, jv_string("careful"));
	ok(strcmp(art_spell_nearest_jv("cacl", &agents, 2), "calc") == 0 &&
	    strcmp(art_spell_nearest_jv("carefull", &agents, 2), "careful")
	    == 0, "over a jv array, what is not a string skipped");
	ok(art_spell_nearest_jv("team", &agents, 2) == NULL,
	    "nothing within two edits");
	jv_free(agents);
	return tap_done();
}
