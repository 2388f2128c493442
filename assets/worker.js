// The bertlab engine in a Web Worker, so that the page stays responsive while the model
// computes. The engine is the page's own module (app.wasm, or app-scalar.wasm without SIMD;
// wasm/app), which starts its engine role (wasm/engine) when it finds no document.
//
// Protocol: the page first posts {init: {module, url}}: the module it compiled
// (WebAssembly.Module), or, without one, the wasm file to fetch. Then it posts {id, fn, args};
// the worker answers {id, result, ms} where result is the engine's JSON string
// ({"error": "..."} on failure) and ms the time the request took. Requests run one at a time,
// in the order they came. fn is one of:
//   models                 -> the text of models/index.json
//   loadURL(base, files)   -> fetches the model files under base and calls bertlab.load
//   loadFiles({name: File}) -> reads the user's files (File or Uint8Array) and calls bertlab.load
//   fillMask, tokenize, attention, ... -> the engine's functions (see wasm/engine/engine.go)
importScripts('wasm_exec.js');

let init;
const initialised = new Promise((resolve) => { init = resolve; });

const ready = (async () => {
  const { module, url } = await initialised;
  let mod = module;
  if (!(mod instanceof WebAssembly.Module)) {
    if (!url) throw new Error('the page sent the engine worker no module');
    const resp = await fetch(url);
    if (!resp.ok) throw new Error(`${url}: HTTP ${resp.status}`);
    mod = await WebAssembly.compile(await resp.arrayBuffer());
  }
  const go = new Go();
  const started = new Promise((resolve) => { self.bertlabReady = resolve; });
  const instance = await WebAssembly.instantiate(mod, go.importObject);
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
self.onmessage = (e) => {
  if (e.data && e.data.init) {
    init(e.data.init);
    return;
  }
  queue = queue.then(() => handle(e.data));
};
