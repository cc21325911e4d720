/* vision.c — images in the public API (api/vision.h). The data path, one direction:
   file or pixels → RGB (media/) → resized, normalised patch rows (vision/preprocess) → merged
   embeddings (vision/vit) → rows written over the expanded <|image_pad|> runs of the prompt
   (spec §4.8, §5.4) → decoder at the MRoPE positions of spec §3.2 (lm/mrope, lm/qwen35).
   Divisions: loading the tower · image inputs · fusing a prompt · feeding it. */
#define _DEFAULT_SOURCE
#include "api/vision.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/error.h"
#include "core/io.h"
#include "core/jget.h"
#include "core/log.h"
#include "core/util.h"
#include "lm/mrope.h"
#include "media/decode.h"
#include "vision/vit.h"

/* preprocessor_config.json is a few hundred bytes; anything near this is not one. */
#define MAX_PREPROCESSOR_BYTES ((size_t)1 << 20)
/* Tokens ↔ pixels: one merged token covers 32 × 32 pixels (spec §4.7). */
#define PIXELS_PER_TOKEN (VIS_FACTOR * VIS_FACTOR)

/* ---- loading the tower ------------------------------------------------------------------------ */

/* The one mmproj*.gguf in the text model's directory (LM Studio / Ollama layout), or none. */
static int find_mmproj(const char *model_path, char *out, size_t cap)
{
    char dir[4096];
    const char *slash = strrchr(model_path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - model_path), model_path);
    else
        snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir[0] ? dir : "/");
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "mmproj", 6) || len < 5 || strcmp(e->d_name + len - 5, ".gguf"))
            continue;
        if (++found == 1 && snprintf(out, cap, "%s/%s", dir, e->d_name) >= (int)cap)
            found = 0; /* a path too long to open: as if absent */
    }
    closedir(d);
    if (found > 1)
        LOG_WARN("vision", "%s: %d mmproj*.gguf files beside the model; pass the one to use with --mmproj", dir, found);
    return found == 1;
}

int api_pixel_window(const char *hf_dir, int64_t min_tokens, int64_t max_tokens, int64_t *min_px, int64_t *max_px)
{
    int64_t lo_px = VIS_IMAGE_MIN_PIXELS, hi_px = VIS_IMAGE_MAX_PIXELS;
    char path[4200];
    json_t *root;
    int rc = jget_load_hf_processor(hf_dir, "preprocessor_config.json", "image_processor", MAX_PREPROCESSOR_BYTES,
                                    "MAX_PREPROCESSOR_BYTES", &root, path, sizeof path);
    if (rc)
        return rc;
    if (root) {
        struct jget_ctx jc = {path, ""}, sc = {path, "size."};
        const json_t *size = json_object_get(root, "size");
        const int64_t lo = 1, hi = (int64_t)1 << 40;
        if (json_is_object(size)) {
            rc = jget_i64(&sc, size, "shortest_edge", lo, hi, &lo_px, &lo_px);
            if (!rc)
                rc = jget_i64(&sc, size, "longest_edge", lo, hi, &hi_px, &hi_px);
        }
        if (!rc)
            rc = jget_i64(&jc, root, "min_pixels", lo, hi, &lo_px, &lo_px);
        if (!rc)
            rc = jget_i64(&jc, root, "max_pixels", lo, hi, &hi_px, &hi_px);
        json_decref(root);
        if (rc)
            return rc;
    }
    if (min_tokens > 0)
        lo_px = min_tokens * PIXELS_PER_TOKEN;
    if (max_tokens > 0)
        hi_px = max_tokens * PIXELS_PER_TOKEN;
    if (lo_px > hi_px)
        return seer_err(SEER_EINVAL, "the image token window is empty: at least %lld tokens but at most %lld",
                        (long long)(lo_px / PIXELS_PER_TOKEN), (long long)(hi_px / PIXELS_PER_TOKEN));
    *min_px = lo_px;
    *max_px = hi_px;
    return SEER_OK;
}

int api_no_vision(const seer_model *m)
{
    int rc = api_model_config(m, "an image or a video");
    if (rc)
        return rc;
    const char *arch = m->lm->cfg.text_only_arch;
    if (arch[0])
        return seer_err(SEER_EUNSUPPORTED, "%s: a text-only model (%s): it cannot see images or videos", m->path,
                        arch);
    return seer_err(SEER_EUNSUPPORTED, "this model has no vision tower: pass its mmproj GGUF with --mmproj "
                    "(or use the Hugging Face model directory)");
}

int api_vision_load(seer_model *m, const char *path, const seer_model_params *p)
{
    char found[4096];
    const bool hf = io_path_kind(path) == IO_DIR;
    const char *src = hf ? path : p->mmproj;
    /* a text-only checkpoint (transformers' Qwen3_5ForCausalLM, spec §8) has no tower to load */
    const bool has = !m->lm->cfg.text_only_arch[0];
    int rc;
    m->limits = api_media_limits(p);
    if ((rc = vis_resize_parse(p->resize, &m->resize)))
        return rc;
    if ((rc = api_pixel_window(hf ? path : NULL, p->image_min_tokens, p->image_max_tokens, &m->img_min_pixels,
                               &m->img_max_pixels)))
        return rc;
    if (!src && find_mmproj(path, found, sizeof found))
        src = found;
    if (!src || !has) {
        LOG_INFO("vision", "%s: %s: text only", path,
                 has ? "no vision projector (mmproj) given or found beside it" : "no vision tower in the checkpoint");
        return SEER_OK;
    }
    m->video_defaults = video_settings_default();
    if ((rc = video_settings_load(hf ? path : NULL, &m->video_defaults)))
        return rc;
    /* the configuration is checked even without weights, so vocab_only refuses what a full load would */
    struct vit_config vc;
    if ((rc = vit_probe(src, !m->vocab_only, &vc)))
        return rc;
    if (vc.out_dim != m->lm->cfg.n_embd)
        return seer_err(SEER_EINVAL, "%s: the vision projector outputs %lld values per token but the text model %s "
                        "has hidden size %lld: they are not one model", src, (long long)vc.out_dim, path,
                        (long long)m->lm->cfg.n_embd);
    /* the weights wait for the first image or video (api_vision_tower): a text-only run of a
       model with a tower never reads them */
    if (!(m->vision_src = seer_strdup(src)))
        return seer_err(SEER_ENOMEM, "no memory for a model");
    return SEER_OK;
}

int api_vision_tower(seer_model *m, vit_model **out)
{
    int rc = m->vision_src ? api_model_weights(m, "encoding an image or video") : api_no_vision(m);
    if (rc)
        return rc;
    pthread_mutex_lock(&m->vit_lock);
    api_device_lock(m); /* weights are placed on the device other contexts are running on */
    if (!m->vit && !(rc = vit_load(m->vision_src, m->be, &m->vit)) && (rc = io_check_all())) {
        /* as at model load: a file rewritten while it was read gives neither tower */
        vit_free(m->vit);
        m->vit = NULL;
    }
    api_device_unlock(m);
    *out = m->vit;
    pthread_mutex_unlock(&m->vit_lock);
    return rc;
}

/* ---- image inputs ----------------------------------------------------------------------------- */

struct media_limits api_media_limits(const seer_model_params *p)
{
    struct media_limits lim = media_limits_default();
    if (p && p->max_image_pixels > 0)
        lim.max_pixels = p->max_image_pixels;
    if (p && p->pdf_dpi > 0)
        lim.dpi = p->pdf_dpi;
    return lim;
}

int api_image_decode(const struct media_limits *lim, const seer_image_input *in, struct image_rgb8 *out)
{
    if ((in->data != NULL) + (in->path && !in->data) + (in->rgb != NULL) != 1)
        return seer_err(SEER_EINVAL, "%s: an image input takes exactly one of data, path and rgb",
                        in->path ? in->path : "an image");
    if (in->data || in->path) {
        media_doc *d;
        /* bytes in memory are named by path when given (the server passes the part's origin) */
        int rc = in->data ? media_open_memory(in->data, in->data_size, in->path ? in->path : "image data", lim, &d)
                          : media_open(in->path, lim, &d);
        if (rc)
            return rc;
        const int pages = media_page_count(d);
        if (media_kind_of(d) == MEDIA_VIDEO)
            rc = seer_err(SEER_EUNSUPPORTED, "%s: is a video; video input is not supported yet", media_name(d));
        else if (in->page < 0 || in->page >= pages)
            rc = seer_err(SEER_EINVAL, "%s: has %d page%s, page %d asked for", media_name(d), pages, pages == 1 ? "" : "s",
                          in->page + 1);
        else
            rc = media_decode_page(d, in->page, out);
        media_close(d);
        return rc;
    }
    if (in->width < 1 || in->height < 1)
        return seer_err(SEER_EINVAL, "image pixels need a positive size, not %dx%d", in->width, in->height);
    const size_t row = (size_t)in->width * 3, stride = in->stride ? in->stride : row;
    if (stride < row)
        return seer_err(SEER_EINVAL, "image stride %zu is less than a row of %zu bytes", stride, row);
    if ((int64_t)in->width * in->height > lim->max_pixels)
        return seer_err(SEER_EINVAL, "a %dx%d image is more than the %lld pixels allowed (max_image_pixels)",
                        in->width, in->height, (long long)lim->max_pixels);
    uint8_t *px = seer_malloc(row * (size_t)in->height);
    if (!px)
        return seer_err(SEER_ENOMEM, "no memory for a %dx%d image", in->width, in->height);
    for (int32_t y = 0; y < in->height; y++)
        memcpy(px + row * (size_t)y, in->rgb + stride * (size_t)y, row);
    *out = (struct image_rgb8){in->width, in->height, px};
    return SEER_OK;
}

int seer_image_decode(const seer_model *m, const seer_image_input *image, uint8_t **rgb, int32_t *width,
                      int32_t *height)
{
    struct image_rgb8 im;
    if (!m || !image || !rgb || !width || !height)
        return seer_err(SEER_EINVAL, "seer_image_decode: a model, an image and three out pointers are required");
    int rc = api_image_decode(&m->limits, image, &im);
    if (rc)
        return rc;
    *rgb = im.px, *width = im.width, *height = im.height;
    return SEER_OK;
}

int api_image_measure_rgb(int64_t min_pixels, int64_t max_pixels, int32_t w, int32_t h, seer_image_info *info)
{
    int64_t rh, rw;
    int rc = vis_smart_resize(h, w, VIS_FACTOR, min_pixels, max_pixels, &rh, &rw);
    if (rc)
        return rc;
    *info = (seer_image_info){w, h, (int32_t)rw, (int32_t)rh, (rh / VIS_FACTOR) * (rw / VIS_FACTOR)};
    return SEER_OK;
}

int api_images_push(struct api_images *q, struct image_rgb8 *im)
{
    if (!seer_grow(&q->img, &q->cap, q->n + 1, sizeof *q->img, 4))
        return seer_err(SEER_ENOMEM, "no memory for the image queue");
    q->img[q->n++] = *im;
    *im = (struct image_rgb8){0};
    return SEER_OK;
}

void api_images_clear(struct api_images *q)
{
    for (size_t i = 0; i < q->n; i++)
        image_rgb8_free(&q->img[i]);
    q->n = 0;
}

/* ---- fusing a prompt -------------------------------------------------------------------------- */

/* Preprocesses (spec §5.2) and encodes (spec §4) one image: *emb [tokens][H], seer_malloc'ed. */
static int encode_image(seer_model *m, const struct image_rgb8 *im, float **emb, struct vis_grid *grid)
{
    vit_model *vit;
    int rc = api_vision_tower(m, &vit);
    if (rc)
        return rc;
    const struct vit_config *vc = vit_model_config(vit);
    const float *mean = vc->image_mean, *std = vc->image_std;
    float *rows = NULL;
    rc = vis_preprocess_image(im->px, im->width, im->height, m->img_min_pixels, m->img_max_pixels, m->resize,
                              mean, std, &rows, grid);
    if (rc)
        return rc;
    const int64_t tokens = vis_grid_tokens(grid);
    float *out = seer_malloc((size_t)tokens * (size_t)vc->out_dim * sizeof *out);
    if (!out)
        rc = seer_err(SEER_ENOMEM, "no memory for %lld image embeddings", (long long)tokens);
    else {
        api_device_lock(m);
        rc = vit_encode_yielding(vit, rows, grid, 1, out, api_device_yield, m);
        api_device_unlock(m);
        if (rc)
            seer_freep(&out);
    }
    free(rows);
    if (!rc)
        *emb = out;
    return rc;
}

void api_fused_clear(struct api_fused *f)
{
    for (size_t i = 0; i < f->n_images; i++)
        free(f->emb[i]);
    for (size_t i = 0; i < f->n_videos; i++)
        free(f->vemb[i]);
    free(f->vemb);
    free(f->vgrids);
    free(f->emb);
    free(f->grids);
    free(f->ids);
    memset(f, 0, sizeof *f);
}

/* The grid an image gets (spec §5.2) without preprocessing it: what measuring needs. */
static int measure_image(const seer_model *m, const struct image_rgb8 *im, struct vis_grid *grid)
{
    seer_image_info info;
    int rc = api_image_measure_rgb(m->img_min_pixels, m->img_max_pixels, im->width, im->height, &info);
    if (!rc)
        *grid = (struct vis_grid){1, info.resized_height / VIS_PATCH, info.resized_width / VIS_PATCH};
    return rc;
}

int api_fuse(seer_model *m, const int32_t *ids, size_t n_ids, const struct api_images *q, bool measure,
             struct api_fused *out)
{
    struct api_fused f = {0};
    size_t n_pads = 0;
    int rc = SEER_OK;
    for (size_t i = 0; i < n_ids; i++)
        n_pads += ids[i] == m->id_image_pad;
    if (n_pads != q->n)
        return seer_err(SEER_EINVAL, "the prompt has %zu image placeholder%s but %zu image%s %s given", n_pads,
                        n_pads == 1 ? "" : "s", q->n, q->n == 1 ? "" : "s", q->n == 1 ? "was" : "were");
    if (q->n && !m->vision_src)
        return api_no_vision(m);
    const double t0 = seer_time_now();
    f.n_images = q->n;
    f.grids = seer_calloc(q->n ? q->n : 1, sizeof *f.grids);
    f.emb = seer_calloc(q->n ? q->n : 1, sizeof *f.emb);
    if (!f.grids || !f.emb)
        rc = seer_err(SEER_ENOMEM, "no memory for image embeddings");
    size_t total = n_ids;
    for (size_t k = 0; k < q->n && !rc; k++)
        if (!(rc = measure ? measure_image(m, &q->img[k], &f.grids[k]) : encode_image(m, &q->img[k], &f.emb[k], &f.grids[k])))
            total += (size_t)vis_grid_tokens(&f.grids[k]) - 1;
    if (!rc && !(f.ids = seer_malloc(total * sizeof *f.ids)))
        rc = seer_err(SEER_ENOMEM, "no memory for a %zu-token prompt", total);
    for (size_t i = 0, k = 0; i < n_ids && !rc; i++) {
        if (ids[i] != m->id_image_pad) {
            f.ids[f.n_ids++] = ids[i];
            continue;
        }
        /* spec §5.4: one <|image_pad|> becomes (h/2)·(w/2) of them */
        for (int64_t t = vis_grid_tokens(&f.grids[k++]); t > 0; t--)
            f.ids[f.n_ids++] = m->id_image_pad;
    }
    f.seconds = seer_time_now() - t0;
    if (rc) {
        api_fused_clear(&f);
        return rc;
    }
    *out = f;
    return SEER_OK;
}

/* ---- feeding it ------------------------------------------------------------------------------- */

/* The decoder over the prompt's rows: in one call, or micro-batch by micro-batch when the caller
   follows progress (a rows view and the matching slice of each position axis per call). Returns 1
   when on_progress asked to stop; the state then holds *n_done rows. */
static int forward_batches(seer_context *c, const tensor *emb, const int32_t *pos, size_t n,
                           const seer_generate_params *p, float *logits, size_t *n_done)
{
    const size_t step = p && p->on_progress ? (size_t)c->st->n_ubatch : n;
    int32_t *slice = step < n ? seer_malloc(3 * step * sizeof *slice) : NULL;
    int rc = step < n && !slice ? seer_err(SEER_ENOMEM, "no memory for positions") : SEER_OK;
    for (*n_done = 0; *n_done < n && !rc;) {
        const size_t k = MIN(step, n - *n_done);
        const bool last = *n_done + k == n;
        const int32_t *kp = pos;
        if (step < n) {
            for (int a = 0; a < 3; a++)
                memcpy(slice + (size_t)a * k, pos + (size_t)a * n + *n_done, k * sizeof *slice);
            kp = slice;
        }
        const int64_t ne[2] = {emb->ne[0], (int64_t)k};
        const size_t nb[2] = {emb->nb[0], emb->nb[1]};
        tensor rows = tensor_view(emb, 2, ne, nb, *n_done * emb->nb[1]);
        float *all = api_all_logits_next(c);
        const size_t V = (size_t)c->m->lm->cfg.n_vocab;
        const enum qwen35_logits mode = all ? QWEN35_LOGITS_ALL : last ? QWEN35_LOGITS_LAST : QWEN35_LOGITS_NONE;
        rc = qwen35_forward(c->m->lm, c->st, &rows, kp, mode, all ? all : logits, true);
        if (!rc && all && last)
            memcpy(logits, all + (k - 1) * V, V * sizeof *logits);
        if (rc)
            break;
        *n_done += k;
        if (p && p->on_progress && api_progress_unlocked(c->m, p, (int64_t)*n_done, (int64_t)n) && !last)
            rc = 1;
    }
    free(slice);
    return rc;
}

int api_prefill_fused(seer_context *c, const int32_t *feed, size_t n, const struct api_fused *f,
                      const seer_generate_params *p, float *logits, size_t *n_done)
{
    seer_model *m = c->m;
    const int64_t H = m->lm->cfg.n_embd;
    struct mrope_ids tok = {m->id_image_pad, m->id_video_pad};
    struct mrope_grid *grids = seer_calloc(f->n_images + f->n_videos + 1, sizeof *grids);
    int32_t *pos = seer_malloc(3 * n * sizeof *pos);
    backend_buffer *buf = NULL;
    tensor emb;
    int64_t p_end;
    int rc = SEER_OK;
    if (!grids || !pos)
        rc = seer_err(SEER_ENOMEM, "no memory for %zu positions", n);
    for (size_t k = 0; k < f->n_images && !rc; k++)
        grids[k] = (struct mrope_grid){f->grids[k].t, f->grids[k].h, f->grids[k].w};
    for (size_t k = 0; k < f->n_videos && !rc; k++)
        grids[f->n_images + k] = (struct mrope_grid){f->vgrids[k].t, f->vgrids[k].h, f->vgrids[k].w};
    if (!rc)
        rc = mrope_positions(feed, (int64_t)n, &tok, grids, (int)f->n_images, grids + f->n_images, (int)f->n_videos,
                             c->st->pos_next, pos, &p_end);
    if (!rc && !tensor_init4(&emb, DT_F32, H, (int64_t)n, 1, 1))
        rc = seer_err(SEER_EINVAL, "a %zu-token prompt is too large", n);
    if (!rc)
        rc = backend_tensor_alloc(m->be, &emb, &buf);
    if (!rc)
        rc = qwen35_embed(m->lm, c->st, feed, (int64_t)n, &emb);
    /* spec §4.8: image k's rows replace the k-th run of pads, in order; a video's rows fill its
       pad runs (one per frame pair) in order */
    for (size_t i = 0, k = 0, v = 0, used = 0; i < n && !rc; i++) {
        if (feed[i] == m->id_video_pad && v < f->n_videos) {
            const size_t row = (size_t)H * sizeof(float), left = (size_t)vis_grid_tokens(&f->vgrids[v]) - used;
            size_t run = 1;
            while (run < left && i + run < n && feed[i + run] == m->id_video_pad)
                run++;
            rc = backend_tensor_set(&emb, f->vemb[v] + used * (size_t)H, i * row, run * row);
            if ((used += run) == (size_t)vis_grid_tokens(&f->vgrids[v]))
                v++, used = 0;
            i += run - 1;
            continue;
        }
        if (feed[i] != m->id_image_pad)
            continue;
        const int64_t t = vis_grid_tokens(&f->grids[k]);
        const size_t row = (size_t)H * sizeof(float);
        rc = backend_tensor_set(&emb, f->emb[k++], i * row, (size_t)t * row);
        i += (size_t)t - 1;
    }
    if (!rc)
        rc = forward_batches(c, &emb, pos, n, p, logits, n_done);
    if (!rc)
        c->st->pos_next = p_end; /* one past the largest position of the whole prompt (spec §3.2) */
    backend_buffer_free(buf);
    free(grids);
    free(pos);
    return rc;
}
