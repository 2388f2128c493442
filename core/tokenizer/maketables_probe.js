// Asks the HuggingFace tokenizers library (its Node binding, npm package
// "tokenizers") how BertNormalizer and BertPreTokenizer treat every code
// point, and prints the answers as JSON for maketables.go. See
// maketables.go for how to run it.
'use strict';
const hf = require(process.env.HF_TOKENIZERS || 'tokenizers');
const version = require((process.env.HF_TOKENIZERS || 'tokenizers') + '/package.json').version;

const clean = hf.bertNormalizer({ cleanText: true, handleChineseChars: false, stripAccents: false, lowercase: false });
const chinese = hf.bertNormalizer({ cleanText: false, handleChineseChars: true, stripAccents: false, lowercase: false });
const strip = hf.bertNormalizer({ cleanText: false, handleChineseChars: false, stripAccents: true, lowercase: false });
const lower = hf.bertNormalizer({ cleanText: false, handleChineseChars: false, stripAccents: false, lowercase: true });
const pre = hf.bertPreTokenizer();
const nfd = hf.nfdNormalizer();

const out = { version, removed: [], whitespace: [], punctuation: [], chinese: [], strip: [], lower: [], combining: [] };
for (let cp = 0; cp < 0x110000; cp++) {
  if (cp >= 0xd800 && cp < 0xe000) continue; // not characters
  const c = String.fromCodePoint(cp);
  const cleaned = clean.normalizeString('a' + c + 'b');
  if (cleaned === 'ab') out.removed.push(cp);
  else if (cleaned === 'a b') out.whitespace.push(cp);
  const pieces = pre.preTokenizeString('a' + c + 'b');
  if (pieces.length === 3 && pieces[1][0] === c) out.punctuation.push(cp);
  if (chinese.normalizeString(c) !== c) out.chinese.push(cp);
  const s = strip.normalizeString(c);
  if (s !== c) out.strip.push([cp, s]);
  const l = lower.normalizeString(c);
  if (l !== c) out.lower.push([cp, l]);
  // A character NFD leaves alone has a combining class between 1 and 239
  // when canonical ordering moves it before U+0345 (class 240).
  if (nfd.normalizeString(c) === c && nfd.normalizeString('a\u0345' + c) !== 'a\u0345' + c) out.combining.push(cp);
}
process.stdout.write(JSON.stringify(out));
