/* providers.c - the table of model providers */
#include "providers.h"

#include <string.h>

#include "llm.h"
#include "mock.h"
#include "remote.h"

const struct art_llm_provider *const art_providers[ART_NPROVIDERS] = {
	&art_mock_provider,
	&art_openai_provider,
	&art_anthropic_provider,
};

int
art_provider_find(const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < ART_NPROVIDERS; i++)
		if (strlen(art_providers[i]->name) == n &&
		    strncmp(art_providers[i]->name, name, n) == 0)
			return (int)i;
	return -1;
}
