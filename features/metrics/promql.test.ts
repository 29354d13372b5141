import { expect } from 'chai';
import { escapeLabelValue, fillTemplate, labelMatchers } from './promql.js';

/**
 * A small model of Prometheus's lexer for double-quoted strings: where the
 * literal that starts at `from` ends, and the value it stands for. Enough to
 * show that an escaped value stays one literal and means what was given.
 */
function readStringLiteral(text: string, from: number): { end: number; value: string } {
  expect(text[from]).to.equal('"');
  let value = '';
  for (let i = from + 1; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\n') throw new Error('raw newline: unterminated string');
    if (char === '"') return { end: i, value };
    if (char === '\\') {
      const next = text[++i]!;
      value += ({ n: '\n', r: '\r', '\\': '\\', '"': '"' } as Record<string, string>)[next] ?? `\\${next}`;
    } else value += char;
  }
  throw new Error('unterminated string');
}

const HOSTILE = ['"} or vector(1) #', 'a\\', '\\"} or vector(1) #', 'line\nbreak', 'cr\rlf\r\n', '\\\\\\"', '{workspace="other"}', 'ümlaut ✓', '"', '\\'];

describe('PromQL label matchers', () => {
  it('escapes backslash, double quote and newline', () => {
    expect(escapeLabelValue('a\\b')).to.equal('a\\\\b');
    expect(escapeLabelValue('say "hi"')).to.equal('say \\"hi\\"');
    expect(escapeLabelValue('one\ntwo')).to.equal('one\\ntwo');
    expect(escapeLabelValue('plain-value_1.2')).to.equal('plain-value_1.2');
  });

  it('keeps every hostile value inside one string literal that means exactly the value', () => {
    for (const value of HOSTILE) {
      const matcher = labelMatchers([['model_code', value]]);
      expect(matcher.startsWith('model_code="'), value).to.equal(true);
      const literal = readStringLiteral(matcher, 'model_code='.length);
      expect(literal.end, value).to.equal(matcher.length - 1);
      expect(literal.value, value).to.equal(value);
      expect(matcher, value).to.not.include('\n');
    }
  });

  it('leaves the structure of the query as the template wrote it, whatever the values', () => {
    const template = 'sum by (workspace) (metric{state="OPEN",__PARAMS__})';
    const query = fillTemplate(template, labelMatchers([['workspace', 'ws-a'], ['model_code', '"} or vector(1) #']]));
    expect(query).to.equal('sum by (workspace) (metric{state="OPEN",workspace="ws-a",model_code="\\"} or vector(1) #"})');
    // Outside the literals nothing but the template's own text remains.
    let outside = '';
    for (let i = 0; i < query.length; i++) {
      if (query[i] === '"') i = readStringLiteral(query, i).end;
      else outside += query[i];
    }
    expect(outside).to.equal('sum by (workspace) (metric{state=,workspace=,model_code=})');
  });

  it('fills every placeholder of a template', () => {
    expect(fillTemplate('a{__PARAMS__} / b{__PARAMS__}', 'x="1"')).to.equal('a{x="1"} / b{x="1"}');
  });

  it('refuses a label name that is not a Prometheus label name', () => {
    expect(() => labelMatchers([['model code', 'x']])).to.throw(/label name/);
    expect(() => labelMatchers([['a"}', 'x']])).to.throw(/label name/);
  });
});
