// The bertlab engine (engine.wasm or engine-scalar.wasm, built from wasm/engine) in a Web Worker,
// so that the page stays responsive while the model computes.
//
// Protocol: the page posts {id, fn, args}; the worker answers {id, result, ms} where result is
// the engine's JSON string ({"error": "..."} on failure) and ms the time the request took.
// Requests run one at a time, in the order they came. fn is one of:
//   models                 -> the text of models/index.json
//   loadURL(base, files)   -> fetches the model files under base and calls bertlab.load
//   loadFiles({name: File}) -> reads the user's files (File or Uint8Array) and calls bertlab.load
//   fillMask, tokenize, attention, ... -> the engine's functions (see wasm/engine/main.go)
importScripts('wasm_exec.js');

// engine.wasm is built with Go's simd package and needs WebAssembly SIMD (128-bit vectors);
// engine-scalar.wasm is the same engine without it, for browsers that lack SIMD. The probe is
// the smallest module with a SIMD instruction: (func (result v128) i32.const 0 i8x16.splat
// i8x16.popcnt), as wasm-feature-detect checks it.
const simdProbe = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);
const engineFile = WebAssembly.validate(simdProbe) ? 'engine.wasm' : 'engine-scalar.wasm';

const ready = (async () => {
  const go = new Go();
  const started = new Promise((resolve) => { self.bertlabReady = resolve; });
  const resp = await fetch(engineFile);
  if (!resp.ok) throw new Error(`${engineFile}: HTTP ${resp.status}`);
  const { instance } = await WebAssembly.instantiate(await resp.arrayBuffer(), go.importObject);
  go.run(instance);
  await started;
})();

async function fetchBytes(url) {
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`${url}: HTTP ${resp.status}`);
  return new Uint8Array(await resp.arrayBuffer());
}

// The files of a HuggingFace BERT folder and the fields of bertlab.load that take them.
const loadFields = {
  'config.json': 'config',
  'model.safetensors': 'weights',
  'vocab.txt': 'vocab',
  'tokenizer_config.json': 'tokenizerConfig',
};

async function loadURL(base, files) {
  const arg = {};
  await Promise.all(files.filter((f) => f in loadFields).map(async (f) => {
    arg[loadFields[f]] = await fetchBytes(base + f);
  }));
  return self.bertlab.load(arg);
}

async function loadFiles(files) {
  const arg = {};
  await Promise.all(Object.entries(files).filter(([f]) => f in loadFields).map(async ([f, v]) => {
    arg[loadFields[f]] = v instanceof Uint8Array ? v : new Uint8Array(await v.arrayBuffer());
  }));
  return self.bertlab.load(arg);
}

async function handle({ id, fn, args = [] }) {
  const t0 = performance.now();
  let result;
  try {
    await ready;
    if (fn === 'models') {
      const resp = await fetch('models/index.json');
      if (!resp.ok) throw new Error(`models/index.json: HTTP ${resp.status}`);
      result = await resp.text();
    } else if (fn === 'loadURL') {
      result = await loadURL(...args);
    } else if (fn === 'loadFiles') {
      result = await loadFiles(...args);
    } else if (typeof self.bertlab[fn] === 'function') {
      result = self.bertlab[fn](...args);
    } else {
      throw new Error(`the engine has no function ${fn}`);
    }
  } catch (err) {
    result = JSON.stringify({ error: String((err && err.message) || err) });
  }
  self.postMessage({ id, result, ms: performance.now() - t0 });
}

let queue = Promise.resolve();
self.onmessage = (e) => { queue = queue.then(() => handle(e.data)); };
