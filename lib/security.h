/* security.h - the security pipeline: what the seed's SecurityConfigProto asks of a turn's text */
#ifndef ART_SECURITY_H
#define ART_SECURITY_H

#include <stddef.h>

#include <jv.h>

#include "err.h"

/*
 * An agent's "security" object (the seed's SecurityConfigProto) compiled
 * into detectors for three places text comes from: client input, model
 * replies and tool results.  A detector is a regular expression
 * (lib/regex.h) with a stable pattern_id, sometimes checked further (Luhn
 * for card numbers, mod 97 for IBANs), or the system-prompt leak finder.
 * Each hit has a severity: "redact" replaces it with
 * "[redacted:<pattern_id>]", "block" asks the caller to refuse the text,
 * "log_only" only reports it.  man/agentrt.7 (SECURITY) lists the
 * members, the detectors and each mode's set.
 *
 * Detectors match the text with Unicode's format characters (category
 * Cf: zero-width spaces and joiners, the soft hyphen, bidi controls, the
 * BOM, tags) taken out, and a hit redacts the span of the text it came
 * from, the format characters inside it included.  Runs of base64 (either
 * alphabet, padded or not; 20 to 4096 letters) and of hex (32 to 4096
 * digits) are decoded, and what decodes to text is searched by the
 * secret detectors (built-in and custom category "secret"): a hit there
 * redacts the whole run as "[redacted:<pattern_id>(base64)]" or
 * "...(hex)]", and blocks as a block hit does.  Nothing else in a run is
 * looked for.
 *
 * Custom patterns' violation_code follows their category: injection is
 * "input_injection_detected", secret "secret_detected", pii
 * "pii_detected", custom "custom_pattern_matched".  A custom id may not
 * be a built-in one, so a redaction always names one detector.
 *
 * A struct art_security is read-only once made, except for the regular
 * expressions' scratch space, so one thread at a time scans with it (any
 * number of scans, of any scope, one after another); it holds no global
 * state, and a forked child may use its copy.  A pattern whose match
 * exceeds PCRE2's match limit is taken as not matching there.
 */
struct art_security;

enum art_sec_scope { ART_SEC_INPUT, ART_SEC_OUTPUT, ART_SEC_TOOL };

/*
 * Compiles the agent config's (borrowed) "security" object.  0 with *out
 * NULL when config has none (the pipeline is off: today's behaviour); 0
 * with *out set; -1 with err "bad_agent" for a member of the wrong type,
 * an unknown mode, or a pattern that does not compile (the message names
 * the pattern's id and why).  The config's "system" is what
 * redact_system_prompt looks for.
 */
int	art_security_new(const jv *config, struct art_security **out,
	    struct art_err *);
void	art_security_free(struct art_security *);

/*
 * Scans value (consumed) found at scope: a string, or any JSON value whose
 * strings are scanned one by one (object keys are not).  where names the
 * place for the events' detail ("user message", "model reply", "tool
 * 'calc' result", "tool call 'calc' arguments").  Returns the value with
 * each redact hit replaced by "[redacted:<pattern_id>]" (log_only and
 * block hits leave the text as it was).  *hits (set; a new array) gets
 * one object per pattern that hit, in order of first hit:
 *   {"type":"security","violation_code":"secret_detected","severity":
 *    "redact","pattern_id":"openai_key","scope":"output","detail":
 *    "OpenAI API key in model reply (2 matches)"}
 * detail names what and where, never the matched text; "(2 matches,
 * 1 encoded)" when some were found in encoded runs.  *blocked (set)
 * is 1 when any hit's severity is block, and then *block_id (set, may be
 * NULL; borrowed from the security object) is the first such pattern id.
 *
 * Hits that overlap or touch are redacted as one span, named by the
 * pattern whose hit starts first (on a tie, the one listed first in
 * agentrt(7)).  "First hit" orders by the string (in the order a walk of
 * the value meets them), then the offset.
 */
jv	art_security_scan(const struct art_security *, enum art_sec_scope,
	    jv value, const char *where, jv *hits, int *blocked,
	    const char **block_id);

/*
 * A stream's text not yet shown (pending, n bytes, borrowed): what can be
 * shown now, redacted, as a new string in *show, and the raw rest to keep
 * until more text comes (returned, a new string): the text from the
 * earliest place a match may have begun but not ended (a partial match),
 * never cut inside a UTF-8 character.  final: the stream ended, nothing is
 * kept.  *blocked (set) is 1 when a block pattern matched: *show then
 * holds only the text before the match, and the caller shows nothing more
 * of this stream.  No events: the whole text is scanned again when it is
 * recorded (art_security_scan), which records them.
 *
 * So that the shows put together are what art_security_scan makes of the
 * whole text, the rest also begins no later than a redaction that reaches
 * its start, and, when the system prompt is watched, no later than the
 * longest tail (under 40 bytes of whitespace-normalised text) that
 * appears in the system prompt, or the start of a leak that reaches the
 * end; and, when encoded runs are decoded, never inside a run: at its
 * start (a run at the end may go on), or, in a run too long to decode,
 * where more than 4096 of its letters follow.  When blocked, the returned rest is "" (nothing is to be shown).
 * log_only patterns are not looked for: they change nothing shown.
 */
jv	art_security_stream(const struct art_security *, enum art_sec_scope,
	    const char *pending, size_t n, int final, jv *show, int *blocked);

#endif
