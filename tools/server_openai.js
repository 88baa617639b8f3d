// tools/server_openai.js -- the official OpenAI JavaScript SDK (npm `openai`) against
// `infer --server`: model list, chat and text completions, whole and streamed, greedy, and
// one request the server must refuse (n = 2). Prints one JSON object with what it got;
// tests.c (server_openai_sdk) compares it with ./infer's own greedy output.
//
//   node tools/server_openai.js http://127.0.0.1:8080/v1 [API_KEY] [PROMPT] [CHAT_MESSAGE] [MAX_TOKENS]
//
// The package is found the usual ways (a node_modules folder above, or NODE_PATH, e.g.
// NODE_PATH=$(npm root -g) after `npm install -g openai`).
'use strict';
const OpenAI = require('openai');

async function main() {
  const [baseURL, apiKey = 'none', prompt = 'Once upon a time', message = 'Hi', maxArg = '16'] = process.argv.slice(2);
  const max_tokens = parseInt(maxArg, 10);
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60000 });
  const out = {};

  const models = await client.models.list();
  out.model = models.data[0].id;

  const chat = await client.chat.completions.create({
    model: out.model, messages: [{ role: 'user', content: message }], max_tokens, temperature: 0,
  });
  out.chat = chat.choices[0].message.content;
  out.chat_finish = chat.choices[0].finish_reason;
  out.chat_usage = chat.usage;

  const cs = await client.chat.completions.create({
    model: out.model, messages: [{ role: 'user', content: message }], max_tokens, temperature: 0,
    stream: true, stream_options: { include_usage: true },
  });
  out.chat_stream = '';
  for await (const chunk of cs) {
    if (chunk.usage) out.chat_stream_usage = chunk.usage;
    const c = chunk.choices[0];
    if (!c) continue;
    if (c.delta && c.delta.content) out.chat_stream += c.delta.content;
    if (c.finish_reason) out.chat_stream_finish = c.finish_reason;
  }

  const comp = await client.completions.create({ model: out.model, prompt, max_tokens, temperature: 0 });
  out.completion = comp.choices[0].text;
  out.completion_finish = comp.choices[0].finish_reason;
  out.completion_usage = comp.usage;

  const ps = await client.completions.create({ model: out.model, prompt, max_tokens, temperature: 0, stream: true });
  out.completion_stream = '';
  for await (const chunk of ps) {
    const c = chunk.choices[0];
    if (!c) continue;
    out.completion_stream += c.text;
    if (c.finish_reason) out.completion_stream_finish = c.finish_reason;
  }

  try {
    await client.chat.completions.create({ model: out.model, messages: [{ role: 'user', content: message }], n: 2 });
    out.error_status = 0;
  } catch (e) {
    if (!(e instanceof OpenAI.APIError)) throw e;
    out.error_status = e.status;
    out.error_code = e.code;
    out.error_type = e.type;
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { process.stderr.write(`server_openai.js: ${e.stack || e}\n`); process.exit(1); });
