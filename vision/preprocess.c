/* preprocess.c — image/video preprocessing for the vision tower (see preprocess.h): smart_resize
   (spec §5.2, §5.3), bicubic resampling of 8-bit RGB as torchvision does it (the default) or as
   Pillow does, rescale + normalise + patchify into the pixel rows of spec §4.1.
   Divisions: 1. smart_resize  2. bicubic resampling (Pillow's ImagingResample, torchvision's
   fixed point)  3. patchify  4. the image path */
#include "vision/preprocess.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"

#define MAX_PIXEL_BUDGET ((int64_t)1 << 50)

/* ---- 1. smart_resize ------------------------------------------------------------------------ */

/* Python's round() of a double: half to even, which rint gives in the default rounding mode. */
static int64_t round_half_even(double x) { return (int64_t)rint(x); }

static int check_budget(int64_t factor, int64_t min_pixels, int64_t max_pixels)
{
    if (factor < 1 || factor > VIS_MAX_SIDE)
        return seer_err(SEER_EINVAL, "preprocess.c: resize factor %lld out of range", (long long)factor);
    if (min_pixels < 0 || max_pixels < 1 || max_pixels > MAX_PIXEL_BUDGET || min_pixels > max_pixels)
        return seer_err(SEER_EINVAL, "preprocess.c: pixel budget [%lld, %lld] is not a valid range",
                        (long long)min_pixels, (long long)max_pixels);
    return SEER_OK;
}

static int check_aspect(int64_t h, int64_t w)
{
    if (h < 1 || w < 1 || h > VIS_MAX_SIDE || w > VIS_MAX_SIDE)
        return seer_err(SEER_EINVAL, "preprocess.c: image size %lldx%lld out of range (1..%lld per side)",
                        (long long)w, (long long)h, (long long)VIS_MAX_SIDE);
    /* spec §5.2 step 1; Python compares the true quotient, which a double division of these exact
       integers reproduces. */
    if ((double)MAX(h, w) / (double)MIN(h, w) > 200.0)
        return seer_err(SEER_EINVAL, "preprocess.c: aspect ratio of %lldx%lld exceeds 200", (long long)w,
                        (long long)h);
    return SEER_OK;
}

/* Steps 2–4 of spec §5.2 / steps 2–3 of §5.3: n frames (1 for an image) whose rounded count is tb.
   Every quantity Python computes as int / int is a double division of integers below 2^53 here
   (sides ≤ 2^20, frames ≤ 2^12), so the results are the same doubles, floors and ceilings. */
static void resize_rule(int64_t n, int64_t tb, int64_t h, int64_t w, int64_t f, int64_t min_pixels,
                        int64_t max_pixels, int64_t *out_h, int64_t *out_w)
{
    int64_t hb = round_half_even((double)h / (double)f) * f;
    int64_t wb = round_half_even((double)w / (double)f) * f;
    const double pixels = (double)(n * h * w);
    if (tb * hb * wb > max_pixels) {
        const double beta = sqrt(pixels / (double)max_pixels);
        hb = MAX(f, (int64_t)floor((double)h / beta / (double)f) * f);
        wb = MAX(f, (int64_t)floor((double)w / beta / (double)f) * f);
    } else if (tb * hb * wb < min_pixels) {
        const double beta = sqrt((double)min_pixels / pixels);
        hb = (int64_t)ceil((double)h * beta / (double)f) * f;
        wb = (int64_t)ceil((double)w * beta / (double)f) * f;
    }
    *out_h = hb;
    *out_w = wb;
}

int vis_smart_resize(int64_t h, int64_t w, int64_t factor, int64_t min_pixels, int64_t max_pixels,
                     int64_t *out_h, int64_t *out_w)
{
    int rc = check_budget(factor, min_pixels, max_pixels);
    if (rc || (rc = check_aspect(h, w)))
        return rc;
    resize_rule(1, 1, h, w, factor, min_pixels, max_pixels, out_h, out_w);
    return SEER_OK;
}

int vis_smart_resize_video(int64_t n_frames, int64_t h, int64_t w, int64_t factor, int64_t min_pixels,
                           int64_t max_pixels, int64_t *out_h, int64_t *out_w)
{
    int rc = check_budget(factor, min_pixels, max_pixels);
    if (rc)
        return rc;
    if (n_frames < VIS_TEMPORAL_PATCH || n_frames > VIS_MAX_FRAMES)
        return seer_err(SEER_EINVAL, "preprocess.c: video of %lld frames (need %d..%lld)", (long long)n_frames,
                        VIS_TEMPORAL_PATCH, (long long)VIS_MAX_FRAMES);
    if (h < 1 || w < 1 || h > VIS_MAX_SIDE || w > VIS_MAX_SIDE)
        return check_aspect(h, w);
    /* spec §5.3 step 1 (newest HF): a side below the factor scales the frame up so the smaller side
       reaches it; Python's int() truncates, as the casts do. */
    if (h < factor || w < factor) {
        const double scale = MAX((double)factor / (double)h, (double)factor / (double)w);
        h = (int64_t)((double)h * scale);
        w = (int64_t)((double)w * scale);
    }
    if ((rc = check_aspect(h, w)))
        return rc;
    const int64_t tb = round_half_even((double)n_frames / VIS_TEMPORAL_PATCH) * VIS_TEMPORAL_PATCH;
    resize_rule(n_frames, tb, h, w, factor, min_pixels, max_pixels, out_h, out_w);
    return SEER_OK;
}

int vis_video_capped_max_pixels(int64_t n_frames, int64_t factor, int64_t shortest_edge,
                                int64_t longest_edge, int64_t *max_pixels)
{
    int rc = check_budget(factor, shortest_edge, longest_edge);
    if (rc)
        return rc;
    if (n_frames < 1 || n_frames > VIS_MAX_FRAMES)
        return seer_err(SEER_EINVAL, "preprocess.c: video of %lld frames (need 1..%lld)", (long long)n_frames,
                        (long long)VIS_MAX_FRAMES);
    /* spec §5.3 step 4: at most 768 merged patches per frame or an even share of the clip budget,
       at least 1.05 × the minimum (truncated like Python's int()). */
    const int64_t frame_cap = 768 * factor * factor;
    const int64_t per_frame = MAX(MIN(frame_cap, longest_edge / n_frames), (int64_t)((double)shortest_edge * 1.05));
    *max_pixels = per_frame * n_frames;
    return SEER_OK;
}

/* ---- 2. bicubic resampling (Pillow's ImagingResample, torchvision's fixed point) -------------- */
/* HF's PIL backend resizes uint8 RGB with Image.resize(size, BICUBIC, reducing_gap=None), i.e.
   libImaging/Resample.c, re-implemented here step by step so the bytes match:
   - a separable filter, the horizontal pass first, then the vertical one; a pass whose size does
     not change is skipped (and equal sizes are a plain copy);
   - for each output sample, the source window is centred at (i + 0.5)·scale with support
     2·max(scale, 1) (the kernel widens when downscaling, which is what antialiases), its bounds
     rounded as Pillow does; the weights are normalised to sum 1 in double;
   - weights become fixed point with PRECISION_BITS = 32 − 8 − 2 = 22 (two bits of headroom for the
     kernel's negative lobes), each pass accumulates ints from a half-unit bias and clips to 0..255,
     so the horizontal result is rounded to 8 bits before the vertical pass reads it;
   - the horizontal pass only produces the source rows the vertical pass will read.
   HF's default (fast) processor calls torchvision's resize(BICUBIC, antialias=True) on the uint8
   tensor, which on the CPU is torch's _upsample_bicubic2d_aa for uint8 (UpSampleKernel.cpp's
   _compute_index_ranges_int16_weights, then the Pillow-SIMD derived passes of
   UpSampleKernelAVX.h, or the generic loops without AVX2, with the same integers). Everything above
   holds but one thing: the weights are int16, so each pass picks its own number of fractional bits,
   the most (up to 22) for which the pass's largest weight, doubled, still rounds below 2^15. Fewer
   bits round the weights differently, which moves some pixels by a level or two.
   Keep the double expressions in Pillow's order: a reordering changes weights in the last bit and
   the fixed-point rounding with it. */

#define PRECISION_BITS (32 - 8 - 2)

/* Keys' cubic convolution with a = −0.5 (Pillow's bicubic_filter), support 2. */
static double bicubic(double x)
{
    const double a = -0.5;
    if (x < 0.0)
        x = -x;
    if (x < 1.0)
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0)
        return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}

struct coeffs {
    int ksize;       /* weights per output sample (the widest window) */
    int prec;        /* fractional bits of the weights */
    int32_t *bounds; /* [out][2]: first source index, number of source samples */
    int32_t *k;      /* [out][ksize]: fixed-point weights */
};

static void coeffs_free(struct coeffs *c)
{
    seer_freep(&c->bounds);
    seer_freep(&c->k);
}

/* torch's choice of fractional bits for int16 weights whose largest is wt_max
   (_compute_index_ranges_int16_weights): stop before the doubled weight would reach 2^15. */
static int int16_precision(double wt_max)
{
    int p;
    for (p = 0; p < PRECISION_BITS; p++)
        if ((int)(0.5 + wt_max * (1 << (p + 1))) >= (1 << 15))
            break;
    return p;
}

/* Pillow's precompute_coeffs + normalize_coeffs_8bpc for in_size → out_size (box = whole image),
   or torch's equivalent with int16 weights (the same doubles, fewer bits: see above). */
static int coeffs_make(int32_t in_size, int32_t out_size, enum vis_resize kind, struct coeffs *c)
{
    const double scale = (double)in_size / out_size;
    const double filterscale = scale < 1.0 ? 1.0 : scale;
    const double support = 2.0 * filterscale;
    const int ksize = (int)ceil(support) * 2 + 1;
    size_t n_k, n_b, n_d;
    double *w = NULL;
    memset(c, 0, sizeof *c);
    if (!size_mul((size_t)out_size, (size_t)ksize, &n_k) || !size_mul(n_k, sizeof *w, &n_d) ||
        !size_mul(n_k, sizeof *c->k, &n_k) || !size_mul((size_t)out_size, 2 * sizeof *c->bounds, &n_b))
        return seer_err(SEER_ENOMEM, "preprocess.c: resize weights for %d -> %d overflow", in_size, out_size);
    c->ksize = ksize;
    c->k = seer_malloc(n_k);
    c->bounds = seer_malloc(n_b);
    w = seer_malloc(n_d); /* all normalised weights: torch sizes the fixed point by their maximum */
    if (!c->k || !c->bounds || !w) {
        coeffs_free(c);
        seer_freep(&w);
        return seer_err(SEER_ENOMEM, "preprocess.c: out of memory for resize weights (%d -> %d)", in_size,
                        out_size);
    }
    const double inv_filterscale = 1.0 / filterscale;
    double wt_max = 0.0;
    for (int32_t xx = 0; xx < out_size; xx++) {
        const double center = (xx + 0.5) * scale;
        int xmin = (int)(center - support + 0.5); /* truncation, then clamping, as Pillow rounds */
        int xmax = (int)(center + support + 0.5);
        if (xmin < 0)
            xmin = 0;
        if (xmax > in_size)
            xmax = in_size;
        xmax -= xmin;
        ASSERT1(xmax >= 0 && xmax <= ksize);
        double *wx = w + (size_t)xx * ksize, ww = 0.0;
        for (int x = 0; x < xmax; x++) {
            wx[x] = bicubic((x + xmin - center + 0.5) * inv_filterscale);
            ww += wx[x];
        }
        for (int x = 0; x < ksize; x++) {
            wx[x] = x < xmax ? (ww != 0.0 ? wx[x] / ww : wx[x]) : 0.0;
            if (ww != 0.0 && wx[x] > wt_max) /* torch leaves an all-zero window out of the maximum */
                wt_max = wx[x];
        }
        c->bounds[2 * xx] = xmin;
        c->bounds[2 * xx + 1] = xmax;
    }
    c->prec = kind == VIS_RESIZE_PILLOW ? PRECISION_BITS : int16_precision(wt_max);
    const double one = (double)(1 << c->prec);
    for (size_t i = 0; i < (size_t)out_size * ksize; i++) /* round half away from zero, as both do */
        c->k[i] = w[i] < 0 ? (int32_t)(-0.5 + w[i] * one) : (int32_t)(0.5 + w[i] * one);
    seer_freep(&w);
    return SEER_OK;
}

/* Pillow's clip8: the accumulator's integer part clamped to a byte (torch's saturating packs). */
static inline uint8_t clip8(int64_t ss, int prec)
{
    if (ss < 0)
        return 0;
    ss >>= prec;
    return ss > 255 ? 255 : (uint8_t)ss;
}

/* Rows [0, rows) of src (src_w wide) resampled horizontally into dst (c->bounds cover dst_w). */
static void resample_horizontal(const uint8_t *src, int32_t src_w, int32_t rows, uint8_t *dst, int32_t dst_w,
                                const struct coeffs *c)
{
    for (int32_t y = 0; y < rows; y++) {
        const uint8_t *in = src + (size_t)y * src_w * 3;
        uint8_t *out = dst + (size_t)y * dst_w * 3;
        for (int32_t xx = 0; xx < dst_w; xx++) {
            const int32_t xmin = c->bounds[2 * xx], n = c->bounds[2 * xx + 1];
            const int32_t *k = c->k + (size_t)xx * c->ksize;
            int64_t s0 = (int64_t)1 << (c->prec - 1), s1 = s0, s2 = s0;
            for (int32_t x = 0; x < n; x++) {
                const uint8_t *p = in + (size_t)(xmin + x) * 3;
                s0 += p[0] * k[x];
                s1 += p[1] * k[x];
                s2 += p[2] * k[x];
            }
            out[3 * xx] = clip8(s0, c->prec);
            out[3 * xx + 1] = clip8(s1, c->prec);
            out[3 * xx + 2] = clip8(s2, c->prec);
        }
    }
}

/* src (w wide, rows as c->bounds index them) resampled vertically into dst (dst_h rows). */
static void resample_vertical(const uint8_t *src, int32_t w, uint8_t *dst, int32_t dst_h, const struct coeffs *c)
{
    const size_t stride = (size_t)w * 3;
    for (int32_t yy = 0; yy < dst_h; yy++) {
        const int32_t ymin = c->bounds[2 * yy], n = c->bounds[2 * yy + 1];
        const int32_t *k = c->k + (size_t)yy * c->ksize;
        uint8_t *out = dst + (size_t)yy * stride;
        for (size_t i = 0; i < stride; i++) {
            int64_t s = (int64_t)1 << (c->prec - 1);
            for (int32_t y = 0; y < n; y++)
                s += src[(size_t)(ymin + y) * stride + i] * k[y];
            out[i] = clip8(s, c->prec);
        }
    }
}

int vis_resize_bicubic_rgb8(const uint8_t *src, int32_t w, int32_t h, uint8_t *dst, int32_t dw, int32_t dh,
                            enum vis_resize kind)
{
    if (!src || !dst || w < 1 || h < 1 || dw < 1 || dh < 1 || w > VIS_MAX_SIDE || h > VIS_MAX_SIDE ||
        dw > VIS_MAX_SIDE || dh > VIS_MAX_SIDE || (kind != VIS_RESIZE_TORCHVISION && kind != VIS_RESIZE_PILLOW))
        return seer_err(SEER_EINVAL, "preprocess.c: cannot resize %dx%d to %dx%d", w, h, dw, dh);
    if (w == dw && h == dh) { /* Pillow and torch return a copy; no resampling at all */
        memcpy(dst, src, (size_t)w * h * 3);
        return SEER_OK;
    }
    struct coeffs cv, ch = {0};
    uint8_t *tmp = NULL;
    int rc = coeffs_make(h, dh, kind, &cv);
    if (rc)
        return rc;
    const uint8_t *vin = src; /* what the vertical pass reads */
    if (dw != w) {
        /* Source rows the vertical pass reads: [first, last). */
        const int32_t first = cv.bounds[0], last = cv.bounds[2 * (dh - 1)] + cv.bounds[2 * (dh - 1) + 1];
        if ((rc = coeffs_make(w, dw, kind, &ch)))
            goto done;
        uint8_t *hout = dst; /* no vertical pass: first = 0, last = h, straight into dst */
        if (dh != h) {
            size_t n;
            if (!size_mul((size_t)dw * 3, (size_t)(last - first), &n) || !(tmp = seer_malloc(n))) {
                rc = seer_err(SEER_ENOMEM, "preprocess.c: out of memory resizing %dx%d to %dx%d", w, h, dw, dh);
                goto done;
            }
            hout = tmp;
            for (int32_t i = 0; i < dh; i++)
                cv.bounds[2 * i] -= first;
        }
        resample_horizontal(src + (size_t)first * w * 3, w, last - first, hout, dw, &ch);
        vin = tmp;
    }
    if (dh != h)
        resample_vertical(vin, dw, dst, dh, &cv);
done:
    coeffs_free(&cv);
    coeffs_free(&ch);
    seer_freep(&tmp);
    return rc;
}

int vis_resize_parse(const char *name, enum vis_resize *kind)
{
    if (!name || !strcmp(name, "torchvision"))
        *kind = VIS_RESIZE_TORCHVISION;
    else if (!strcmp(name, "pillow"))
        *kind = VIS_RESIZE_PILLOW;
    else
        return seer_err(SEER_EINVAL, "resize: '%s' is not torchvision or pillow", name);
    return SEER_OK;
}

/* ---- 3. patchify ---------------------------------------------------------------------------- */

int vis_patch_grid(int n_frames, int32_t w, int32_t h, struct vis_grid *grid)
{
    if (n_frames < 1 || n_frames > VIS_MAX_FRAMES)
        return seer_err(SEER_EINVAL, "preprocess.c: %d frames to patchify (need 1..%lld)", n_frames,
                        (long long)VIS_MAX_FRAMES);
    /* Block-major rows need whole 2 × 2 blocks of 16-pixel patches: sides multiples of 32. */
    if (w < VIS_FACTOR || h < VIS_FACTOR || w > VIS_MAX_SIDE || h > VIS_MAX_SIDE || w % VIS_FACTOR ||
        h % VIS_FACTOR)
        return seer_err(SEER_EINVAL, "preprocess.c: frame size %dx%d is not a multiple of %d", w, h, VIS_FACTOR);
    grid->t = (n_frames + VIS_TEMPORAL_PATCH - 1) / VIS_TEMPORAL_PATCH;
    grid->h = h / VIS_PATCH;
    grid->w = w / VIS_PATCH;
    return SEER_OK;
}

int vis_patchify(const uint8_t *const *frames, int n_frames, int32_t w, int32_t h, const float mean[3],
                 const float std[3], float *rows, struct vis_grid *grid)
{
    struct vis_grid g;
    int rc = vis_patch_grid(n_frames, w, h, &g);
    if (rc)
        return rc;
    for (int c = 0; c < 3; c++)
        if (!isfinite(mean[c]) || !isfinite(std[c]) || std[c] == 0.0f)
            return seer_err(SEER_EINVAL, "preprocess.c: normalisation mean %g / std %g of channel %d",
                            (double)mean[c], (double)std[c], c);
    /* spec §5.2: HF rescales in double and stores f32 (p · (1/255)), then normalises in f32.
       There are only 256 inputs per channel, so tabulate. */
    float lut[3][256];
    for (int c = 0; c < 3; c++)
        for (int p = 0; p < 256; p++) {
            const float x = (float)(p * (1.0 / 255.0));
            lut[c][p] = (x - mean[c]) / std[c];
        }
    const int64_t n_br = g.h / VIS_MERGE, n_bc = g.w / VIS_MERGE;
    float *o = rows;
    for (int64_t t = 0; t < g.t; t++) {
        /* frame 2t + tt; the last frame repeats to fill the final temporal pair (spec §4.1, §5.3) */
        const uint8_t *fr[VIS_TEMPORAL_PATCH];
        for (int tt = 0; tt < VIS_TEMPORAL_PATCH; tt++)
            fr[tt] = frames[MIN(VIS_TEMPORAL_PATCH * t + tt, (int64_t)n_frames - 1)];
        for (int64_t br = 0; br < n_br; br++)
            for (int64_t bc = 0; bc < n_bc; bc++)
                for (int ir = 0; ir < VIS_MERGE; ir++)
                    for (int ic = 0; ic < VIS_MERGE; ic++) {
                        const int64_t row = VIS_MERGE * br + ir, col = VIS_MERGE * bc + ic;
                        /* one row: channel, then temporal slice, then py, px (spec §4.1) */
                        for (int c = 0; c < 3; c++)
                            for (int tt = 0; tt < VIS_TEMPORAL_PATCH; tt++)
                                for (int py = 0; py < VIS_PATCH; py++) {
                                    const uint8_t *p = fr[tt] + ((size_t)(VIS_PATCH * row + py) * w +
                                                                 (size_t)(VIS_PATCH * col)) * 3 + c;
                                    for (int px = 0; px < VIS_PATCH; px++)
                                        *o++ = lut[c][p[3 * px]];
                                }
                    }
    }
    *grid = g;
    return SEER_OK;
}

/* ---- 4. the image path ---------------------------------------------------------------------- */

int vis_preprocess_image(const uint8_t *rgb, int32_t w, int32_t h, int64_t min_pixels, int64_t max_pixels,
                         enum vis_resize kind, const float mean[3], const float std[3], float **rows,
                         struct vis_grid *grid)
{
    int64_t rh, rw;
    uint8_t *resized = NULL;
    float *out = NULL;
    struct vis_grid g;
    size_t n;
    int rc = vis_smart_resize(h, w, VIS_FACTOR, min_pixels, max_pixels, &rh, &rw);
    if (rc)
        return rc;
    if (rh > VIS_MAX_SIDE || rw > VIS_MAX_SIDE)
        return seer_err(SEER_EINVAL, "preprocess.c: %dx%d would be resized to %lldx%lld, too large", w, h,
                        (long long)rw, (long long)rh);
    const uint8_t *img = rgb; /* already the right size: used as is, never resampled */
    if (rh != h || rw != w) {
        if (!size_mul((size_t)rw * 3, (size_t)rh, &n) || !(resized = seer_malloc(n)))
            return seer_err(SEER_ENOMEM, "preprocess.c: out of memory for a %lldx%lld image", (long long)rw,
                            (long long)rh);
        if ((rc = vis_resize_bicubic_rgb8(rgb, w, h, resized, (int32_t)rw, (int32_t)rh, kind)))
            goto done;
        img = resized;
    }
    if ((rc = vis_patch_grid(1, (int32_t)rw, (int32_t)rh, &g)))
        goto done;
    if (!size_mul((size_t)vis_grid_rows(&g), VIS_ROW_DIM * sizeof *out, &n) || !(out = seer_malloc(n))) {
        rc = seer_err(SEER_ENOMEM, "preprocess.c: out of memory for %lld pixel rows", (long long)vis_grid_rows(&g));
        goto done;
    }
    if ((rc = vis_patchify(&img, 1, (int32_t)rw, (int32_t)rh, mean, std, out, &g)))
        goto done;
    *rows = out;
    *grid = g;
    out = NULL;
done:
    seer_freep(&out);
    seer_freep(&resized);
    return rc;
}
