// The official `openai` npm package (pinned in package.json) as a client of `seer serve`: what a
// script written against OpenAI's API sees. tests/scripts/openai_client.sh starts the server on a tiny
// random model (greedy: --temp 0) and runs this file; each check prints "PASS what" or "FAIL what",
// and the script numbers them as TAP. Exit status 2 when the client itself could not run.
// Usage: node openai_client.mjs BASE_URL API_KEY MODEL_ID
import OpenAI, { AuthenticationError } from "openai";
import { deflateSync } from "node:zlib";

const [baseURL, apiKey, model] = process.argv.slice(2);
if (!model) {
  console.error("usage: node openai_client.mjs BASE_URL API_KEY MODEL_ID");
  process.exit(2);
}
// maxRetries 0: a 5xx or a dropped connection is a failure here, never hidden by a retry.
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120_000 });

function check(cond, what, detail) {
  console.log(`${cond ? "PASS" : "FAIL"} ${what}`);
  if (!cond && detail !== undefined) console.log(`# ${String(detail).split("\n").join("\n# ")}`);
}

// Runs one group of checks; a throw fails the group with the error's text instead of ending the run.
async function group(what, fn) {
  try {
    await fn();
  } catch (e) {
    check(false, `${what}: threw`, e && e.stack ? e.stack : e);
  }
}

// A PNG of random RGB noise (8-bit, no filter), written by hand so the test needs no image package.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
function noisePng(w, h) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, no filter, no interlace
  const rows = Buffer.alloc(h * (1 + 3 * w));
  for (let i = 0; i < rows.length; i++) rows[i] = i % (1 + 3 * w) === 0 ? 0 : Math.floor(Math.random() * 256);
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([sig, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(rows)), chunk("IEND", Buffer.alloc(0))]);
}

const question = [{ role: "user", content: "Say something about the sea." }];

await group("chat.completions.create", async () => {
  const r = await client.chat.completions.create({ model, messages: question, max_tokens: 24 });
  const c = r.choices?.[0];
  check(r.object === "chat.completion" && typeof r.id === "string", "non-stream: a chat.completion object", JSON.stringify(r));
  check(c?.message?.role === "assistant" && typeof c.message.content === "string" && c.message.content.length > 0,
    "non-stream: an assistant message with content", JSON.stringify(c));
  check(["stop", "length"].includes(c?.finish_reason), "non-stream: finish_reason stop or length", c?.finish_reason);
  check(r.usage?.prompt_tokens > 0 && r.usage?.completion_tokens > 0 &&
    r.usage.total_tokens === r.usage.prompt_tokens + r.usage.completion_tokens,
    "non-stream: usage counts prompt and completion tokens", JSON.stringify(r.usage));

  // The same request streamed: the deltas, concatenated, are the greedy answer above.
  const stream = await client.chat.completions.create({
    model, messages: question, max_tokens: 24, stream: true, stream_options: { include_usage: true },
  });
  let text = "", chunks = 0, finish = null, usage = null;
  for await (const ch of stream) {
    chunks++;
    if (ch.usage) usage = ch.usage;
    const d = ch.choices?.[0];
    if (d?.delta?.content) text += d.delta.content;
    if (d?.finish_reason) finish = d.finish_reason;
  }
  check(chunks >= 2, "stream: several chunks", chunks);
  check(text === c.message.content, "stream: the deltas concatenated equal the non-stream content",
    `stream ${JSON.stringify(text)}\nnon-stream ${JSON.stringify(c.message.content)}`);
  check(finish === c.finish_reason, "stream: the same finish_reason", `${finish} vs ${c.finish_reason}`);
  check(usage?.completion_tokens === r.usage.completion_tokens && usage?.prompt_tokens === r.usage.prompt_tokens,
    "stream: include_usage sends the usage chunk with the same counts", JSON.stringify(usage));
});

await group("logprobs", async () => {
  // The client's own types: choices[0].logprobs.content, one entry per token; streamed, the chunks'
  // lists joined (how the client's consumers accumulate them) are the same list.
  const ask = { model, messages: question, max_tokens: 8, temperature: 0, logprobs: true, top_logprobs: 2 };
  const r = await client.chat.completions.create(ask);
  const lp = r.choices?.[0]?.logprobs?.content ?? [];
  check(lp.length === r.usage?.completion_tokens && lp.every((e) => typeof e.token === "string" && e.logprob <= 0 &&
    Array.isArray(e.bytes) && e.top_logprobs?.length === 2), "logprobs: one entry per token with 2 alternatives",
    JSON.stringify(r.choices?.[0]?.logprobs));
  const joined = [];
  for await (const ch of await client.chat.completions.create({ ...ask, stream: true }))
    joined.push(...(ch.choices?.[0]?.logprobs?.content ?? []));
  check(JSON.stringify(joined) === JSON.stringify(lp), "logprobs streamed: the chunks' lists joined equal the non-stream list",
    `${joined.length} vs ${lp.length} entries`);
});

await group("image as a data: URI", async () => {
  const url = `data:image/png;base64,${noisePng(64, 96).toString("base64")}`;
  const ask = (content) => client.chat.completions.create({ model, messages: [{ role: "user", content }], max_tokens: 8 });
  const withImage = await ask([
    { type: "text", text: "What is in the picture?" },
    { type: "image_url", image_url: { url } },
  ]);
  const textOnly = await ask([{ type: "text", text: "What is in the picture?" }]);
  check(typeof withImage.choices?.[0]?.message?.content === "string", "image: an answer", JSON.stringify(withImage));
  // 64x96 pixels are at least (64/32)(96/32) = 6 image tokens: the image reached the prompt.
  check(withImage.usage?.prompt_tokens >= textOnly.usage?.prompt_tokens + 6,
    "image: the prompt holds the image's tokens", `${withImage.usage?.prompt_tokens} vs ${textOnly.usage?.prompt_tokens} text only`);
});

await group("response_format json_schema", async () => {
  // Bounded strings and integers: a random model under the grammar must close the object well
  // within max_tokens (the grammar's whitespace is bounded too).
  const schema = {
    type: "object",
    properties: {
      name: { type: "string", maxLength: 12 },
      count: { type: "integer", minimum: 0, maximum: 99 },
      ok: { type: "boolean" },
      color: { enum: ["red", "green", "blue"] },
    },
    required: ["name", "count", "ok", "color"],
    additionalProperties: false,
  };
  const r = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "Describe a thing as JSON." }], max_tokens: 600,
    response_format: { type: "json_schema", json_schema: { name: "thing", schema, strict: true } },
  });
  const content = r.choices?.[0]?.message?.content ?? "";
  check(r.choices?.[0]?.finish_reason === "stop", "json_schema: the object closed before max_tokens", JSON.stringify(r.choices?.[0]));
  let v;
  try {
    v = JSON.parse(content);
  } catch (e) {
    v = e;
  }
  check(v && typeof v === "object" && !(v instanceof Error) && !Array.isArray(v), "json_schema: the content parses as a JSON object", content);
  const keys = v && typeof v === "object" ? Object.keys(v).sort() : [];
  check(JSON.stringify(keys) === JSON.stringify(["color", "count", "name", "ok"]),
    "json_schema: exactly the required keys", content);
  check(typeof v?.name === "string" && [...v.name].length <= 12 && Number.isInteger(v?.count) && v.count >= 0 &&
    v.count <= 99 && typeof v?.ok === "boolean" && ["red", "green", "blue"].includes(v?.color),
    "json_schema: every value has its type and bounds", content);
});

await group("authentication", async () => {
  const wrong = new OpenAI({ baseURL, apiKey: `${apiKey}x`, maxRetries: 0 });
  let err = null;
  try {
    await wrong.chat.completions.create({ model, messages: question, max_tokens: 4 });
  } catch (e) {
    err = e;
  }
  check(err instanceof AuthenticationError && err.status === 401, "a wrong key: AuthenticationError (401)",
    err ? `${err.constructor.name} ${err.status} ${err.message}` : "no error");
  err = null;
  try {
    await wrong.models.list();
  } catch (e) {
    err = e;
  }
  check(err instanceof AuthenticationError, "a wrong key on models.list: AuthenticationError", err && err.message);
});

await group("models.list", async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  check(ids.includes(model), `models.list has ${model}`, JSON.stringify(ids));
});
