// Tenant JSON Schemas that pass the size and depth limits but are hostile:
// tests of registration, validation and the fuzzers share them.

/** `levels` definitions, each using the next one twice: under a kilobyte, 2^levels leaves once expanded. */
export function doublingSchema(levels: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < levels - 1; i++) $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  $defs[`d${levels - 1}`] = { type: 'array', items: { type: 'number' } };
  return { $ref: '#/$defs/d0', $defs };
}

/** A schema that is itself: every validation against it recursed until the stack ran out. */
export const SELF_REFERENCE = { $ref: '#' };

/** A cycle through two definitions. */
export const TWO_CYCLE = { $ref: '#/$defs/a', $defs: { a: { $ref: '#/$defs/b' }, b: { allOf: [{ $ref: '#/$defs/a' }] } } };

/** Under every limit (9,121 subschemas expanded, 2.4 KB), yet it checks each item of an array 3,000 times. */
export const COSTLY_PER_ITEM = {
  allOf: Array.from({ length: 60 }, () => ({ $ref: '#/$defs/fifty' })),
  $defs: { fifty: { allOf: Array.from({ length: 50 }, () => ({ $ref: '#/$defs/numbers' })) }, numbers: { items: { type: 'number' } } },
};

/** A JSON array of `items` small numbers, as invocation or feedback body text. */
export const numbersBody = (items: number) => `[${Array.from({ length: items }, (_, i) => i % 10).join(',')}]`;

/** Under every limit (2,841 subschemas and 19,600 pattern instructions expanded, 2.5 KB), yet it matches a string against one pattern 1,400 times: milliseconds per 100 bytes. */
export const COSTLY_PER_BYTE = {
  allOf: Array.from({ length: 20 }, () => ({ $ref: '#/$defs/seventy' })),
  $defs: { seventy: { allOf: Array.from({ length: 70 }, () => ({ $ref: '#/$defs/letters' })) }, letters: { type: 'string', pattern: '^(a|b|c)*$' } },
};

/** The pattern of issue 55's event-loop attack: 300 counted alternatives `.{1000}|.{999}|…|.{701}` (about 2.1 KB, 255,000 RE2 instructions). */
export const COSTLY_ALTERNATIVES = Array.from({ length: 300 }, (_, i) => `.{${1000 - i}}`).join('|');
