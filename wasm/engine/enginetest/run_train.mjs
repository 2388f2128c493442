// Loads the page's wasm in Node (its engine role) as the page's worker does and runs a short training-lab run:
// trainStart(REQUEST_JSON), trainStep until done, trainPredict(TEXT), trainExport. Prints the
// info, every step's answer, the prediction and the export's name and size, one JSON a line.
// usage: node run_train.mjs WASM_EXEC_JS APP_WASM MODEL_DIR REQUEST_JSON TEXT
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [wasmExec, wasmFile, modelDir, request, text] = process.argv.slice(2);
createRequire(import.meta.url)(path.resolve(wasmExec));

const ready = new Promise((resolve) => { globalThis.bertlabReady = resolve; });
const go = new Go();
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmFile), go.importObject);
go.run(instance);
await ready;

const read = (name) => {
  const p = path.join(modelDir, name);
  return fs.existsSync(p) ? new Uint8Array(fs.readFileSync(p)) : undefined;
};
const b = globalThis.bertlab;
const loaded = JSON.parse(b.load({
  config: read('config.json'), weights: read('model.safetensors'),
  vocab: read('vocab.txt'), tokenizerConfig: read('tokenizer_config.json'),
}));
if (loaded.error) { console.error(loaded.error); process.exit(1); }
console.log(b.trainStart(request));
for (let i = 0; i < 100; i++) {
  const s = b.trainStep();
  console.log(s);
  const r = JSON.parse(s);
  if (r.error || r.done) break;
}
console.log(b.trainPredict(text));
const ex = JSON.parse(b.trainExport());
console.log(JSON.stringify({ name: ex.name, error: ex.error, bytes: ex.zip ? Buffer.from(ex.zip, 'base64').length : 0 }));
process.exit(0);
