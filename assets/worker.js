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
//   loadURL(base, files)   -> fetches the model files under base and calls bertlab.load (the
//                             default model's files are fetched while the engine starts)
//   loadFiles({name: File}) -> reads the user's files (File or Uint8Array) and calls bertlab.load
//   familyRecord           -> the text of family/record.json (the family lab's recorded native run)
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

async function fetchOK(url, signal) {
  const resp = await fetch(url, { signal });
  if (!resp.ok) throw new Error(`${url}: HTTP ${resp.status}`);
  return resp;
}

async function fetchBytes(url, signal) {
  return new Uint8Array(await (await fetchOK(url, signal)).arrayBuffer());
}

// The files of a HuggingFace model folder and the fields of bertlab.load that take them: the
// config, the weights and the tokenizer files of every family (wasm/engine's loadFields).
const loadFields = {
  'config.json': 'config',
  'model.safetensors': 'weights',
  'model.safetensors.index.json': 'weightsIndex',
  'vocab.txt': 'vocab',
  'tokenizer_config.json': 'tokenizerConfig',
  'tokenizer.json': 'tokenizerJSON',
  'vocab.json': 'vocabJSON',
  'merges.txt': 'merges',
  'spiece.model': 'spiece',
  'spm.model': 'spm',
  'special_tokens_map.json': 'specialTokensMap',
};

// Weights saved in shards (model-00001-of-00002.safetensors, ...) go to bertlab.load as
// {shards: {name: bytes}}, with the index (model.safetensors.index.json) that says which tensor
// is in which.
const isShard = (f) => /^model-\d{5}-of-\d{5}\.safetensors$/.test(f);

// put puts one file of a model folder into bertlab.load's argument.
function put(arg, f, bytes) {
  if (isShard(f)) (arg.shards ??= {})[f] = bytes;
  else arg[loadFields[f]] = bytes;
}

const wanted = (f) => f in loadFields || isShard(f);

// fetchFields fetches the files of a model folder under base into bertlab.load's argument.
async function fetchFields(base, files, signal) {
  const arg = {};
  await Promise.all(files.filter(wanted).map(async (f) => {
    put(arg, f, await fetchBytes(base + f, signal));
  }));
  return arg;
}

// The page opens on the default model of models/index.json almost always, and compiling and
// starting the engine takes about a second: the worker fetches the index and the default
// model's files meanwhile. loadURL takes them if it is asked for that model (and aborts the
// fetch otherwise); models answers with the index it fetched. A failed prefetch only means
// loadURL and models fetch again.
const prefetchAbort = new AbortController();
const prefetchIndex = fetchOK('models/index.json', prefetchAbort.signal)
  .then((resp) => resp.text()).catch(() => null);
let prefetch = prefetchIndex.then((text) => {
  const index = text && JSON.parse(text);
  const m = index && (index.models || []).find((x) => x.name === index.default);
  // A failed or aborted prefetch gives null (no unhandled rejection): loadURL then fetches.
  return m ? { base: 'models/' + m.path, arg: fetchFields('models/' + m.path, m.files, prefetchAbort.signal).catch(() => null) } : null;
}).catch(() => null);

// fetchMs is how long the last loadURL waited for its files (reported with its answer).
let fetchMs = 0;

async function loadURL(base, files) {
  const t0 = performance.now();
  const pre = await prefetch;
  prefetch = Promise.resolve(null); // used once: its bytes are not kept past this load
  let arg = null;
  if (pre && pre.base === base) {
    arg = await pre.arg;
  } else {
    prefetchAbort.abort();
  }
  if (!arg) arg = await fetchFields(base, files);
  fetchMs = performance.now() - t0;
  return self.bertlab.load(arg);
}

async function loadFiles(files) {
  const arg = {};
  await Promise.all(Object.entries(files).filter(([f]) => wanted(f)).map(async ([f, v]) => {
    put(arg, f, v instanceof Uint8Array ? v : new Uint8Array(await v.arrayBuffer()));
  }));
  return self.bertlab.load(arg);
}

async function handle({ id, fn, args = [] }) {
  const t0 = performance.now();
  let result;
  try {
    await ready;
    if (fn === 'models') {
      result = (await prefetchIndex) ?? await (await fetchOK('models/index.json')).text();
    } else if (fn === 'loadURL') {
      result = await loadURL(...args);
    } else if (fn === 'loadFiles') {
      result = await loadFiles(...args);
    } else if (fn === 'familyRecord') {
      result = await (await fetchOK('family/record.json')).text();
    } else if (typeof self.bertlab[fn] === 'function') {
      result = self.bertlab[fn](...args);
    } else {
      throw new Error(`the engine has no function ${fn}`);
    }
  } catch (err) {
    result = JSON.stringify({ error: String((err && err.message) || err) });
  }
  const msg = { id, result, ms: performance.now() - t0 };
  if (fn === 'loadURL') msg.fetchMs = fetchMs;
  self.postMessage(msg);
}

let queue = Promise.resolve();
self.onmessage = (e) => {
  if (e.data && e.data.init) {
    init(e.data.init);
    return;
  }
  queue = queue.then(() => handle(e.data));
};
