/* info.c — `seer info PATH` (placeholder until the model-file readers land). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cli_info(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--devices"))
        return cli_info_devices(stdout);
    fprintf(stderr, "usage: seer info PATH | seer info --devices\n");
    return CLI_USAGE;
}
