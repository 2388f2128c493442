// Loads the page's wasm in Node (the engine's role, as in the page's worker) and asks the family
// views' functions: bertlab.replaced on an ELECTRA discriminator folder, bertlab.attentionParts
// on a DeBERTa folder, each with bad arguments too. Prints one JSON answer a line.
// usage: node run_family.mjs WASM_EXEC_JS APP_WASM ELECTRA_DIR DEBERTA_DIR TEXT PAIR
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [wasmExec, wasmFile, electra, deberta, text, pair] = process.argv.slice(2);
createRequire(import.meta.url)(path.resolve(wasmExec));

const ready = new Promise((resolve) => { globalThis.bertlabReady = resolve; });
const go = new Go();
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmFile), go.importObject);
go.run(instance);
await ready;

const load = (dir) => {
  const read = (name) => new Uint8Array(fs.readFileSync(path.join(dir, name)));
  const r = JSON.parse(globalThis.bertlab.load({ config: read('config.json'), weights: read('model.safetensors'), vocab: read('vocab.txt') }));
  if (r.error) { console.error(r.error); process.exit(1); }
};
const b = globalThis.bertlab;
load(electra);
console.log(b.replaced(text));
console.log(b.replaced(text, pair));
console.log(b.replaced(5));
console.log(b.attentionParts(text, 0));
load(deberta);
console.log(b.attentionParts(text, 1));
console.log(b.attentionParts(text, 2, pair));
console.log(b.attentionParts(text, 'one'));
console.log(b.attentionParts(text, 9));
process.exit(0);
