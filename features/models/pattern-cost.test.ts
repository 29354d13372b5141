import { expect } from 'chai';
import { RE2JS } from 're2js';
import { patternInstructions } from './pattern-cost.js';

describe('pattern cost: RE2 instructions read from a pattern\'s text', () => {
  it('never counts fewer instructions than RE2 compiles the pattern to', () => {
    const patterns = [
      'a', '^[a-z]+$', '^(a|b|c)*$', '.{1000}', '(.{10}){10}', '(?:ab){3,7}', 'x{2,}', 'x{0,}', 'x{0}', '(?i)hello', '(?P<n>a+)b?', '(?<n>a)+',
      '\\d{1,3}(\\.\\d{1,3}){3}', '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', '\\p{L}+-[0-9]{2}', '\\pL{4}', '[[:alpha:]]{5}',
      'a|b|c|d', '\\Qa.b\\E{3}', '(a|bc|d){2,4}?', '^\\S+@\\S+\\.\\S+$', '((a)(b)(c)){3}', 'a{,3}', '[]a]{4}', '[^]a]{2}', '^$', '\\x{41}{3}', '\\x41{3}',
      '(?s:.){5}', 'foo(?i:bar){2}baz', '\\bx\\B', '(a{0,5}){0,5}', '((a{2}){3}){4}', '(?:)', '日本語{3}', '[\\]\\[]{9}', '(?:a|(?:b|c){5}){7}',
      Array.from({ length: 30 }, (_, i) => `.{${100 - i}}`).join('|'),
    ];
    for (const pattern of patterns) expect(patternInstructions(pattern), pattern).to.be.at.least(RE2JS.compile(pattern).programSize());
  });

  it('counts a counted repetition as the copies RE2 makes of what it repeats, nested ones multiplied', () => {
    expect(patternInstructions('.{1000}')).to.be.within(1000, 1010);
    expect(patternInstructions('((.{10}){10}){10}')).to.be.above(1000);
    // The 2.1 KB pattern: 300 alternatives .{1000}|…|.{701}.
    expect(patternInstructions(Array.from({ length: 300 }, (_, i) => `.{${1000 - i}}`).join('|'))).to.be.above(250_000);
  });
});
