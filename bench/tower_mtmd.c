/* tower_mtmd.c — times llama.cpp's libmtmd (a native build, bench/llama_native.sh) encoding random-pixel
   images with a qwen3vl_merger mmproj, for bench/tower_vs_mtmd.sh. Built by that script against the
   build's libmtmd and the clone's headers; never part of seer's build.
     tower_mtmd TEXT.gguf MMPROJ.gguf THREADS WxH [WxH ...]
   Per size: one untimed warm-up encode (graph allocation, first touch of the weights), as `seer bench
   --image` does, then the timed one of other pixels; prints "WxH TOKENS SECONDS" per size. The time is
   mtmd_encode_chunk alone (the tower and merger), the span mtmd-helper's own "image slice encoded in N
   ms" log line measures; the text model is loaded vocab-only (libmtmd needs its hidden size and
   tokens, not its weights), so nothing is decoded. Sides must be multiples of 32 (no resize). Bad
   arguments or a failing call: one line on stderr, exit 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama.h"
#include "mtmd.h"

static void quiet(enum ggml_log_level level, const char *text, void *user)
{
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR)
        fputs(text, stderr);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Encodes one w×h image of random pixels (seed s); returns seconds, or -1 with *tokens untouched. */
static double encode(mtmd_context *ctx, unsigned w, unsigned h, unsigned s, size_t *tokens)
{
    unsigned char *px = malloc((size_t)w * h * 3);
    if (!px)
        return -1;
    for (size_t i = 0; i < (size_t)w * h * 3; i++)
        px[i] = (unsigned char)((s = s * 1103515245u + 12345u) >> 16);
    mtmd_bitmap *bm = mtmd_bitmap_init(w, h, px);
    free(px);
    mtmd_input_chunks *chunks = mtmd_input_chunks_init();
    const mtmd_input_text text = {mtmd_default_marker(), strlen(mtmd_default_marker()), false, true};
    double t = -1;
    if (bm && chunks && mtmd_tokenize(ctx, chunks, &text, (const mtmd_bitmap *const[]){bm}, 1) == 0)
        for (size_t i = 0; i < mtmd_input_chunks_size(chunks); i++) {
            const mtmd_input_chunk *c = mtmd_input_chunks_get(chunks, i);
            if (mtmd_input_chunk_get_type(c) != MTMD_INPUT_CHUNK_TYPE_IMAGE)
                continue;
            double t0 = now();
            if (mtmd_encode_chunk(ctx, c) == 0)
                t = now() - t0, *tokens = mtmd_input_chunk_get_n_tokens(c);
        }
    mtmd_input_chunks_free(chunks);
    mtmd_bitmap_free(bm);
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 5 || atoi(argv[3]) < 1) {
        fprintf(stderr, "usage: tower_mtmd TEXT.gguf MMPROJ.gguf THREADS WxH [WxH ...]\n");
        return 1;
    }
    llama_log_set(quiet, NULL);
    mtmd_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    struct llama_model *model = llama_model_load_from_file(argv[1], mp);
    if (!model) {
        fprintf(stderr, "tower_mtmd: %s: llama.cpp could not load the text model\n", argv[1]);
        return 1;
    }
    struct mtmd_context_params cp = mtmd_context_params_default();
    cp.use_gpu = false, cp.print_timings = false, cp.n_threads = atoi(argv[3]), cp.warmup = false;
    cp.image_min_tokens = 64, cp.image_max_tokens = 16384; /* HF's window, as tests/oracle passes it */
    mtmd_context *ctx = mtmd_init_from_file(argv[2], model, cp);
    if (!ctx) {
        fprintf(stderr, "tower_mtmd: %s: libmtmd could not load the projector\n", argv[2]);
        return 1;
    }
    for (int a = 4; a < argc; a++) {
        unsigned w, h;
        size_t tok = 0;
        if (sscanf(argv[a], "%ux%u", &w, &h) != 2 || w % 32 || h % 32 || !w || !h) {
            fprintf(stderr, "tower_mtmd: %s: not WxH with sides multiples of 32\n", argv[a]);
            return 1;
        }
        double t;
        if (encode(ctx, w, h, 1u + (unsigned)a, &tok) < 0 || (t = encode(ctx, w, h, 7919u * (unsigned)a, &tok)) < 0) {
            fprintf(stderr, "tower_mtmd: %s: libmtmd could not encode the image\n", argv[a]);
            return 1;
        }
        printf("%ux%u %zu %.4f\n", w, h, tok, t);
        fflush(stdout);
    }
    mtmd_free(ctx);
    llama_model_free(model);
    return 0;
}
