// tokenize.js — the Hugging Face tokenizer oracle for tests/lm/tokenizer.c (spec §6.1).
// Runs HF's own Rust `tokenizers` (npm `tokenizers`, Node bindings) on a tokenizer.json.
//
//   node tokenize.js TOKENIZER_JSON INPUT_JSON [--special-as-text]
//       INPUT_JSON is an array of strings; prints one JSON array holding, per string, the ids of
//       encode(text, null, {addSpecialTokens: false}).
//       --special-as-text: special added tokens in the text are tokenized as plain text (HF's
//       `encode_special_tokens = true`, which the Node bindings do not expose). Emulated by
//       prefixing each special token's content with two U+E0001 (never in test text), so it can
//       no longer match while every id stays where it was (HF numbers added tokens in order).
//       One difference remains: HF skips a special match without re-scanning inside it, the
//       emulation lets a non-special token inside a special one's text match.
//   node tokenize.js TOKENIZER_JSON INPUT_JSON --decode [--skip-special]
//       INPUT_JSON is an array of id arrays; prints a JSON array of decode(ids, skip) strings.
//   node tokenize.js TOKENIZER_JSON INPUT_JSON --roundtrip
//       INPUT_JSON is an array of strings; prints decode(encode(s), false) for each: the text NFC'd
//       piece by piece between added tokens (a mark after "<|im_end|>" stays uncomposed).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Tokenizer } = require('tokenizers')

const args = process.argv.slice(2)
const flags = new Set(args.filter((a) => a.startsWith('--')))
const [tokPath, inPath] = args.filter((a) => !a.startsWith('--'))
if (!tokPath || !inPath) {
  process.stderr.write('usage: node tokenize.js TOKENIZER_JSON INPUT_JSON [--special-as-text] [--decode [--skip-special]]\n')
  process.exit(2)
}

const input = JSON.parse(readFileSync(inPath, 'utf8'))
let tok
if (flags.has('--special-as-text')) {
  const j = JSON.parse(readFileSync(tokPath, 'utf8'))
  for (const t of j.added_tokens) if (t.special) t.content = '\u{E0001}\u{E0001}' + t.content
  tok = Tokenizer.fromString(JSON.stringify(j))
} else {
  tok = Tokenizer.fromFile(tokPath)
}

const out = []
if (flags.has('--roundtrip')) {
  for (const s of input) {
    const enc = await tok.encode(s, null, { addSpecialTokens: false })
    out.push(await tok.decode(Array.from(enc.getIds()), false))
  }
} else if (flags.has('--decode')) {
  const skip = flags.has('--skip-special')
  for (const ids of input) out.push(await tok.decode(ids, skip))
} else {
  for (const s of input) {
    const enc = await tok.encode(s, null, { addSpecialTokens: false })
    out.push(Array.from(enc.getIds()))
  }
}
process.stdout.write(JSON.stringify(out) + '\n')
