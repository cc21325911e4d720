/* sampler.c — next-token sampling over a logits vector (see sampler.h for the filter order and the
   penalty semantics). Padding ids ≥ the tokenizer length are never candidates (spec §2.7, §10.9).

   Cost per token for a 248320-entry vocabulary: a copy and a branch-free check of the logits, a max;
   greedy stops there. Top-k keeps a size-k heap in one pass (no sort of the vocabulary); top-p
   without top-k is a quickselect on probability mass (expected linear, nothing sorted); min-p is a
   threshold in logit space. Only candidates are exponentiated, in float, summed in double.

   Divisions: RNG · lifecycle · history and penalties · candidate selection · distribution and draw. */
#include "lm/sampler.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"

struct sampler {
    sampler_params p;
    int32_t n_vocab;   /* length of a logits vector */
    int32_t n_valid;   /* ids < n_valid can be sampled */
    uint64_t rng[4];   /* xoshiro256** state */
    bool track;        /* a penalty is on, so the history below is kept */
    int32_t *rep_count;   /* [n_vocab] occurrences in the window, prompt and generated */
    int32_t *gen_count;   /* [n_vocab] occurrences in the window, generated only */
    int32_t *present;     /* [n_vocab] ids with rep_count > 0, unordered */
    int32_t *present_pos; /* [n_vocab] index of the id in present, or −1 */
    int32_t n_present;
    uint32_t *ring;       /* [penalty_window] the window, oldest at ring_head; bit 31 = prompt token */
    int32_t ring_n, ring_head;
    float *work;    /* [n_vocab] penalised logits of the valid ids */
    int32_t *ids;   /* [n_vocab] candidate ids; the survivors end up in front */
    float *probs;   /* [n_vocab] final probabilities of ids[0..n) */
    const uint32_t *allow; /* [(n_vocab + 31) / 32] ids that may be picked, or NULL (sampler_set_allowed) */
};

/* ---- RNG: xoshiro256**, seeded through splitmix64 (so that nearby seeds give unrelated streams) --- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(uint64_t s[4])
{
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

/* Uniform in [0, 1) with 53 random bits. */
static double rng_uniform(uint64_t s[4]) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }

static void rng_seed(sampler *s)
{
    uint64_t x = s->p.seed;
    for (int i = 0; i < 4; i++)
        s->rng[i] = splitmix64(&x);
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

sampler_params sampler_params_default(void)
{
    sampler_params p = { 0 };
    p.temperature = 1.0f;
    p.top_p = 1.0f;
    p.repetition_penalty = 1.0f;
    return p;
}

static int check_params(const sampler_params *p, int32_t n_vocab)
{
    if (n_vocab <= 0)
        return seer_err(SEER_EINVAL, "sampler: n_vocab %d must be positive", (int)n_vocab);
    if (!isfinite(p->temperature) || p->temperature < 0)
        return seer_err(SEER_EINVAL, "sampler: temperature %g must be finite and >= 0", (double)p->temperature);
    if (p->top_k < 0)
        return seer_err(SEER_EINVAL, "sampler: top_k %d must be >= 0", (int)p->top_k);
    if (!(p->top_p > 0 && p->top_p <= 1))
        return seer_err(SEER_EINVAL, "sampler: top_p %g must be in (0, 1]", (double)p->top_p);
    if (!(p->min_p >= 0 && p->min_p <= 1))
        return seer_err(SEER_EINVAL, "sampler: min_p %g must be in [0, 1]", (double)p->min_p);
    if (!isfinite(p->repetition_penalty) || p->repetition_penalty <= 0)
        return seer_err(SEER_EINVAL, "sampler: repetition_penalty %g must be finite and > 0",
                        (double)p->repetition_penalty);
    if (!isfinite(p->presence_penalty) || !isfinite(p->frequency_penalty))
        return seer_err(SEER_EINVAL, "sampler: presence/frequency penalties must be finite");
    if (p->penalty_window < 0)
        return seer_err(SEER_EINVAL, "sampler: penalty_window %d must be >= 0", (int)p->penalty_window);
    if (p->n_vocab_valid < 0 || p->n_vocab_valid > n_vocab)
        return seer_err(SEER_EINVAL, "sampler: n_vocab_valid %d must be in [0, n_vocab = %d]", (int)p->n_vocab_valid,
                        (int)n_vocab);
    return SEER_OK;
}

void sampler_free(sampler *s)
{
    if (!s)
        return;
    free(s->rep_count);
    free(s->gen_count);
    free(s->present);
    free(s->present_pos);
    free(s->ring);
    free(s->work);
    free(s->ids);
    free(s->probs);
    free(s);
}

int sampler_create(const sampler_params *params, int32_t n_vocab, sampler **out)
{
    sampler_params p = params ? *params : sampler_params_default();
    int rc = check_params(&p, n_vocab);
    if (rc)
        return rc;
    sampler *s = seer_calloc(1, sizeof *s);
    if (!s)
        return seer_err(SEER_ENOMEM, "sampler: out of memory");
    s->p = p;
    s->n_vocab = n_vocab;
    s->n_valid = p.n_vocab_valid ? p.n_vocab_valid : n_vocab;
    s->track = p.repetition_penalty != 1.0f || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f;
    size_t n = (size_t)n_vocab; /* int32 × 4 bytes cannot overflow size_t */
    s->work = seer_malloc(n * sizeof(float));
    s->ids = seer_malloc(n * sizeof(int32_t));
    s->probs = seer_malloc(n * sizeof(float));
    if (!s->work || !s->ids || !s->probs)
        goto fail;
    if (s->track) {
        s->rep_count = seer_calloc(n, sizeof(int32_t));
        s->gen_count = seer_calloc(n, sizeof(int32_t));
        s->present = seer_malloc(n * sizeof(int32_t));
        s->present_pos = seer_malloc(n * sizeof(int32_t));
        if (!s->rep_count || !s->gen_count || !s->present || !s->present_pos)
            goto fail;
        if (p.penalty_window > 0 && !(s->ring = seer_malloc((size_t)p.penalty_window * sizeof(uint32_t))))
            goto fail;
    }
    sampler_reset(s);
    *out = s;
    return SEER_OK;
fail:
    sampler_free(s);
    return seer_err(SEER_ENOMEM, "sampler: out of memory for a vocabulary of %d", (int)n_vocab);
}

/* ---- history and penalties ----------------------------------------------------------------- */

void sampler_reset(sampler *s)
{
    if (s->track) {
        memset(s->rep_count, 0, (size_t)s->n_vocab * sizeof(int32_t));
        memset(s->gen_count, 0, (size_t)s->n_vocab * sizeof(int32_t));
        memset(s->present_pos, 0xFF, (size_t)s->n_vocab * sizeof(int32_t)); /* all −1 */
    }
    s->n_present = 0;
    s->ring_n = s->ring_head = 0;
    rng_seed(s);
}

static void count_add(sampler *s, int32_t id, bool prompt, int32_t d)
{
    s->rep_count[id] += d;
    if (!prompt)
        s->gen_count[id] += d;
    if (d > 0 && s->rep_count[id] == 1) {
        s->present_pos[id] = s->n_present;
        s->present[s->n_present++] = id;
    } else if (d < 0 && s->rep_count[id] == 0) { /* swap-remove from present */
        int32_t k = s->present_pos[id], last = s->present[--s->n_present];
        s->present[k] = last;
        s->present_pos[last] = k;
        s->present_pos[id] = -1;
    }
}

static void record(sampler *s, int32_t id, bool prompt)
{
    int32_t w = s->p.penalty_window;
    if (w > 0) {
        if (s->ring_n == w) { /* the window is full: the oldest token leaves it */
            uint32_t old = s->ring[s->ring_head];
            count_add(s, (int32_t)(old & 0x7FFFFFFFu), (old >> 31) != 0, -1);
            s->ring[s->ring_head] = (uint32_t)id | (prompt ? 0x80000000u : 0);
            s->ring_head = (s->ring_head + 1) % w;
        } else {
            s->ring[(s->ring_head + s->ring_n) % w] = (uint32_t)id | (prompt ? 0x80000000u : 0);
            s->ring_n++;
        }
    }
    count_add(s, id, prompt, +1);
}

int sampler_accept_prompt(sampler *s, const int32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= s->n_vocab)
            return seer_err(SEER_EINVAL, "sampler: prompt token %zu has id %d outside [0, %d)", i, (int)ids[i],
                            (int)s->n_vocab);
    if (s->track)
        for (size_t i = 0; i < n; i++)
            record(s, ids[i], true);
    return SEER_OK;
}

int sampler_accept(sampler *s, int32_t id)
{
    if (id < 0 || id >= s->n_vocab)
        return seer_err(SEER_EINVAL, "sampler: token id %d outside [0, %d)", (int)id, (int)s->n_vocab);
    if (s->track)
        record(s, id, false);
    return SEER_OK;
}

/* Only ids in the history change, so this costs O(distinct tokens in the window), not O(vocabulary).
   limit: ids ≥ limit are left alone (the padding rows, which are never read afterwards). */
static void penalize(const sampler *s, float *l, int32_t limit)
{
    if (!s->track)
        return;
    const float rep = s->p.repetition_penalty, pres = s->p.presence_penalty, freq = s->p.frequency_penalty;
    for (int32_t k = 0; k < s->n_present; k++) {
        int32_t id = s->present[k];
        if (id >= limit)
            continue;
        float x = l[id];
        x = x < 0 ? x * rep : x / rep; /* HF RepetitionPenaltyLogitsProcessor */
        int32_t c = s->gen_count[id];
        if (c > 0)
            x -= pres + freq * (float)c;
        l[id] = x;
    }
}

void sampler_penalize(const sampler *s, float *logits) { penalize(s, logits, s->n_vocab); }

/* ---- candidate selection ------------------------------------------------------------------- */

/* The order used everywhere: higher logit first, lower id on a tie. It is a strict total order, so
   results never depend on the order candidates were visited in. */
static inline bool better(const float *w, int32_t a, int32_t b) { return w[a] > w[b] || (w[a] == w[b] && a < b); }

/* Min-heap over h[0..n) by `better` (root = the worst kept so far). */
static void sift_down(const float *w, int32_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && better(w, h[c], h[c + 1]))
            c++;
        if (!better(w, h[i], h[c]))
            return;
        int32_t t = h[i];
        h[i] = h[c];
        h[c] = t;
        i = c;
    }
}

/* Writes the k best ids with a finite logit among [0, nv) to ids[0..k), best first, in one pass
   over the logits: a min-heap of the best k so far, whose root a later id replaces only when it
   beats it, so most ids cost one comparison. Returns how many were found (< k when fewer are finite). */
static size_t select_top_k(const float *w, int32_t nv, int32_t *ids, size_t k)
{
    size_t n = 0;
    int32_t i = 0;
    for (; i < nv && n < k; i++)
        if (w[i] != -INFINITY)
            ids[n++] = i;
    for (size_t j = n / 2; j-- > 0;)
        sift_down(w, ids, n, j);
    for (; i < nv; i++) {
        if (w[i] > w[ids[0]]) { /* equal logits lose: the later id is larger */
            ids[0] = i;
            sift_down(w, ids, n, 0);
        }
    }
    for (size_t m = n; m > 1; m--) { /* heap sort: the worst goes to the back each time */
        int32_t t = ids[0];
        ids[0] = ids[m - 1];
        ids[m - 1] = t;
        sift_down(w, ids, m - 1, 0);
    }
    return n;
}

/* Top-p without top-k, in expected O(m) without sorting: a quickselect on probability mass. e[i] is
   exp(l − lmax) of ids[i]; target = top_p × Σe. Finds the shortest best-first prefix whose mass
   reaches the target, moves those ids (with their e) to the front in no particular order and
   returns their number. Invariant: ids[0..lo) are kept, their mass `acc` < target, and every id in
   [lo, hi) is worse than all of them. */
static size_t nucleus_select(const float *w, int32_t *ids, float *e, size_t m, double target)
{
    size_t lo = 0, hi = m;
    double acc = 0;
    while (lo < hi) {
        /* pivot: median of three positions, moved to lo */
        size_t a = lo, b = lo + (hi - lo) / 2, c = hi - 1, pv;
        if (better(w, ids[a], ids[b]))
            pv = better(w, ids[b], ids[c]) ? b : (better(w, ids[a], ids[c]) ? c : a);
        else
            pv = better(w, ids[a], ids[c]) ? a : (better(w, ids[b], ids[c]) ? c : b);
#define SWAP_AT(x, y)                                                                                  \
    do {                                                                                               \
        int32_t ti = ids[x];                                                                           \
        ids[x] = ids[y];                                                                               \
        ids[y] = ti;                                                                                   \
        float tf = e[x];                                                                               \
        e[x] = e[y];                                                                                   \
        e[y] = tf;                                                                                     \
    } while (0)
        SWAP_AT(lo, pv);
        const int32_t piv = ids[lo];
        size_t store = lo + 1; /* [lo+1, store) beats the pivot */
        double mass = 0;
        for (size_t i = lo + 1; i < hi; i++) {
            if (better(w, ids[i], piv)) {
                mass += e[i];
                SWAP_AT(store, i);
                store++;
            }
        }
        /* Layout now: pivot, better ones; put the pivot after them. */
        SWAP_AT(lo, store - 1);
        size_t piv_at = store - 1;
#undef SWAP_AT
        if (acc + mass >= target) { /* the cut lies among the better ones */
            hi = piv_at;
        } else if (acc + mass + e[piv_at] >= target) {
            return piv_at + 1;
        } else {
            acc += mass + e[piv_at];
            lo = piv_at + 1;
        }
    }
    return lo; /* rounding left the target unreached (or hi met lo after the cut): keep what is in front */
}

/* ---- distribution and draw ----------------------------------------------------------------- */

/* Fills s->ids[0..*n) and s->probs[0..*n) (see sampler_distribution). */
static int build(sampler *s, const float *logits, size_t *n_out)
{
    const int32_t nv = s->n_valid;
    float *w = s->work, *e = s->probs;
    int32_t *ids = s->ids;
    /* One pass: copy, check (branch-free, so the loop stays cheap) and max. */
    bool bad = false;
    float lmax = -INFINITY;
    for (int32_t i = 0; i < nv; i++) {
        float x = logits[i];
        w[i] = x;
        bad |= !(x < INFINITY); /* NaN or +inf */
        lmax = x > lmax ? x : lmax;
    }
    if (bad) {
        for (int32_t i = 0; i < nv; i++)
            if (!(w[i] < INFINITY))
                return seer_err(SEER_EINVAL, "sampler: logit of token %d is %s", (int)i, isnan(w[i]) ? "NaN" : "+inf");
    }
    if (s->allow) { /* a grammar's mask: what it forbids is −inf before any filter sees it */
        lmax = -INFINITY;
        for (int32_t i0 = 0; i0 < nv; i0 += 32) { /* by 32-id words: most are all-off or all-on */
            const uint32_t word = s->allow[i0 >> 5];
            const int32_t i1 = i0 + 32 < nv ? i0 + 32 : nv;
            if (word == 0) {
                for (int32_t i = i0; i < i1; i++)
                    w[i] = -INFINITY;
                continue;
            }
            for (int32_t i = i0; i < i1; i++) {
                w[i] = word >> (i - i0) & 1 ? w[i] : -INFINITY;
                lmax = w[i] > lmax ? w[i] : lmax;
            }
        }
    }
    if (s->track && s->n_present > 0) { /* penalties may move the max anywhere: look again */
        penalize(s, w, nv);
        lmax = -INFINITY;
        for (int32_t i = 0; i < nv; i++)
            lmax = w[i] > lmax ? w[i] : lmax;
    }
    if (lmax == -INFINITY)
        return seer_err(SEER_EINVAL, "sampler: no token among the %d valid ids has a finite logit", (int)nv);
    if (s->p.temperature == 0.0f) { /* greedy: the first id with the largest logit */
        int32_t i = 0;
        while (w[i] != lmax)
            i++;
        ids[0] = i;
        e[0] = 1.0f;
        *n_out = 1;
        return SEER_OK;
    }
    /* min-p in logit space: p_i ≥ min_p·p_max ⟺ l_i − lmax ≥ ln(min_p); −inf when off. */
    const float log_min_p = s->p.min_p > 0 ? logf(s->p.min_p) : -INFINITY;
    const double top_p = s->p.top_p;
    size_t n = 0;
    if (s->p.top_k > 0 && s->p.top_k < nv) {
        n = select_top_k(w, nv, ids, (size_t)s->p.top_k);
        /* top-p over the renormalised top-k set, then min-p: both cut the best-first list. */
        double z = 0, cum = 0;
        for (size_t i = 0; i < n; i++)
            z += (e[i] = expf(w[ids[i]] - lmax));
        size_t keep = n;
        for (size_t i = 0; i < n; i++) {
            if (i > 0 && w[ids[i]] - lmax < log_min_p) {
                keep = i;
                break;
            }
            cum += e[i];
            if (top_p < 1 && cum >= top_p * z) {
                keep = i + 1;
                break;
            }
        }
        n = keep;
    } else {
        /* Every finite id is a candidate; min-p alone is a filter in the same pass. */
        const float lmp = top_p < 1 ? -INFINITY : log_min_p;
        for (int32_t i = 0; i < nv; i++)
            if (w[i] != -INFINITY && w[i] - lmax >= lmp)
                ids[n++] = i;
        if (top_p < 1) {
            double z = 0;
            for (size_t i = 0; i < n; i++)
                z += (e[i] = expf(w[ids[i]] - lmax));
            n = nucleus_select(w, ids, e, n, top_p * z);
            if (log_min_p > -INFINITY) { /* min-p after top-p: a filter of the survivors */
                size_t k = 0;
                for (size_t i = 0; i < n; i++)
                    if (w[ids[i]] - lmax >= log_min_p)
                        ids[k++] = ids[i];
                n = k;
            }
        }
    }
    /* Temperature last: softmax of l / T over the survivors (lmax is among them). */
    const float inv_t = 1.0f / s->p.temperature;
    double z = 0;
    for (size_t i = 0; i < n; i++)
        z += (e[i] = expf((w[ids[i]] - lmax) * inv_t));
    const float inv_z = (float)(1.0 / z);
    for (size_t i = 0; i < n; i++)
        e[i] *= inv_z;
    *n_out = n;
    return SEER_OK;
}

void sampler_set_allowed(sampler *s, const uint32_t *allow) { s->allow = allow; }

int sampler_distribution(sampler *s, const float *logits, const int32_t **ids, const float **probs, size_t *n)
{
    size_t k;
    int rc = build(s, logits, &k);
    if (rc)
        return rc;
    *ids = s->ids;
    *probs = s->probs;
    *n = k;
    return SEER_OK;
}

int sampler_sample(sampler *s, const float *logits, int32_t *out_id)
{
    size_t n;
    int rc = build(s, logits, &n);
    if (rc)
        return rc;
    if (n == 1) {
        *out_id = s->ids[0];
        return SEER_OK;
    }
    double r = rng_uniform(s->rng), cum = 0;
    size_t pick = n - 1; /* if rounding leaves r above the summed floats, the last survivor */
    for (size_t i = 0; i < n; i++) {
        cum += s->probs[i];
        if (r < cum) {
            pick = i;
            break;
        }
    }
    *out_id = s->ids[pick];
    return SEER_OK;
}
