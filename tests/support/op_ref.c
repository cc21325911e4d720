/* op_ref.c — the double-precision op references of op_ref.h. Each is the formula of its op's
   contract in core/ops.h (and the spec section cited there), looped naively. */
#include "support/op_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double ref_unary(enum unary_op op, double x)
{
    const double k = sqrt(2.0 / 3.14159265358979323846);
    switch (op) {
    case UNARY_SILU: return x / (1.0 + exp(-x));
    case UNARY_GELU_TANH: return 0.5 * x * (2.0 / (1.0 + exp(-2.0 * k * (x + 0.044715 * x * x * x))));
    case UNARY_GELU_ERF: return 0.5 * x * erfc(-x / sqrt(2.0));
    case UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case UNARY_SOFTPLUS: return x > 20.0 ? x : log1p(exp(x));
    case UNARY_EXP: return exp(x);
    default: return NAN;
    }
}

void ref_binary(enum binary_op op, const int64_t a_ne[4], const float *a, const int64_t b_ne[4], const float *b,
                double *out)
{
    for (int64_t i3 = 0, n = 0; i3 < a_ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a_ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a_ne[1]; i1++)
                for (int64_t i0 = 0; i0 < a_ne[0]; i0++, n++) {
                    int64_t j = (((i3 % b_ne[3]) * b_ne[2] + i2 % b_ne[2]) * b_ne[1] + i1 % b_ne[1]) * b_ne[0] +
                                i0 % b_ne[0];
                    out[n] = op == BINARY_ADD ? (double)a[n] + b[j] : (double)a[n] * b[j];
                }
}

void ref_softmax_row(const float *x, int64_t n, double scale, double *out)
{
    double m = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, scale * x[i]);
    for (int64_t i = 0; i < n; i++)
        sum += m == -INFINITY ? 0 : exp(scale * x[i] - m);
    for (int64_t i = 0; i < n; i++)
        out[i] = m == -INFINITY ? 0 : exp(scale * x[i] - m) / sum;
}

void ref_norm_row(enum ref_norm kind, const float *x, const float *z, const float *w, const float *b, double shift,
                  double eps, int64_t n, double *out)
{
    double mean = 0, ss = 0;
    if (kind == REF_LAYER) {
        for (int64_t i = 0; i < n; i++)
            mean += x[i];
        mean /= (double)n;
    }
    for (int64_t i = 0; i < n; i++)
        ss += ((double)x[i] - mean) * ((double)x[i] - mean);
    double rs = 1.0 / sqrt((kind == REF_L2 ? ss : ss / (double)n) + eps);
    for (int64_t i = 0; i < n; i++) {
        double v = ((double)x[i] - mean) * rs;
        switch (kind) {
        case REF_RMS: v *= w ? (double)w[i] + shift : 1.0; break;
        case REF_RMS_GATED: v *= w[i] * (z[i] / (1.0 + exp(-(double)z[i]))); break;
        case REF_LAYER: v = v * w[i] + b[i]; break;
        default: break;
        }
        out[i] = v;
    }
}

/* The rotate-half of one head: pair (i, i + half) turned by ang(i). */
static void rotate(const float *x, int64_t half, const double *ang, double *y)
{
    for (int64_t i = 0; i < half; i++) {
        double c = cos(ang[i]), s = sin(ang[i]);
        y[i] = x[i] * c - (double)x[i + half] * s;
        y[i + half] = x[i + half] * c + (double)x[i] * s;
    }
}

static double angle(double pos, double theta, double expo, bool f32)
{
    if (f32)
        return (double)((float)pos * (float)pow(theta, expo));
    return pos * pow(theta, expo);
}

void ref_rope_text(const float *x, int64_t hd, int64_t nh, int64_t T, const int32_t *pos,
                   const struct rope_text_params *p, bool f32_angles, double *out)
{
    const int64_t half = p->n_rot / 2;
    double *ang = malloc((size_t)(half > 0 ? half : 1) * sizeof *ang);
    for (int64_t t = 0; t < T; t++) {
        for (int64_t i = 0; i < half; i++) {
            /* spec §3.3: indices 1, 4, … below 3·sections[1] take H, 2, 5, … below 3·sections[2] W */
            int a = (int)(i % 3), axis = (a == 1 || a == 2) && i < 3 * p->sections[a] ? a : 0;
            ang[i] = angle(pos[axis * T + t], p->theta, -2.0 * (double)i / p->n_rot, f32_angles);
        }
        for (int64_t h = 0; h < nh; h++) {
            const float *xh = x + (t * nh + h) * hd;
            double *yh = out + (t * nh + h) * hd;
            for (int64_t d = 0; d < hd; d++)
                yh[d] = xh[d];
            rotate(xh, half, ang, yh);
        }
    }
    free(ang);
}

void ref_rope_vision(const float *x, int64_t dh, int64_t nh, int64_t N, const int32_t *pos, double theta,
                     bool f32_angles, double *out)
{
    const int64_t half = dh / 2, quarter = dh / 4;
    double *ang = malloc((size_t)half * sizeof *ang);
    for (int64_t t = 0; t < N; t++) {
        for (int64_t i = 0; i < half; i++) {
            int64_t j = i < quarter ? i : i - quarter; /* spec §4.4: rows first, then columns */
            ang[i] = angle(i < quarter ? pos[t] : pos[N + t], theta, -2.0 * (double)j / (double)half, f32_angles);
        }
        for (int64_t h = 0; h < nh; h++)
            rotate(x + (t * nh + h) * dh, half, ang, out + (t * nh + h) * dh);
    }
    free(ang);
}

void ref_matmul(const float *w, const float *x, int64_t K, int64_t M, int64_t N, double *out)
{
    /* k outside, m inside over a transposed w: the M sums are independent, so the compiler can
       keep several in flight (a dot product's one chain of adds is ~4× slower at large K·M·N) */
    float *wt = malloc((size_t)(K * M) * sizeof *wt);
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++)
            wt[k * M + m] = w[m * K + k];
    for (int64_t n = 0; n < N; n++) {
        double *o = out + n * M;
        for (int64_t m = 0; m < M; m++)
            o[m] = 0;
        for (int64_t k = 0; k < K; k++) {
            const double xk = x[n * K + k];
            const float *wk = wt + k * M;
            for (int64_t m = 0; m < M; m++)
                o[m] += (double)wk[m] * xk;
        }
    }
    free(wt);
}

void ref_conv(const float *m, const float *w, int64_t C, int64_t K, int64_t Ttot, int64_t t0, double *out)
{
    for (int64_t t = t0; t < Ttot; t++)
        for (int64_t c = 0; c < C; c++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++) {
                int64_t tau = t - (K - 1) + k; /* tap K−1 is the current token: no flip */
                s += tau < 0 ? 0.0 : (double)w[c * K + k] * m[tau * C + c];
            }
            out[(t - t0) * C + c] = s;
        }
}

void ref_gdn_step(double *S, const float *q, const float *k, const float *v, double alpha, double beta, double scale,
                  int64_t dk, int64_t dv, double *kv, double *o)
{
    for (int64_t i = 0; i < dk * dv; i++)
        S[i] *= alpha;
    for (int64_t e = 0; e < dv; e++) {
        kv[e] = 0;
        for (int64_t i = 0; i < dk; i++)
            kv[e] += S[i * dv + e] * k[i];
    }
    for (int64_t i = 0; i < dk; i++)
        for (int64_t e = 0; e < dv; e++)
            S[i * dv + e] += k[i] * beta * (v[e] - kv[e]);
    for (int64_t e = 0; e < dv; e++) {
        double acc = 0;
        for (int64_t i = 0; i < dk; i++)
            acc += S[i * dv + e] * (q[i] * scale);
        o[e] = acc;
    }
}

void ref_attention(const float *q, const float *k, const float *v, int64_t hd, int64_t nh, int64_t nkv, int64_t T,
                   int64_t Tk, int64_t q_pos0, const int32_t *seg, double scale, double *out)
{
    const int64_t r = nh / nkv;
    double *s = malloc((size_t)Tk * sizeof *s);
    for (int64_t t = 0; t < T; t++)
        for (int64_t h = 0; h < nh; h++) {
            const float *qr = q + (t * nh + h) * hd;
            const int64_t g = h / r;
            double m = -INFINITY, l = 0, *o = out + (t * nh + h) * hd;
            for (int64_t j = 0; j < Tk; j++) {
                s[j] = NAN;
                if (seg ? seg[j] != seg[t] : j > q_pos0 + t)
                    continue;
                double d = 0;
                for (int64_t e = 0; e < hd; e++)
                    d += (double)qr[e] * k[(j * nkv + g) * hd + e];
                s[j] = d * scale;
                m = fmax(m, s[j]);
            }
            memset(o, 0, (size_t)hd * sizeof *o);
            for (int64_t j = 0; j < Tk; j++) {
                if (isnan(s[j]))
                    continue;
                double p = exp(s[j] - m);
                l += p;
                for (int64_t e = 0; e < hd; e++)
                    o[e] += p * v[(j * nkv + g) * hd + e];
            }
            for (int64_t e = 0; e < hd; e++)
                o[e] /= l;
        }
    free(s);
}

uint16_t ref_f16_bits(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    double a = fabs((double)f);
    if (isnan(f))
        return sign | 0x7e00;
    if (a >= 65520.0) /* halfway between 65504 and 2^16 and above: rounds to infinity */
        return sign | 0x7c00;
    if (a < ldexp(1.0, -14)) /* subnormal: multiples of 2^-24; 1024 of them is the smallest normal */
        return sign | (uint16_t)nearbyint(ldexp(a, 24));
    int e;
    double fr = frexp(a, &e); /* a = fr·2^e, fr in [0.5, 1): exponent e − 1, 10 stored bits */
    double mant = nearbyint(ldexp(fr, 11)); /* 1024 .. 2048 */
    if (mant == 2048)
        mant = 1024, e++;
    return sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)(mant - 1024);
}

uint16_t ref_bf16_bits(float f)
{
    uint32_t w;
    memcpy(&w, &f, 4);
    if (isnan(f))
        return (uint16_t)((w >> 16) | 0x40);
    if (isinf(f) || f == 0)
        return (uint16_t)(w >> 16);
    double a = fabs((double)f), r;
    if (a < ldexp(1.0, -126)) { /* f32 subnormal: bf16 keeps 7 bits at 2^-133 */
        r = ldexp(nearbyint(ldexp(a, 133)), -133);
    } else {
        int e;
        double fr = frexp(a, &e);
        r = ldexp(nearbyint(ldexp(fr, 8)), e - 8); /* 8 significant bits */
    }
    float rf = (float)(signbit(f) ? -r : r); /* exact, or ±inf past FLT_MAX */
    memcpy(&w, &rf, 4);
    return (uint16_t)(w >> 16);
}

float ref_round(enum dtype type, float f)
{
    uint32_t w;
    if (type == DT_BF16) {
        w = (uint32_t)ref_bf16_bits(f) << 16;
        memcpy(&f, &w, 4);
    } else if (type == DT_F16) {
        f = (float)ref_f16_value(ref_f16_bits(f));
    }
    return f;
}

double ref_f16_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}

/* The rule of llama.cpp's quantize_row_q8_0_ref, written out: per 32 values the step
   d = amax/127 and its inverse in f32, q = x·(1/d) rounded half away from zero. */
void ref_quantize_q8_0(const float *x, int64_t n, unsigned char *out)
{
    for (int64_t b = 0; b < n / 32; b++, x += 32, out += 34) {
        float amax = 0.0f;
        for (int j = 0; j < 32; j++)
            amax = fabsf(x[j]) > amax ? fabsf(x[j]) : amax;
        const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        const uint16_t h = ref_f16_bits(d);
        out[0] = (unsigned char)(h & 0xff), out[1] = (unsigned char)(h >> 8);
        for (int j = 0; j < 32; j++) {
            const float v = x[j] * id;
            out[2 + j] = (unsigned char)(int8_t)round((double)v);
        }
    }
}

void ref_dequantize_q8_0(const unsigned char *blocks, int64_t n, float *out)
{
    for (int64_t b = 0; b < n / 32; b++, blocks += 34) {
        const double d = ref_f16_value((uint16_t)(blocks[0] | blocks[1] << 8));
        for (int j = 0; j < 32; j++)
            out[b * 32 + j] = (float)(d * (int8_t)blocks[2 + j]);
    }
}
