/* models.c — where models by name are (cli/cli.h): seer's data directory ($SEER_HOME, else
   ~/.cache/seer: the library takes paths through seer.h, the command reads the environment), how -m turns a pulled name
   into its directory, the default model, and what a command without a model says. Below
   cli/options.c and cli/pull.c, which both use it, so neither calls the other back. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/hub.h"
#include "cli/util.h"

#define DEFAULT_MODEL "qwen3.5-0.8b"
#define PATH_BYTES 4096

bool cli_seer_home(char *buf, size_t size)
{
    const char *h = getenv("SEER_HOME"), *home = getenv("HOME");
    int n = h && *h ? snprintf(buf, size, "%s", h) : home && *home ? snprintf(buf, size, "%s/.cache/seer", home) : -1;
    return n > 0 && (size_t)n < size;
}

/* models/NAME under seer's home when that directory exists, into a static buffer; NULL if not. */
static const char *present_dir(const char *name)
{
    static char dir[PATH_BYTES];
    char home[PATH_BYTES];
    if (!cli_seer_home(home, sizeof home) || hub_model_dir(home, name, dir, sizeof dir) != SEER_OK)
        return NULL;
    return cli_path_kind(dir) == CLI_PATH_DIR ? dir : NULL;
}

int cli_model_arg(const char *arg, const char **path)
{
    const char *canon = hub_canonical_name(arg);
    /* a file or directory of that name wins: `-m qwen3.5-0.8b` inside a models folder still works */
    if (!canon || cli_path_kind(arg) != CLI_PATH_MISSING) {
        *path = arg;
        return 0;
    }
    const char *dir = present_dir(canon);
    if (!dir) {
        fprintf(stderr, "seer: model '%s' is not downloaded: run `seer pull %s`, or pass -m a local Hugging Face "
                        "model directory or GGUF file\n", arg, canon);
        return -1;
    }
    *path = dir;
    return 0;
}

const char *cli_default_model(void) { return present_dir(DEFAULT_MODEL); }

int cli_no_model(const char *command)
{
    fprintf(stderr, "seer %s: no model given and none pulled: run `seer pull " DEFAULT_MODEL "` to download the "
                    "default model, or pass -m MODEL (a Hugging Face model directory, a GGUF file or a pulled name)\n",
            command);
    return CLI_USAGE;
}
