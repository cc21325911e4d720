// mtmd_logits.mjs — llama.cpp's multimodal library libmtmd (npm @fugood/llama.node 1.7.15, CPU only) as an
// independent image oracle for seer: loads a text GGUF and a qwen3vl_merger mmproj, runs one raw prompt
// with images greedily, and prints on stdout
//   {"prompt_tokens": N, "text_tokens": T, "images": [{path, width, height, tokens}], "stop": "limit"|"eog",
//    "tokens": [greedy ids], "probs": [[{id, p, tok_str} x top] | null per step],
//    "top2_logit_gap": [gap | null per step], "padding_from": first id of the vocabulary's padding rows}
//
//   node mtmd_logits.mjs --model TEXT.gguf --mmproj MMPROJ.gguf --image IMG [--image IMG2 ...]
//        --prompt RAW [--n 8] [--threads 1] [--top 10]
//
// RAW is fed as is (special tokens parsed, no template); each <|vision_start|><|image_pad|><|vision_end|>
// in it takes the next --image, as in `seer ask --raw`. libmtmd marks an image with its own marker and adds
// <|vision_start|>/<|vision_end|> itself for qwen3vl_merger, so the triple becomes that marker.
// prompt_tokens counts what the decoder sees: text tokens plus one per image embedding (libmtmd's chunks);
// text_tokens is RAW tokenized as plain text, so prompt_tokens = text_tokens - images + sum(image tokens).
//
// Images must need no resize: libmtmd letterboxes (pads) to its grid, which is not HF's smart_resize, so
// only a PNG whose sides are multiples of 32 with (h/32)(w/32) in HF's window [64, 16384] tokens (the
// window passed as image_min/max_tokens) is accepted, and its token count is checked against libmtmd's.
//
// llama.node exposes neither the ids of generated tokens nor logits; what it has is used as follows.
//  - tokens: one run at temperature 0, then the session file it saves (llama.cpp's state file starts with
//    the token list; image positions are -1 there). The list lacks the last sampled token, so the run asks
//    for n+1. A stop on an end-of-generation token is not listed at all: its id comes from probs below.
//  - probs: llama.node reports the sampling chain's candidates, which temperature 0 collapses to one token;
//    at temperature 1 with every filter off (top-k 0, top-p 1, min-p 0, no penalties/DRY/XTC) they are the
//    full softmax of the raw logits. Step i is one such run whose prompt is RAW continued by the greedy
//    prefix as text, used only where that text tokenizes back to exactly RAW's tokens plus the prefix
//    (a piece that is not whole UTF-8 cannot pass through a JS string; a token-id grammar cannot force
//    such tokens either): elsewhere null. Ids come back as strings; they are mapped through the GGUF
//    vocabulary, and a string several tokens print alike ("" for unused rows, U+FFFD) gets id null.
//  - top2_logit_gap: where probs are null, the near-tie question still has an exact answer: one run at
//    temperature T_LOW reports softmax(logits / T_LOW), whose top two give logit1 - logit2 =
//    T_LOW * ln(p1 / p2) at every step, along the greedy path as long as that run's own choices (its
//    session file) follow it (they can only leave it at a gap below ~T_LOW * 10). A second probability
//    that underflowed gives the lower bound GAP_FLOOR. Since p1 - p2 = p1 (1 - exp(-gap)) <= 1 - exp(-gap),
//    a small gap bounds the probability gap from above.
// Every run loads the model afresh (no prefix or state cache reused across runs: a cached prefix would be
// evaluated in different batches). KV cache F32, flash attention off. Logs go to stderr (the native
// library prints to stdout, so the work runs in a child process whose stdout is our stderr); errors exit 1.
import {fork} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";

const IMAGE_TRIPLE = "<|vision_start|><|image_pad|><|vision_end|>";
const MTMD_MARKER = "<__media__>"; // libmtmd's default media marker (mtmd_default_marker)
const PATCH_MERGE = 32; // patch 16 x spatial merge 2: one token per 32x32 block (spec §4.1)
const MIN_TOKENS = 64, MAX_TOKENS = 16384; // HF's window: 65536..16777216 pixels (spec §5.1)
const T_LOW = 1e-3; // low temperature of the gap run (see the header)
const GAP_FLOOR = T_LOW * 87; // exp(-87) is near f32's smallest normal: a p2 of 0 means a gap at least this

function parseArgs(argv) {
    const a = {images: [], n: 8, threads: 1, top: 10};
    for (let i = 2; i < argv.length; i += 2) {
        const k = argv[i], v = argv[i + 1];
        if (v === undefined) throw new Error(`${k} needs a value`);
        if (k === "--model") a.model = v;
        else if (k === "--mmproj") a.mmproj = v;
        else if (k === "--image") a.images.push(v);
        else if (k === "--prompt") a.prompt = v;
        else if (k === "--n") a.n = Number(v);
        else if (k === "--threads") a.threads = Number(v);
        else if (k === "--top") a.top = Number(v);
        else throw new Error(`unknown argument ${k}`);
    }
    if (!a.model || !a.mmproj || a.prompt === undefined) throw new Error("--model, --mmproj and --prompt are required");
    for (const k of ["n", "threads", "top"])
        if (!Number.isInteger(a[k]) || a[k] < 1) throw new Error(`--${k} must be a positive integer`);
    return a;
}

// Width and height from a PNG's IHDR chunk, which must come first (PNG spec §5.3, §11.2.2).
function pngSize(file) {
    const b = fs.readFileSync(file);
    const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
    if (b.length < 24 || sig.some((x, i) => b[i] !== x) || b.toString("latin1", 12, 16) !== "IHDR")
        throw new Error(`${file}: not a PNG (only PNGs are checked for needing no resize)`);
    return {width: b.readUInt32BE(16), height: b.readUInt32BE(20)};
}

function imageInfo(file) {
    const {width, height} = pngSize(file);
    const tokens = (width / PATCH_MERGE) * (height / PATCH_MERGE);
    if (width % PATCH_MERGE || height % PATCH_MERGE || tokens < MIN_TOKENS || tokens > MAX_TOKENS)
        throw new Error(`${file}: ${width}x${height} would be resized (sides must be multiples of ` +
            `${PATCH_MERGE} and (h/32)(w/32) within ${MIN_TOKENS}..${MAX_TOKENS}); libmtmd's resize is not HF's`);
    return {path: file, width, height, tokens};
}

// GPT-2's byte <-> printable-character map (byte-level BPE vocabularies store pieces in it).
function byteDecoder() {
    const bs = [];
    for (let c = 33; c <= 126; c++) bs.push(c);
    for (let c = 161; c <= 172; c++) bs.push(c);
    for (let c = 174; c <= 255; c++) bs.push(c);
    const cs = bs.slice();
    for (let b = 0, n = 0; b < 256; b++) if (!bs.includes(b)) bs.push(b), cs.push(256 + n++);
    return new Map(cs.map((c, i) => [String.fromCodePoint(c), bs[i]]));
}

// The string llama.node prints for each vocabulary id (rnllama::tokens_to_output_formatted_string:
// llama.cpp's piece with special tokens rendered, and "byte: \xNN" for a lone non-ASCII byte), inverted:
// string -> id, or null where several ids print alike. Also the first id of the trailing run of unused
// rows (the padding past the tokenizer, "[PADn]"): libmtmd may pick those, seer never does (spec §2.7,
// §10 item 9).
async function vocabularyIndex(modelPath) {
    const {readGgufFileInfo} = await import("node-llama-cpp");
    const info = await readGgufFileInfo(modelPath, {readTensorInfo: false});
    const {tokens, token_type: types} = info.metadata.tokenizer.ggml;
    const dec = byteDecoder();
    const index = new Map();
    tokens.forEach((text, id) => {
        let bytes; // llama-vocab.cpp token_to_piece for BPE: NORMAL decoded, CONTROL/USER_DEFINED raw, rest ""
        if (types[id] === 1) bytes = Buffer.from(Array.from(text, (ch) => dec.get(ch) ?? 0));
        else if (types[id] === 3 || types[id] === 4) bytes = Buffer.from(text, "utf8");
        else bytes = Buffer.alloc(0);
        const s = bytes.length === 1 && bytes[0] & 0x80 ? `byte: \\x${bytes[0].toString(16)}` : bytes.toString("utf8");
        index.set(s, index.has(s) ? null : id);
    });
    let paddingFrom = tokens.length;
    while (paddingFrom > 0 && types[paddingFrom - 1] === 5) paddingFrom--;
    return {index, paddingFrom};
}

async function worker(a) {
    const {loadModel} = await import("@fugood/llama.node");
    const images = a.images.map(imageInfo);
    const parts = a.prompt.split(IMAGE_TRIPLE);
    if (parts.length - 1 !== images.length)
        throw new Error(`the prompt has ${parts.length - 1} image placeholders for ${images.length} --image`);
    if (a.prompt.includes(MTMD_MARKER) || parts.some((p) => p.includes("<|image_pad|>")))
        throw new Error(`the prompt holds ${MTMD_MARKER} or an <|image_pad|> outside ${IMAGE_TRIPLE}`);
    const prompt = parts.join(MTMD_MARKER);
    const {index: vocab, paddingFrom} = await vocabularyIndex(a.model);

    // One fresh model + context + projector per run (see the header).
    async function withContext(nCtx, fn) {
        const ctx = await loadModel({
            model: a.model, n_ctx: nCtx, n_gpu_layers: 0, n_threads: a.threads, n_parallel: 1,
            cache_type_k: "f32", cache_type_v: "f32", flash_attn_type: "off", ctx_shift: false,
            state_cache_budget_mb: 0, use_mmap: false,
        });
        try {
            if (!ctx.initMultimodal({path: a.mmproj, use_gpu: false, image_min_tokens: MIN_TOKENS,
                image_max_tokens: MAX_TOKENS}))
                throw new Error(`${a.mmproj}: libmtmd could not load the projector`);
            return await fn(ctx);
        } finally {
            await ctx.release();
        }
    }

    // completion() through the native object with no token callback: the wrapper always passes one, and
    // its queued calls read the llama_context (to print probabilities) after the promise resolved, so a
    // release() right after crashed about one run in ten (SIGSEGV).
    const complete = (ctx, opts) => ctx.ctx.completion(opts);

    const media = {media_paths: a.images};
    const nText = await withContext(4096, async (ctx) => {
        await ctx.tokenize(prompt, media); // logs libmtmd's chunks for the parent (see countChunks)
        return (await ctx.tokenize(a.prompt)).tokens.length;
    });
    const nPrompt = nText - images.length + images.reduce((s, im) => s + im.tokens, 0);
    const nCtx = nPrompt + a.n + 16;
    const neutral = {penalty_repeat: 1, penalty_freq: 0, penalty_present: 0, dry_multiplier: 0,
        xtc_probability: 0, top_n_sigma: -1, mirostat: 0, seed: 1, top_k: 0, top_p: 1, min_p: 0, typical_p: 1};

    // A run of n+1 steps and the ids it generated (from its session file; see the header).
    async function sampledRun(opts) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mtmd-"));
        try {
            const r = await withContext(nCtx, async (ctx) => {
                const res = await complete(ctx, {prompt, ...media, ...neutral, ...opts, n_predict: a.n + 1});
                await ctx.saveSession(path.join(dir, "session.bin"));
                return res;
            });
            const ses = fs.readFileSync(path.join(dir, "session.bin"));
            if (ses.length < 12 || ses.readUInt32LE(0) !== 0x6767736e) throw new Error("session file: bad magic");
            const nSes = ses.readUInt32LE(8);
            if (ses.length < 12 + 4 * nSes) throw new Error("session file: truncated token list");
            const nPos = r.tokens_evaluated - r.tokens_predicted; // prompt positions at the list's head
            const ids = Array.from({length: nSes - nPos}, (_, i) => ses.readInt32LE(12 + 4 * (nPos + i)));
            return {r, ids: ids.slice(0, a.n)};
        } finally {
            fs.rmSync(dir, {recursive: true});
        }
    }

    const greedy = await sampledRun({temperature: 0});
    const tokens = greedy.ids;
    // tokens_predicted leaves the stop token out: a stop as token n+1 is past the limit
    const eog = greedy.r.stopped_eos && greedy.r.tokens_predicted < a.n;
    const stepsKnown = eog ? greedy.r.tokens_predicted : a.n;
    if (tokens.length !== stepsKnown)
        throw new Error(`session holds ${tokens.length} generated tokens, ${stepsKnown} expected`);
    const nSteps = eog ? stepsKnown + 1 : stepsKnown;

    const low = await sampledRun({temperature: T_LOW, n_probs: 2});
    const gaps = [];
    for (let i = 0; i < nSteps; i++) {
        const onPath = low.ids.slice(0, i).join() === tokens.slice(0, i).join();
        const p = low.r.completion_probabilities?.[i]?.probs;
        if (!onPath || !p || p.length < 2) gaps.push(null);
        else gaps.push(p[1].prob > 0 ? T_LOW * Math.log(p[0].prob / p[1].prob) : GAP_FLOOR);
    }

    const prefixes = await withContext(nCtx, async (ctx) => {
        const base = Array.from((await ctx.tokenize(a.prompt)).tokens);
        const out = [];
        for (let i = 0; i < nSteps; i++) {
            const text = i ? await ctx.detokenize(tokens.slice(0, i)) : "";
            const got = Array.from((await ctx.tokenize(a.prompt + text)).tokens);
            out.push(got.join() === base.concat(tokens.slice(0, i)).join() ? text : null);
        }
        return out;
    });
    const probs = [];
    for (let i = 0; i < nSteps; i++) {
        if (prefixes[i] === null) {
            probs.push(null);
            continue;
        }
        const r = await withContext(nCtx, (ctx) => complete(ctx, {
            prompt: prompt + prefixes[i], ...media, ...neutral, temperature: 1, n_predict: 1, n_probs: a.top,
        }));
        const step = r.completion_probabilities?.[0];
        if (!step) throw new Error(`step ${i}: no probabilities`);
        probs.push(step.probs.map(({tok_str, prob}) => ({id: vocab.get(tok_str) ?? null, p: prob, tok_str})));
    }
    if (eog) { // the stop token: the argmax of that step, printed by name (special tokens are unique)
        const top = probs[stepsKnown]?.[0] ?? low.r.completion_probabilities?.[stepsKnown]?.probs?.[0];
        const id = top ? vocab.get(top.tok_str ?? "") : null;
        if (id !== null && id !== undefined) tokens.push(id);
    }
    return {text_tokens: nText, images, stop: eog ? "eog" : "limit", padding_from: paddingFrom, tokens, probs,
        top2_logit_gap: gaps};
}

// libmtmd's prompt size: llama.node's tokenize() returns positions (an image advances M-RoPE positions by
// max(grid h, grid w), spec §3.2), not tokens, so the count comes from the chunk list llama.node logs on
// stdout for every tokenization ("Chunk k: type=IMAGE, n_tokens=N, n_pos=P"): first the worker's own
// tokenize(), then the greedy run (the same list), then the probability runs (the prompt plus a greedy
// prefix: only the last text chunk grows). Returns the total token count, or throws.
function countChunks(log) {
    const lists = [];
    for (const m of log.matchAll(/Chunk (\d+): type=(\w+), n_tokens=(\d+)/g)) {
        if (m[1] === "0") lists.push([]);
        if (!lists.length) throw new Error("libmtmd's chunk log does not start at chunk 0");
        lists[lists.length - 1].push(`${m[2]}:${m[3]}`);
    }
    if (lists.length < 2) throw new Error("no chunk lists in llama.node's log (is it @fugood/llama.node 1.7.15?)");
    const head = (l) => l.slice(0, -1).join();
    if (lists[1].join() !== lists[0].join() || lists.some((l) => head(l) !== head(lists[0])))
        throw new Error(`runs tokenized the prompt differently: ${lists.map((l) => l.join(" ")).join(" | ")}`);
    return lists[0].reduce((s, c) => s + Number(c.split(":")[1]), 0);
}

if (process.env.MTMD_LOGITS_WORKER === "1") {
    worker(parseArgs(process.argv)).then(
        (result) => process.send({result}, () => process.exit(0)),
        (e) => process.send({error: e && e.stack ? e.stack : String(e)}, () => process.exit(1)));
} else {
    try {
        parseArgs(process.argv);
    } catch (e) {
        process.stderr.write(`mtmd_logits: ${e.message}\n`);
        process.exit(1);
    }
    let reply = null, log = "";
    const child = fork(new URL(import.meta.url).pathname, process.argv.slice(2), {
        env: {...process.env, MTMD_LOGITS_WORKER: "1"},
        stdio: ["ignore", "pipe", process.stderr.fd, "ipc"],
    });
    child.stdout.on("data", (d) => {
        log += d;
        process.stderr.write(d);
    });
    child.on("message", (m) => (reply = m));
    child.on("close", (code, signal) => {
        try {
            if (!reply?.result || code !== 0) throw new Error(reply?.error ?? `worker exited (${signal ?? code})`);
            const r = reply.result;
            const prompt_tokens = countChunks(log);
            const want = r.text_tokens - r.images.length + r.images.reduce((s, im) => s + im.tokens, 0);
            if (prompt_tokens !== want)
                throw new Error(`libmtmd made ${prompt_tokens} prompt tokens, ${want} expected: it resized an image`);
            process.stdout.write(JSON.stringify({prompt_tokens, ...r}) + "\n");
        } catch (e) {
            process.stderr.write(`mtmd_logits: ${e.message}\n`);
            process.exit(1);
        }
    });
}
