"""A small byte-level BPE tokenizer shaped like Qwen3.5's (spec §6.1), for the tiny random checkpoints.

Vocabulary: the 256 GPT-2 byte-to-unicode symbols first (in GPT-2's order, so "Ġ" = 220 and "Ċ" = 198 as in
Qwen), then one token per merge learned on a small built-in corpus, then the 33 Qwen added tokens with their
real strings in their real relative order (spec §6.1; 21 special). Writes tokenizer.json (HF `tokenizers`
layout: NFC normalizer, Split-regex + ByteLevel pre-tokenizer, BPE model, pair-list merges) and
tokenizer_config.json (eos <|im_end|>, pad <|endoftext|>, no bos, chat template of spec §6.2).
"""

import json
import re
import unicodedata

# Qwen3.5 pre-tokenizer regex (spec §6.1), written to tokenizer.json verbatim.
QWEN35_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
                r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# Python's `re` has no \p{..}; this approximation is only used to learn merges (any merge list is a valid
# BPE; the C tokenizer and llama.cpp use the real regex above). Letters ~ [^\W\d_], numbers ~ \d.
_TRAIN_SPLIT = re.compile(
    r"'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])"
    r"|(?:[^\r\n\w]|_)?[^\W\d_]+|\d| ?(?:[^\s\w]|_)+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# (content, special) in id order, spec §6.1 (ids 248044..248076 in the real model).
ADDED_TOKENS = [
    ("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
    ("<|object_ref_start|>", True), ("<|object_ref_end|>", True), ("<|box_start|>", True),
    ("<|box_end|>", True), ("<|quad_start|>", True), ("<|quad_end|>", True),
    ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
    ("<|image_pad|>", True), ("<|video_pad|>", True),
    ("<tool_call>", False), ("</tool_call>", False), ("<|fim_prefix|>", False), ("<|fim_middle|>", False),
    ("<|fim_suffix|>", False), ("<|fim_pad|>", False), ("<|repo_name|>", False), ("<|file_sep|>", False),
    ("<tool_response>", False), ("</tool_response>", False), ("<think>", False), ("</think>", False),
    ("<|audio_start|>", True), ("<|audio_end|>", True), ("<tts_pad>", True), ("<tts_text_bos>", True),
    ("<tts_text_eod>", True), ("<tts_text_bos_single>", True), ("<|audio_pad|>", True),
]

CORPUS = """\
The quick brown fox jumps over the lazy dog. A small model reads the text, one token at a time, and
writes the next one. It is not a real model: its weights are random numbers, but its shape is the real
shape, so every layer, every head and every state is exercised by the tests.
Hello, world! How are you today? I'm fine, thanks; we'll see what they've done and what you'd like.
Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 100 2024 3.14159 1,000,000 -7 +12 50% $19.99
def forward(self, x):
    h = x + self.attn(self.norm1(x))
    return h + self.mlp(self.norm2(h))
for (int i = 0; i < n; i++) { sum += a[i] * b[i]; }
if (err != 0) return err;   // errors are returned, never printed
{"name": "seer", "version": 1, "tokens": [1, 2, 3], "ok": true}
<html><body><p>Text inside a page.</p></body></html>
Über den Wolken muss die Freiheit wohl grenzenlos sein. Ça va très bien, merci. Niño, año, señor.
Здравствуй, мир. Γειά σου κόσμε. こんにちは世界。你好，世界。안녕하세요.
The image shows a cat sitting on a red chair next to the window; the video shows the same cat later.
Question: what is in the picture? Answer: a cat, a chair, and a window.
the the the and and of of to to in in is is it it that that this this with with for for on on
user assistant system tool think answer image video text token model layer state
"""


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable unicode map, as an ordered list of (byte, char)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [(b, chr(c)) for b, c in zip(bs, cs)]


BYTE_ORDER = bytes_to_unicode()
BYTE_ENCODER = {b: c for b, c in BYTE_ORDER}


def to_byte_symbols(s):
    return "".join(BYTE_ENCODER[b] for b in s.encode("utf-8"))


def learn_merges(n_merges, corpus=CORPUS):
    """Plain BPE training: repeatedly merge the most frequent adjacent pair (ties: lexicographic)."""
    words = {}
    for piece in _TRAIN_SPLIT.findall(unicodedata.normalize("NFC", corpus)):
        sym = tuple(to_byte_symbols(piece))
        words[sym] = words.get(sym, 0) + 1
    merges = []
    vocab = set(c for _, c in BYTE_ORDER)
    while len(merges) < n_merges:
        pairs = {}
        for w, cnt in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + cnt
        # A merge must create a new token (two paths can reach the same string).
        cands = [(c, p) for p, c in pairs.items() if p[0] + p[1] not in vocab]
        if not cands:
            raise ValueError(f"corpus too small for {n_merges} merges (got {len(merges)})")
        best = min(cands, key=lambda cp: (-cp[0], cp[1]))[1]
        merges.append(best)
        vocab.add(best[0] + best[1])
        new_words = {}
        for w, cnt in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new_words[tuple(out)] = new_words.get(tuple(out), 0) + cnt
        words = new_words
    return merges


class TinyTokenizer:
    def __init__(self, n_merges):
        self.merges = learn_merges(n_merges)
        self.vocab = {c: i for i, (_, c) in enumerate(BYTE_ORDER)}
        for a, b in self.merges:
            self.vocab[a + b] = len(self.vocab)
        self.n_base = len(self.vocab)
        self.added = [(self.n_base + i, s, sp) for i, (s, sp) in enumerate(ADDED_TOKENS)]
        self.added_ids = {s: i for i, s, _ in self.added}

    def __len__(self):
        return self.n_base + len(self.added)

    def id_of(self, content):
        return self.added_ids[content]

    def encode_piece(self, piece):
        """BPE of one pre-token (lowest merge rank first)."""
        ranks = {p: r for r, p in enumerate(self.merges)}
        parts = list(to_byte_symbols(piece))
        while len(parts) > 1:
            best = min(range(len(parts) - 1), key=lambda i: ranks.get((parts[i], parts[i + 1]), 1 << 30))
            if (parts[best], parts[best + 1]) not in ranks:
                break
            parts[best:best + 2] = [parts[best] + parts[best + 1]]
        return [self.vocab[p] for p in parts]

    def encode_ascii_words(self, text):
        """Encodes plain text without added tokens using the training split (exact for ASCII words,
        spaces and punctuation; used only to build readable prompts for the tests)."""
        ids = []
        for piece in _TRAIN_SPLIT.findall(unicodedata.normalize("NFC", text)):
            ids += self.encode_piece(piece)
        return ids

    def encode_ascii(self, text):
        """Added tokens split out first (exact match), the rest through encode_ascii_words."""
        ids, pos = [], 0
        pat = re.compile("|".join(re.escape(s) for _, s, _ in sorted(self.added, key=lambda a: -len(a[1]))))
        for m in pat.finditer(text):
            ids += self.encode_ascii_words(text[pos:m.start()]) + [self.added_ids[m.group(0)]]
            pos = m.end()
        return ids + self.encode_ascii_words(text[pos:])

    # files ----------------------------------------------------------------------------------------------
    def tokenizer_json(self):
        added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": sp} for i, s, sp in self.added]
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": added,
            "normalizer": {"type": "NFC"},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": QWEN35_REGEX}, "behavior": "Isolated", "invert": False},
                byte_level]},
            "post_processor": byte_level,
            "decoder": byte_level,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                      "ignore_merges": False, "vocab": self.vocab,
                      "merges": [[a, b] for a, b in self.merges]},
        }

    def tokenizer_config(self, model_max_length):
        decoder = {str(i): {"content": s, "lstrip": False, "normalized": False, "rstrip": False,
                            "single_word": False, "special": sp} for i, s, sp in self.added}
        return {
            "add_bos_token": False,
            "add_prefix_space": False,
            "added_tokens_decoder": decoder,
            "additional_special_tokens": [s for _, s, sp in self.added if sp and s not in
                                          ("<|endoftext|>", "<|im_end|>")],
            "bos_token": None,
            "chat_template": CHAT_TEMPLATE,
            "clean_up_tokenization_spaces": False,
            "eos_token": "<|im_end|>",
            "errors": "replace",
            "model_max_length": model_max_length,
            "pad_token": "<|endoftext|>",
            "split_special_tokens": False,
            "tokenizer_class": "Qwen2Tokenizer",
            "unk_token": None,
        }


def write_files(tok, hf_dir, model_max_length):
    with open(f"{hf_dir}/tokenizer.json", "w", encoding="utf-8") as f:
        json.dump(tok.tokenizer_json(), f, ensure_ascii=False, indent=2)
        f.write("\n")
    with open(f"{hf_dir}/tokenizer_config.json", "w", encoding="utf-8") as f:
        json.dump(tok.tokenizer_config(model_max_length), f, ensure_ascii=False, indent=2)
        f.write("\n")


# Chat template: our own Jinja rendering of the behaviour spec §6.2 describes (system first, user content
# parts with vision placeholders, assistant reasoning kept only after the last user query, tool calls in the
# XML-ish format, consecutive tool results merged into one user turn, generation prompt closing an empty
# think block unless enable_thinking is true — the small-model default). Not the official file text.
CHAT_TEMPLATE = r"""{%- set img = namespace(n=0) -%}{%- set vid = namespace(n=0) -%}
{%- macro render(content, where) -%}
{%- if content is string -%}{{- content -}}
{%- else -%}{%- for part in content -%}
{%- if part.type == 'image' or 'image' in part or 'image_url' in part -%}
{%- if where == 'system' -%}{{- raise_exception('System message cannot contain images.') -}}{%- endif -%}
{%- set img.n = img.n + 1 -%}{%- if add_vision_id -%}{{- 'Picture ' ~ img.n ~ ': ' -}}{%- endif -%}
{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}
{%- elif part.type == 'video' or 'video' in part -%}
{%- if where == 'system' -%}{{- raise_exception('System message cannot contain videos.') -}}{%- endif -%}
{%- set vid.n = vid.n + 1 -%}{%- if add_vision_id -%}{{- 'Video ' ~ vid.n ~ ': ' -}}{%- endif -%}
{{- '<|vision_start|><|video_pad|><|vision_end|>' -}}
{%- elif 'text' in part -%}{{- part.text -}}
{%- endif -%}
{%- endfor -%}{%- endif -%}
{%- endmacro -%}
{%- if not messages -%}{{- raise_exception('No messages provided.') -}}{%- endif -%}
{%- if tools -%}
{{- '<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>' -}}
{%- for tool in tools -%}{{- '\n' ~ (tool | tojson) -}}{%- endfor -%}
{{- '\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n</function>\n</tool_call>' -}}
{%- if messages[0].role == 'system' -%}{{- '\n\n' ~ render(messages[0].content, 'system') | trim -}}{%- endif -%}
{{- '<|im_end|>\n' -}}
{%- elif messages[0].role == 'system' -%}
{{- '<|im_start|>system\n' ~ render(messages[0].content, 'system') | trim ~ '<|im_end|>\n' -}}
{%- endif -%}
{%- set ns = namespace(last_query_index=messages | length - 1, multi_step=true) -%}
{%- for m in messages[::-1] -%}{%- set i = messages | length - 1 - loop.index0 -%}
{%- if ns.multi_step and m.role == 'user' -%}{%- set c = (m.content if m.content is string else '') | trim -%}
{%- if not (c.startswith('<tool_response>') and c.endswith('</tool_response>')) -%}
{%- set ns.multi_step = false -%}{%- set ns.last_query_index = i -%}{%- endif -%}{%- endif -%}
{%- endfor -%}
{%- for m in messages -%}
{%- set c = render(m.content if m.content is not none else '', m.role) | trim -%}
{%- if m.role == 'system' -%}
{%- if not loop.first -%}{{- raise_exception('System message must be at the beginning.') -}}{%- endif -%}
{%- elif m.role == 'user' -%}
{{- '<|im_start|>user\n' ~ c ~ '<|im_end|>\n' -}}
{%- elif m.role == 'assistant' -%}
{%- set reasoning = '' -%}
{%- if m.reasoning_content is string -%}{%- set reasoning = m.reasoning_content -%}
{%- elif '</think>' in c -%}{%- set reasoning = c.split('</think>')[0].split('<think>')[-1] -%}
{%- set c = c.split('</think>')[-1] -%}{%- endif -%}
{%- set reasoning = reasoning | trim -%}{%- set c = c | trim -%}
{%- if loop.index0 > ns.last_query_index or preserve_thinking -%}
{{- '<|im_start|>assistant\n<think>\n' ~ reasoning ~ '\n</think>\n\n' ~ c -}}
{%- else -%}{{- '<|im_start|>assistant\n' ~ c -}}{%- endif -%}
{%- if m.tool_calls -%}{%- for call in m.tool_calls -%}
{%- set fn = call.function if call.function else call -%}
{%- if loop.first and c -%}{{- '\n\n' -}}{%- elif not loop.first -%}{{- '\n' -}}{%- endif -%}
{{- '<tool_call>\n<function=' ~ fn.name ~ '>\n' -}}
{%- if fn.arguments is mapping -%}{%- for k, v in fn.arguments.items() -%}
{%- set args_value = v -%}{%- set args_value = args_value|string if args_value is string else args_value|tojson|safe -%}
{{- '<parameter=' ~ k ~ '>\n' ~ args_value ~ '\n</parameter>\n' -}}
{%- endfor -%}{%- endif -%}
{{- '</function>\n</tool_call>' -}}
{%- endfor -%}{%- endif -%}
{{- '<|im_end|>\n' -}}
{%- elif m.role == 'tool' -%}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' -%}{{- '<|im_start|>user' -}}{%- endif -%}
{{- '\n<tool_response>\n' ~ c ~ '\n</tool_response>' -}}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' -%}{{- '<|im_end|>\n' -}}{%- endif -%}
{%- else -%}{{- raise_exception('Unexpected message role: ' ~ m.role) -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\n' -}}
{%- if enable_thinking is defined and enable_thinking is true -%}{{- '<think>\n' -}}
{%- else -%}{{- '<think>\n\n</think>\n\n' -}}{%- endif -%}
{%- endif -%}
"""
