/* openai-fuzz - OpenAI stream assembly on any bytes (stream.h) */
#define FUZZ_WIRE	art_openai_wire
#include "stream.h"
