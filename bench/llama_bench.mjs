// llama_bench.mjs — times llama.cpp (npm node-llama-cpp 3.22.1, CPU only, the copy installed in
// tests/oracle/node_modules) on a GGUF the same way `seer bench` times seer, so the two can be compared on
// the same file and thread count:
//   pp<N>: a fresh sequence, N prompt tokens evaluated in micro-batches of --batch (no logits kept
//          but the last), timed per repetition;
//   tg<N>: a fresh sequence, --warmup untimed single-token steps, then N timed single-token steps, each
//          feeding the previous step's greedy token.
// The prompt ids are the same xorshift sequence `seer bench` uses (cli/bench.c).
//
//   node bench/llama_bench.mjs -m MODEL.gguf [-t 2] [-p 512,2048] [-n 128] [--reps 3] [--warmup 2]
//                              [--batch 512] [--json]
//
// Caveat (measured, see docs/PERFORMANCE.md): node-llama-cpp attaches no ggml thread pool to its contexts,
// so with more than one thread every llama_decode call creates and joins its worker threads. That costs
// ~15–18 ms per call here, which dominates single-token decode at 2 threads; compare decode at 1 thread
// as well. Prefill calls are long enough for it not to matter much.
// Results go to stdout (a table, or one JSON object with --json); llama.cpp's logs to stderr.
import path from "node:path";
import process from "node:process";
import {fileURLToPath, pathToFileURL} from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const nlc = pathToFileURL(path.join(root, "tests/oracle/node_modules/node-llama-cpp/dist/index.js")).href;

function parseArgs(argv) {
    const a = {threads: 2, prompts: [512, 2048], n: 128, reps: 3, warmup: 2, batch: 512, json: false};
    for (let i = 2; i < argv.length; i++) {
        const k = argv[i], v = argv[i + 1];
        if (k === "--json") { a.json = true; continue; }
        if (v === undefined) throw new Error(`missing value for ${k}`);
        if (k === "-m") a.model = v;
        else if (k === "-t") a.threads = Number(v);
        else if (k === "-p") a.prompts = v.split(",").map(Number).filter((x) => x > 0);
        else if (k === "-n") a.n = Number(v);
        else if (k === "--reps") a.reps = Number(v);
        else if (k === "--warmup") a.warmup = Number(v);
        else if (k === "--batch") a.batch = Number(v);
        else throw new Error(`unknown argument ${k}`);
        i++;
    }
    if (!a.model) throw new Error("-m MODEL is required");
    return a;
}

// The xorshift64 prompt of cli/bench.c: x ^= x<<13, x ^= x>>7, x ^= x<<17; id = x mod n_vocab.
function promptIds(n, nVocab) {
    const mask = (1n << 64n) - 1n;
    let x = 0x9E3779B97F4A7C15n;
    const ids = [];
    for (let i = 0; i < n; i++) {
        x ^= (x << 13n) & mask;
        x ^= x >> 7n;
        x ^= (x << 17n) & mask;
        ids.push(Number(x % BigInt(nVocab)));
    }
    return ids;
}

function stats(n, secs) {
    const tps = secs.map((s) => n / s);
    const mean = tps.reduce((p, q) => p + q, 0) / tps.length;
    const sd = tps.length > 1 ? Math.sqrt(tps.reduce((p, q) => p + (q - mean) ** 2, 0) / (tps.length - 1)) : 0;
    return {mean, sd, min: Math.min(...tps), max: Math.max(...tps)};
}

async function decodeSteps(seq, tok, n) {
    for (let i = 0; i < n; i++) {
        const res = await seq.controlledEvaluate([[tok, {generateNext: {token: true}}]]);
        tok = res[0].next.token;
    }
    return tok;
}

async function main() {
    const opt = parseArgs(process.argv);
    const {getLlama, LlamaLogLevel} = await import(nlc);
    const llama = await getLlama({
        gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true, progressLogs: false,
        maxThreads: 0, // take -t literally
        logLevel: LlamaLogLevel.warn,
        logger: (level, message) => process.stderr.write(`llama.cpp[${level}]: ${message.trimEnd()}\n`),
    });
    const model = await llama.loadModel({modelPath: opt.model, gpuLayers: 0, useMmap: true});
    const nVocab = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
    const maxP = Math.max(1, ...opt.prompts);
    const prompt = promptIds(maxP, nVocab);
    const context = await model.createContext({
        contextSize: Math.max(maxP, 1 + opt.warmup + opt.n) + 16,
        batchSize: opt.batch,
        threads: opt.threads,
        flashAttention: false,
        sequences: 1,
    });
    const results = [];
    try {
        const seq = context.getSequence();
        await decodeSteps(seq, prompt[0], 1 + opt.warmup); // touch every weight once
        for (const p of opt.prompts) {
            const secs = [];
            for (let r = 0; r < opt.reps; r++) {
                await seq.clearHistory();
                const t0 = process.hrtime.bigint();
                await seq.evaluateWithoutGeneratingNewTokens(prompt.slice(0, p));
                secs.push(Number(process.hrtime.bigint() - t0) / 1e9);
                process.stderr.write(`llama_bench: pp${p} rep ${r + 1}: ${secs[r].toFixed(3)} s\n`);
            }
            results.push({test: `pp${p}`, kind: "prefill", n_tokens: p, secs});
        }
        if (opt.n > 0) {
            const secs = [];
            for (let r = 0; r < opt.reps; r++) {
                await seq.clearHistory();
                const tok = await decodeSteps(seq, prompt[0], opt.warmup);
                const t0 = process.hrtime.bigint();
                await decodeSteps(seq, tok, opt.n);
                secs.push(Number(process.hrtime.bigint() - t0) / 1e9);
                process.stderr.write(`llama_bench: tg${opt.n} rep ${r + 1}: ${secs[r].toFixed(3)} s\n`);
            }
            results.push({test: `tg${opt.n}`, kind: "decode", n_tokens: opt.n, secs});
        }
    } finally {
        await context.dispose();
        await model.dispose();
        await llama.dispose();
    }
    const rss = process.resourceUsage().maxRSS * 1024;
    if (opt.json) {
        const out = results.map((r) => ({...r, reps: r.secs.length, ...renameStats(stats(r.n_tokens, r.secs)),
                                         seconds: r.secs}));
        for (const r of out) delete r.secs;
        process.stdout.write(JSON.stringify({model: opt.model, engine: "llama.cpp (node-llama-cpp 3.22.1)",
                                             threads: opt.threads, n_batch: opt.batch, results: out,
                                             peak_rss_bytes: rss}) + "\n");
        return;
    }
    process.stdout.write(`model     ${opt.model}\nengine    llama.cpp (node-llama-cpp 3.22.1), ${opt.threads} threads, ` +
                         `batch ${opt.batch}\n`);
    process.stdout.write(`${"test".padEnd(8)} ${"tokens/s".padStart(10)} ${"+-".padStart(8)} ${"min".padStart(10)} ` +
                         `${"max".padStart(10)} ${"reps".padStart(5)}\n`);
    for (const r of results) {
        const s = stats(r.n_tokens, r.secs);
        process.stdout.write(`${r.test.padEnd(8)} ${s.mean.toFixed(2).padStart(10)} ${s.sd.toFixed(2).padStart(8)} ` +
                             `${s.min.toFixed(2).padStart(10)} ${s.max.toFixed(2).padStart(10)} ` +
                             `${String(r.secs.length).padStart(5)}\n`);
    }
    process.stdout.write(`peak RSS  ${(rss / 1048576).toFixed(1)} MiB\n`);
}

function renameStats(s) {
    return {tokens_per_s: s.mean, stddev: s.sd, min: s.min, max: s.max};
}

main().catch((e) => {
    process.stderr.write(`llama_bench: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
});
