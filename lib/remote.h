/* remote.h - the model providers that answer over HTTP */
#ifndef ART_REMOTE_H
#define ART_REMOTE_H

#include "llm.h"

/*
 * "openai/<model>" speaks Chat Completions to $OPENAI_BASE_URL (default
 * https://api.openai.com/v1) with $OPENAI_API_KEY as a bearer token, so
 * it serves any OpenAI-compatible server; "anthropic/<model>" speaks the
 * Messages API to $ANTHROPIC_BASE_URL (default https://api.anthropic.com)
 * with $ANTHROPIC_API_KEY as x-api-key and $ANTHROPIC_AUTH_TOKEN as
 * "Authorization: Bearer" (each when set, both when both are, as the
 * official SDK does).  A call's provider block of the
 * model's prefix (from the agent config's "providers") may set
 *
 *	{ "format": "openai" | "anthropic",
 *	  "base_url": "https://...",
 *	  "api_key_env": "NAME",	the variable holding the key
 *	  "anthropic_version": "2023-06-01",
 *	  "headers": { "Name": "value with ${VAR}" } }
 *
 * A call to the format's own base URL (no block base_url, no
 * $..._BASE_URL) with no key set fails before it starts with err code
 * "no_api_key" naming the variable; a block header in the key's place or
 * $ANTHROPIC_AUTH_TOKEN counts as one.  The built-in openai provider also
 * sends $OPENAI_ORG_ID and $OPENAI_PROJECT_ID as OpenAI-Organization and
 * OpenAI-Project.
 *
 * Every call in flight shares one libcurl multi handle per provider, so N
 * calls take about as long as the slowest.  A key goes only into the
 * request's headers; an error that quotes it (or the token) has it
 * replaced by "[redacted]".  The HTTP, SSE and wire modules do the work;
 * this one joins them to a job.
 */

extern const struct art_llm_provider art_openai_provider;
extern const struct art_llm_provider art_anthropic_provider;

#endif
