#!/usr/bin/env python3
"""Readable numpy reference of the Qwen3.5 text decoder, written from spec §2-§3 (not from any C code).

Computes in float64 by default (`dtype=np.float32` also works); weights are the bf16 values of the HF
checkpoint, widened exactly. It does not imitate HF's bf16 activation rounding (spec §9): it is the exact
math that seer's f32 paths and llama.cpp's F32 files approximate. State (GDN recurrent + conv state, KV cache,
position counter) carries across calls, so a prefill can be followed by decode steps.

    python3 qwen35_ref.py --model DIR/hf --tokens 1,2,3 [--decode N] [--gdn chunked|recurrent] --out g.npz

g.npz: prompt [T], prefill_logits [T, V] (row t predicts the token after prompt[t]), tokens [N] (greedy
continuation), step_logits [N, V] (row i is the distribution tokens[i] was taken from: row 0 = the last
prefill row, row i = logits after feeding tokens[i-1]).

Multimodal prompts (vision_ref.py prompt): `forward(embeds=[T, H], positions=[3, T])` takes the embeddings
with image rows scattered in and the three-axis positions of spec §3.2; set `rope_delta` afterwards so that
decode steps use T = H = W = n + rope_delta.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ensure_numpy  # noqa: E402

ensure_numpy()
import numpy as np  # noqa: E402

import safetensors  # noqa: E402

GDN_CHUNK = 64   # spec §2.5 step 8


def silu(x):
    return x / (1.0 + np.exp(-x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    # PyTorch's softplus returns x itself above 20 (spec §2.5 step 4).
    return np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0))))


def rmsnorm(x, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


def tokenizer_rows(hf_dir, n_head):
    """How many of the head's n_head rows are tokens: one past the highest id in tokenizer.json
    (its vocabulary and added tokens); n_head when the directory has no tokenizer."""
    path = os.path.join(hf_dir, "tokenizer.json")
    if not os.path.exists(path):
        return n_head
    with open(path) as f:
        tj = json.load(f)
    ids = list(tj["model"]["vocab"].values()) + [t["id"] for t in tj.get("added_tokens", [])]
    return min(n_head, max(ids) + 1)


class Qwen35Ref:
    def __init__(self, hf_dir, dtype=np.float64, gdn_mode="chunked", f16_activations=False):
        if gdn_mode not in ("chunked", "recurrent"):
            raise ValueError("gdn_mode is chunked or recurrent")
        with open(os.path.join(hf_dir, "config.json")) as f:
            cfg = json.load(f)
        tc = cfg.get("text_config", cfg)
        self.cfg, self.dt, self.gdn_mode, self.f16_activations = tc, dtype, gdn_mode, f16_activations
        raw = safetensors.read_dir(hf_dir)
        # HF composite names (spec §8); accept the text-only layout (model.layers...) as well.
        self.w = {}
        for name, a in raw.items():
            if name.startswith("model.language_model."):
                name = "model." + name[len("model.language_model."):]
            self.w[name] = a.astype(dtype)
        self.H = tc["hidden_size"]
        self.L = tc["num_hidden_layers"]
        self.eps = tc["rms_norm_eps"]
        self.layer_types = tc.get("layer_types") or [
            "full_attention" if (i + 1) % tc.get("full_attention_interval", 4) == 0 else "linear_attention"
            for i in range(self.L)]
        self.nh, self.nkv, self.hd = tc["num_attention_heads"], tc["num_key_value_heads"], tc["head_dim"]
        self.Hk, self.Hv = tc["linear_num_key_heads"], tc["linear_num_value_heads"]
        self.dk, self.dv = tc["linear_key_head_dim"], tc["linear_value_head_dim"]
        self.K = tc["linear_conv_kernel_dim"]
        rope = tc["rope_parameters"]
        self.n_rot = int(self.hd * rope.get("partial_rotary_factor", 1.0))
        self.theta = rope["rope_theta"]
        self.sections = list(rope.get("mrope_section", [self.n_rot // 2, 0, 0]))
        tied = tc.get("tie_word_embeddings", cfg.get("tie_word_embeddings", False))
        self.lm_head = self.w["model.embed_tokens.weight"] if tied or "lm_head.weight" not in self.w \
            else self.w["lm_head.weight"]
        self.n_real = tokenizer_rows(hf_dir, self.lm_head.shape[0])
        self.reset()

    def best(self, row):
        """A greedy pick from one row of logits: the head's rows past the tokenizer are padding
        (spec §2.7), which a sampler never picks. (generate() keeps every row: oracle_check.py
        compares it with llama.cpp, which does not mask them.)"""
        return int(np.argmax(row[:self.n_real]))

    def continue_greedy(self, row, n):
        """n greedy picks (best) after a prefill whose last logits are row, each picked token fed as
        the next decode step."""
        picks = []
        for i in range(n):
            picks.append(self.best(row))
            if i + 1 < n:
                row = self.forward([picks[-1]])[0]
        return picks

    def reset(self):
        """Empty state: sequence start (spec §2.5 'State to keep', §2.6 step 5)."""
        CD = 2 * self.Hk * self.dk + self.Hv * self.dv
        self.conv = {}
        self.S = {}
        self.kcache, self.vcache = {}, {}
        for i, t in enumerate(self.layer_types):
            if t == "linear_attention":
                self.conv[i] = np.zeros((self.K - 1, CD), self.dt)       # last K-1 pre-conv vectors m
                self.S[i] = np.zeros((self.Hv, self.dk, self.dv), self.dt)
            else:
                self.kcache[i] = np.zeros((0, self.nkv, self.hd), self.dt)
                self.vcache[i] = np.zeros((0, self.nkv, self.hd), self.dt)
        self.n_past = 0
        self.rope_delta = 0

    # ---------------------------------------------------------------------------------------------------
    def W(self, name):
        return self.w[name]

    def linear(self, x, name):
        """y = x W^T for a [out, in] weight (no biases in the text model, spec §2). With
        f16_activations the input is first rounded to f16, as llama.cpp's CPU matmul does for F16 weights;
        only used to study llama.cpp's F16 files, never for golden outputs."""
        if self.f16_activations:
            x = x.astype(np.float16).astype(self.dt)
        return x @ self.w[name].T

    def norm_zc(self, x, name):
        """Zero-centred RMSNorm: x * rsqrt(mean x^2 + eps) * (1 + w) (spec §2.3)."""
        return rmsnorm(x, self.eps) * (1.0 + self.W(name))

    def mlp(self, x, p):
        """SwiGLU (spec §2.4)."""
        g = self.linear(x, p + "mlp.gate_proj.weight")
        u = self.linear(x, p + "mlp.up_proj.weight")
        return self.linear(silu(g) * u, p + "mlp.down_proj.weight")

    # --- Gated DeltaNet (spec §2.5) --------------------------------------------------------------------
    def gdn(self, i, u):
        p = f"model.layers.{i}.linear_attn."
        T = u.shape[0]
        Hk, Hv, dk, dv, K = self.Hk, self.Hv, self.dk, self.dv, self.K
        m = self.linear(u, p + "in_proj_qkv.weight")                 # [T, CD]: q | k | v blocks   (step 1)
        z = self.linear(u, p + "in_proj_z.weight").reshape(T, Hv, dv)
        b = self.linear(u, p + "in_proj_b.weight")                    # [T, Hv]
        a = self.linear(u, p + "in_proj_a.weight")                    # [T, Hv]
        # Step 2: causal depthwise conv (cross-correlation, tap K-1 = current token) over the cached
        # K-1 previous m vectors followed by the new ones, then SiLU.
        cw = self.W(p + "conv1d.weight")[:, 0, :]                     # [CD, K]
        hist = np.concatenate([self.conv[i], m], axis=0)              # [K-1+T, CD]
        c = np.zeros_like(m)
        for kk in range(K):
            c += hist[kk:kk + T] * cw[:, kk]
        c = silu(c)
        self.conv[i] = hist[-(K - 1):].copy()
        # Step 3: split.
        q = c[:, :Hk * dk].reshape(T, Hk, dk)
        k = c[:, Hk * dk:2 * Hk * dk].reshape(T, Hk, dk)
        v = c[:, 2 * Hk * dk:].reshape(T, Hv, dv)
        # Step 4: per v-head scalars.
        beta = sigmoid(b)
        g = -np.exp(self.W(p + "A_log")) * softplus(a + self.W(p + "dt_bias"))   # log-decay, <= 0
        # Step 5: v-head j reads k-head j // r (HF repeat-interleave; llama.cpp's tiled order differs).
        r = Hv // Hk
        q = np.repeat(q, r, axis=1)
        k = np.repeat(k, r, axis=1)
        # Step 6: L2-normalise q, k per head (eps inside the rsqrt), scale q by 1/sqrt(dk).
        q = q / np.sqrt(np.sum(q * q, axis=-1, keepdims=True) + 1e-6) / np.sqrt(dk)
        k = k / np.sqrt(np.sum(k * k, axis=-1, keepdims=True) + 1e-6)
        # Steps 7/8.
        run = self.delta_rule_chunked if self.gdn_mode == "chunked" else self.delta_rule_recurrent
        o, self.S[i] = run(q, k, v, beta, g, self.S[i])
        # Step 9: gated RMSNorm per head: rmsnorm(o) * w * silu(z) (w is a plain weight, §2.3).
        y = rmsnorm(o, self.eps) * self.W(p + "norm.weight") * silu(z)
        # Step 10.
        return self.linear(y.reshape(T, Hv * dv), p + "out_proj.weight")

    @staticmethod
    def delta_rule_recurrent(q, k, v, beta, g, S):
        """Spec §2.5 step 7, token by token. q,k: [T,Hv,dk], v: [T,Hv,dv], beta,g: [T,Hv], S: [Hv,dk,dv]."""
        S = S.copy()
        o = np.zeros_like(v)
        for t in range(q.shape[0]):
            S *= np.exp(g[t])[:, None, None]                              # S <- alpha S
            kv_mem = np.einsum("hij,hi->hj", S, k[t])                      # S^T k
            delta = beta[t][:, None] * (v[t] - kv_mem)
            S += np.einsum("hi,hj->hij", k[t], delta)                       # S += k delta^T
            o[t] = np.einsum("hij,hi->hj", S, q[t])                         # o = S^T q (updated S)
        return o, S

    @staticmethod
    def delta_rule_chunked(q, k, v, beta, g, S, C=GDN_CHUNK):
        """Spec §2.5 step 8 (WY form), chunks of C with zero padding; same math as the recurrent form."""
        T, Hv, dk = q.shape
        dv = v.shape[2]
        n = -(-T // C)
        pad = n * C - T

        def padt(x):
            return np.concatenate([x, np.zeros((pad,) + x.shape[1:], x.dtype)], axis=0) if pad else x

        # Head-major [Hv, n, C, ...] views of the padded sequence.
        q, k, v = (padt(x).reshape(n, C, Hv, -1).transpose(2, 0, 1, 3) for x in (q, k, v))
        beta, g = (padt(x).reshape(n, C, Hv).transpose(2, 0, 1) for x in (beta, g))
        S = S.copy()
        o = np.zeros((Hv, n, C, dv), q.dtype)
        lower = np.tril(np.ones((C, C), bool))
        strict = np.tril(np.ones((C, C), bool), -1)
        eye = np.eye(C, dtype=q.dtype)
        for c in range(n):
            Q, Kc, V, B = q[:, c], k[:, c], v[:, c], beta[:, c]           # [Hv,C,dk], [Hv,C,dv], [Hv,C]
            G = np.cumsum(g[:, c], axis=1)                                  # Gamma_i
            diff = G[:, :, None] - G[:, None, :]
            D = np.exp(np.where(lower, diff, -np.inf))                     # exp(Gamma_i - Gamma_j), j <= i
            A = np.where(strict, B[:, :, None] * (Kc @ Kc.transpose(0, 2, 1)) * D, 0.0)
            Tinv = np.linalg.solve(eye + A, np.broadcast_to(eye, A.shape))  # (I + A)^-1, unit lower-tri
            U = Tinv @ (B[:, :, None] * V)
            Wm = Tinv @ ((B * np.exp(G))[:, :, None] * Kc)
            Vn = U - Wm @ S                                                  # V' = U - W S
            o[:, c] = (np.exp(G)[:, :, None] * Q) @ S + ((Q @ Kc.transpose(0, 2, 1)) * D) @ Vn
            GC = G[:, -1]
            S = np.exp(GC)[:, None, None] * S + \
                (np.exp(GC[:, None] - G)[:, :, None] * Kc).transpose(0, 2, 1) @ Vn
        o = o.transpose(1, 2, 0, 3).reshape(n * C, Hv, dv)[:T]
        return o, S

    # --- full attention (spec §2.6, §3.3) --------------------------------------------------------------
    def rope_angles(self, pos):
        """pos: [3, T] (T, H, W axes) -> angles [T, n_rot/2] with the interleaved MRoPE axis choice:
        frequency i uses H if i%3 == 1 and i < 3*sec[1], W if i%3 == 2 and i < 3*sec[2], else T."""
        nf = self.n_rot // 2
        inv_freq = self.theta ** (-np.arange(nf, dtype=np.float64) * 2.0 / self.n_rot)
        axis = np.zeros(nf, int)
        for i in range(nf):
            if i % 3 == 1 and i < 3 * self.sections[1]:
                axis[i] = 1
            elif i % 3 == 2 and i < 3 * self.sections[2]:
                axis[i] = 2
        return (pos[axis].T.astype(np.float64) * inv_freq).astype(self.dt)

    def apply_rope(self, x, ang):
        """Rotate-half over the first n_rot dims: pairs (i, i + n_rot/2); the rest pass through."""
        h = self.n_rot // 2
        cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        x1, x2 = x[..., :h], x[..., h:self.n_rot]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin, x[..., self.n_rot:]], axis=-1)

    def attention(self, i, u, pos):
        p = f"model.layers.{i}.self_attn."
        T = u.shape[0]
        nh, nkv, hd = self.nh, self.nkv, self.hd
        qg = self.linear(u, p + "q_proj.weight").reshape(T, nh, 2 * hd)   # per head [q | gate]  (step 1)
        q, gate = qg[..., :hd], qg[..., hd:]
        k = self.linear(u, p + "k_proj.weight").reshape(T, nkv, hd)
        v = self.linear(u, p + "v_proj.weight").reshape(T, nkv, hd)
        q = self.norm_zc(q, p + "q_norm.weight")                           # step 3, before RoPE
        k = self.norm_zc(k, p + "k_norm.weight")
        ang = self.rope_angles(pos)
        q, k = self.apply_rope(q, ang), self.apply_rope(k, ang)            # step 4
        self.kcache[i] = np.concatenate([self.kcache[i], k], axis=0)       # step 5
        self.vcache[i] = np.concatenate([self.vcache[i], v], axis=0)
        Kc, Vc = self.kcache[i], self.vcache[i]
        n_kv = Kc.shape[0]
        grp = nh // nkv                                                    # step 6: head h -> kv h // grp
        Kh = np.repeat(Kc, grp, axis=1).transpose(1, 0, 2)                 # [nh, n_kv, hd]
        Vh = np.repeat(Vc, grp, axis=1).transpose(1, 0, 2)
        s = (q.transpose(1, 0, 2) @ Kh.transpose(0, 2, 1)) / np.sqrt(hd)   # [nh, T, n_kv]
        qpos = n_kv - T + np.arange(T)                                     # absolute index of each query
        s = np.where(np.arange(n_kv)[None, :] <= qpos[:, None], s, -np.inf)
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        s /= s.sum(axis=-1, keepdims=True)
        o = (s @ Vh).transpose(1, 0, 2)                                    # [T, nh, hd]
        o = o * sigmoid(gate)                                              # step 8
        return self.linear(o.reshape(T, nh * hd), p + "o_proj.weight")

    # --- whole model (spec §2.1, §2.2, §2.7) -----------------------------------------------------------
    def forward(self, tokens=None, embeds=None, positions=None):
        """Runs T new tokens (ids, or embeddings [T, H]) and returns logits [T, V]. positions: [3, T]
        MRoPE positions; default T = H = W = sequence index + rope_delta (text, spec §3.2)."""
        if embeds is None:
            x = self.W("model.embed_tokens.weight")[np.asarray(tokens, dtype=np.int64)]
        else:
            x = np.asarray(embeds, self.dt)
        T = x.shape[0]
        if T == 0:
            return np.zeros((0, self.lm_head.shape[0]), self.dt)
        if positions is None:
            positions = np.tile(self.n_past + self.rope_delta + np.arange(T), (3, 1))
        positions = np.asarray(positions)
        for i, kind in enumerate(self.layer_types):
            p = f"model.layers.{i}."
            u = self.norm_zc(x, p + "input_layernorm.weight")
            x = x + (self.gdn(i, u) if kind == "linear_attention" else self.attention(i, u, positions))
            x = x + self.mlp(self.norm_zc(x, p + "post_attention_layernorm.weight"), p)
        self.n_past += T
        z = self.norm_zc(x, "model.norm.weight")
        if self.f16_activations:
            z = z.astype(np.float16).astype(self.dt)
        return z @ self.lm_head.T

    def generate(self, prompt, n):
        """Greedy: prefill, then n tokens. Returns (prefill_logits, tokens, step_logits) as documented."""
        prefill = self.forward(prompt)
        steps, toks = [prefill[-1]], []
        for i in range(n):
            toks.append(int(np.argmax(steps[-1])))
            if i == n - 1:
                break
            steps.append(self.forward([toks[-1]])[0])
        return prefill, np.array(toks, np.int64), np.array(steps[:n]).reshape(n, prefill.shape[1])

    def teacher_forced(self, prompt, continuation):
        """Logits the model gives before each continuation token (prefill, then one decode step per
        token), i.e. step rows comparable with another engine's greedy run on the same tokens."""
        rows = [self.forward(prompt)[-1]]
        for t in continuation[:-1]:
            rows.append(self.forward([t])[0])
        return np.array(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="HF directory (config.json + safetensors)")
    ap.add_argument("--tokens", required=True, help="comma-separated prompt token ids")
    ap.add_argument("--decode", type=int, default=0, help="greedy tokens to generate")
    ap.add_argument("--gdn", default="chunked", choices=["chunked", "recurrent"])
    ap.add_argument("--dtype", default="f64", choices=["f64", "f32"])
    ap.add_argument("--out", required=True,
                    help="NAME.npz, or a prefix for raw little-endian files (--raw): PREFIX.prefill.f32 "
                         "[T,V], PREFIX.tokens.i32 [N], PREFIX.steps.f32 [N,V] (read by C tests)")
    ap.add_argument("--raw", action="store_true", help="write raw binary files instead of .npz")
    a = ap.parse_args()
    prompt = [int(t) for t in a.tokens.split(",") if t.strip()]
    if not prompt:
        ap.error("--tokens needs at least one id")
    ref = Qwen35Ref(a.model, np.float64 if a.dtype == "f64" else np.float32, a.gdn)
    V = ref.lm_head.shape[0]
    if min(prompt) < 0 or max(prompt) >= V:
        ap.error(f"token ids must be in [0, {V})")
    prefill, toks, steps = ref.generate(prompt, a.decode)
    if a.raw:
        prefill.astype("<f4").tofile(a.out + ".prefill.f32")
        toks.astype("<i4").tofile(a.out + ".tokens.i32")
        steps.astype("<f4").tofile(a.out + ".steps.f32")
    else:
        np.savez(a.out, prompt=np.array(prompt, np.int64), prefill_logits=prefill, tokens=toks, step_logits=steps)
    print(f"qwen35_ref: {len(prompt)} prompt tokens, greedy {toks.tolist()}", file=sys.stderr)


if __name__ == "__main__":
    main()
