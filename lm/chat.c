/* chat.c — the Qwen3.5 chat template (spec §6.2; vision placeholders §5.4) rendered in C, and
   chat_template_check, which recognises the template text shipped in a model file.

   The official template text could not be read (spec §10.2). The rules below follow spec §6.2; details
   the spec does not spell out come from third-party copies of the Qwen3.5 `chat_template.jinja` [3p]
   and are marked so. Each rule reproduces what HF transformers' Jinja rendering of that template
   produces, including its Python string semantics (`|trim` is str.strip(), `tojson` is json.dumps with
   ensure_ascii=False, `|string` of a scalar is Python str()).
   [inferred] The copies seen are of the larger Qwen3.5 models' template; that the 0.8B–9B template is
   the same text apart from the thinking switch (spec §6.2) is inferred, not verified (spec §10.2).
   [inferred] preserve_thinking comes from the Qwen3.5/3.6 copies; whether the small models' template
   has it is unverified (spec §10.2), so it is off unless asked for. Rejecting invalid UTF-8 is our own
   rule (Python strings cannot hold it, so the template never sees it).

   Divisions: output buffer and UTF-8 helpers · Python-compatible JSON text · message content ·
   the renderer · the template check. */
#include "lm/chat.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/utf8.h"
#include "core/util.h"

/* ---- output buffer and UTF-8 helpers ------------------------------------------------------ */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom; /* set once an append failed; later appends are ignored and the caller reports it */
    chat_range *rg; /* [n_rg] where text copied from the messages lies (chat_render_ranges) */
    size_t n_rg, cap_rg;
} sbuf;

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    if (b->oom || n == 0)
        return;
    size_t need;
    if (!size_add(b->len, n + 1, &need)) {
        b->oom = true;
        return;
    }
    if (!seer_grow(&b->p, &b->cap, need, 1, 256)) {
        b->oom = true;
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

/* A borrowed piece of text (not NUL-terminated). */
typedef struct span {
    const char *p;
    size_t n;
} span;

static span span_of(const char *s) { return (span){ s ? s : "", s ? strlen(s) : 0 }; }

static void sb_span(sbuf *b, span s) { sb_putn(b, s.p, s.n); }

/* Records [start, end) as message text (merged with a range it continues). */
static void sb_range(sbuf *b, size_t start, size_t end)
{
    if (b->oom || start >= end)
        return;
    if (b->n_rg && b->rg[b->n_rg - 1].end == start) {
        b->rg[b->n_rg - 1].end = end;
        return;
    }
    if (!seer_grow(&b->rg, &b->cap_rg, b->n_rg + 1, sizeof *b->rg, 16)) {
        b->oom = true;
        return;
    }
    b->rg[b->n_rg++] = (chat_range){ start, end };
}

static void sb_mark(sbuf *b, size_t start) { sb_range(b, start, b->len); }

/* Appends message text: all of it is content, never markup. */
static void sb_content(sbuf *b, span s)
{
    size_t at = b->len;
    sb_span(b, s);
    sb_mark(b, at);
}

/* Appends `s`, which may lie inside `tmp` (content rendered there, then trimmed or split): the
   ranges tmp recorded are carried over, so an image placeholder inside it stays markup. Text not
   from tmp is a message's own string (reasoning_content): all content. */
static void sb_text(sbuf *out, const sbuf *tmp, span s)
{
    if (!tmp || !tmp->p || s.p < tmp->p || s.p + s.n > tmp->p + tmp->len) {
        sb_content(out, s);
        return;
    }
    size_t off = (size_t)(s.p - tmp->p), base = out->len;
    sb_span(out, s);
    for (size_t i = 0; i < tmp->n_rg && !out->oom; i++) {
        size_t lo = MAX(tmp->rg[i].start, off), hi = MIN(tmp->rg[i].end, off + s.n);
        if (lo < hi)
            sb_range(out, base + (lo - off), base + (hi - off));
    }
}

/* First / last index of `needle` in s, or SIZE_MAX. (memmem is not C11.) */
static size_t span_find(span s, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; m <= s.n && i <= s.n - m; i++)
        if (!memcmp(s.p + i, needle, m))
            return i;
    return SIZE_MAX;
}

static size_t span_rfind(span s, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = s.n >= m ? s.n - m + 1 : 0; i-- > 0;)
        if (!memcmp(s.p + i, needle, m))
            return i;
    return SIZE_MAX;
}

static bool span_starts(span s, const char *pre) { return s.n >= strlen(pre) && !memcmp(s.p, pre, strlen(pre)); }

static bool span_ends(span s, const char *suf)
{
    size_t m = strlen(suf);
    return s.n >= m && !memcmp(s.p + s.n - m, suf, m);
}

/* Offset of the first malformed byte, or SIZE_MAX when s is valid UTF-8. */
static size_t utf8_bad_offset(const char *s)
{
    size_t n = strlen(s), off = utf8_check(s, n);
    return off == n ? SIZE_MAX : off;
}

/* Python's str.isspace(), which Jinja's |trim (str.strip()) uses: the ASCII controls 0x09–0x0D and
   0x1C–0x1F, space, and the Unicode separators below. */
static bool py_isspace(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

/* Jinja `|trim`: Python str.strip() with no argument. Input is valid UTF-8 (checked up front). */
static span py_trim(span s)
{
    const unsigned char *u = (const unsigned char *)s.p;
    size_t a = 0, b = s.n;
    while (a < b) {
        uint32_t cp;
        size_t l = utf8_decode(u + a, b - a, &cp);
        if (!l || !py_isspace(cp))
            break;
        a += l;
    }
    while (b > a) {
        size_t st = b - 1;
        while (st > a && (u[st] & 0xC0) == 0x80)
            st--;
        uint32_t cp;
        size_t l = utf8_decode(u + st, b - st, &cp);
        if (!l || !py_isspace(cp))
            break;
        b = st;
    }
    return (span){ s.p + a, b - a };
}

/* Python str.lstrip('\n') / str.rstrip('\n'). */
static span lstrip_nl(span s)
{
    while (s.n && s.p[0] == '\n')
        s.p++, s.n--;
    return s;
}

static span rstrip_nl(span s)
{
    while (s.n && s.p[s.n - 1] == '\n')
        s.n--;
    return s;
}

/* ---- Python-compatible JSON text ----------------------------------------------------------- */

/* Python repr() of a float: the shortest digits that read back to the same double, in fixed notation
   when the decimal exponent is in [-4, 16) and scientific ("1e-05", "1.5e+16") otherwise; fixed
   notation always shows a fraction ("100.0"). */
static void py_float(sbuf *b, double x)
{
    if (isnan(x)) {
        sb_puts(b, "NaN");
        return;
    }
    if (isinf(x)) {
        sb_puts(b, x < 0 ? "-Infinity" : "Infinity");
        return;
    }
    char buf[48];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    /* buf is "[-]d[.ddd]e±XX"; collect the digits (skipping the locale's decimal point) and exponent. */
    char dig[24];
    size_t nd = 0;
    const char *q = buf;
    bool neg = *q == '-';
    if (neg)
        q++;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9' && nd < sizeof dig - 1)
            dig[nd++] = *q;
    int e10 = *q == 'e' ? atoi(q + 1) : 0;
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    dig[nd] = '\0';
    int decpt = e10 + 1; /* value = 0.DIGITS × 10^decpt */
    if (neg)
        sb_puts(b, "-");
    if (decpt <= -4 || decpt > 16) {
        sb_putn(b, dig, 1);
        if (nd > 1) {
            sb_puts(b, ".");
            sb_putn(b, dig + 1, nd - 1);
        }
        snprintf(buf, sizeof buf, "e%c%02d", e10 < 0 ? '-' : '+', e10 < 0 ? -e10 : e10);
        sb_puts(b, buf);
    } else if (decpt <= 0) {
        sb_puts(b, "0.");
        for (int i = 0; i < -decpt; i++)
            sb_puts(b, "0");
        sb_putn(b, dig, nd);
    } else if ((size_t)decpt >= nd) {
        sb_putn(b, dig, nd);
        for (size_t i = nd; i < (size_t)decpt; i++)
            sb_puts(b, "0");
        sb_puts(b, ".0");
    } else {
        sb_putn(b, dig, (size_t)decpt);
        sb_puts(b, ".");
        sb_putn(b, dig + decpt, nd - (size_t)decpt);
    }
}

/* A JSON string as json.dumps(ensure_ascii=False) writes it: only '"', '\\' and controls are escaped. */
static void py_json_string(sbuf *b, const char *s, size_t n)
{
    sb_puts(b, "\"");
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        sb_putn(b, s + run, i - run);
        run = i + 1;
        char esc[8];
        switch (c) {
        case '"': sb_puts(b, "\\\""); break;
        case '\\': sb_puts(b, "\\\\"); break;
        case '\n': sb_puts(b, "\\n"); break;
        case '\r': sb_puts(b, "\\r"); break;
        case '\t': sb_puts(b, "\\t"); break;
        case '\b': sb_puts(b, "\\b"); break;
        case '\f': sb_puts(b, "\\f"); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", c);
            sb_puts(b, esc);
        }
    }
    sb_putn(b, s + run, n - run);
    sb_puts(b, "\"");
}

/* The template's `x | tojson`: HF's filter is json.dumps(x, ensure_ascii=False) with the default
   separators ", " and ": " and keys in their original order. */
static void py_tojson(sbuf *b, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *val;
        bool first = true;
        sb_puts(b, "{");
        json_object_foreach((json_t *)v, key, val) {
            if (!first)
                sb_puts(b, ", ");
            first = false;
            py_json_string(b, key, strlen(key));
            sb_puts(b, ": ");
            py_tojson(b, val);
        }
        sb_puts(b, "}");
        break;
    }
    case JSON_ARRAY:
        sb_puts(b, "[");
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                sb_puts(b, ", ");
            py_tojson(b, json_array_get(v, i));
        }
        sb_puts(b, "]");
        break;
    case JSON_STRING: py_json_string(b, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        sb_puts(b, buf);
        break;
    }
    case JSON_REAL: py_float(b, json_real_value(v)); break;
    case JSON_TRUE: sb_puts(b, "true"); break;
    case JSON_FALSE: sb_puts(b, "false"); break;
    case JSON_NULL: sb_puts(b, "null"); break;
    }
}

/* One tool-call argument value. [3p] The Qwen3.5 copies write mappings and lists with tojson and
   everything else with `|string` (Python str(): True, None, 1.5); the newer form writes strings raw and
   everything else with tojson (true, null, 1.5). */
static void arg_value(sbuf *b, const json_t *v, bool scalar_as_json)
{
    if (json_is_string(v))
        sb_putn(b, json_string_value(v), json_string_length(v));
    else if (scalar_as_json || json_is_object(v) || json_is_array(v))
        py_tojson(b, v);
    else if (json_is_true(v))
        sb_puts(b, "True");
    else if (json_is_false(v))
        sb_puts(b, "False");
    else if (json_is_null(v))
        sb_puts(b, "None");
    else
        py_tojson(b, v); /* numbers: str() and json.dumps agree */
}

/* ---- message content ----------------------------------------------------------------------- */

enum role { ROLE_SYSTEM, ROLE_USER, ROLE_ASSISTANT, ROLE_TOOL, ROLE_OTHER };

static enum role role_of(const chat_message *m)
{
    static const char *const names[] = { "system", "user", "assistant", "tool" };
    for (int r = 0; r < 4; r++)
        if (!strcmp(m->role, names[r]))
            return (enum role)r;
    return ROLE_OTHER;
}

/* Vision counters shared by the whole conversation: [3p] images and videos are numbered in order
   of appearance across all messages, counting only in the main pass (do_count). */
typedef struct vision_count {
    size_t images, videos;
} vision_count;

/* The template's render_content(): the text, or the parts in order — text verbatim, each image/video
   one placeholder (spec §5.4), optionally prefixed "Picture N: " / "Video N: " (spec §6.2). Images and
   videos in system content are errors (spec §6.2). Appends to `out`; the caller trims. */
static int render_content(sbuf *out, const chat_message *m, size_t mi, vision_count *vc, bool do_count,
                          bool is_system, bool add_vision_id)
{
    if (m->n_parts == 0) {
        sb_content(out, span_of(m->content));
        return SEER_OK;
    }
    char prefix[48];
    for (size_t i = 0; i < m->n_parts; i++) {
        const chat_part *pt = &m->parts[i];
        switch (pt->type) {
        case CHAT_PART_TEXT: sb_content(out, span_of(pt->text)); break;
        case CHAT_PART_IMAGE:
        case CHAT_PART_VIDEO: {
            bool img = pt->type == CHAT_PART_IMAGE;
            if (is_system)
                return seer_err(SEER_EINVAL, "chat: message %zu: system message cannot contain %s", mi,
                                img ? "images" : "videos");
            size_t *cnt = img ? &vc->images : &vc->videos;
            if (do_count)
                (*cnt)++;
            if (add_vision_id) {
                snprintf(prefix, sizeof prefix, "%s %zu: ", img ? "Picture" : "Video", *cnt);
                sb_puts(out, prefix);
            }
            sb_puts(out, img ? "<|vision_start|><|image_pad|><|vision_end|>"
                             : "<|vision_start|><|video_pad|><|vision_end|>");
            break;
        }
        default: return seer_err(SEER_EINVAL, "chat: message %zu part %zu: unknown part type %d", mi, i, (int)pt->type);
        }
    }
    return SEER_OK;
}

/* Renders message content into `tmp` (reset first) and returns it trimmed (Jinja `|trim`). */
static int content_trimmed(sbuf *tmp, const chat_message *m, size_t mi, vision_count *vc, bool do_count,
                           bool is_system, bool add_vision_id, span *out)
{
    tmp->len = 0;
    tmp->n_rg = 0;
    int rc = render_content(tmp, m, mi, vc, do_count, is_system, add_vision_id);
    if (rc)
        return rc;
    if (tmp->oom)
        return seer_err(SEER_ENOMEM, "chat: out of memory rendering message %zu", mi);
    *out = py_trim((span){ tmp->p ? tmp->p : "", tmp->len });
    return SEER_OK;
}

/* Checks what the caller passed before anything is written: pointers, roles and UTF-8. */
static int validate_messages(const chat_message *msgs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const chat_message *m = &msgs[i];
        if (!m->role)
            return seer_err(SEER_EINVAL, "chat: message %zu has no role", i);
        if ((m->n_parts && !m->parts) || (m->n_tool_calls && !m->tool_calls))
            return seer_err(SEER_EINVAL, "chat: message %zu: parts/tool_calls pointer is NULL with a count", i);
        const char *texts[3] = { m->role, m->content, m->reasoning_content };
        static const char *const what[3] = { "role", "content", "reasoning_content" };
        for (int k = 0; k < 3; k++) {
            size_t off = texts[k] ? utf8_bad_offset(texts[k]) : SIZE_MAX;
            if (off != SIZE_MAX)
                return seer_err(SEER_EINVAL, "chat: message %zu: %s is not valid UTF-8 (byte %zu)", i, what[k], off);
        }
        for (size_t j = 0; j < m->n_parts; j++) {
            size_t off = m->parts[j].text ? utf8_bad_offset(m->parts[j].text) : SIZE_MAX;
            if (off != SIZE_MAX)
                return seer_err(SEER_EINVAL, "chat: message %zu part %zu: text is not valid UTF-8 (byte %zu)", i, j,
                                off);
        }
        for (size_t j = 0; j < m->n_tool_calls; j++) {
            const char *name = m->tool_calls[j].name;
            if (!name || !*name)
                return seer_err(SEER_EINVAL, "chat: message %zu tool call %zu has no name", i, j);
            if (utf8_bad_offset(name) != SIZE_MAX)
                return seer_err(SEER_EINVAL, "chat: message %zu tool call %zu: name is not valid UTF-8", i, j);
        }
    }
    return SEER_OK;
}

/* ---- the renderer -------------------------------------------------------------------------- */

/* [3p] The fixed instructions after the tool list, verbatim from the template copies (spec §6.2
   describes them: an XML-ish call format). */
static const char tool_instructions[] =
    "\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
    "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
    "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n"
    "</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n"
    "- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested "
    "within <tool_call></tool_call> XML tags\n"
    "- Required parameters MUST be specified\n"
    "- You may provide optional reasoning for your function call in natural language BEFORE the function call, "
    "but NOT after\n"
    "- If there is no function call available, answer the question like normal with your current knowledge and "
    "do not tell the user about function calls\n</IMPORTANT>";

chat_params chat_params_default(void)
{
    chat_params p = { 0 };
    p.add_generation_prompt = true;
    return p;
}

/* The system block (spec §6.2): with tools, "# Tools" + one JSON line per tool + the call-format
   instructions, then "\n\n" + the system content when it is not empty; otherwise the system content
   alone (even when empty). Nothing at all when there are neither tools nor a system message. */
static int render_system(sbuf *out, sbuf *tmp, const chat_message *msgs, const chat_params *p, vision_count *vc)
{
    bool has_sys = role_of(&msgs[0]) == ROLE_SYSTEM;
    span sys = { "", 0 };
    if (has_sys) {
        int rc = content_trimmed(tmp, &msgs[0], 0, vc, false, true, p->add_vision_id, &sys);
        if (rc)
            return rc;
    }
    if (p->n_tools == 0) {
        if (has_sys) {
            sb_puts(out, "<|im_start|>system\n");
            sb_text(out, tmp, sys);
            sb_puts(out, "<|im_end|>\n");
        }
        return SEER_OK;
    }
    sb_puts(out, "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>");
    for (size_t i = 0; i < p->n_tools; i++) {
        json_error_t jerr;
        json_t *tool = p->tools_json[i] ? json_loads(p->tools_json[i], 0, &jerr) : NULL;
        if (!tool || !json_is_object(tool)) {
            json_decref(tool);
            return seer_err(SEER_EINVAL, "chat: tool %zu is not a JSON object%s%s", i, tool ? "" : ": ",
                            tool ? "" : (p->tools_json[i] ? jerr.text : "NULL"));
        }
        sb_puts(out, "\n");
        size_t at = out->len;
        py_tojson(out, tool);
        sb_mark(out, at);
        json_decref(tool);
    }
    sb_puts(out, "\n</tools>");
    sb_puts(out, tool_instructions);
    if (sys.n) {
        sb_puts(out, "\n\n");
        sb_text(out, tmp, sys);
    }
    sb_puts(out, "<|im_end|>\n");
    return SEER_OK;
}

/* An assistant turn (spec §6.2). Reasoning comes from reasoning_content, or [3p] from the content:
   the text before the first "</think>" (trailing newlines dropped) after its last "<think>" (leading
   newlines dropped); the content keeps what follows the last "</think>" (leading newlines dropped).
   Turns after the last genuine user query keep a think block; earlier ones drop it. Tool calls follow
   in the XML-ish format: "\n\n" before the first one when there is visible content, "\n" between calls. */
static int render_assistant(sbuf *out, const sbuf *tmp, const chat_message *m, size_t mi, span content,
                            bool keep_reasoning, const chat_params *p)
{
    span reasoning = { "", 0 };
    if (m->reasoning_content) {
        reasoning = span_of(m->reasoning_content);
    } else if (span_find(content, "</think>") != SIZE_MAX) {
        span before = { content.p, span_find(content, "</think>") };
        before = rstrip_nl(before);
        size_t open = span_rfind(before, "<think>");
        if (open != SIZE_MAX)
            before = (span){ before.p + open + 7, before.n - open - 7 };
        reasoning = lstrip_nl(before);
        size_t close = span_rfind(content, "</think>");
        content = lstrip_nl((span){ content.p + close + 8, content.n - close - 8 });
    }
    reasoning = py_trim(reasoning);
    sb_puts(out, "<|im_start|>assistant\n");
    if (keep_reasoning) {
        sb_puts(out, "<think>\n");
        sb_text(out, tmp, reasoning);
        sb_puts(out, "\n</think>\n\n");
    }
    sb_text(out, tmp, content);
    for (size_t j = 0; j < m->n_tool_calls; j++) {
        const chat_tool_call *tc = &m->tool_calls[j];
        json_t *args = NULL;
        if (tc->arguments_json) {
            json_error_t jerr;
            args = json_loads(tc->arguments_json, 0, &jerr);
            if (!args || !json_is_object(args)) {
                json_decref(args);
                return seer_err(SEER_EINVAL, "chat: message %zu tool call %zu ('%s'): arguments are not a JSON object%s%s",
                                mi, j, tc->name, args ? "" : ": ", args ? "" : jerr.text);
            }
        }
        sb_puts(out, j ? "\n<tool_call>\n<function=" : py_trim(content).n ? "\n\n<tool_call>\n<function="
                                                                         : "<tool_call>\n<function=");
        sb_content(out, span_of(tc->name));
        sb_puts(out, ">\n");
        const char *key;
        json_t *val;
        if (args) {
            json_object_foreach(args, key, val) {
                sb_puts(out, "<parameter=");
                sb_content(out, span_of(key));
                sb_puts(out, ">\n");
                size_t at = out->len;
                arg_value(out, val, p->scalar_args_as_json);
                sb_mark(out, at);
                sb_puts(out, "\n</parameter>\n");
            }
        }
        json_decref(args);
        sb_puts(out, "</function>\n</tool_call>");
    }
    sb_puts(out, "<|im_end|>\n");
    return SEER_OK;
}

/* Index of the last genuine user query: scanning backwards, the first user message whose trimmed
   content is not wholly a "<tool_response>…</tool_response>" block ([3p]; spec §6.2 "last genuine user
   query"). SIZE_MAX when there is none. */
static int last_user_query(sbuf *tmp, const chat_message *msgs, size_t n, const chat_params *p, vision_count *vc,
                           size_t *out)
{
    *out = SIZE_MAX;
    for (size_t i = n; i-- > 0;) {
        if (role_of(&msgs[i]) != ROLE_USER)
            continue;
        span c;
        int rc = content_trimmed(tmp, &msgs[i], i, vc, false, false, p->add_vision_id, &c);
        if (rc)
            return rc;
        if (!(span_starts(c, "<tool_response>") && span_ends(c, "</tool_response>"))) {
            *out = i;
            break;
        }
    }
    return SEER_OK;
}

static int render_all(sbuf *out, sbuf *tmp, const chat_message *msgs, size_t n, const chat_params *p)
{
    vision_count vc = { 0, 0 };
    int rc = render_system(out, tmp, msgs, p, &vc);
    if (rc)
        return rc;
    size_t last_query;
    if ((rc = last_user_query(tmp, msgs, n, p, &vc, &last_query)))
        return rc;
    /* [3p] The template raises when no user message is a genuine query (e.g. only a system message). */
    if (last_query == SIZE_MAX)
        return seer_err(SEER_EINVAL, "chat: no user query in the %zu message(s)", n);
    for (size_t i = 0; i < n; i++) {
        const chat_message *m = &msgs[i];
        enum role r = role_of(m);
        if (r == ROLE_OTHER)
            return seer_err(SEER_EINVAL, "chat: message %zu has unknown role '%s' (system, user, assistant, tool)",
                            i, m->role);
        span content;
        if ((rc = content_trimmed(tmp, m, i, &vc, true, false, p->add_vision_id, &content)))
            return rc;
        switch (r) {
        case ROLE_SYSTEM:
            if (i != 0)
                return seer_err(SEER_EINVAL, "chat: message %zu: the system message must be the first message", i);
            break; /* already written by render_system */
        case ROLE_USER:
            sb_puts(out, "<|im_start|>user\n");
            sb_text(out, tmp, content);
            sb_puts(out, "<|im_end|>\n");
            break;
        case ROLE_ASSISTANT:
            if ((rc = render_assistant(out, tmp, m, i, content, p->preserve_thinking || i > last_query, p)))
                return rc;
            break;
        case ROLE_TOOL:
            /* Consecutive tool results share one user turn (spec §6.2). [3p] The template opens the turn
               only when a previous message exists and is not a tool message. */
            if (i > 0 && role_of(&msgs[i - 1]) != ROLE_TOOL)
                sb_puts(out, "<|im_start|>user");
            sb_puts(out, "\n<tool_response>\n");
            sb_text(out, tmp, content);
            sb_puts(out, "\n</tool_response>");
            if (i + 1 == n || role_of(&msgs[i + 1]) != ROLE_TOOL)
                sb_puts(out, "<|im_end|>\n");
            break;
        case ROLE_OTHER: break;
        }
    }
    /* Generation prompt (spec §6.2): an open think block when thinking, else an already-closed empty one. */
    if (p->add_generation_prompt)
        sb_puts(out, p->enable_thinking ? "<|im_start|>assistant\n<think>\n"
                                        : "<|im_start|>assistant\n<think>\n\n</think>\n\n");
    return SEER_OK;
}

int chat_render(const chat_message *msgs, size_t n_msgs, const chat_params *params, char **out, size_t *out_len)
{
    return chat_render_ranges(msgs, n_msgs, params, out, out_len, NULL, NULL);
}

int chat_render_ranges(const chat_message *msgs, size_t n_msgs, const chat_params *params, char **out,
                       size_t *out_len, chat_range **ranges, size_t *n_ranges)
{
    chat_params p = params ? *params : chat_params_default();
    if (!out)
        return seer_err(SEER_EINVAL, "chat: out is NULL");
    if (n_msgs == 0 || !msgs)
        return seer_err(SEER_EINVAL, "chat: no messages");
    if (p.n_tools && !p.tools_json)
        return seer_err(SEER_EINVAL, "chat: tools_json is NULL with n_tools = %zu", p.n_tools);
    int rc = validate_messages(msgs, n_msgs);
    if (rc)
        return rc;
    sbuf b = { 0 }, tmp = { 0 };
    rc = render_all(&b, &tmp, msgs, n_msgs, &p);
    free(tmp.p);
    free(tmp.rg);
    if (rc == SEER_OK && b.oom)
        rc = seer_err(SEER_ENOMEM, "chat: out of memory building the prompt");
    if (rc) {
        free(b.p);
        free(b.rg);
        return rc;
    }
    *out = b.p;
    if (out_len)
        *out_len = b.len;
    if (ranges) {
        *ranges = b.rg;
        *n_ranges = b.n_rg;
    } else {
        free(b.rg);
    }
    return SEER_OK;
}

/* ---- the template check -------------------------------------------------------------------- */

/* Markers of the Qwen3.5 family template: each names a rule chat_render implements. A template
   without one of them does something this renderer does not know. */
static const struct {
    const char *text;
    const char *why;
} markers[] = {
    { "<|im_start|>", "ChatML turns" },
    { "<|im_end|>", "ChatML turns" },
    { "<think>", "think blocks" },
    { "</think>", "think blocks" },
    { "enable_thinking", "thinking switch" },
    { "reasoning_content", "assistant reasoning" },
    { "last_query_index", "reasoning dropped before the last user query" },
    { "<tools>", "tool list" },
    { "<tool_call>", "tool calls" },
    { "<function=", "XML-style tool calls" },
    { "<parameter=", "XML-style tool-call parameters" },
    { "<tool_response>", "tool results" },
    { "<|vision_start|>", "vision placeholders" },
    { "<|image_pad|>", "image placeholders" },
    { "<|video_pad|>", "video placeholders" },
    { "<|vision_end|>", "vision placeholders" },
};

/* Copy of s with all whitespace removed, so checks of Jinja code ignore indentation and spacing. */
static char *squeeze(const char *s)
{
    char *d = seer_malloc(strlen(s) + 1);
    if (!d)
        return NULL;
    size_t n = 0;
    for (; *s; s++)
        if (!strchr(" \t\r\n\f\v", *s))
            d[n++] = *s;
    d[n] = '\0';
    return d;
}

static const char *last_of(const char *hay, const char *needle)
{
    const char *last = NULL;
    for (const char *q = strstr(hay, needle); q; q = strstr(q + 1, needle))
        last = q;
    return last;
}

int chat_template_check(const char *jinja_text, chat_template_info *info)
{
    if (!jinja_text)
        return seer_err(SEER_EINVAL, "chat template: no template text");
    if (!*jinja_text)
        return seer_err(SEER_EUNSUPPORTED, "chat template: the template is empty");
    char missing[512] = "";
    size_t nmiss = 0;
    for (size_t i = 0; i < ARRAY_LEN(markers); i++) {
        if (strstr(jinja_text, markers[i].text))
            continue;
        size_t l = strlen(missing);
        snprintf(missing + l, sizeof missing - l, "%s%s (%s)", nmiss++ ? ", " : "", markers[i].text, markers[i].why);
    }
    if (nmiss)
        return seer_err(SEER_EUNSUPPORTED, "chat template: not a Qwen3.5-family template; missing %s", missing);
    char *sq = squeeze(jinja_text);
    if (!sq)
        return seer_err(SEER_ENOMEM, "chat template: out of memory");
    chat_template_info ti = { 0 };
    int rc = SEER_OK;
    /* Thinking default (spec §6.2): the small models open the think block only when
       enable_thinking is true; the large ones unless it is false. The generation prompt comes last,
       so the later of the two tests is the one that decides. */
    const char *opt_in = last_of(sq, "enable_thinkingisdefinedandenable_thinkingistrue");
    const char *opt_out = last_of(sq, "enable_thinkingisdefinedandenable_thinkingisfalse");
    if (strstr(sq, "setenable_thinking="))
        rc = seer_err(SEER_EUNSUPPORTED, "chat template: the template assigns enable_thinking itself");
    else if (!opt_in && !opt_out)
        rc = seer_err(SEER_EUNSUPPORTED, "chat template: the enable_thinking test is in an unrecognised form");
    else
        ti.thinking_default = opt_out && (!opt_in || opt_out > opt_in);
    ti.has_preserve_thinking = strstr(sq, "preserve_thinking") != NULL;
    /* Tool-call argument values: the two forms seen in copies [3p] (see arg_value). */
    if (rc == SEER_OK) {
        if (strstr(sq, "args_value|stringifargs_valueisstringelseargs_value|tojson"))
            ti.scalar_args_as_json = true;
        else if (!strstr(sq, "args_value|tojson|safeifargs_valueismapping"))
            rc = seer_err(SEER_EUNSUPPORTED, "chat template: tool-call arguments are written in an unrecognised form");
    }
    free(sq);
    if (rc == SEER_OK && info)
        *info = ti;
    return rc;
}
