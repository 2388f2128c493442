// Tokenizes fill-mask.py's sentences with the HuggingFace tokenizers library
// (npm `tokenizers`, the Node binding of the Rust core) for each family, and
// writes each family's tokenizer files into its fixture folder. See README.md.
//
//   node fillmask_ids.js OUTDIR
//
// Environment: HF_TOKENIZERS (path of the npm package "tokenizers"),
// FIXTURES (the shared tokenizer fixtures, for BERT's tokenizer.json
// pipeline), ALBERT_JSON (the tokenizer.json AlbertConverter builds around
// core/tokenizer/unigram/testdata/spiece.model, written by
// `SPM_WRITE_ALBERT=$ALBERT_JSON go test ./core/tokenizer/unigram -run WriteAlbert`).
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require(process.env.HF_TOKENIZERS || 'tokenizers');

const root = path.join(__dirname, '..', '..');
const tdata = path.join(root, 'core', 'tokenizer', 'testdata');
const udata = path.join(root, 'core', 'tokenizer', 'unigram', 'testdata');
const out = process.argv[2];

// The sentences; [MASK] becomes the family's mask token. They cover a mask
// after a space, at the start of the text, two masks, and a mask glued to
// the words around it, with an accent.
const sentences = [
  'The man went to the [MASK].',
  '[MASK] sat on the mat.',
  'She opened the [MASK] and [MASK] left.',
  'a[MASK]b for the café',
];

function bert() {
  const json = JSON.parse(fs.readFileSync(path.join(process.env.FIXTURES, 'uncased', 'tokenizer.json'), 'utf8'));
  const vocab = fs.readFileSync(path.join(tdata, 'fixtures', 'uncased', 'vocab.txt'), 'utf8').split('\n');
  vocab.pop(); // after the final newline
  json.model.vocab = Object.fromEntries(vocab.map((t, i) => [t, i]));
  return {
    tok: Tokenizer.fromString(JSON.stringify(json)), mask: '[MASK]',
    files: { 'vocab.txt': path.join(tdata, 'fixtures', 'uncased', 'vocab.txt'), 'tokenizer_config.json': path.join(tdata, 'fixtures', 'uncased', 'tokenizer_config.json') },
  };
}

const families = {
  distilbert: bert,
  electra: bert,
  roberta: () => ({
    tok: Tokenizer.fromFile(path.join(tdata, 'bpe', 'roberta.tokenizer.json')), mask: '<mask>',
    // The slow files: LoadBPEFiles with RobertaOptions is the same tokenizer
    // (core/tokenizer's TestBPEHuggingFaceCases checks it on every case).
    files: { 'vocab.json': path.join(tdata, 'bpe', 'vocab.json'), 'merges.txt': path.join(tdata, 'bpe', 'merges.txt') },
  }),
  albert: () => ({
    tok: Tokenizer.fromFile(process.env.ALBERT_JSON), mask: '[MASK]',
    files: { 'spiece.model': path.join(udata, 'spiece.model') },
    write: { 'tokenizer_config.json': JSON.stringify({ tokenizer_class: 'AlbertTokenizer', do_lower_case: true, keep_accents: false }, null, 2) + '\n' },
  }),
  deberta: () => {
    const cm = fs.readFileSync(path.join(udata, 'nmt_nfkc.bin')).toString('base64');
    const json = fs.readFileSync(path.join(udata, 'deberta.json'), 'utf8').replace('"@nmt_nfkc.bin"', JSON.stringify(cm));
    return { tok: Tokenizer.fromString(json), mask: '[MASK]', files: {}, write: { 'tokenizer.json': json } };
  },
};

(async () => {
  const res = {};
  for (const [name, make] of Object.entries(families)) {
    const f = make();
    const dir = path.join(out, name);
    fs.mkdirSync(dir, { recursive: true });
    for (const [dst, src] of Object.entries(f.files)) fs.copyFileSync(src, path.join(dir, dst));
    for (const [dst, data] of Object.entries(f.write || {})) fs.writeFileSync(path.join(dir, dst), data);
    const items = [];
    for (const s of sentences) {
      const text = s.split('[MASK]').join(f.mask);
      const e = await f.tok.encode(text);
      items.push({ text, ids: e.getIds(), types: e.getTypeIds(), tokens: e.getTokens() });
    }
    res[name] = {
      vocab_size: f.tok.getVocabSize(true), mask_id: f.tok.tokenToId(f.mask),
      pad_id: f.tok.tokenToId({ roberta: '<pad>', albert: '<pad>' }[name] || '[PAD]'), items,
    };
  }
  fs.writeFileSync(path.join(out, 'ids.json'), JSON.stringify(res, null, 1) + '\n');
})();
