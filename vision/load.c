/* load.c — loads the vision tower and merger from an mmproj GGUF (llama.cpp's names, spec §11.6)
   or an HF directory (`model.visual.*`, spec §8) into the one internal form of vision/vit.h.
   vision/config.c reads the hyperparameters and checks every tensor's shape first.
   Divisions: weight placement · the patch kernel · name schemes · vit_load / free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/error.h"
#include "core/gguf.h"
#include "core/io.h"
#include "core/log.h"
#include "core/printable.h"
#include "core/quant.h"
#include "core/safetensors.h"
#include "core/util.h"
#include "core/weights.h"
#include "vision/vit.h"

#define MAX_CONFIG_BYTES ((size_t)1 << 20)

/* ---- weight placement ------------------------------------------------------------------------ */

static int keep_buffer(vit_model *m, backend_buffer *b)
{
    if (!seer_grow(&m->bufs, &m->cap_bufs, (size_t)m->n_bufs + 1, sizeof *m->bufs, 64)) {
        backend_buffer_free(b);
        return seer_err(SEER_ENOMEM, "vision/load.c: no memory for the tower's buffer list");
    }
    m->bufs[m->n_bufs++] = b;
    return SEER_OK;
}

/* Puts `bytes` (laid out as dst's shape and dtype) on the backend: in place when the backend can
   read host memory and the bytes live in the mapped file (CPU: nothing is copied), else copied
   into a new buffer. */
static int place_bytes(vit_model *m, tensor *dst, const void *bytes, bool borrowable)
{
    backend_buffer *b;
    int rc;
    size_t n = tensor_nbytes(dst);
    if (borrowable && m->be->iface->buffer_from_host) {
        if ((rc = backend_buffer_from_host(m->be, (void *)bytes, n, &b)) || (rc = keep_buffer(m, b)))
            return rc;
        return backend_tensor_place(dst, b, 0);
    }
    if ((rc = backend_tensor_alloc(m->be, dst, &b)) || (rc = keep_buffer(m, b)))
        return rc;
    return backend_tensor_set(dst, bytes, 0, n);
}

static const tensor *find(const struct weights *w, const char *name)
{
    int64_t i = weights_find(w, name);
    return i < 0 ? NULL : weights_tensor(w, i);
}

/* A matrix in the file's dtype, reshaped to {ne0, rows} (the file's bytes are contiguous). */
static int place_matrix(vit_model *m, const struct weights *w, const char *name, int64_t ne0, tensor *dst)
{
    const tensor *src = find(w, name);
    if (!src) /* vit_check_tensors saw every name: only a broken invariant gets here */
        return seer_err(SEER_EFORMAT, "%s: tensor '%s' is missing", weights_path(w), name);
    if (!tensor_init4(dst, src->type, ne0, tensor_nelements(src) / ne0, 1, 1) ||
        tensor_nbytes(dst) != tensor_nbytes(src))
        return seer_err(SEER_EFORMAT, "%s: tensor '%s' cannot be read as rows of %lld", weights_path(w), name,
                        (long long)ne0);
    snprintf(dst->name, sizeof dst->name, "%s", name);
    return place_bytes(m, dst, src->data, true);
}

/* A float tensor (norm, bias, position table) as f32 {ne0, n / ne0}. */
static int place_f32(vit_model *m, const struct weights *w, const char *name, int64_t ne0, tensor *dst)
{
    const tensor *src = find(w, name);
    if (!src)
        return seer_err(SEER_EFORMAT, "%s: tensor '%s' is missing", weights_path(w), name);
    int64_t n = tensor_nelements(src);
    float *v = seer_malloc((size_t)n * sizeof *v);
    if (!v)
        return seer_err(SEER_ENOMEM, "vision/load.c: no memory to convert tensor '%s'", name);
    dequantize_row(src->type, src->data, v, n);
    tensor_init4(dst, DT_F32, ne0, n / ne0, 1, 1);
    snprintf(dst->name, sizeof dst->name, "%s", name);
    int rc = place_bytes(m, dst, v, false);
    free(v);
    return rc;
}

/* ---- the patch kernel ------------------------------------------------------------------------ */

/* The mmproj's two Conv2D kernels {P, P, 3, Dv} (temporal slice 0 and 1, spec §11.6) interleaved
   into the internal {3·2·P·P, Dv} matrix: per output row and channel, P·P values of slice 0 then
   P·P of slice 1 — the (c, tt, py, px) column order of the HF Conv3d kernel and of the pixel rows
   (spec §4.1–§4.2). A byte copy of whole chunks, so the dtype and every value are kept. */
static int place_patch_halves(vit_model *m, const struct weights *w, tensor *dst)
{
    const struct vit_config *c = &m->cfg;
    const tensor *h0 = find(w, "v.patch_embd.weight"), *h1 = find(w, "v.patch_embd.weight.1");
    const int64_t PP = c->patch_size * c->patch_size, C = c->in_channels, Dv = c->n_embd;
    size_t chunk;
    if (!h0 || !h1)
        return seer_err(SEER_EFORMAT, "%s: the patch kernel halves are missing", weights_path(w));
    if (h0->type != h1->type)
        return seer_err(SEER_EFORMAT, "%s: v.patch_embd.weight is %s but v.patch_embd.weight.1 is %s",
                        weights_path(w), dtype_name(h0->type), dtype_name(h1->type));
    if (!dtype_row_bytes(h0->type, PP, &chunk) ||
        !tensor_init4(dst, h0->type, C * c->temporal_patch_size * PP, Dv, 1, 1))
        return seer_err(SEER_EFORMAT, "%s: patch kernel of %s cannot be interleaved", weights_path(w),
                        dtype_name(h0->type));
    snprintf(dst->name, sizeof dst->name, "v.patch_embd.weight");
    char *buf = seer_malloc(tensor_nbytes(dst));
    if (!buf)
        return seer_err(SEER_ENOMEM, "vision/load.c: no memory for the patch kernel");
    const char *src[2] = {h0->data, h1->data};
    char *p = buf;
    for (int64_t d = 0; d < Dv; d++)
        for (int64_t ch = 0; ch < C; ch++)
            for (int tt = 0; tt < 2; tt++, p += chunk)
                memcpy(p, src[tt] + (size_t)(d * C + ch) * chunk, chunk);
    int rc = place_bytes(m, dst, buf, false);
    free(buf);
    return rc;
}

/* ---- name schemes ---------------------------------------------------------------------------- */

/* One row per tensor of a block: mmproj name, HF name, offset in struct vit_block, and what its
   rows are ('m' a matrix read in place with rows of 'D' Dv / 'I' Iv; 'f' f32 vector). */
struct slot {
    const char *gguf, *hf;
    size_t off;
    char kind, row;
};

#define B(f) offsetof(struct vit_block, f)
static const struct slot block_slots[] = {
    {"ln1.weight", "norm1.weight", B(ln1_w), 'f', 'D'},
    {"ln1.bias", "norm1.bias", B(ln1_b), 'f', 'D'},
    {"attn_qkv.weight", "attn.qkv.weight", B(qkv_w), 'm', 'D'},
    {"attn_qkv.bias", "attn.qkv.bias", B(qkv_b), 'f', 'T'},
    {"attn_out.weight", "attn.proj.weight", B(proj_w), 'm', 'D'},
    {"attn_out.bias", "attn.proj.bias", B(proj_b), 'f', 'D'},
    {"ln2.weight", "norm2.weight", B(ln2_w), 'f', 'D'},
    {"ln2.bias", "norm2.bias", B(ln2_b), 'f', 'D'},
    {"ffn_up.weight", "mlp.linear_fc1.weight", B(fc1_w), 'm', 'D'},
    {"ffn_up.bias", "mlp.linear_fc1.bias", B(fc1_b), 'f', 'I'},
    {"ffn_down.weight", "mlp.linear_fc2.weight", B(fc2_w), 'm', 'I'},
    {"ffn_down.bias", "mlp.linear_fc2.bias", B(fc2_b), 'f', 'D'},
};
#undef B

static int load_tensors(vit_model *m, const struct weights *w)
{
    const struct vit_config *c = &m->cfg;
    const bool hf = w->kind == WEIGHTS_SAFETENSORS;
    const int64_t Dv = c->n_embd, M4 = c->merge_size * c->merge_size * Dv;
    const int64_t patch_cols = c->in_channels * c->temporal_patch_size * c->patch_size * c->patch_size;
    char name[256];
    int rc;
#define NAME(...) snprintf(name, sizeof name, __VA_ARGS__)
    /* spec §4.2: HF's [Dv, 3, 2, P, P] kernel is already the {3·2·P·P, Dv} matrix */
    if ((rc = hf ? place_matrix(m, w, "model.visual.patch_embed.proj.weight", patch_cols, &m->patch_w)
                 : place_patch_halves(m, w, &m->patch_w)) ||
        (rc = place_f32(m, w, hf ? "model.visual.patch_embed.proj.bias" : "v.patch_embd.bias", Dv, &m->patch_b)) ||
        (rc = place_f32(m, w, hf ? "model.visual.pos_embed.weight" : "v.position_embd.weight", Dv, &m->pos_embd)))
        return rc;
    for (int64_t j = 0; j < c->depth; j++) {
        for (size_t k = 0; k < ARRAY_LEN(block_slots); k++) {
            const struct slot *s = &block_slots[k];
            tensor *dst = (tensor *)((char *)&m->blocks[j] + s->off);
            int64_t ne0 = s->row == 'D' ? Dv : s->row == 'I' ? c->n_ff : 3 * Dv;
            if (hf)
                NAME("model.visual.blocks.%lld.%s", (long long)j, s->hf);
            else
                NAME("v.blk.%lld.%s", (long long)j, s->gguf);
            if ((rc = s->kind == 'm' ? place_matrix(m, w, name, ne0, dst) : place_f32(m, w, name, ne0, dst)))
                return rc;
        }
    }
    if ((rc = place_f32(m, w, hf ? "model.visual.merger.norm.weight" : "v.post_ln.weight", Dv, &m->merge_ln_w)) ||
        (rc = place_f32(m, w, hf ? "model.visual.merger.norm.bias" : "v.post_ln.bias", Dv, &m->merge_ln_b)) ||
        (rc = place_matrix(m, w, hf ? "model.visual.merger.linear_fc1.weight" : "mm.0.weight", M4, &m->merge_fc1_w)) ||
        (rc = place_f32(m, w, hf ? "model.visual.merger.linear_fc1.bias" : "mm.0.bias", M4, &m->merge_fc1_b)) ||
        (rc = place_matrix(m, w, hf ? "model.visual.merger.linear_fc2.weight" : "mm.2.weight", M4, &m->merge_fc2_w)) ||
        (rc = place_f32(m, w, hf ? "model.visual.merger.linear_fc2.bias" : "mm.2.bias", c->out_dim, &m->merge_fc2_b)))
        return rc;
#undef NAME
    return SEER_OK;
}

/* ---- vit_load / free ------------------------------------------------------------------------- */

static int config_from_hf_dir(const char *dir, struct vit_config *cfg)
{
    char path[4096], shown[160];
    char *text;
    size_t len;
    json_error_t jerr;
    snprintf(path, sizeof path, "%s/config.json", dir);
    int rc = io_read_file(path, MAX_CONFIG_BYTES, &text, &len);
    if (rc != SEER_OK)
        return rc;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    seer_free(text);
    if (!root)
        return seer_err(SEER_EFORMAT, "%s: bad JSON: %s (line %d, column %d)", path,
                        printable(shown, sizeof shown, jerr.text), jerr.line, jerr.column);
    rc = vit_config_from_json(root, path, cfg);
    json_decref(root);
    if (rc != SEER_OK)
        return rc;
    /* mean/std for the preprocessor (spec §5.1); the defaults stand when the file is absent */
    return vit_config_load_preprocessor(cfg, dir);
}

/* The configuration into m->cfg and, with `tensors`, the weight files opened and every tensor's
   shape checked (*w). An HF directory's safetensors are opened only then. */
static int open_tower(vit_model *m, const char *path, bool tensors, struct weights *w)
{
    int rc;
    if (io_path_kind(path) == IO_DIR) {
        safetensors *st;
        if ((rc = config_from_hf_dir(path, &m->cfg)) || !tensors)
            return rc;
        if ((rc = safetensors_open_dir(path, &st)))
            return rc;
        m->st_file = st;
        *w = weights_from_safetensors(st);
    } else {
        gguf *g;
        if ((rc = gguf_open(path, &g)))
            return rc;
        m->gguf_file = g;
        if ((rc = vit_config_from_gguf(g, &m->cfg)) || !tensors)
            return rc;
        *w = weights_from_gguf(g);
    }
    return vit_check_tensors(&m->cfg, w);
}

int vit_probe(const char *path, bool tensors, struct vit_config *cfg)
{
    vit_model m = {0};
    struct weights w;
    int rc = open_tower(&m, path, tensors, &w);
    if (rc == SEER_OK)
        *cfg = m.cfg;
    gguf_free(m.gguf_file);
    safetensors_free(m.st_file);
    return rc;
}

int vit_load(const char *path, backend *be, vit_model **out)
{
    vit_model *m = seer_calloc(1, sizeof *m);
    struct weights w;
    int rc;
    if (!m)
        return seer_err(SEER_ENOMEM, "vision/load.c: no memory for a vision tower");
    m->be = be;
    if ((rc = open_tower(m, path, true, &w)))
        goto fail;
    if (!(m->blocks = seer_calloc((size_t)m->cfg.depth, sizeof *m->blocks))) {
        rc = seer_err(SEER_ENOMEM, "vision/load.c: no memory for %lld blocks", (long long)m->cfg.depth);
        goto fail;
    }
    if ((rc = load_tensors(m, &w)))
        goto fail;
    LOG_INFO("vision", "%s: %lld blocks, hidden %lld, %lld heads, output %lld, patch kernel %s on %s", path,
             (long long)m->cfg.depth, (long long)m->cfg.n_embd, (long long)m->cfg.n_head,
             (long long)m->cfg.out_dim, dtype_name(m->patch_w.type), be->description);
    *out = m;
    return SEER_OK;
fail:
    vit_free(m);
    return rc;
}

void vit_free(vit_model *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_bufs; i++)
        backend_buffer_free(m->bufs[i]);
    free(m->bufs);
    free(m->blocks);
    gguf_free(m->gguf_file);
    safetensors_free(m->st_file);
    free(m);
}

const struct vit_config *vit_model_config(const vit_model *m) { return &m->cfg; }
