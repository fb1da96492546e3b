/* anthropic-fuzz - Anthropic stream assembly on any bytes (stream.h) */
#define FUZZ_WIRE	art_anthropic_wire
#include "stream.h"
