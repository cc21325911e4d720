/* devices.c — `seer info --devices` (placeholder until the Vulkan backend lands). */
#include "cli/cli.h"

int cli_info_devices(FILE *out)
{
    fprintf(out, "cpu\n");
    return CLI_OK;
}
