// tools/server_page.js -- load infer --server's chat page in headless Chromium and wait for
// its streamed reply. The page sends ?prompt=... on load; this script drives the browser
// over the DevTools protocol on a pipe (--remote-debugging-pipe: no port, no extra
// package), reads the page's state every 100 ms, and prints it as JSON once the reply is
// complete (or an error shows, or the time is up):
//   {"done":true,"reply":"...","events":N,"err":""}
// where events counts the server-sent events that carried text (more than one: streamed).
//
//   node tools/server_page.js 'http://127.0.0.1:8080/?prompt=Hi&max=16&temp=0' [TIMEOUT_MS]
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [url, timeoutArg = '20000'] = process.argv.slice(2);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'infer-page-'));
const chrome = spawn(process.env.CHROMIUM || 'chromium',
  ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank'],
  { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
const toChrome = chrome.stdio[3], fromChrome = chrome.stdio[4];
const waiting = new Map();
let nextId = 0, pending = '';
fromChrome.on('data', (d) => {                 // messages are JSON, each ended by a NUL byte
  pending += d.toString('utf8');
  for (let i; (i = pending.indexOf('\0')) >= 0;) {
    const msg = JSON.parse(pending.slice(0, i));
    pending = pending.slice(i + 1);
    if (msg.id && waiting.has(msg.id)) { waiting.get(msg.id)(msg); waiting.delete(msg.id); }
  }
});
function send(method, params = {}, sessionId) {
  const m = { id: ++nextId, method, params };
  if (sessionId) m.sessionId = sessionId;
  toChrome.write(JSON.stringify(m) + '\0');
  return new Promise((resolve) => waiting.set(m.id, resolve));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let finishing = false;
function finish(code, text) {                  // the browser gone, its profile removed, then exit
  if (finishing) return;
  finishing = true;
  if (text) process.stdout.write(text + '\n');
  const done = () => { try { fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5 }); } catch (e) { /* a temporary folder */ } process.exit(code); };
  if (chrome.exitCode !== null || chrome.signalCode !== null) return done();
  chrome.on('exit', done);
  chrome.kill();
}

(async () => {
  const t = await send('Target.createTarget', { url });
  const a = await send('Target.attachToTarget', { targetId: t.result.targetId, flatten: true });
  const sid = a.result.sessionId;
  const expr = `JSON.stringify({done: !!document.querySelector('.assistant[data-done]'),
    reply: (document.querySelector('.assistant .text') || {}).textContent || '',
    events: window.inferEvents || 0, err: (document.getElementById('err') || {}).textContent || ''})`;
  const deadline = Date.now() + parseInt(timeoutArg, 10);
  for (;;) {
    const r = await send('Runtime.evaluate', { expression: expr, returnByValue: true }, sid);
    const v = r.result && r.result.result && r.result.result.value;
    const state = v ? JSON.parse(v) : null;
    if (state && (state.done || state.err)) return finish(0, JSON.stringify(state));
    if (Date.now() > deadline) return finish(1, JSON.stringify(state || { done: false, err: 'timed out' }));
    await sleep(100);
  }
})().catch((e) => { process.stderr.write(`server_page.js: ${e.stack || e}\n`); finish(1); });
