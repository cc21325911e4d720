/* video.c — videos in the public API (api/video.h). The data path, one direction, one frame pair at
   a time: container (video/demux.c, read once per file or once per seer_video) → planned frames as
   RGB at the planned size (video/plan.c, spec §5.3) → patch rows of one temporal group
   (vision/preprocess) → the tower with a (1, h, w) grid, which is exactly one attention segment of
   the clip's (t, h, w) grid (spec §4.5) → the pair's merged embeddings, kept. The prompt's
   placeholder is replaced by per-pair timestamp text and pad runs (spec §5.4), which
   api_prefill_fused places at spec §3.2's positions. Measuring runs the same plan and expansion
   and only counts. Nothing here outlives a call but what the caller holds (a seer_video, a
   context's queue): progress and timings travel with the call.
   Divisions: opened videos · inputs · encoding · expanding the prompt · measuring. */
#include "api/video.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/error.h"
#include "core/log.h"
#include "core/util.h"

/* ---- opened videos ---------------------------------------------------------------------------- */

struct seer_video {
    video_file *file;
    struct video_plan plan; /* the last seer_video_measure's: its arrays are lent through the info */
};

/* The model's decoding limits for a video file (seer_model_params' n_threads and max_image_pixels);
   no model: the defaults. */
static int open_file(const seer_model *m, const char *path, video_file **out)
{
    const struct video_limits lim = {m ? m->video_threads : 0, m ? m->limits.max_pixels : 0};
    return video_open(path, &lim, out);
}

int seer_video_open(const seer_model *m, const char *path, seer_video **out)
{
    if (!path || !out)
        return seer_err(SEER_EINVAL, "seer_video_open: a path and an out pointer are required");
    seer_video *v = seer_calloc(1, sizeof *v);
    if (!v)
        return seer_err(SEER_ENOMEM, "%s: no memory for a video", path);
    int rc = open_file(m, path, &v->file);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    return SEER_OK;
}

void seer_video_free(seer_video *v)
{
    if (!v)
        return;
    video_plan_clear(&v->plan);
    video_close(v->file);
    free(v);
}

/* ---- inputs ----------------------------------------------------------------------------------- */

struct video_settings api_video_settings(const seer_model *m, const seer_video_input *in)
{
    struct video_settings s = m ? m->video_defaults : video_settings_default();
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

int api_videos_push(struct api_videos *q, const seer_model *m, const seer_video_input *in)
{
    if (!seer_grow(&q->v, &q->cap, q->n + 1, sizeof *q->v, 4))
        return seer_err(SEER_ENOMEM, "no memory for the video queue");
    char *p = in->video ? NULL : seer_strdup(in->path);
    if (!in->video && !p)
        return seer_err(SEER_ENOMEM, "no memory for the video queue");
    q->v[q->n++] = (struct api_video){p, in->video, api_video_settings(m, in)};
    return SEER_OK;
}

void api_videos_clear(struct api_videos *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->v[i].path);
    q->n = 0;
}

/* The file of a queued video: the opened one, or `path` opened now (*owned, timed into *demux). */
static int video_of(const seer_model *m, const struct api_video *in, video_file **file, video_file **owned,
                    double *demux)
{
    *owned = NULL;
    if (in->opened) {
        *file = in->opened->file;
        return SEER_OK;
    }
    const double t0 = seer_time_now();
    int rc = open_file(m, in->path, owned);
    *demux += seer_time_now() - t0;
    *file = *owned;
    return rc;
}

/* ---- encoding, one pair at a time --------------------------------------------------------------- */

/* Decodes and encodes one planned video: *emb [plan tokens][H] (seer_malloc'ed); the time goes to
   *tm, each pair done to p->on_video_progress. */
static int encode_video(seer_model *m, video_file *v, const struct video_plan *plan, const seer_generate_params *p,
                        float **emb, struct api_video_timings *tm)
{
    vit_model *vit;
    int rc = api_vision_tower(m, &vit); /* loaded by the first image or video */
    if (rc)
        return rc;
    const struct vit_config *vc = vit_model_config(vit);
    const int64_t H = vc->out_dim;
    const char *name = video_file_name(v);
    uint8_t *frames[2] = {NULL, NULL};
    float *rows = NULL, *out = NULL;
    const struct video_stats before = video_file_stats(v);
    struct vis_grid pair = {1, plan->grid.h, plan->grid.w};
    const size_t frame_bytes = (size_t)plan->width * (size_t)plan->height * 3;
    const int64_t per_pair = vis_grid_tokens(&pair);
    size_t emb_bytes;
    if (!size_mul((size_t)plan->tokens, (size_t)H * sizeof(float), &emb_bytes))
        return seer_err(SEER_EINVAL, "%s: %lld video tokens are too many", name, (long long)plan->tokens);
    frames[0] = seer_malloc(frame_bytes);
    frames[1] = seer_malloc(frame_bytes);
    rows = seer_malloc((size_t)vis_grid_rows(&pair) * VIS_ROW_DIM * sizeof *rows);
    out = seer_malloc(emb_bytes);
    if (!frames[0] || !frames[1] || !rows || !out)
        rc = seer_err(SEER_ENOMEM, "%s: no memory for %lld video tokens", name, (long long)plan->tokens);
    for (int64_t g = 0; g < plan->n_groups && !rc; g++) {
        /* the last pair of an odd count has one frame: vis_patchify repeats it (spec §5.3) */
        const int64_t count = MIN(2, plan->n_frames - 2 * g);
        struct vis_grid got;
        rc = video_read_frames(v, plan, 2 * g, count, frames);
        const double t0 = seer_time_now();
        if (!rc)
            rc = vis_patchify((const uint8_t *const *)frames, (int)count, plan->width, plan->height, vc->image_mean,
                              vc->image_std, rows, &got);
        const double t1 = seer_time_now();
        if (!rc) {
            api_device_lock(m);
            rc = vit_encode_yielding(vit, rows, &pair, 1, out + (size_t)(g * per_pair) * (size_t)H, api_device_yield, m);
            api_device_unlock(m);
        }
        tm->patchify += t1 - t0;
        tm->encode += seer_time_now() - t1;
        if (!rc && p && p->on_video_progress && p->on_video_progress(name, g + 1, plan->n_groups, p->user_data))
            rc = seer_err(SEER_ECANCELED, "%s: encoding stopped by the caller after %lld of %lld frame pairs", name,
                          (long long)(g + 1), (long long)plan->n_groups);
    }
    /* a video opened once serves several calls: only this call's share of its counters */
    const struct video_stats st = video_file_stats(v);
    tm->decode += st.decode_seconds - before.decode_seconds;
    tm->convert += st.scale_seconds - before.scale_seconds;
    tm->frames_decoded += st.frames_decoded - before.frames_decoded;
    tm->seeks += st.seeks - before.seeks;
    if (!rc) {
        *emb = out;
        out = NULL;
        tm->frames += plan->n_frames, tm->pairs += plan->n_groups, tm->tokens += plan->tokens;
    }
    free(out), free(rows), free(frames[0]), free(frames[1]);
    return rc;
}

/* ---- expanding the prompt (spec §5.4) -------------------------------------------------------------- */

/* Ids being built, or (count_only) just counted: measuring walks the very same expansion. */
struct ids_buf {
    int32_t *ids;
    size_t n, cap;
    bool count_only;
};

static int ids_add(struct ids_buf *b, const int32_t *ids, size_t n)
{
    if (!b->count_only) {
        if (!seer_grow(&b->ids, &b->cap, b->n + n, sizeof *b->ids, 256))
            return seer_err(SEER_ENOMEM, "no memory for a %zu-token prompt", b->n + n);
        memcpy(b->ids + b->n, ids, n * sizeof *ids);
    }
    b->n += n;
    return SEER_OK;
}

/* One video's expansion: per pair "<t.t seconds>" (tokenized as text, which the special tokens
   around it keep separate from its neighbours), <|vision_start|>, the pads, <|vision_end|>. */
static int expand(const seer_model *m, const struct video_plan *p, int32_t vs, int32_t ve, struct ids_buf *b)
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

static int vision_markers(const seer_model *m, int32_t *vs, int32_t *ve)
{
    *vs = tok_token_to_id(m->tok, "<|vision_start|>", strlen("<|vision_start|>"));
    *ve = tok_token_to_id(m->tok, "<|vision_end|>", strlen("<|vision_end|>"));
    if (*vs < 0 || *ve < 0)
        return seer_err(SEER_EFORMAT, "the tokenizer has no <|vision_start|> / <|vision_end|> tokens");
    return SEER_OK;
}

/* Plans queued video `in` and, unless measuring, encodes it; its expansion goes to b. */
static int fuse_one(seer_model *m, const struct api_video *in, const seer_generate_params *p, bool measure,
                    int32_t vs, int32_t ve, struct ids_buf *b, float **emb, struct vis_grid *grid,
                    struct api_video_timings *tm)
{
    video_file *v, *owned;
    struct video_plan plan = {0};
    int rc = video_of(m, in, &v, &owned, &tm->demux);
    if (!rc)
        rc = video_plan_make(video_file_info(v), video_file_name(v), &in->s, &plan);
    plan.resize = m->resize; /* frames are resized as the model's images are (seer_model_params.resize) */
    if (!rc && plan.note[0])
        LOG_INFO("video", "%s: %s", video_file_name(v), plan.note);
    if (!rc && !measure)
        rc = encode_video(m, v, &plan, p, emb, tm);
    if (!rc)
        rc = expand(m, &plan, vs, ve, b);
    if (!rc)
        *grid = plan.grid;
    video_plan_clear(&plan);
    video_close(owned);
    return rc;
}

int api_fuse_videos(seer_model *m, struct api_fused *f, const struct api_videos *q, const seer_generate_params *p,
                    bool measure)
{
    size_t n_pads = 0;
    for (size_t i = 0; i < f->n_ids; i++)
        n_pads += f->ids[i] == m->id_video_pad;
    if (n_pads != q->n)
        return seer_err(SEER_EINVAL, "the prompt has %zu video placeholder%s but %zu video%s %s given", n_pads,
                        n_pads == 1 ? "" : "s", q->n, q->n == 1 ? "" : "s", q->n == 1 ? "was" : "were");
    if (!q->n)
        return SEER_OK;
    if (!m->vision_src)
        return api_no_vision(m);
    int32_t vs, ve;
    int rc = vision_markers(m, &vs, &ve);
    if (rc)
        return rc;
    const double t0 = seer_time_now();
    struct vis_grid *grids = seer_calloc(q->n, sizeof *grids);
    float **emb = measure ? NULL : seer_calloc(q->n, sizeof *emb);
    struct ids_buf b = {.count_only = measure};
    size_t k = 0;
    rc = grids && (emb || measure) ? SEER_OK : seer_err(SEER_ENOMEM, "no memory for video embeddings");
    for (size_t i = 0; i < f->n_ids && !rc; i++) {
        if (f->ids[i] != m->id_video_pad) {
            rc = ids_add(&b, &f->ids[i], 1);
            continue;
        }
        /* only the pad is replaced: the template's <|vision_start|> and <|vision_end|> stay around
           the pairs, as transformers 5.23 writes them (spec §5.4) */
        rc = fuse_one(m, &q->v[k], p, measure, vs, ve, &b, emb ? &emb[k] : NULL, &grids[k], &f->video);
        k++;
    }
    if (rc) {
        for (size_t j = 0; j < q->n && emb; j++)
            free(emb[j]);
        free(emb), free(grids), free(b.ids);
        return rc;
    }
    if (measure) {
        free(grids);
        f->n_ids = b.n; /* the ids themselves are not kept: only their number is asked */
        return SEER_OK;
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

/* ---- measuring ---------------------------------------------------------------------------------- */

int seer_video_measure(const seer_model *m, const seer_video_input *in, seer_video_info *info)
{
    if (!in || !info || (!in->video && !in->path))
        return seer_err(SEER_EINVAL, "seer_video_measure: an input with a path or a video, and an info are required");
    if (m && !m->vision_src)
        return api_no_vision(m);
    const struct api_video q = {(char *)in->path, in->video, api_video_settings(m, in)};
    video_file *v, *owned;
    struct video_plan plan = {0};
    struct ids_buf b = {.count_only = true};
    int32_t vs, ve;
    double demux = 0;
    int rc = m ? vision_markers(m, &vs, &ve) : SEER_OK;
    if (!rc)
        rc = video_of(m, &q, &v, &owned, &demux);
    if (!rc)
        rc = video_plan_make(video_file_info(v), video_file_name(v), &q.s, &plan);
    if (!rc && m)
        rc = expand(m, &plan, vs, ve, &b);
    if (rc) {
        video_plan_clear(&plan);
        video_close(owned);
        return rc;
    }
    const struct video_info *src = video_file_info(v);
    const int64_t H = m ? m->lm->cfg.n_embd : 0, rows = (plan.height / VIS_PATCH) * (plan.width / VIS_PATCH);
    seer_video_info r = {
        .duration = src->duration,
        .video_seconds = MIN(src->duration, src->seconds[src->n_frames - 1] + 1 / src->fps),
        .width = src->width, .height = src->height, .rotation = src->rotation,
        .frames = src->n_frames, .fps = src->fps, .fps_source = src->fps_source, .codec = src->codec,
        .sampled_frames = plan.n_frames, .pairs = plan.n_groups,
        .resized_width = plan.width, .resized_height = plan.height,
        .tokens = plan.tokens, .prompt_tokens = m ? (int64_t)b.n : -1,
        .memory_bytes = !m ? -1
                           : plan.tokens * H * (int64_t)sizeof(float) + rows * VIS_ROW_DIM * (int64_t)sizeof(float) +
                                 2 * (int64_t)plan.width * plan.height * 3,
    };
    snprintf(r.note, sizeof r.note, "%s", plan.note);
    if (in->video) { /* the plan stays with the video, lent through the info */
        video_plan_clear(&in->video->plan);
        in->video->plan = plan;
        r.frame_index = plan.index, r.frame_seconds = plan.seconds, r.pair_seconds = plan.group_seconds;
    } else {
        video_plan_clear(&plan);
    }
    video_close(owned);
    *info = r;
    return SEER_OK;
}

int seer_is_video(const char *path)
{
    media_doc *d = NULL;
    if (!path || !strcmp(path, "-"))
        return 0;
    if (media_open(path, NULL, &d) == SEER_OK) {
        const bool v = media_kind_of(d) == MEDIA_VIDEO;
        media_close(d);
        return v;
    }
    /* no magic bytes an image reader knows: MPEG-TS and raw streams are found by the demuxer */
    video_file *v = NULL;
    const bool ok = video_open(path, NULL, &v) == SEER_OK;
    video_close(v);
    seer_err_clear(); /* a probe, not a failure of the caller's */
    return ok;
}
