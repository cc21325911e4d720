/* info.c — `seer info [--json] [--device D] PATH`: what a model file is and holds. PATH may be a
   GGUF text model, an mmproj GGUF, an HF model directory (config.json + safetensors), a
   model.safetensors.index.json, a single .safetensors file or a name from `seer pull`. The
   library describes it (seer_model_file_info: kind, architecture, the Qwen3.5 hyperparameters,
   the tensor count and bytes by dtype, the memory plan with --device) as one JSON object, printed
   as it is with --json, else as "key: value" lines. Nothing is printed unless all of it succeeded,
   so an error leaves stdout empty and prints one line "seer: PATH: problem" on stderr (exit 1);
   usage errors exit 2. `seer info --devices` lists compute devices (cli/devices.c). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/gen.h"
#include "cli/util.h"
#include "seer.h"

#define REAL_DIGITS 7 /* f32 values print with 7 significant digits: enough to read them back */

/* ---- output ------------------------------------------------------------------------------------ */

static void print_scalar(FILE *f, const json_t *v)
{
    if (json_is_string(v)) /* a name from the file must not break the one-line-per-key layout */
        for (const char *s = json_string_value(v); *s; s++)
            fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
    else if (json_is_integer(v))
        fprintf(f, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        fprintf(f, "%.*g", REAL_DIGITS, json_real_value(v));
    else if (json_is_boolean(v))
        fputs(json_is_true(v) ? "true" : "false", f);
    else
        fputs("null", f);
}

/* "key: value" lines; nested objects indent by two spaces; arrays print inline. */
static void print_text(FILE *f, const json_t *o, int indent)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        fprintf(f, "%*s%s:", indent, "", k);
        if (json_is_object(v)) {
            fputc('\n', f);
            print_text(f, v, indent + 2);
            continue;
        }
        fputc(' ', f);
        if (json_is_array(v)) {
            fputc('[', f);
            for (size_t i = 0; i < json_array_size(v); i++) {
                if (i)
                    fputs(", ", f);
                print_scalar(f, json_array_get(v, i));
            }
            fputc(']', f);
        } else {
            print_scalar(f, v);
        }
        fputc('\n', f);
    }
}

/* One line on stderr naming PATH; control characters from hostile names become '?'. */
static int fail(const char *path, int rc)
{
    const char *msg = cli_last_error();
    char line[1200];
    if (!msg || !*msg)
        msg = seer_strerror(rc);
    if (strstr(msg, path))
        snprintf(line, sizeof line, "%s", msg);
    else
        snprintf(line, sizeof line, "%s: %s", path, msg);
    for (char *p = line; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    fprintf(stderr, "seer: %s\n", line);
    return CLI_FAIL;
}

enum { I_JSON, I_DEVICE, I_DEVICES, I_HELP };
static const struct cli_opt info_opts[] = {
    {{"--json"}, NULL, "print the JSON object instead of \"key: value\" lines", I_JSON},
    {{"--device"}, "D", "also print the memory plan of a text model on D (auto, cpu, vulkan[:N])", I_DEVICE},
    {{"--devices"}, NULL, "list the compute devices instead (alone)", I_DEVICES},
    {{"-h", "--help"}, NULL, "this help", I_HELP},
};
#define N_INFO_OPTS (sizeof info_opts / sizeof info_opts[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: seer info [--json] [--device D] PATH | seer info --devices\n");
    cli_opt_help(f, info_opts, N_INFO_OPTS);
}

int cli_info(int argc, char **argv)
{
    const char *path = NULL, *plan_device = NULL;
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        const struct cli_opt *opt = cli_opt_find(info_opts, N_INFO_OPTS, argc, argv, &i, &v);
        if (opt && opt->key == I_DEVICES && argc == 2)
            return cli_info_devices(stdout);
        if (opt && opt->key == I_JSON) {
            as_json = true;
        } else if (opt && opt->key == I_DEVICE && v) {
            plan_device = v;
        } else if (opt && opt->key == I_HELP) {
            usage(stdout);
            return CLI_OK;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "seer: info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return CLI_USAGE;
        } else if (path) {
            fprintf(stderr, "seer: info: one PATH only\n");
            usage(stderr);
            return CLI_USAGE;
        } else if (cli_model_arg(argv[i], &path)) { /* a name from `seer pull` → its directory */
            return CLI_FAIL;
        }
    }
    if (!path) {
        usage(stderr);
        return CLI_USAGE;
    }
    char *text = NULL;
    int rc = seer_model_file_info(path, plan_device, &text);
    if (rc != SEER_OK)
        return fail(path, rc);
    if (as_json) {
        puts(text);
    } else {
        json_t *o = json_loads(text, 0, NULL);
        if (!o) {
            seer_free(text);
            return fail(path, cli_err(SEER_ENOMEM, "%s: out of memory", path));
        }
        print_text(stdout, o, 0);
        json_decref(o);
    }
    seer_free(text);
    return fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
}
