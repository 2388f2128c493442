// Makes the byte-level BPE reference fixture of core/tokenizer: a small
// vocabulary trained here, tokenizer.json files written by the HuggingFace
// tokenizers library, and that library's encodings of hard cases and random
// inputs. See README.md in this folder.
//
//   node gen.js OUTDIR [SEED] [RANDOM]
//
// Environment: HF_TOKENIZERS, the path of the npm package "tokenizers"
// (default: ./node_modules/tokenizers).
'use strict';
const fs = require('fs');
const path = require('path');
const pkg = process.env.HF_TOKENIZERS || path.join(__dirname, 'node_modules', 'tokenizers');
const hf = require(pkg);
const version = require(path.join(pkg, 'package.json')).version;

const out = process.argv[2];
let seed = Number(process.argv[3] || 2026);
const nRandom = Number(process.argv[4] || 400);
if (!out) throw new Error('usage: node gen.js OUTDIR [SEED] [RANDOM]');
fs.mkdirSync(out, { recursive: true });

function rnd() { // mulberry32
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function pick(a) { return a[Math.floor(rnd() * a.length)]; }

// Hard cases, written by hand.
const hard = [
  '', ' ', '  ', '\n', '\t', 'a', ' a', 'a ', '  a  ', 'Hello world', 'Hello  world', 'Hello   world  ',
  'line one\nline two\n\nline four\n', ' \n \n', '\r\n\r\n', 'tab\tseparated\t\tvalues', '\t\t indented',
  "don't", "I'm here, you're there, we've been, they'll go, she'd say, it's", "DON'T I'LL 'S 'T", "''s 's's",
  "rock 'n' roll", 'can\u2019t', 'The year 2024 had 365 days; π ≈ 3.14159.', '1234567890 12 3.5 1,000,000 ½ ² ٣',
  'café naïve résumé façade Ångström', 'cafe\u0301 e\u0301\u0301', 'Zürich Straße İstanbul ΣΊΣΥΦΟΣ',
  '我爱北京天安门', '日本語のテキストです。', '한국어 문장', 'ｶﾀｶﾅ ＡＢＣ', '\u{20000}\u{2A6D6} rare CJK',
  '😀 😀😀 👍🏽', '👨‍👩‍👧‍👦 family', '🏳️‍🌈 flag', 'e\u200dz zero\u200bwidth', 'emoji😀inside',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  'supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis',
  'the'.repeat(120), 'ab'.repeat(200), 'é'.repeat(150),
  '<s>', '</s>', '<mask>', '<pad>', '<unk>', 'a <mask>', 'a<mask>', 'a  <mask>', 'a\n<mask>', '<mask> a', '<mask>a',
  'The capital of France is <mask>.', 'The capital of France is<mask>.', '<mask><mask> <mask>',
  '<s>Hello</s>', 'x </s> y', 'a <s> b', '<mask >', '< mask>', '<MASK>', '<<mask>>', '<|endoftext|>', 'end<|endoftext|>start',
  'hello <|endoftext|> world', '\u00a0nbsp\u00a0 \u2003em\u3000ideographic', '\u2028sep\u2029', '\u0085nel',
  'a\u0000b\u0001c\u007f', '\ufeffbom', '\ufffd replacement', '!!! ??? ... ---', '@user #tag $100 %50 ^_^ &&',
  'https://example.com/path?q=1&x=y#frag', 'email@example.org', 'C:\\Windows\\system32', 'x=(a+b)*c/d',
  '“quotes” ‘single’ «guillemets» — – …', 'مرحبا بالعالم', 'שלום עולם', 'Привет, мир!', 'Γειά σου Κόσμε',
  'नमस्ते दुनिया', 'สวัสดีครับ', ' leading space', 'trailing space ', '   many   spaces   between   ',
  '\n\n\nnewlines\n\n\n', 'mixed \t\n whitespace \n\t end', 'ends with newline\n', ' ', '.', '..', '\'', ' \'',
];
// Pairs, written by hand.
const hardPairs = [
  ['Hello world', 'How are you?'], ['', ''], ['a', ''], ['', 'b'], ['The capital is <mask>.', 'It is Paris.'],
  ['café', '日本語'], ['  spaced  ', '\ttabbed\t'], ['😀👍', '👨‍👩‍👧'], ['<s> in text', '</s> too'],
];

// Random inputs from pieces that exercise every path.
const pool = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.split(''),
  ...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'.split(''),
  ' ', ' ', ' ', ' ', '  ', '\t', '\n', '\r', '\v', '\f', '\u0085', '\u00a0', '\u2028', '\u3000', '\u200b', '\u200d', '\ufeff',
  '\u0000', '\ufffd', '\ue000', '\u0378', 'é', 'è', 'ñ', 'Å', 'ß', 'İ', 'Σ', 'ǅ', '\u0301', '\u0300', '\u0345',
  '我', '爱', '中', '国', '日', '本', '\u{20000}', '한', 'は', 'カ', 'ｶ', 'ﬁ', '①', '²', '½', '٣', 'م', 'ا', 'ส', 'ั',
  '😀', '👍', '👨', '👩', '🏽', '🏳️‍🌈', '“', '”', '’', '—', '…', '«', '€', '©',
  "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "n't",
  '<s>', '</s>', '<mask>', '<pad>', '<unk>', '<|endoftext|>', '<mask', 'mask>', '<<mask>>', ' <mask>', '  <mask>',
  ' the ', ' running ', ' hello ', 'world', ' playing', 'ing', 'happiness', ' of', ' and', 'tion',
];
function randChar() {
  if (rnd() < 0.8) return pick(pool);
  let cp;
  do { cp = rnd() < 0.5 ? Math.floor(rnd() * 0x3000) : Math.floor(rnd() * 0x110000); } while (cp >= 0xd800 && cp < 0xe000);
  return String.fromCodePoint(cp);
}
function randText() {
  const kind = rnd();
  const n = kind < 0.05 ? 0 : kind < 0.6 ? Math.floor(rnd() * 20) : Math.floor(rnd() * 80);
  let s = '';
  for (let i = 0; i < n; i++) s += randChar();
  if (rnd() < 0.03) s += 'x'.repeat(300 + Math.floor(rnd() * 10));
  return s;
}

// Training text for the small vocabulary: the hard cases and English
// sentences written for this fixture.
const english = `
The quick brown fox jumps over the lazy dog. It is the one that runs and plays in the morning.
They were playing in the garden when it started raining, and the children ran inside to the kitchen.
A tokenizer splits text into pieces; the pieces are looked up in a vocabulary and become numbers.
Byte-level BPE starts from the 256 bytes and merges the most frequent pairs, one merge at a time.
Numbers such as 1, 2, 10, 100, 2024 and 3.14 appear in the text, as do names like Paris and London.
She said that she would go, but he'd already gone; we'll see what they've done and what I'm doing.
The model reads the whole sentence at once and predicts the word that was hidden behind the mask.
Accented words such as café, naïve and résumé are common in English text borrowed from French.
日本語 中文 한국어 😀 👍 are characters that take several bytes in UTF-8.
`;
const training = (english + hard.join('\n')).repeat(3);

// Byte-level BPE training: pre-tokenize with the library's ByteLevel
// pre-tokenizer, then merge the most frequent pair (ties: the smallest pair
// as strings) until the vocabulary is full.
function train(text, vocabSize, specials) {
  const pre = hf.byteLevelPreTokenizer(false, true);
  const counts = new Map();
  for (const line of text.split('\n')) {
    for (const [w] of pre.preTokenizeString(line)) counts.set(w, (counts.get(w) || 0) + 1);
  }
  const words = [...counts].map(([w, n]) => [[...w], n]);
  const vocab = {};
  for (const s of specials) vocab[s] = Object.keys(vocab).length;
  for (const c of hf.byteLevelAlphabet().sort()) vocab[c] = Object.keys(vocab).length;
  const merges = [];
  while (Object.keys(vocab).length < vocabSize) {
    const pairs = new Map();
    for (const [syms, n] of words) {
      for (let i = 0; i + 1 < syms.length; i++) {
        const k = syms[i] + ' ' + syms[i + 1];
        pairs.set(k, (pairs.get(k) || 0) + n);
      }
    }
    let best = null, bestN = 0;
    for (const [k, n] of pairs) {
      if (n > bestN || (n === bestN && k < best)) { best = k; bestN = n; }
    }
    if (!best || bestN < 2) break;
    const [a, b] = best.split(' ');
    merges.push([a, b]);
    if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
    for (const w of words) {
      const syms = w[0], next = [];
      for (let i = 0; i < syms.length; i++) {
        if (i + 1 < syms.length && syms[i] === a && syms[i + 1] === b) { next.push(a + b); i++; } else next.push(syms[i]);
      }
      w[0] = next;
    }
  }
  return { vocab, merges };
}

// The vocabulary of the merges of a real model (MERGES=path of its
// merges.txt): the specials, the 256 byte characters, then each merge's
// result. GPT-2's and RoBERTa's vocabularies hold exactly these entries
// (in another order), so the tokens are theirs; the ids are not.
function fromMerges(file, specials) {
  const vocab = {};
  for (const s of specials) vocab[s] = Object.keys(vocab).length;
  for (const c of hf.byteLevelAlphabet().sort()) vocab[c] = Object.keys(vocab).length;
  const merges = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('#version') || line === '') continue;
    const [a, b] = line.split(' ');
    merges.push([a, b]);
    if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
  }
  return { vocab, merges };
}

const specials = ['<s>', '<pad>', '</s>', '<unk>'];
const { vocab, merges } = process.env.MERGES ? fromMerges(process.env.MERGES, specials) : train(training, 1000, specials);
vocab['<mask>'] = Object.keys(vocab).length;
fs.writeFileSync(path.join(out, 'vocab.json'), JSON.stringify(vocab) + '\n');
fs.writeFileSync(path.join(out, 'merges.txt'), '#version: 0.2\n' + merges.map((m) => m.join(' ')).join('\n') + '\n');

// The tokenizer.json of each variant, as transformers' RobertaConverter and
// GPT2Converter build them.
function added(content, id, lstrip) {
  return { id, content, single_word: false, lstrip, rstrip: false, normalized: false, special: true };
}
function robertaJSON(addPrefixSpace) {
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added('<s>', 0, false), added('<pad>', 1, false), added('</s>', 2, false), added('<unk>', 3, false), added('<mask>', vocab['<mask>'], true)],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: addPrefixSpace, trim_offsets: true, use_regex: true },
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', 2], cls: ['<s>', 0], trim_offsets: true, add_prefix_space: addPrefixSpace },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges },
  };
}
function gpt2JSON() {
  const v = { ...vocab };
  delete v['<mask>'];
  v['<|endoftext|>'] = Object.keys(v).length;
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added('<|endoftext|>', v['<|endoftext|>'], false)],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: v, merges },
  };
}
// Settings RoBERTa and GPT-2 do not use, to check the paths they do not
// take: bytes missing from the vocabulary (with an unknown token, fused, or
// without one, dropped), merges ignored for whole entries, no regex,
// added tokens with rstrip or matched after normalisation, other
// post-processors and no decoder.
function oddJSON(unk) {
  const v = { ...vocab };
  const missing = ['ð', 'Ã', '¤', 'Ŀ'];
  for (const c of missing) delete v[c];
  const m = merges.filter(([a, b]) => a in v && b in v);
  const j = robertaJSON(true);
  j.model = { ...j.model, vocab: v, merges: m, unk_token: unk ? '<unk>' : null, fuse_unk: unk, ignore_merges: !unk };
  j.added_tokens[0] = { ...j.added_tokens[0], normalized: true, rstrip: true };
  j.added_tokens.push({ id: v['the'], content: 'the', single_word: false, lstrip: false, rstrip: true, normalized: false, special: false });
  if (unk) {
    j.post_processor = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  } else {
    j.pre_tokenizer = { ...j.pre_tokenizer, use_regex: false, add_prefix_space: false };
    j.post_processor = null;
    j.decoder = null;
  }
  return j;
}
const variants = { roberta: robertaJSON(false), roberta_prefix: robertaJSON(true), gpt2: gpt2JSON(), odd_unk: oddJSON(true), odd_drop: oddJSON(false) };
const tokenizers = {};
for (const [name, json] of Object.entries(variants)) {
  const tk = hf.Tokenizer.fromString(JSON.stringify(json));
  // The file the library itself writes is the one the Go tests load.
  tk.save(path.join(out, name + '.tokenizer.json'), true);
  tokenizers[name] = hf.Tokenizer.fromFile(path.join(out, name + '.tokenizer.json'));
}

(async () => {
  const inputs = [];
  for (const v of Object.keys(tokenizers)) {
    for (const a of hard) inputs.push({ v, a, pair: null, maxLen: 0 });
    for (const [a, b] of hardPairs) inputs.push({ v, a, pair: b, maxLen: 0 });
  }
  for (const a of ['Hello world, how are you today?', 'a <mask> b <mask> c', '😀😀😀😀 éé']) {
    for (const maxLen of [2, 3, 5, 8]) inputs.push({ v: 'roberta', a, pair: null, maxLen });
  }
  for (const [a, b] of [['Hello world, how are you today?', 'Fine, thanks.'], ['one two three four five', 'six seven eight']]) {
    for (const maxLen of [4, 5, 7, 9, 12]) inputs.push({ v: 'roberta', a, pair: b, maxLen });
  }
  for (let i = 0; i < nRandom; i++) {
    const v = pick(Object.keys(tokenizers));
    const pair = rnd() < 0.3 ? randText() : null;
    const a = randText();
    let maxLen = 0;
    if (rnd() < 0.25) maxLen = (pair === null ? 2 : 4) + Math.floor(rnd() * 30);
    inputs.push({ v, a, pair, maxLen });
  }
  const lines = [];
  for (const c of inputs) {
    const tk = tokenizers[c.v];
    if (c.maxLen > 0) tk.setTruncation(c.maxLen, { strategy: 'LongestFirst' }); else tk.disableTruncation();
    const enc = await tk.encode(c.a, c.pair);
    const ids = enc.getIds();
    lines.push(JSON.stringify({
      v: c.v, a: c.a, pair: c.pair, maxLen: c.maxLen,
      ids, tokens: enc.getTokens(), types: enc.getTypeIds(), offsets: enc.getOffsets(),
      words: enc.getWordIds(), special: enc.getSpecialTokensMask(), overflow: enc.getOverflowing().length,
      decoded: await tk.decode(ids, false), decodedSkip: await tk.decode(ids, true),
    }));
  }
  fs.writeFileSync(path.join(out, 'cases.jsonl'), lines.join('\n') + '\n');
  console.error(`tokenizers ${version}: ${Object.keys(vocab).length} vocab entries, ${merges.length} merges, ${lines.length} cases`);
})();
