// Encodes the inputs of one variant of a cases.jsonl again with another
// tokenizer.json and writes them in the same format, as variant NAME.
//
//   node encode.js TOKENIZER.json CASES.jsonl FROM_VARIANT NAME >> CASES.jsonl
'use strict';
const fs = require('fs');
const { Tokenizer } = require(process.env.HF_TOKENIZERS || 'tokenizers');
const [tokFile, casesFile, from, name] = process.argv.slice(2);
const t = Tokenizer.fromFile(tokFile);
(async () => {
  const out = [];
  for (const line of fs.readFileSync(casesFile, 'utf8').split('\n')) {
    if (!line) continue;
    const c = JSON.parse(line);
    if (c.v !== from) continue;
    if (c.maxLen > 0) t.setTruncation(c.maxLen, { strategy: 'LongestFirst' }); else t.disableTruncation();
    const e = await t.encode(c.a, c.b === undefined ? null : c.b);
    const ids = e.getIds();
    out.push(JSON.stringify({
      v: name, a: c.a, ...(c.b === undefined ? {} : { b: c.b }), maxLen: c.maxLen,
      ids, tokens: e.getTokens(), types: e.getTypeIds(), offsets: e.getOffsets(), words: e.getWordIds().map(w => (w == null ? -1 : w)),
      special: e.getSpecialTokensMask(), overflow: e.getOverflowing().length,
      decoded: await t.decode(ids, true),
    }));
  }
  process.stdout.write(out.join('\n') + '\n');
})();
