/* Three-axis positions of mixed prompts (lm/mrope.c, spec §3.2): the spec's worked example by hand,
   a video split into frame pairs, continuation from a later chat turn, the error cases, and random
   sequences against the numpy reference (tests/reference/vision_ref.py positions). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm/mrope.h"
#include "support/testutil.h"
#include "tap.h"

static const struct mrope_ids TOK = {.image_pad = 248056, .video_pad = 248057};
#define IMG 248056
#define VID 248057

/* Spec §3.2 worked example: 4 text tokens, 16 image pads (merged 4 × 4, grid 8 × 8 patches),
   5 more text tokens; 25 tokens, the next position 13 (rope_delta −12). */
static void worked_example(void)
{
    int32_t ids[25], pos[75];
    int64_t end = -1;
    for (int i = 0; i < 25; i++)
        ids[i] = i >= 4 && i < 20 ? IMG : 100 + i;
    struct mrope_grid g = {1, 8, 8};
    ok(mrope_positions(ids, 25, &TOK, &g, 1, NULL, 0, 0, pos, &end) == 0, "worked example: positions computed");
    int good = 1;
    for (int i = 0; i < 4; i++)
        good &= pos[i] == i && pos[25 + i] == i && pos[50 + i] == i;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            int i = 4 + 4 * r + c;
            good &= pos[i] == 4 && pos[25 + i] == 4 + r && pos[50 + i] == 4 + c;
        }
    for (int i = 20; i < 25; i++)
        good &= pos[i] == i - 12 && pos[25 + i] == i - 12 && pos[50 + i] == i - 12;
    ok(good, "worked example: text 0..3, pads T=4 H=4+r W=4+c, text 8..12 (spec §3.2)");
    ok(end == 13 && end - 25 == -12, "worked example: next position 13, rope_delta -12 (got %lld)", (long long)end);
}

/* A video of two frame pairs (t = 2) on a 4 × 6 patch grid (merged 2 × 3) with a timestamp token
   between the pairs, continuing a sequence whose next position is 100. */
static void video_pairs(void)
{
    int32_t ids[14], pos[42];
    int64_t end = -1;
    int k = 0;
    ids[k++] = 7; /* text */
    for (int i = 0; i < 6; i++)
        ids[k++] = VID;
    ids[k++] = 8; /* "<1.0 seconds>" stands between pairs */
    for (int i = 0; i < 6; i++)
        ids[k++] = VID;
    struct mrope_grid v = {2, 4, 6};
    ok(mrope_positions(ids, 14, &TOK, NULL, 0, &v, 1, 100, pos, &end) == 0, "video: positions computed");
    /* text 100; pair 0 at p = 101: T 101, H 101+r (r<2), W 101+c (c<3); p = 104; text 104; pair 1 at 105 */
    int good = pos[0] == 100 && pos[7] == 104 && pos[14 + 7] == 104;
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) {
            int i0 = 1 + 3 * r + c, i1 = 8 + 3 * r + c;
            good &= pos[i0] == 101 && pos[14 + i0] == 101 + r && pos[28 + i0] == 101 + c;
            good &= pos[i1] == 105 && pos[14 + i1] == 105 + r && pos[28 + i1] == 105 + c;
        }
    ok(good, "video: each frame pair placed like an image, T constant within a pair");
    ok(end == 108, "video: next position 108 (got %lld)", (long long)end);
}

static void errors(void)
{
    int32_t ids[6] = {1, IMG, IMG, IMG, 2, 3}, pos[18];
    int64_t end = 0;
    struct mrope_grid g = {1, 4, 4}; /* needs 4 pads, the run has 3 */
    ok(mrope_positions(ids, 6, &TOK, &g, 1, NULL, 0, 0, pos, &end) != 0, "a run shorter than its grid is refused");
    ok(mrope_positions(ids, 6, &TOK, NULL, 0, NULL, 0, 0, pos, &end) != 0, "a pad run without an image is refused");
    int32_t text[3] = {1, 2, 3};
    ok(mrope_positions(text, 3, &TOK, &g, 1, NULL, 0, 0, pos, &end) != 0, "an image without a pad run is refused");
    struct mrope_grid odd = {1, 3, 4};
    ids[3] = 5;
    ok(mrope_positions(ids, 6, &TOK, &odd, 1, NULL, 0, 0, pos, &end) != 0, "an odd patch grid is refused");
}

/* Random prompts of text, images and videos against the numpy reference. */
static void against_reference(void)
{
    const char *tmp = test_tmp_dir();
    char ids_path[512], grids_path[512], cmd[2048];
    snprintf(ids_path, sizeof ids_path, "%s/ids.json", tmp);
    snprintf(grids_path, sizeof grids_path, "%s/grids.json", tmp);
    for (int trial = 0; trial < 4; trial++) {
        enum { CAP = 4096 };
        static int32_t ids[CAP], pos[3 * CAP];
        struct mrope_grid im[4], vi[3];
        int n_im = 0, n_vi = 0;
        int64_t n = 0, end = 0;
        FILE *gf = fopen(grids_path, "w");
        fputc('[', gf);
        for (int part = 0; part < 6; part++) {
            int64_t t = 1 + (int64_t)(test_rand_u64() % 5);
            for (int64_t j = 0; j < t; j++)
                ids[n++] = (int32_t)(test_rand_u64() % 1000);
            int kind = (int)(test_rand_u64() % 3);
            if (kind == 0 || (kind == 1 && n_im == 4) || (kind == 2 && n_vi == 3))
                continue;
            struct mrope_grid g = {kind == 2 ? 1 + (int64_t)(test_rand_u64() % 3) : 1,
                                   2 * (1 + (int64_t)(test_rand_u64() % 6)), 2 * (1 + (int64_t)(test_rand_u64() % 6))};
            fprintf(gf, "%s{\"kind\":\"%s\",\"t\":%lld,\"h\":%lld,\"w\":%lld}", n_im + n_vi ? "," : "",
                    kind == 1 ? "image" : "video", (long long)g.t, (long long)g.h, (long long)g.w);
            if (kind == 1)
                im[n_im++] = g;
            else
                vi[n_vi++] = g;
            for (int64_t f = 0; f < g.t; f++) {
                for (int64_t j = 0; j < g.h * g.w / 4; j++)
                    ids[n++] = kind == 1 ? IMG : VID;
                if (kind == 2)
                    ids[n++] = 9; /* timestamp text between frame pairs */
            }
        }
        fputc(']', gf);
        fclose(gf);
        FILE *f = fopen(ids_path, "w");
        fputc('[', f);
        for (int64_t i = 0; i < n; i++)
            fprintf(f, "%s%d", i ? "," : "", ids[i]);
        fputc(']', f);
        fclose(f);
        int rc = mrope_positions(ids, n, &TOK, im, n_im, vi, n_vi, 0, pos, &end);
        snprintf(cmd, sizeof cmd, "python3 %s positions --ids %s --grids %s",
                 test_src_path("tests/reference/vision_ref.py"), ids_path, grids_path);
        struct test_run r = test_run_cmd(cmd);
        /* the reference prints {"positions": [[T…],[H…],[W…]], "rope_delta": d} */
        int same = rc == 0 && r.status == 0 && r.out;
        const char *s = same ? strstr(r.out, "\"positions\"") : NULL;
        same = same && s;
        for (int a = 0; same && a < 3; a++) {
            s = strchr(s + 1, '[');
            if (a == 0)
                s = strchr(s + 1, '[');
            for (int64_t i = 0; same && i < n; i++) {
                char *e;
                long v = strtol(s + 1, &e, 10);
                same = v == pos[a * n + i];
                s = e;
            }
        }
        const char *d = same ? strstr(r.out, "\"rope_delta\"") : NULL;
        same = same && d && strtoll(strchr(d, ':') + 1, NULL, 10) == end - n;
        ok(same, "random prompt %d (%lld tokens, %d images, %d videos): positions and rope_delta equal the reference",
           trial, (long long)n, n_im, n_vi);
        if (!same)
            diag("rc %d, reference status %d: %s", rc, r.status, r.err ? r.err : "");
        test_run_free(&r);
    }
}

int main(void)
{
    test_seed();
    worked_example();
    video_pairs();
    errors();
    against_reference();
    return done_testing();
}
