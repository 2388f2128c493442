// Trains a small Unigram model with the HuggingFace tokenizers library, writes
// tokenizer.json variants (ALBERT-like, DeBERTa-v3-like, byte fallback,
// prepend "first"/"never") and encodes a corpus of hard cases and random
// inputs with each, for core/tokenizer/unigram's parity test. See README.md.
//
//   node gen.js TRAIN.txt CHARSMAP.bin OUTDIR SEED COUNT
//
// The committed tokenizer.json files hold "@nmt_nfkc.bin" in place of the
// base64 of the precompiled charsmap (it is committed once, as a binary).
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer, Unigram, metaspacePreTokenizer, sequenceNormalizer, lowercase } = require(process.env.HF_TOKENIZERS || 'tokenizers');

const [trainFile, charsmapFile, outDir, seedArg, countArg] = process.argv.slice(2);
const charsmapB64 = fs.readFileSync(charsmapFile).toString('base64');
const PLACEHOLDER = '@nmt_nfkc.bin';

// The trainer is not deterministic (threads): when OUTDIR already holds
// albert.json, its pieces are reused, so that new cases fit the committed
// models.
let trained;
if (fs.existsSync(path.join(outDir, 'albert.json'))) {
  trained = JSON.parse(fs.readFileSync(path.join(outDir, 'albert.json'), 'utf8')).model.vocab.slice(5);
} else {
  trained = train();
}

// Trains on lowercased text; keeps the 2,000 best pieces and every
// single-character one.
function train() {
  const tmpTrain = path.join(require('os').tmpdir(), 'spmref-train.txt');
  fs.writeFileSync(tmpTrain, fs.readFileSync(trainFile, 'utf8').slice(0, 300000).toLowerCase());
  const trainer = new Tokenizer(Unigram.empty());
  trainer.setPreTokenizer(metaspacePreTokenizer());
  trainer.train([tmpTrain]);
  const tmpJSON = path.join(require('os').tmpdir(), 'spmref-trained.json');
  trainer.save(tmpJSON);
  return JSON.parse(fs.readFileSync(tmpJSON, 'utf8')).model.vocab
    .filter(([p], i) => i < 2000 || [...p].length === 1);
}

function added(id, content, extra) {
  return Object.assign({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }, extra || {});
}
function template(cls, sep, clsId, sepId) {
  const sp = (id, t) => ({ SpecialToken: { id, type_id: t } });
  const sq = (id, t) => ({ Sequence: { id, type_id: t } });
  return {
    type: 'TemplateProcessing',
    single: [sp(cls, 0), sq('A', 0), sp(sep, 0)],
    pair: [sp(cls, 0), sq('A', 0), sp(sep, 0), sq('B', 1), sp(sep, 1)],
    special_tokens: { [cls]: { id: cls, ids: [clsId], tokens: [cls] }, [sep]: { id: sep, ids: [sepId], tokens: [sep] } },
  };
}
const precompiled = { type: 'Precompiled', precompiled_charsmap: PLACEHOLDER };
const squeeze = { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' };
function meta(scheme, split) { return { type: 'Metaspace', replacement: '▁', prepend_scheme: scheme, split }; }
function file(added_tokens, normalizer, pre, post, vocab, unk, byteFallback) {
  const decoder = byteFallback ? { type: 'Sequence', decoders: [
    { type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' },
    { type: 'Strip', content: ' ', start: 1, stop: 0 }] } : pre;
  return {
    version: '1.0', truncation: null, padding: null, added_tokens, normalizer, pre_tokenizer: pre,
    post_processor: post, decoder,
    model: { type: 'Unigram', unk_id: unk, vocab, byte_fallback: byteFallback },
  };
}

function makeVariants(trained) {
const variants = {};
// ALBERT (transformers' AlbertConverter, do_lower_case, keep_accents=False
// without NFKD: the charsmap does the accents' composition).
variants.albert = file(
  [added(0, '<pad>'), added(1, '<unk>'), added(2, '[CLS]'), added(3, '[SEP]'), added(4, '[MASK]', { lstrip: true })],
  { type: 'Sequence', normalizers: [
    { type: 'Replace', pattern: { String: '``' }, content: '"' },
    { type: 'Replace', pattern: { String: "''" }, content: '"' },
    { type: 'Lowercase' }, precompiled, squeeze] },
  meta('always', true), template('[CLS]', '[SEP]', 2, 3),
  [['<pad>', 0], ['<unk>', 0], ['[CLS]', 0], ['[SEP]', 0], ['[MASK]', 0], ...trained], 1, false);
// ALBERT as released (keep_accents=False): NFKD and StripAccents first.
variants.albert_accents = JSON.parse(JSON.stringify(variants.albert));
variants.albert_accents.normalizer.normalizers.splice(2, 0, { type: 'NFKD' }, { type: 'StripAccents' });
// DeBERTa-v3 (DebertaV2Converter, cased): [MASK] is an added token after the
// pieces (128000 in the real model), not a piece.
{
  const vocab = [['[PAD]', 0], ['[CLS]', 0], ['[SEP]', 0], ['[UNK]', 0], ...trained];
  const mask = vocab.length;
  variants.deberta = file(
    [added(0, '[PAD]'), added(1, '[CLS]'), added(2, '[SEP]'), added(3, '[UNK]'), added(mask, '[MASK]')],
    { type: 'Sequence', normalizers: [{ type: 'Strip', strip_left: true, strip_right: true }, precompiled, squeeze] },
    meta('always', true), template('[CLS]', '[SEP]', 1, 2), vocab, 3, false);
}
// Byte fallback, prepend "first", no split (Llama-like), NFKC.
{
  const bytes = [];
  for (let b = 0; b < 256; b++) bytes.push(['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>', 0]);
  const vocab = [['<unk>', 0], ['<s>', 0], ['</s>', 0], ...bytes, ...trained.filter(([p]) => !/[0-9]/.test(p)), ['[MASK]', 0]];
  variants.bytes = file(
    [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>'), added(vocab.length - 1, '[MASK]', { rstrip: true, single_word: true })],
    { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Strip', strip_left: false, strip_right: true }] },
    meta('first', false), template('<s>', '</s>', 1, 2), vocab, 0, true);
}
// Prepend "never", no normaliser, unk only.
variants.never = file(
  [added(0, '<unk>'), added(1, '[CLS]'), added(2, '[SEP]'), added(3, '[MASK]', { lstrip: true, rstrip: true })],
  null, meta('never', true), template('[CLS]', '[SEP]', 1, 2),
  [['<unk>', 0], ['[CLS]', 0], ['[SEP]', 0], ['[MASK]', 0], ...trained.slice(0, 800)], 0, false);

  return variants;
}

const variants = makeVariants(trained);
fs.mkdirSync(outDir, { recursive: true });
const toks = {};
for (const [name, json] of Object.entries(variants)) {
  const s = JSON.stringify(json);
  fs.writeFileSync(path.join(outDir, name + '.json'), s + '\n');
  toks[name] = Tokenizer.fromString(s.replace(JSON.stringify(PLACEHOLDER), JSON.stringify(charsmapB64)));
}

// 2. Cases.
const hard = [
  'Hello world', 'hello  world', ' leading space', 'trailing space ', '   ', '', 'a\tb\tc', 'line one\nline two\n\n\nthree',
  'Café crème brûlée, naïve façade — Ångström', 'e\u0301 vs é; A\u030A vs Å', 'ﬁnance ﬂow ①②③ ² ＡＢＣ ｶﾀｶﾅ',
  '我爱北京天安门', '日本語のテキストです。', '한국어 문장', 'Mixed 中文 and English', 'emoji 😀👍🏽 👨‍👩‍👧 🏳️‍🌈 ok',
  'supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis', 'a'.repeat(300),
  'Numbers 1234567890 3.14159 1,000,000 -42 1e10', '``quoted\'\' text "and" \'single\'',
  'The [MASK] sat on the mat.', 'The[MASK] sat.', 'The  [MASK]  sat.', '[MASK]', ' [MASK]', '[MASK] starts', 'ends [MASK]',
  '[CLS] inside [SEP] text [PAD] and [UNK] <unk> <pad> <s> </s>', '[mask] lowercase [MASK', 'MASK] [[MASK]]',
  'tabs\t\tand  spaces   mixed\t \n', '\u00a0non-breaking\u00a0space\u3000ideographic', 'zero\u200bwidth\u200djoiner\ufeffbom',
  'control\u0000chars\u0007here\u001f', 'İstanbul ΣΊΣΥΦΟΣ straße ǅ', 'Ελληνικά Русский العربية עברית हिन्दी ไทย',
  'U.S.A. e.g. i.e. Mr. Smith\'s', 'https://example.com/path?q=1&r=2#frag', 'email@example.com #hashtag @user',
  '\u{1D400}\u{1D401} 𝔾𝕠 mathematical', '\u2126 \u212B \u1E9B\u0323', 'caf\u00e9 cafe\u0301',
  'repeated!!!??? ...... ---', 'x\n\ny', '\r\nwindows\r\n', '  multiple   spaces   inside  ',
];
let seed = Number(seedArg || 1);
function rnd() { // mulberry32
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function pick(a) { return a[Math.floor(rnd() * a.length)]; }
const pool = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.split(''),
  ...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'.split(''),
  ' ', ' ', ' ', ' ', '  ', '\t', '\n', '\r', '\u00a0', '\u3000', '\u200b', '\u00ad', '\ufeff', '\u2028',
  'é', 'è', 'ï', 'ñ', 'Å', 'ø', 'Œ', 'ß', 'İ', 'Σ', 'ǅ', '\u212b', '\u0301', '\u0327', 'e\u0301', 'ﬁ', '①', '²', 'Ａ', 'ｶ', '…', '™', '½',
  '我', '爱', '中', '国', '日', '本', 'は', 'カ', '한', '국', 'م', 'ر', 'ส', 'ั', 'न', '\u093f',
  '😀', '👍', '👨', '\u200d', '👩', '🏽', '🏳️‍🌈', '\u{1D400}',
  '[CLS]', '[SEP]', '[MASK]', '[PAD]', '[UNK]', '<unk>', '<s>', '</s>', '<pad>', '[mask]', ' [MASK]', '[MASK] ',
  ' the ', ' of ', ' and ', ' she ', ' was ', ' elizabeth ', 'ing', 'tion', ' The', ' Mr.', 'ed ', 'ly',
];
function randText() {
  const n = Math.floor(rnd() * 30);
  let s = '';
  for (let i = 0; i < n; i++) {
    if (rnd() < 0.85) s += pick(pool);
    else { let cp; do { cp = Math.floor(rnd() * (rnd() < 0.7 ? 0x3000 : 0x30000)); } while (cp >= 0xd800 && cp < 0xe000); s += String.fromCodePoint(cp); }
  }
  return s;
}
const names = Object.keys(toks);
async function encode(name, a, b, maxLen) {
  const t = toks[name];
  if (maxLen > 0) t.setTruncation(maxLen, { strategy: 'LongestFirst' }); else t.disableTruncation();
  const e = await t.encode(a, b === undefined ? null : b);
  const ids = e.getIds();
  return {
    v: name, a, ...(b === undefined ? {} : { b }), maxLen,
    ids, tokens: e.getTokens(), types: e.getTypeIds(), offsets: e.getOffsets(), words: e.getWordIds().map(w => (w == null ? -1 : w)),
    special: e.getSpecialTokensMask(), overflow: e.getOverflowing().length,
    decoded: await t.decode(ids, true),
  };
}
(async () => {
  const out = [];
  for (const name of names) {
    for (const a of hard) out.push(await encode(name, a, undefined, 0));
    for (let i = 0; i + 1 < hard.length; i += 3) out.push(await encode(name, hard[i], hard[i + 1], 0));
    for (let i = 0; i < hard.length; i += 4) out.push(await encode(name, hard[i], undefined, 8));
    for (let i = 0; i + 2 < hard.length; i += 5) out.push(await encode(name, hard[i], hard[i + 2], 12));
  }
  const count = Number(countArg || 0);
  for (let i = 0; i < count; i++) {
    const name = pick(names);
    const a = randText();
    const r = rnd();
    if (r < 0.2) out.push(await encode(name, a, randText(), 0));
    else if (r < 0.35) out.push(await encode(name, a, randText(), 5 + Math.floor(rnd() * 20)));
    else if (r < 0.45) out.push(await encode(name, a, undefined, 3 + Math.floor(rnd() * 10)));
    else out.push(await encode(name, a, undefined, 0));
  }
  fs.writeFileSync(path.join(outDir, 'cases.jsonl'), out.map(o => JSON.stringify(o)).join('\n') + '\n');
  console.log(out.length, 'cases');
})();
