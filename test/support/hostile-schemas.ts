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
