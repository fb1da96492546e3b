/* userconf.h - the user's settings: a default model and model aliases
 *
 * $XDG_CONFIG_HOME/agentrt/config.json (else ~/.config/agentrt/...) may
 * hold, as llm(1) keeps its default model and aliases:
 *
 *	{"model": "openai/gpt-4o-mini",
 *	 "aliases": {"mini": "openai/gpt-4o-mini", "haiku":
 *	     "anthropic/claude-3-5-haiku-latest"}}
 *
 * "model" is the model a prompt goes to when none is named; an alias is
 * a word (letters, digits, '.', '_' and '-'; no '/') that stands for a
 * model, provider/name.  Nothing else may be in the file.  Nothing here
 * reads the environment: the caller hands in what $XDG_CONFIG_HOME and
 * $HOME say.  No state: any thread may call these.
 */
#ifndef ART_USERCONF_H
#define ART_USERCONF_H

#include <stddef.h>

#include <jv.h>

#include "err.h"

/*
 * Where the file is: xdg/agentrt/config.json when xdg is an absolute
 * path, else home/.config/agentrt/config.json when home is not empty,
 * made in path (n bytes).  0, or -1 when there is neither (or it does
 * not fit), path "".
 */
int	art_userconf_path(const char *xdg, const char *home, char *path,
	    size_t n);
/*
 * The settings in the file at path: an object, {} when there is no such
 * file.  jv_invalid() with err "bad_config", naming path and what is
 * wrong (not JSON, not an object, an unknown key, a model that is not
 * provider/name, an alias that is not a word), or "io" when it cannot be
 * read.
 */
jv	art_userconf_load(const char *path, struct art_err *);
/*
 * The model name stands for in conf (borrowed): an alias's model, else
 * name itself.  Points into conf or at name.
 */
const char *art_userconf_model(const jv *conf, const char *name);
/* conf's default model, or NULL when it sets none. */
const char *art_userconf_default(const jv *conf);

#endif
