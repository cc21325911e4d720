/* video.c — videos in the public API (api/video.h). The data path, one direction, one frame pair at
   a time: container (video/demux.c) → planned frames as RGB at the planned size (video/plan.c,
   spec §5.3) → patch rows of one temporal group (vision/preprocess) → the tower with a (1, h, w)
   grid, which is exactly one attention segment of the clip's (t, h, w) grid (spec §4.5) → the
   pair's merged embeddings, kept. The prompt's placeholder is replaced by per-pair timestamp text
   and pad runs (spec §5.4), which api_prefill_fused places at spec §3.2's positions. */
#include "api/video.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/error.h"
#include "core/log.h"
#include "core/util.h"

static api_video_progress_fn g_progress;
static void *g_progress_user;
static struct api_video_timings g_timings;

struct api_video_timings api_video_last_timings(void) { return g_timings; }

void api_video_set_progress(api_video_progress_fn fn, void *user)
{
    g_progress = fn;
    g_progress_user = user;
}

/* ---- inputs ----------------------------------------------------------------------------------- */

struct video_settings api_video_settings(const struct video_settings *defaults, const seer_video_input *in)
{
    struct video_settings s = *defaults;
    if (in->fps > 0)
        s.fps = in->fps;
    if (in->min_frames > 0)
        s.min_frames = in->min_frames;
    if (in->max_frames > 0)
        s.max_frames = in->max_frames;
    if (s.min_frames > s.max_frames)
        s.min_frames = s.max_frames; /* --max-frames below the default minimum: the user's bound wins */
    s.max_tokens = in->max_tokens;
    s.start = in->start_seconds;
    s.end = in->end_seconds;
    return s;
}

int api_videos_push(struct api_videos *q, const char *path, const struct video_settings *s)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 4;
        struct api_video *t = seer_realloc(q->v, cap * sizeof *t);
        if (!t)
            return seer_err(SEER_ENOMEM, "no memory for the video queue");
        q->v = t;
        q->cap = cap;
    }
    char *p = seer_strdup(path);
    if (!p)
        return seer_err(SEER_ENOMEM, "no memory for the video queue");
    q->v[q->n++] = (struct api_video){p, *s};
    return SEER_OK;
}

void api_videos_clear(struct api_videos *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->v[i].path);
    q->n = 0;
}

/* ---- encoding, one pair at a time --------------------------------------------------------------- */

/* Plans, decodes and encodes one video: *emb [plan tokens][H] (seer_malloc'ed), *grid the clip's. */
static int encode_video(seer_model *m, const struct api_video *in, struct video_plan *plan, float **emb,
                        struct vis_grid *grid)
{
    const struct vit_config *vc = vit_model_config(m->vit);
    const int64_t H = vc->out_dim;
    video_file *v = NULL;
    uint8_t *frames[2] = {NULL, NULL};
    float *rows = NULL, *out = NULL;
    struct api_video_timings tm = {0};
    double t0 = seer_time_now();
    int rc = video_open(in->path, &v);
    tm.demux = seer_time_now() - t0;
    if (!rc)
        rc = video_plan_make(video_file_info(v), in->path, &in->s, plan);
    if (rc)
        goto done;
    if (plan->note[0])
        LOG_INFO("video", "%s: %s", in->path, plan->note);
    struct vis_grid pair = {1, plan->grid.h, plan->grid.w};
    const size_t frame_bytes = (size_t)plan->width * (size_t)plan->height * 3;
    const int64_t per_pair = vis_grid_tokens(&pair);
    size_t emb_bytes;
    if (!size_mul((size_t)plan->tokens, (size_t)H * sizeof(float), &emb_bytes)) {
        rc = seer_err(SEER_EINVAL, "%s: %lld video tokens are too many", in->path, (long long)plan->tokens);
        goto done;
    }
    frames[0] = seer_malloc(frame_bytes);
    frames[1] = seer_malloc(frame_bytes);
    rows = seer_malloc((size_t)vis_grid_rows(&pair) * VIS_ROW_DIM * sizeof *rows);
    out = seer_malloc(emb_bytes);
    if (!frames[0] || !frames[1] || !rows || !out) {
        rc = seer_err(SEER_ENOMEM, "%s: no memory for %lld video tokens", in->path, (long long)plan->tokens);
        goto done;
    }
    for (int64_t g = 0; g < plan->n_groups && !rc; g++) {
        /* the last pair of an odd count has one frame: vis_patchify repeats it (spec §5.3) */
        const int64_t count = MIN(2, plan->n_frames - 2 * g);
        struct vis_grid got;
        rc = video_read_frames(v, plan, 2 * g, count, frames);
        t0 = seer_time_now();
        if (!rc)
            rc = vis_patchify((const uint8_t *const *)frames, (int)count, plan->width, plan->height, vc->image_mean,
                              vc->image_std, rows, &got);
        const double t1 = seer_time_now();
        if (!rc)
            rc = vit_encode(m->vit, rows, &pair, 1, out + (size_t)(g * per_pair) * (size_t)H);
        tm.patchify += t1 - t0;
        tm.encode += seer_time_now() - t1;
        if (g_progress)
            g_progress(in->path, g + 1, plan->n_groups, g_progress_user);
    }
    if (!rc) {
        *emb = out;
        out = NULL;
        *grid = plan->grid;
        const struct video_stats st = video_file_stats(v);
        tm.decode = st.decode_seconds;
        tm.convert = st.scale_seconds;
        tm.frames = plan->n_frames, tm.pairs = plan->n_groups, tm.tokens = plan->tokens;
        tm.frames_decoded = st.frames_decoded, tm.seeks = st.seeks;
        g_timings = tm;
    }
done:
    free(out), free(rows), free(frames[0]), free(frames[1]);
    video_close(v);
    return rc;
}

/* ---- expanding the prompt (spec §5.4) -------------------------------------------------------------- */

struct ids_buf {
    int32_t *ids;
    size_t n, cap;
};

static int ids_add(struct ids_buf *b, const int32_t *ids, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = MAX(b->cap * 2, b->n + n + 256);
        int32_t *t = seer_realloc(b->ids, cap * sizeof *t);
        if (!t)
            return seer_err(SEER_ENOMEM, "no memory for a %zu-token prompt", b->n + n);
        b->ids = t, b->cap = cap;
    }
    memcpy(b->ids + b->n, ids, n * sizeof *ids);
    b->n += n;
    return SEER_OK;
}

/* One video's expansion: per pair "<t.t seconds>" (tokenized as text, which the special tokens
   around it keep separate from its neighbours), <|vision_start|>, the pads, <|vision_end|>. */
static int expand(seer_model *m, const struct video_plan *p, int32_t vs, int32_t ve, struct ids_buf *b)
{
    const int64_t per_pair = (p->height / VIS_FACTOR) * (p->width / VIS_FACTOR);
    int rc = SEER_OK;
    for (int64_t g = 0; g < p->n_groups && !rc; g++) {
        char ts[64];
        int32_t *tids = NULL;
        size_t nt;
        video_timestamp_text(p->group_seconds[g], ts, sizeof ts);
        if ((rc = seer_tokenize(m, ts, strlen(ts), 0, &tids, &nt)))
            break;
        rc = ids_add(b, tids, nt);
        free(tids);
        if (!rc)
            rc = ids_add(b, &vs, 1);
        for (int64_t t = 0; t < per_pair && !rc; t++)
            rc = ids_add(b, &m->id_video_pad, 1);
        if (!rc)
            rc = ids_add(b, &ve, 1);
    }
    return rc;
}

int api_fuse_videos(seer_model *m, struct api_fused *f, const struct api_videos *q)
{
    size_t n_pads = 0;
    for (size_t i = 0; i < f->n_ids; i++)
        n_pads += f->ids[i] == m->id_video_pad;
    if (n_pads != q->n)
        return seer_err(SEER_EINVAL, "the prompt has %zu video placeholder%s but %zu video%s %s given", n_pads,
                        n_pads == 1 ? "" : "s", q->n, q->n == 1 ? "" : "s", q->n == 1 ? "was" : "were");
    if (!q->n)
        return SEER_OK;
    if (!m->vit)
        return seer_err(SEER_EUNSUPPORTED, "this model has no vision tower: pass its mmproj GGUF with --mmproj "
                        "(or use the Hugging Face model directory)");
    const int32_t vs = tok_token_to_id(m->tok, "<|vision_start|>", strlen("<|vision_start|>"));
    const int32_t ve = tok_token_to_id(m->tok, "<|vision_end|>", strlen("<|vision_end|>"));
    if (vs < 0 || ve < 0)
        return seer_err(SEER_EFORMAT, "the tokenizer has no <|vision_start|> / <|vision_end|> tokens");
    const double t0 = seer_time_now();
    struct vis_grid *grids = seer_calloc(q->n, sizeof *grids);
    float **emb = seer_calloc(q->n, sizeof *emb);
    struct ids_buf b = {0};
    size_t k = 0;
    int rc = grids && emb ? SEER_OK : seer_err(SEER_ENOMEM, "no memory for video embeddings");
    for (size_t i = 0; i < f->n_ids && !rc; i++) {
        if (f->ids[i] != m->id_video_pad) {
            rc = ids_add(&b, &f->ids[i], 1);
            continue;
        }
        /* the template's compound <|vision_start|><|video_pad|><|vision_end|> is replaced whole */
        const bool compound = b.n > 0 && b.ids[b.n - 1] == vs && i + 1 < f->n_ids && f->ids[i + 1] == ve;
        struct video_plan plan = {0};
        if (compound)
            b.n--;
        if (!(rc = encode_video(m, &q->v[k], &plan, &emb[k], &grids[k])))
            rc = expand(m, &plan, vs, ve, &b);
        video_plan_clear(&plan);
        k++;
        i += compound;
    }
    if (rc) {
        for (size_t j = 0; j < q->n && emb; j++)
            free(emb[j]);
        free(emb), free(grids), free(b.ids);
        return rc;
    }
    free(f->ids);
    f->ids = b.ids;
    f->n_ids = b.n;
    f->vgrids = grids;
    f->vemb = emb;
    f->n_videos = q->n;
    f->seconds += seer_time_now() - t0;
    return SEER_OK;
}
