/* providers.h - the table of model providers, found by a model's prefix */
#ifndef ART_PROVIDERS_H
#define ART_PROVIDERS_H

#include <stddef.h>

/*
 * Every provider agentrt-llm can send a call to, in one table, so the
 * dispatcher (llm.c) knows providers only through struct
 * art_llm_provider and never includes the modules that implement them:
 * llm.h defines the interface, mock.c and remote.c implement it, and this
 * table is the one place that names them.  Adding a provider is a module
 * and a line in providers.c.  The table is constant; any thread may read
 * it.
 */
struct art_llm_provider;

#define ART_NPROVIDERS	3

extern const struct art_llm_provider *const art_providers[ART_NPROVIDERS];

/*
 * The index in art_providers of the provider called name (n bytes, not
 * necessarily NUL-terminated: the part of a model before its '/'), or -1.
 */
int	art_provider_find(const char *name, size_t n);

#endif
