/* Tests that a text-only run loads no vision tower (api/vision.c api_vision_tower), by the peak
   memory of the command: a tiny text model with a big random tower (gen_tiny.py --vision big, about
   134 MB of bf16 weights) as a Hugging Face directory. `seer run` on it peaks where the same text
   model without any tower does (tests/reference/hf_text_only.py writes that checkpoint), while
   `seer ask` with an image on it peaks at least half the tower's bytes higher — which shows the
   measure sees a loaded tower. Weights are copied (--weights copy), so what is loaded is resident. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

/* the tower's bf16 bytes: 4 blocks of 12·Dv² (qkv, proj, two MLP matrices at Iv = 4·Dv) plus the
   merger's 16·Dv² + 4·Dv·H, Dv = 1024 (tests/reference/gen_tiny.py VISION_PRESETS["big"]) */
#define TOWER_BYTES (2.0 * (4 * 12 + 16) * 1024 * 1024)
/* Two runs of the same text model differ by allocator noise, well under a tenth of the tower. */
#define SAME_KB (TOWER_BYTES / 10 / 1024)

/* Runs seer with args, returns its peak resident memory in KiB (-1 when it failed). */
static long peak_kb(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import resource, subprocess, sys; "
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if r.returncode == 0 else -1)' "
             "'%s/seer' %s --device cpu --weights copy -n 4 --temp 0 -t 2",
             SEER_BINARY_DIR, args);
    struct test_run r = test_run_cmd(cmd);
    long kb = r.status == 0 && r.out ? strtol(r.out, NULL, 10) : -1;
    if (kb < 0)
        diag("failed: %s\n%s", cmd, r.err ? r.err : "");
    test_run_free(&r);
    return kb;
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    char dir[600], hf[700], text[700], img[700], args[2400];
    snprintf(dir, sizeof dir, "%s/big", test_tmp_dir());
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(text, sizeof text, "%s/hf-text", dir);
    snprintf(img, sizeof img, "%s/a.png", test_tmp_dir());
    int rc = if_sh("python3 '%s' --out '%s' --preset tiny --seed %llu --vision big --no-gguf", test_src_path(
                   "tests/reference/gen_tiny.py"), dir, (unsigned long long)seed);
    if (!rc)
        rc = if_sh("python3 '%s' '%s' '%s'", test_src_path("tests/reference/hf_text_only.py"), hf, text);
    if (!ok(rc == 0, "a tiny model with a %.0f MB tower, and the same text model without it", TOWER_BYTES / 1e6))
        return done_testing();

    snprintf(args, sizeof args, "run -m '%s' -p 'Say something.'", hf);
    const long with_tower = peak_kb(args);
    snprintf(args, sizeof args, "run -m '%s' -p 'Say something.'", text);
    const long without = peak_kb(args);
    ok(with_tower > 0 && without > 0 && labs(with_tower - without) < (long)SAME_KB,
       "seer run on the directory with the tower peaks at %ld KiB, without a tower %ld KiB (within %.0f KiB): no "
       "tower loaded", with_tower, without, SAME_KB);

    if (if_noise_image(img, 64, 64)) {
        skip("no python3 with PIL to write the image", "seer ask with an image shows the tower");
        return done_testing();
    }
    snprintf(args, sizeof args, "ask -m '%s' -p 'What is this?' '%s'", hf, img);
    const long asked = peak_kb(args);
    ok(asked > 0 && asked - without > (long)(TOWER_BYTES / 2 / 1024),
       "seer ask with an image peaks at %ld KiB: the tower shows (> %.0f KiB more)", asked, TOWER_BYTES / 2 / 1024);
    return done_testing();
}
