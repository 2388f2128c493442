// Loads the page's wasm in Node (where it takes the engine's role) the way the page's worker does, hands it a model folder as bytes and
// prints the JSON answers of fillMask, tokenize, steps, maskLab and nspPairs, one per line,
// then load() with a bad argument and fillMask again, then explain's answers.
// usage: node run_engine.mjs WASM_EXEC_JS APP_WASM MODEL_DIR TEXT
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [wasmExec, wasmFile, modelDir, text] = process.argv.slice(2);
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
// Weights in shards come as the index and {name: bytes} of the shards, as the page's worker
// hands them.
const shards = {};
for (const f of fs.readdirSync(modelDir)) {
  if (/^model-\d{5}-of-\d{5}\.safetensors$/.test(f)) shards[f] = read(f);
}
const loaded = JSON.parse(globalThis.bertlab.load({
  config: read('config.json'), weights: read('model.safetensors'),
  weightsIndex: read('model.safetensors.index.json'), shards,
  vocab: read('vocab.txt'), tokenizerConfig: read('tokenizer_config.json'),
}));
if (loaded.error) { console.error(loaded.error); process.exit(1); }
console.log(globalThis.bertlab.fillMask(text, 5));
console.log(globalThis.bertlab.tokenize(text));
console.log(globalThis.bertlab.fillMask('no mask here', 5));
console.log(globalThis.bertlab.steps(text, 1, 2));
console.log(globalThis.bertlab.maskLab(text, 42, true));
console.log(globalThis.bertlab.nspPairs(3, 4));
// A bad argument: the answer must be an error naming it, and the engine must go on answering
// with the model it has.
console.log(globalThis.bertlab.load({ config: 5 }));
console.log(globalThis.bertlab.fillMask(text, 5));
// The explanation questions: integrated gradients over the text, and a neuron view, then a kind
// the engine does not know and a request that is not JSON.
console.log(globalThis.bertlab.explain('attributions', JSON.stringify({ text, method: 'ig', steps: 8 })));
console.log(globalThis.bertlab.explain('neuron', JSON.stringify({ text, layer: 1, head: 2, query: 3 })));
console.log(globalThis.bertlab.explain('lime', JSON.stringify({ text })));
console.log(globalThis.bertlab.explain('lens', '{'));
process.exit(0);
