// Generates random inputs and encodes them with the HuggingFace tokenizers
// library (its Node binding) for TestHuggingFaceCases. See README.md.
//
//   node gen.js SEED COUNT OUT.jsonl
//
// Environment: HF_TOKENIZERS (path of the npm package "tokenizers"),
// FIXTURES (folder holding the five variants, each with its tokenizer.json).
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require(process.env.HF_TOKENIZERS || 'tokenizers');

const fixtures = process.env.FIXTURES;
const variants = ['uncased', 'cased', 'uncased_keep_accents', 'cased_strip_accents', 'uncased_no_chinese'];
const tokenizers = {};
for (const v of variants) tokenizers[v] = Tokenizer.fromFile(path.join(fixtures, v, 'tokenizer.json'));
// bert-base-uncased: the uncased pipeline with the real vocabulary.
{
  const json = JSON.parse(fs.readFileSync(path.join(fixtures, 'uncased', 'tokenizer.json'), 'utf8'));
  const vocab = fs.readFileSync(path.join(__dirname, '..', 'bert-base-uncased', 'vocab.txt'), 'utf8').split('\n');
  vocab.pop(); // after the final newline
  json.model.vocab = Object.fromEntries(vocab.map((t, i) => [t, i]));
  tokenizers['bert-base-uncased'] = Tokenizer.fromString(JSON.stringify(json));
}
const names = Object.keys(tokenizers);

let seed = Number(process.argv[2] || 1);
function rnd() { // mulberry32
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function pick(a) { return a[Math.floor(rnd() * a.length)]; }

// Pieces that exercise each step: cleaning, whitespace, punctuation, CJK,
// accents and canonical ordering, lowercasing, characters whose properties
// differ between Unicode versions, special tokens, words of the vocab.
const pool = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.split(''),
  ...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'.split(''),
  ' ', ' ', ' ', '\t', '\n', '\r', '\v', '\f', '\u0085', '\u00a0', '\u2028', '\u2029', '\u3000', '\u200b', '\u00ad', '\ufeff',
  '\u0000', '\ufffd', '\ue000', '\u0378', '\u{E0001}',
  'é', 'è', 'ï', 'ñ', 'Å', 'ø', 'Œ', 'ÿ', 'ß', 'ẞ', 'İ', 'ı', 'Σ', 'ς', 'ǅ', 'Ǆ', '\u212b', '\u2126', '\u1fef', '\u037e', '\u0387',
  '\u0301', '\u0300', '\u0316', '\u0327', '\u034f', '\u3099', '\u{1D165}', '\u{1D16D}', '\u0f71', '\u0e31',
  '\u0301\u0316', '\u0345', '\u{1D165}\u{1D16D}\u{1D165}', 'e\u0301\u0327\u0316', '\u1e09', '\u01d5', '\u0958', '\u0f73', '\u0344',
  '\u0c3c\u0300', '\u0300\u0c3c', '\u{11938}', '\u{11935}\u{11930}', 'Å\u{1D165}\u06e7', '\u1734', '\u{111C9}', '\u166d', '\u2e45',
  '\u0890', '\u1c89', '\ua7cb', '\u{10D50}', '\u0130\u0307', '\u1ac0',
  '我', '爱', '中', '国', '日', '本', '\u{20000}', '\u{2B820}', '\u{2B91F}', '\u{2B920}', '\uf900', '\u{2F800}', '\u3400',
  '한', '국', '어', 'は', 'で', 'す', 'カ', 'ｶ', 'ﬁ', 'ﬂ', '①', '²',
  'م', 'َ', 'ر', 'ْ', 'ا', 'ส', 'ั', '\u0e14',
  '😀', '👍', '👨', '\u200d', '👩', '🥰', '🏳️‍🌈', '\u{1F3FB}',
  '“', '”', '’', '—', '–', '…', '«', '»', '¿', '¡', '§', '¶', '·', '•', '€', '£', '©', '®', '™', '°', '±', '×', '÷',
  '[CLS]', '[SEP]', '[MASK]', '[PAD]', '[UNK]', '[mask]', '[MASK', 'MASK]', '[[MASK]]',
  ' the ', ' running ', ' unaffable ', ' hello ', 'world', ' playing', 'ing', 'happiness',
];
function randChar() {
  if (rnd() < 0.75) return pick(pool);
  let cp;
  do { cp = rnd() < 0.5 ? Math.floor(rnd() * 0x3000) : Math.floor(rnd() * 0x110000); } while (cp >= 0xd800 && cp < 0xe000);
  return String.fromCodePoint(cp);
}
function randText() {
  const kind = rnd();
  const n = kind < 0.05 ? 0 : kind < 0.5 ? Math.floor(rnd() * 40) : Math.floor(rnd() * 600);
  let s = '';
  for (let i = 0; i < n; i++) s += randChar();
  if (rnd() < 0.05) s += 'a'.repeat(95 + Math.floor(rnd() * 10));
  if (rnd() < 0.05) s += 'é'.repeat(95 + Math.floor(rnd() * 10));
  return s;
}

(async () => {
  const count = Number(process.argv[3] || 1000);
  const out = [];
  for (let i = 0; i < count; i++) {
    const v = pick(names);
    const tk = tokenizers[v];
    const a = randText();
    const pair = rnd() < 0.4 ? randText() : null;
    let maxLen = 0;
    if (rnd() < 0.5) maxLen = (pair === null ? 2 : 3) + Math.floor(rnd() * 80);
    if (maxLen > 0) tk.setTruncation(maxLen, { strategy: 'LongestFirst' });
    else tk.disableTruncation();
    const e = await tk.encode(a, pair);
    out.push(JSON.stringify({
      v, a, pair, maxLen, ids: e.getIds(), tokens: e.getTokens(), types: e.getTypeIds(), offsets: e.getOffsets(),
      words: e.getWordIds(), special: e.getSpecialTokensMask(), overflow: e.getOverflowing().length,
    }));
  }
  fs.writeFileSync(process.argv[4] || 'out.jsonl', out.join('\n') + '\n');
})();
