// tokenizer_strings.js — test strings for the tokenizer oracle test (tests/lm/tokenizer.c, spec §6.1).
//
//   node tokenizer_strings.js SEED [COUNT]   → prints a JSON array of strings
//
// Hand-picked edge cases first, then COUNT (default 3000) random strings that are a pure function
// of SEED. Characters come from long-assigned Unicode blocks: the engines involved have different
// Unicode tables (PCRE2 10.42: Unicode 14; utf8proc 2.8: 15; HF's Oniguruma: newer), and a letter
// assigned later — e.g. U+138E0 in Egyptian Hieroglyphs Extended-A (Unicode 16) — is a letter to
// HF but unassigned to PCRE2, so it splits differently. That is a known limit of seer's
// tokenizer, not something to rediscover at random here.
const seed = Number(process.argv[2] ?? 1) >>> 0
const count = Number(process.argv[3] ?? 3000)

// mulberry32: small, seedable, good enough for picking test material.
let state = seed || 1
function rand() {
  state = (state + 0x6d2b79f5) >>> 0
  let t = state
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const int = (n) => Math.floor(rand() * n)
const pick = (a) => a[int(a.length)]
const range = (lo, hi) => String.fromCodePoint(lo + int(hi - lo + 1))
const repeat = (f, n) => Array.from({ length: n }, f).join('')

const words = ['the', 'quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', 'hello', 'world', 'tokenizer',
  'assistant', 'user', 'system', 'Qwen', 'model', 'vision', 'video', 'internationalization', 'a', 'I', 'x',
  'naïve', 'café', 'Straße', 'smörgåsbord', 'Ærøskøbing', 'Łódź', 'São', 'Paulo', 'jalapeño', 'façade']
const cases = [(w) => w, (w) => w.toUpperCase(), (w) => w[0].toUpperCase() + w.slice(1)]

// Each generator returns one fragment of some script or kind of text.
const gens = {
  latin: () => pick(cases)(pick(words)),
  accented: () => repeat(() => range(0xc0, 0x17f), 1 + int(6)),
  cyrillic: () => repeat(() => range(0x410, 0x44f), 1 + int(9)),
  greek: () => repeat(() => range(0x3b1, 0x3c9), 1 + int(8)) + (rand() < 0.3 ? 'ά' : ''),
  cjk: () => repeat(() => range(0x4e00, 0x9fa5), 1 + int(12)),
  kana: () => repeat(() => (rand() < 0.5 ? range(0x3041, 0x3093) : range(0x30a1, 0x30f6)), 1 + int(8)),
  hangul: () => repeat(() => range(0xac00, 0xd7a3), 1 + int(6)),
  // Conjoining jamo L+V(+T) compose to precomposed syllables under NFC.
  jamo: () => range(0x1100, 0x1112) + range(0x1161, 0x1175) + (rand() < 0.5 ? range(0x11a8, 0x11c2) : ''),
  arabic: () => repeat(() => range(0x621, 0x64a) + (rand() < 0.3 ? range(0x64b, 0x652) : ''), 1 + int(7)),
  hebrew: () => repeat(() => range(0x5d0, 0x5ea) + (rand() < 0.3 ? range(0x5b0, 0x5bc) : ''), 1 + int(6)),
  devanagari: () => repeat(() => range(0x915, 0x939) + (rand() < 0.5 ? range(0x93e, 0x94d) : ''), 1 + int(5)),
  thai: () => repeat(() => range(0xe01, 0xe2e) + (rand() < 0.3 ? pick(['\u0e31', range(0xe34, 0xe3a), range(0xe47, 0xe4e)]) : ''), 1 + int(8)),
  // Combining marks on Latin letters, in random order: NFC composes and reorders them.
  combining: () => repeat(() => pick('aeiouAEIOUnczsy') + repeat(() => range(0x300, 0x36f), 1 + int(3)), 1 + int(4)),
  lonemark: () => range(0x300, 0x36f) + (rand() < 0.5 ? pick(words) : ''),
  decomposed: () => pick(['e\u0301', 'E\u0301', 'a\u0308', 'o\u0302\u0323', 'o\u0323\u0302', 'A\u030a', '\u212b',
    'n\u0303', 'c\u0327', 'u\u0308\u0301', 'i\u0307', '\u1e9b\u0323', 'q\u0307\u0323']),
  digits: () => String(int(1e9)) + (rand() < 0.3 ? '.' + int(1e6) : ''),
  longnum: () => repeat(() => String(int(10)), 10 + int(60)),
  othernum: () => pick(['１２３', '٣٤٥', '१२३', '๑๒', '²³', 'Ⅻ', '½', '⑦', '𝟗𝟘']),
  code: () => pick(['def f(x):\n    return x**2\n', 'for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}',
    '<div class="a">&nbsp;</div>', '{"key": [1, 2.5e-3, null, true]}', 'if a != b && c >= d || !e { }',
    'x = y // 2  # comment', 'SELECT * FROM t WHERE id=42;', '#include <stdio.h>\r\n', '$HOME/.config/*.json',
    'fn main() -> Result<(), Box<dyn Error>> {}', '@@ -1,3 +1,4 @@', 'a_b_c__init__', '=>', '...', '~~~']),
  emoji: () => repeat(() => range(0x1f600, 0x1f64f) + (rand() < 0.3 ? range(0x1f3fb, 0x1f3ff) : ''), 1 + int(3)),
  zwj: () => pick(['👨\u200d👩\u200d👧\u200d👦', '👩🏽\u200d💻', '🏳️\u200d🌈', '❤️', '1\ufe0f\u20e3', '🇯🇵🇫🇷',
    '👍🏿', '🧑\u200d🤝\u200d🧑', '✌🏻']),
  whitespace: () => repeat(() => pick([' ', '  ', '\t', '\n', '\r\n', '\r', '\n\n', '\u00a0', '\u3000', '\u2003',
    '\u180e', '\u0085', '\u2028', '\u2029', '\u200b', '\ufeff', '\u000b', '\u000c']), 1 + int(5)),
  contraction: () => pick(["'s", "'S", "'ll", "'LL", "'Ll", "'re", "'RE", "'Re", "'ve", "'VE", "'m", "'M", "'d",
    "'D", "'t", "'T", "don't", "I'M", "it'S", "we'Ve", "'ſ", "'ſt", "''s", "' s"]),
  special: () => pick(['<|im_start|>', '<|im_end|>', '<|endoftext|>', '<think>', '</think>', '<tool_call>',
    '</tool_call>', '<|fim_prefix|>', '<|vision_start|>', '<|image_pad|>', '<|im_start', '<|im_start|',
    '<<|im_end|>>', '<think><think>', '<|im_start|>user\n', '<|endoftext|><|endoftext|>', '< think>']),
  edge: () => pick(['\u0000', '\u007f', '\u0080', '\u07ff', '\u0800', '\ufffd', '\ufffe', '\uffff', '\u{10000}',
    '\u{10ffff}', '\ue000', '\uf8ff', '\u{f0000}', '\u{1d11e}', '\u{1d400}\u{1d401}', '\u0345', '\u00ad',
    '\u0600', '\u200d', '\u2060', 'ﬁ', 'Å', 'K']),
  punct: () => repeat(() => pick('!"#%&()*+,-./:;<=>?@[\\]^_`{|}~¡¿«»“”„‘’…–—·•※、。「」'), 1 + int(5)),
}
const names = Object.keys(gens)
const seps = ['', ' ', ' ', ' ', '\n', ', ', '. ', '\t', '  ', '\r\n', '-', "'"]

function randomString() {
  const n = rand() < 0.05 ? 100 + int(300) : 1 + int(12)
  let s = ''
  for (let i = 0; i < n; i++) s += gens[pick(names)]() + pick(seps)
  return s
}

const hand = [
  '', ' ', 'a', 'user', 'assistant', 'Hello', '\n', '\n\n', 'Hello world', ' Hello', 'Hello ', 'Hello  world',
  '<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
  'e\u0301', 'caf\u00e9 vs cafe\u0301', '\u0301', 'a\u0301\u0302\u0303', '\u1100\u1161\u11a8',
  "I'm here, you're there, it's 'S and 'LL and 'rE", "'ſ ſ 's",
  '1234567890', '3.14159265358979', '1,000,000.00', '  leading', 'trailing  ', '   ', '\t\t\tx', 'a\r\nb\rc\nd',
  '\r', '\r\r\n\n', ' \n ', 'x\u180e\u180ey', 'x \u180e y', 'a\u0085\u0085b', '\u2028\u2029',
  '👨\u200d👩\u200d👧\u200d👦 family', '👍🏽👍🏿', 'Привет, мир!', 'Γειά σου Κόσμε', '你好，世界！', 'こんにちは世界',
  '안녕하세요 세계', 'مرحبا بالعالم', 'שָׁלוֹם עוֹלָם', 'नमस्ते दुनिया', 'สวัสดีชาวโลก',
  '<think></think>', '<|endoftext|>', 'x<|endoftext|>y', '<|im_end|><|im_end|>', '<|im_end|', '|im_end|>',
  'a' + ' '.repeat(50) + 'b', '!'.repeat(40), '9'.repeat(100), 'ab'.repeat(200), '\u0000\u0000x',
  'def main():\n    print("hi")\n\n\n', '\u{10ffff}\u{f0000}\ufffd',
]

const out = hand.slice()
for (let i = 0; i < count; i++) out.push(randomString())
process.stdout.write(JSON.stringify(out) + '\n')
