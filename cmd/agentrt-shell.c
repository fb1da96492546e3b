/* agentrt-shell - placeholder until the REPL lands */
#include <config.h>

#include <stdio.h>

int
main(void)
{
	printf("agentrt-shell %s\n", PACKAGE_VERSION);
	return 0;
}
