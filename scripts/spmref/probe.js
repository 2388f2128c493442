// Asks the HuggingFace tokenizers library how its StripAccents and Unicode
// normalisers treat every code point (its Unicode tables are older than Go's)
// and prints the answers as JSON for core/tokenizer/unigram/maketables.go.
//
//   node probe.js > /tmp/hfunicode.json
'use strict';
const hf = require(process.env.HF_TOKENIZERS || 'tokenizers');
const version = require((process.env.HF_TOKENIZERS || 'tokenizers') + '/package.json').version;
const strip = hf.stripAccentsNormalizer();
const nfd = hf.nfdNormalizer();
const nfkd = hf.nfkdNormalizer();
const out = { version, marks: [], nfd: [], nfkd: [], combining: [] };
for (let cp = 0; cp < 0x110000; cp++) {
  if (cp >= 0xd800 && cp < 0xe000) continue;
  const c = String.fromCodePoint(cp);
  if (strip.normalizeString('a' + c) === 'a') out.marks.push(cp);
  const d = nfd.normalizeString(c);
  if (d !== c) out.nfd.push([cp, d]);
  const k = nfkd.normalizeString(c);
  if (k !== c) out.nfkd.push([cp, k]);
  if (cp === 0x345 || (d === c && nfd.normalizeString('a\u0345' + c) !== 'a\u0345' + c)) out.combining.push(cp);
}
process.stdout.write(JSON.stringify(out));
