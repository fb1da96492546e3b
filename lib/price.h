/* price.h - what a model call cost, from a table of prices per token */
#ifndef ART_PRICE_H
#define ART_PRICE_H

#include <jv.h>

#include "err.h"

/*
 * A price table maps a model ("provider/name") to US dollars per million
 * tokens, as decimal strings or numbers:
 *
 *	{ "openai/gpt-4o-mini": { "input": "0.15", "output": "0.60",
 *	    "cache_read": "0.075" } }
 *
 * "input" and "output" are required; "cache_read" and "cache_write"
 * default to "input".  A model is found by its whole name, else by the
 * longest entry that is the name up to a '-' ("openai/gpt-4o" prices
 * "openai/gpt-4o-2024-08-06").  Costs are computed exactly in decimal,
 * to 1e-15 dollars, never through a double.
 */

struct art_prices;

/* A table holding the built-in prices.  NULL when out of memory. */
struct art_prices *art_prices_new(void);
void	art_prices_free(struct art_prices *);

/*
 * Adds the entries of the JSON file at path, each replacing a built-in
 * entry of the same name.  -1 with err naming the file and what is
 * wrong ("bad_prices"), the table unchanged.
 */
int	art_prices_load(struct art_prices *, const char *path,
	    struct art_err *);
/* The same from a parsed object (borrowed). */
int	art_prices_add(struct art_prices *, const jv *table, struct art_err *);

/*
 * The cost of usage (normalised: uncached_input, cache_read, cache_write,
 * output; see wire.h) for model, as a decimal string of dollars with no
 * trailing zeros ("0.0000315", "0"), or jv_null() when the model has no
 * price or usage has no counts.
 */
jv	art_prices_cost(const struct art_prices *, const char *model,
	    const jv *usage);

/*
 * The table's entries, sorted by model, as the runtime API's ModelEntry
 * has them: {"model": "openai/gpt-4o" (what -m takes), "model_id":
 * "gpt-4o", "provider": "openai", "pricing":
 * {"input_per_million_tokens": 2.5, "output_per_million_tokens": 10,
 * "cache_read_per_million_tokens": 1.25,
 * "cache_write_per_million_tokens": 2.5}} (a cache price not given is the
 * input price).  A new array; jv_invalid() when out of memory.
 */
jv	art_prices_list(const struct art_prices *);

/*
 * The exact sum of two costs, decimal strings of dollars ("0.00000255",
 * "3"), with no trailing zeros, as a new string; a digit is never lost,
 * however many places either has.  A cost that is not such a string (a
 * worker's "1e-6", a number) is added as a double, to 15 significant
 * digits; a missing one (not a string or a number) counts as 0.
 */
jv	art_prices_sum(const jv *a, const jv *b);

#endif
