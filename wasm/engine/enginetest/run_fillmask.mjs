// Loads the page's wasm in Node as the page's worker does and hands it each model folder given
// with the worker's own mapping of file names to bertlab.load's fields (loadFields, read from
// assets/worker.js), then prints, per folder, the load's answer and fillMask's for each text:
// one JSON line each.
// usage: node run_fillmask.mjs WASM_EXEC_JS APP_WASM WORKER_JS CASES_JSON
//   CASES_JSON: [{"dir": MODEL_DIR, "texts": [TEXT, ...]}, ...]
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [wasmExec, wasmFile, workerJS, casesFile] = process.argv.slice(2);
createRequire(import.meta.url)(path.resolve(wasmExec));

const src = fs.readFileSync(workerJS, 'utf8');
const block = src.match(/const loadFields = (\{[\s\S]*?\});/);
if (!block) { console.error('no loadFields in ' + workerJS); process.exit(1); }
const loadFields = new Function('return ' + block[1])();

const ready = new Promise((resolve) => { globalThis.bertlabReady = resolve; });
const go = new Go();
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmFile), go.importObject);
go.run(instance);
await ready;

for (const { dir, texts } of JSON.parse(fs.readFileSync(casesFile, 'utf8'))) {
  const arg = {};
  for (const name of fs.readdirSync(dir)) {
    if (name in loadFields) arg[loadFields[name]] = new Uint8Array(fs.readFileSync(path.join(dir, name)));
  }
  console.log(globalThis.bertlab.load(arg));
  for (const text of texts) console.log(globalThis.bertlab.fillMask(text, 5));
}
process.exit(0);
