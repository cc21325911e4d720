// tower_mtmd.mjs — times llama.cpp's libmtmd (npm @fugood/llama.node 1.7.15, CPU) encoding images with a
// qwen3vl_merger mmproj, for bench/tower_vs_mtmd.sh:
//   node bench/tower_mtmd.mjs --model TEXT.gguf --mmproj MMPROJ.gguf --threads N --out RESULT.json
//        [--warmup IMG ...] --image IMG [--image IMG ...] [--text-check 1]
// Each image is one completion of n_predict 1 on the prompt <__media__> alone (the image's tokens between
// <|vision_start|>/<|vision_end|>). The encode time itself is the line libmtmd prints per image on stdout,
// "image slice encoded in N ms" (mtmd-helper, around mtmd_encode_chunk: tower and merger only), which
// bench/tower_vs_mtmd.sh reads from the log; every --warmup image runs first, untimed for the table
// (graph allocation, first touch of the weights), as `seer bench --image` warms up each size.
// Writes [{image, tokens, image_wall_ms[, text_wall_ms, encode_ms]}] to RESULT.json (tokens: decoder
// tokens of the image run, the two markers included).
// --text-check 1 adds a cross-check from outside, independent of that log line: right after each image
// run, a text-only completion of n_predict 1 whose prompt has as many decoder tokens, and
//   encode_ms = image_wall_ms - text_wall_ms
// (llama.node's completion timings count the image's encoding inside prompt_ms, so they cannot split it).
// The model and projector are loaded once; every image is a different file (different pixels), so nothing
// of an earlier run is reused (bitmaps are keyed by a hash of their pixels), and the KV cache is cleared
// before every run.
// Native logs go to stdout (redirect it); errors exit 1 with one line on stderr.
import fs from "node:fs";
import {createRequire} from "node:module";
import process from "node:process";

// llama.node is installed for the oracle tests (npm install in tests/oracle), not beside this script
const require = createRequire(new URL("../tests/oracle/package.json", import.meta.url));

function parseArgs(argv) {
    const a = {images: [], warmups: [], threads: 1};
    for (let i = 2; i < argv.length; i += 2) {
        const k = argv[i], v = argv[i + 1];
        if (v === undefined) throw new Error(`${k} needs a value`);
        if (k === "--model") a.model = v;
        else if (k === "--mmproj") a.mmproj = v;
        else if (k === "--image") a.images.push(v);
        else if (k === "--warmup") a.warmups.push(v);
        else if (k === "--threads") a.threads = Number(v);
        else if (k === "--out") a.out = v;
        else if (k === "--text-check") a.textCheck = v === "1";
        else throw new Error(`unknown argument ${k}`);
    }
    if (!a.model || !a.mmproj || !a.out || !a.images.length) throw new Error("--model, --mmproj, --out, --image needed");
    if (!Number.isInteger(a.threads) || a.threads < 1) throw new Error("--threads must be a positive integer");
    return a;
}

async function main(a) {
    const {loadModel} = require("@fugood/llama.node");
    // n_ctx: the largest image of the script (1280x1280, 1600 tokens) plus the generated token and slack;
    // n_batch as large, so an image's embeddings go through the decoder in one batch as in seer.
    const ctx = await loadModel({model: a.model, n_ctx: 4096, n_batch: 2048, n_ubatch: 512, n_gpu_layers: 0,
        n_threads: a.threads, n_parallel: 1, flash_attn_type: "off", ctx_shift: false, state_cache_budget_mb: 0});
    // HF's token window (spec §5.1), as tests/oracle/mtmd_logits.mjs passes it: the images need no resize
    if (!ctx.initMultimodal({path: a.mmproj, use_gpu: false, image_min_tokens: 64, image_max_tokens: 16384}))
        throw new Error(`${a.mmproj}: libmtmd could not load the projector`);
    // the native call without a token callback (see mtmd_logits.mjs: the wrapper's callback can crash)
    const run = async (opts) => {
        ctx.clearCache(true);
        const t0 = process.hrtime.bigint();
        const r = await ctx.ctx.completion({...opts, n_predict: 1, temperature: 0});
        return {ms: Number(process.hrtime.bigint() - t0) / 1e6, n: r.timings.prompt_n};
    };
    // A text prompt of exactly n tokens: " a" repeated, trimmed or grown until the tokenizer agrees.
    const textOf = async (n) => {
        let k = n;
        for (let tries = 0; tries < 20; tries++) {
            const got = (await ctx.tokenize(" a".repeat(k))).tokens.length;
            if (got === n) return " a".repeat(k);
            k = Math.max(1, Math.round(k * n / got) + (got < n ? 1 : -1));
        }
        throw new Error(`no text prompt of ${n} tokens found`);
    };
    const once = async (img) => {
        const im = await run({prompt: "<__media__>", media_paths: [img]});
        if (!a.textCheck) return {image: img, tokens: im.n, image_wall_ms: im.ms};
        const tx = await run({prompt: await textOf(im.n)});
        if (tx.n !== im.n) throw new Error(`text run has ${tx.n} prompt tokens, the image run ${im.n}`);
        return {image: img, tokens: im.n, image_wall_ms: im.ms, text_wall_ms: tx.ms, encode_ms: im.ms - tx.ms};
    };
    try {
        for (const img of a.warmups) await once(img);
        const out = [];
        for (const img of a.images) out.push(await once(img));
        fs.writeFileSync(a.out, JSON.stringify(out) + "\n");
    } finally {
        await ctx.release();
    }
}

try {
    await main(parseArgs(process.argv));
} catch (e) {
    process.stderr.write(`tower_mtmd: ${e.message}\n`);
    process.exit(1);
}
