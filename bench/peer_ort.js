// Forward peer for make bench: onnxruntime in Node, 1 thread, batch 1, on the models that
// peer_torch.py exported (same configs, random weights).
//
//   node peer_ort.js node|web ONNXDIR [models] [reps]   (model "gemm": the GEMM shapes)
//
// "node" is onnxruntime-node (native CPU provider), "web" is onnxruntime-web's wasm backend
// (the browser's engine) running in Node. Prints "fwd/<model>/ort-node ms" (or ort-web) lines,
// and for node also Base/128 on 2 threads.
'use strict';
const fs = require('fs');
const path = require('path');

const backend = process.argv[2];
const dir = process.argv[3];
const models = (process.argv[4] || 'base128,mini128,tiny16').split(',');
const reps = parseInt(process.argv[5] || '5', 10);

// Median per-call seconds over at least reps calls and minS seconds, after a warm-up call.
async function measure(f, reps, minS) {
  await f();
  const ts = [];
  const t0 = process.hrtime.bigint();
  while (ts.length < reps || Number(process.hrtime.bigint() - t0) / 1e9 < minS) {
    const t = process.hrtime.bigint();
    await f();
    ts.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  ts.sort((a, b) => a - b);
  return ts[Math.floor(ts.length / 2)];
}

// GEMM: y[M, N] = x[M, K]·Wᵀ, W a constant of the graph (gemm_MxKxN.onnx from peer_torch.py).
async function gemm(ort, opts, tag) {
  for (const [m, k, n] of [[128, 768, 768], [128, 768, 3072], [128, 3072, 768], [16, 128, 128], [16, 128, 512], [512, 1024, 1024]]) {
    const shape = `${m}x${k}x${n}`;
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, `gemm_${shape}.onnx`)));
    const sess = await ort.InferenceSession.create(bytes, opts);
    const x = new Float32Array(m * k);
    for (let i = 0; i < x.length; i++) x[i] = Math.random() * 2 - 1;
    const feeds = { x: new ort.Tensor('float32', x, [m, k]) };
    const t = await measure(() => sess.run(feeds), reps, 0.3);
    console.log(`gemm/${shape}/${tag} ${(2 * m * n * k / t / 1e9).toFixed(2)}`);
  }
}

async function main() {
  let ort;
  const opts = { graphOptimizationLevel: 'all', executionMode: 'sequential', interOpNumThreads: 1, intraOpNumThreads: 1 };
  if (backend === 'node') {
    ort = require('onnxruntime-node');
  } else {
    ort = require('onnxruntime-web/wasm'); // the wasm backend alone
    ort.env.wasm.numThreads = 1;
    opts.executionProviders = ['wasm'];
  }
  const tag = backend === 'node' ? 'ort-node' : 'ort-web';
  for (const key of models) {
    if (key === 'gemm') {
      await gemm(ort, opts, tag);
      continue;
    }
    const s = parseInt(key.replace(/^[a-z]+/, ''), 10);
    const ids = new BigInt64Array(s);
    for (let i = 0; i < s; i++) ids[i] = BigInt(1000 + ((i * 7919) % (30522 - 1000)));
    const feeds = { input_ids: new ort.Tensor('int64', ids, [1, s]) };
    const file = path.join(dir, key + '.onnx');
    const big = key.startsWith('base') || key.startsWith('large');
    const bytes = new Uint8Array(fs.readFileSync(file)); // onnxruntime-web in Node takes bytes, not paths
    let sess = await ort.InferenceSession.create(bytes, opts);
    const t = await measure(() => sess.run(feeds), reps, big ? 0 : 0.2);
    console.log(`fwd/${key}/${tag} ${(t * 1e3).toFixed(3)}`);
    if (backend === 'node' && key.startsWith('base')) {
      sess = await ort.InferenceSession.create(bytes, { ...opts, intraOpNumThreads: 2 });
      const t2 = await measure(() => sess.run(feeds), reps, 0);
      console.log(`fwd/${key}/${tag}-2t ${(t2 * 1e3).toFixed(3)}`);
    }
  }
  const ver = ort.env.versions ? JSON.stringify(ort.env.versions) : '';
  console.log(`# onnxruntime-${backend} ${ver}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
