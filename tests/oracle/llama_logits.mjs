// llama_logits.mjs — llama.cpp (through node-llama-cpp 3.22.1, CPU only) as an independent oracle for seer.
// Loads a GGUF, feeds token ids, continues greedily, and prints JSON on stdout with, for every generated
// position, the raw logits of the whole vocabulary and their softmax (computed here in double precision).
//
//   node llama_logits.mjs --model M.gguf --tokens 1,2,3 [--n 40] [--threads 1] [--batch 512] [--kv-type F32]
//   node llama_logits.mjs --model M.gguf --requests R.json      (R: [{"tokens": [...], "n": 40}, ...])
//   node llama_logits.mjs --model M.gguf --texts T.json         (T: ["text", ...]; special tokens parsed)
//
// Output: {"model", "n_vocab", "results": [{"prompt", "tokens": n greedy ids, "logits": [[...] x n],
// "probs": [[...] x n]}]}; logits[0] follows the prompt, logits[i] follows tokens[i-1] (tokens[i] is its
// argmax, lowest id on exact ties). Every request runs in a fresh context (recurrent GDN state and KV
// cache start empty). The KV cache is F32 by default so that it adds no rounding of its own (--kv-type F16
// for llama.cpp's usual setting); flash attention is off. --texts instead prints
// {"model", "tokenized": [[ids] per text]}: llama.cpp's own tokenizer on the GGUF's tokenizer metadata.
// Logs go to stderr; errors exit 1.
import fs from "node:fs";
import process from "node:process";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

function parseArgs(argv) {
    const a = {n: 40, threads: 1, batch: 512, kvType: "F32"};
    for (let i = 2; i < argv.length; i++) {
        const k = argv[i], v = argv[i + 1];
        if (k === "--model") a.model = v;
        else if (k === "--tokens") a.tokens = v.split(",").filter((s) => s !== "").map(Number);
        else if (k === "--requests") a.requests = v;
        else if (k === "--texts") a.texts = v;
        else if (k === "--n") a.n = Number(v);
        else if (k === "--threads") a.threads = Number(v);
        else if (k === "--batch") a.batch = Number(v);
        else if (k === "--kv-type") a.kvType = v;
        else throw new Error(`unknown argument ${k}`);
        i++;
    }
    if (!a.model) throw new Error("--model is required");
    if (!a.tokens && !a.requests && !a.texts) throw new Error("--tokens, --requests or --texts is required");
    return a;
}

// argmax with the lowest index winning exact ties (the same rule as numpy.argmax in the reference).
function argmax(v) {
    let best = 0;
    for (let i = 1; i < v.length; i++) if (v[i] > v[best]) best = i;
    return best;
}

function softmax(v) {
    let m = -Infinity;
    for (const x of v) m = Math.max(m, x);
    const e = v.map((x) => Math.exp(x - m));
    const s = e.reduce((p, q) => p + q, 0);
    return e.map((x) => x / s);
}

function fullLogits(out, nVocab) {
    const map = out?.next?.logits;
    if (!map || map.size !== nVocab) throw new Error(`expected ${nVocab} logits, got ${map ? map.size : "none"}`);
    const v = new Array(nVocab);
    for (const [tok, x] of map) v[tok] = x;
    return v;
}

async function runOne(model, req, opt) {
    const prompt = req.tokens;
    const n = req.n ?? opt.n;
    const nVocab = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
    for (const t of prompt) if (!Number.isInteger(t) || t < 0 || t >= nVocab) throw new Error(`bad token id ${t}`);
    const context = await model.createContext({
        contextSize: Math.max(64, prompt.length + n + 8),
        batchSize: opt.batch,
        threads: opt.threads,
        flashAttention: false,
        experimentalKvCacheKeyType: opt.kvType,
        experimentalKvCacheValueType: opt.kvType,
        sequences: 1,
    });
    try {
        const seq = context.getSequence();
        const want = {generateNext: {logits: true}};
        const logits = [];
        const tokens = [];
        let res = await seq.controlledEvaluate(prompt.map((t, i) => (i === prompt.length - 1 ? [t, want] : t)));
        logits.push(fullLogits(res[prompt.length - 1], nVocab));
        for (let i = 0; i < n; i++) {
            const next = argmax(logits[logits.length - 1]);
            tokens.push(next);
            if (i === n - 1) break;
            res = await seq.controlledEvaluate([[next, want]]);
            logits.push(fullLogits(res[0], nVocab));
        }
        return {prompt, tokens, logits, probs: logits.map(softmax)};
    } finally {
        await context.dispose();
    }
}

async function main() {
    const opt = parseArgs(process.argv);
    const llama = await getLlama({
        gpu: false,
        build: "never",
        usePrebuiltBinaries: true,
        skipDownload: true,
        progressLogs: false,
        logLevel: LlamaLogLevel.warn,
        // The MTP block (blk.L.*) is not used by plain decoding; llama.cpp says so once per tensor.
        logger: (level, message) => {
            if (!message.includes("unused tensor")) process.stderr.write(`llama.cpp[${level}]: ${message.trimEnd()}\n`);
        },
    });
    const model = await llama.loadModel({modelPath: opt.model, gpuLayers: 0, useMmap: false, checkTensors: true});
    try {
        if (opt.texts) {
            const texts = JSON.parse(fs.readFileSync(opt.texts, "utf8"));
            const tokenized = texts.map((t) => Array.from(model.tokenize(t, true)));
            process.stdout.write(JSON.stringify({model: opt.model, tokenized}) + "\n");
            return;
        }
        const requests = opt.requests
            ? JSON.parse(fs.readFileSync(opt.requests, "utf8"))
            : [{tokens: opt.tokens, n: opt.n}];
        const results = [];
        for (const r of requests) results.push(await runOne(model, r, opt));
        process.stdout.write(JSON.stringify({model: opt.model, n_vocab: results[0]?.logits[0]?.length ?? 0, results}));
        process.stdout.write("\n");
    } finally {
        await model.dispose();
        await llama.dispose();
    }
}

main().catch((e) => {
    process.stderr.write(`llama_logits: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
});
