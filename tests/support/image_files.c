/* image_files.c — test images and tiny checkpoints made at test time, and the reference's f32
   files (image_files.h). */
#include "support/image_files.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "support/testutil.h"
#include "tap.h"

const char *if_python_pil(void)
{
    static const char *const cands[] = {"python3", "/usr/bin/python3"};
    static const char *found;
    static int tried;
    for (size_t i = 0; !tried && !found && i < sizeof cands / sizeof *cands; i++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "%s -c 'import PIL.Image, numpy'", cands[i]);
        struct test_run r = test_run_cmd(cmd); /* quiet: a miss here is not a failure */
        if (r.status == 0)
            found = cands[i];
        test_run_free(&r);
    }
    tried = 1;
    return found;
}

int if_sh(const char *fmt, ...)
{
    char cmd[6000];
    va_list ap;
    va_start(ap, fmt);
    cmd[0] = '(';
    int n = vsnprintf(cmd + 1, sizeof cmd - 2, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof cmd - 2) {
        diag("if_sh: command line too long");
        return -1;
    }
    snprintf(cmd + 1 + n, 2, ")");
    struct test_run r = test_run_cmd(cmd);
    if (r.status != 0)
        diag("command failed (%d): %s\n%s%s", r.status, cmd, r.out, r.err);
    int st = r.status;
    test_run_free(&r);
    return st;
}

int if_noise_image(const char *path, int w, int h)
{
    const char *py = if_python_pil();
    if (!py)
        return -1;
    /* the content seed comes from the test RNG, so SEER_TEST_SEED replays the same picture */
    return if_sh("%s -c 'import sys, numpy as np; from PIL import Image; "
                 "r = np.random.default_rng(int(sys.argv[4])); "
                 "Image.fromarray(r.integers(0, 256, (int(sys.argv[3]), int(sys.argv[2]), 3), dtype=np.uint8))"
                 ".save(sys.argv[1])' '%s' %d %d %llu",
                 py, path, w, h, (unsigned long long)(test_rand_u64() >> 1));
}

int if_gen_tiny(const char *dir, const char *preset, uint64_t seed, const char *vision, const char *mmproj_types)
{
    char vis[64] = "";
    if (vision && *vision)
        snprintf(vis, sizeof vis, "--vision %s", vision);
    return if_sh("python3 '%s' --out '%s' --preset %s --seed %llu %s --mmproj-types %s",
                 test_src_path("tests/reference/gen_tiny.py"), dir, preset, (unsigned long long)seed, vis,
                 mmproj_types);
}

int if_tiny_vision(uint64_t seed, int w, int h, char *hf, char *png, size_t size)
{
    char tiny[700];
    snprintf(tiny, sizeof tiny, "%s/tiny", test_tmp_dir());
    snprintf(hf, size, "%s/hf", tiny);
    snprintf(png, size, "%s/noise.png", test_tmp_dir());
    int rc = if_gen_tiny(tiny, "tiny", seed, "", "f32");
    return rc ? rc : if_noise_image(png, w, h);
}

float *if_read_f32(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    float *v = NULL;
    long bytes = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (bytes > 0 && bytes % 4 == 0 && fseek(f, 0, SEEK_SET) == 0 && (v = malloc((size_t)bytes)) &&
        fread(v, 1, (size_t)bytes, f) != (size_t)bytes) {
        free(v);
        v = NULL;
    }
    fclose(f);
    if (v)
        *n = (size_t)bytes / 4;
    return v;
}
