// Loads the page's wasm in Node (its engine role) as the page's worker does and runs a family-lab
// race without loading a model: familyStart(REQUEST_JSON), then familyStep until done. Prints the
// info and every step's answer, one JSON a line.
// usage: node run_familylab.mjs WASM_EXEC_JS APP_WASM REQUEST_JSON
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [wasmExec, wasmFile, request] = process.argv.slice(2);
createRequire(import.meta.url)(path.resolve(wasmExec));

const ready = new Promise((resolve) => { globalThis.bertlabReady = resolve; });
const go = new Go();
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmFile), go.importObject);
go.run(instance);
await ready;

const b = globalThis.bertlab;
const info = b.familyStart(request);
console.log(info);
if (JSON.parse(info).error) process.exit(0);
for (let i = 0; i < 1000; i++) {
  const s = b.familyStep();
  console.log(s);
  const r = JSON.parse(s);
  if (r.error || r.done) break;
}
console.log(b.familyStop());
process.exit(0);
