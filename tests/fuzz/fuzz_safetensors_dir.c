/* fuzz_safetensors_dir.c — libFuzzer target: a sharded checkpoint directory. The input is the
   model.safetensors.index.json text, then up to three shard files separated by "\n===\n",
   written as a.safetensors, b.safetensors, c.safetensors next to the index (the seed corpus
   names them), then opened with safetensors_open_dir as `seer info DIR` does. */
#include "fuzz_util.h"

#include <sys/stat.h>

#include "core/safetensors.h"

static const char *const names[] = {"model.safetensors.index.json", "a.safetensors", "b.safetensors", "c.safetensors"};
static char dir[64];

static void remove_dir(void)
{
    char path[128];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

static const char *dir_path(const char *name)
{
    static char path[128];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/seer-fuzz-dir-XXXXXX");
        if (!mkdtemp(dir))
            abort();
        atexit(remove_dir);
    }
    snprintf(path, sizeof path, "%s%s%s", dir, name ? "/" : "", name ? name : "");
    return path;
}

static void put(const char *name, const uint8_t *p, size_t n)
{
    FILE *f = fopen(dir_path(name), "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_quiet();
    const uint8_t *rest = data;
    size_t n_rest = size;
    for (int i = 0; i < 4; i++) {
        const uint8_t *part, *next;
        size_t n_part, n_next;
        fz_split(rest, n_rest, "\n===\n", &part, &n_part, &next, &n_next);
        put(names[i], part, n_part);
        rest = next, n_rest = n_next;
    }
    safetensors *st = NULL;
    int rc = safetensors_open_dir(dir_path(NULL), &st);
    fz_check_message(rc);
    if (rc != SEER_OK)
        return 0;
    volatile uint8_t sink = 0;
    for (int64_t i = 0; i < safetensors_n_tensors(st); i++) {
        const tensor *t = safetensors_tensor(st, i);
        if (safetensors_find(st, safetensors_tensor_name(st, i)) != i)
            abort();
        sink ^= ((const uint8_t *)t->data)[0] ^ ((const uint8_t *)t->data)[tensor_nbytes(t) - 1];
    }
    (void)sink;
    for (int i = 0; i < safetensors_n_files(st); i++)
        if (!safetensors_file_path(st, i))
            abort();
    safetensors_free(st);
    return 0;
}
