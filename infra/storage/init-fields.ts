import { InputError } from '../../kernel/errors/errors.js';

// Small readers for `connector_init`: each failure names the exact field as a
// client sees it (`connector_init.<key>`), so a supervisor knows what to fix.

export type InitObject = Readonly<Record<string, unknown>>;

/** The init as a plain object whose keys are all in `accepted`. */
export function initObject(init: unknown, accepted: readonly string[], className: string): InitObject {
  if (typeof init !== 'object' || init === null || Array.isArray(init)) {
    throw fieldError('connector_init', 'connector_init must be an object');
  }
  const unknownKey = Object.keys(init).find((key) => !accepted.includes(key));
  if (unknownKey !== undefined) {
    throw fieldError(`connector_init.${unknownKey}`, `connector_init.${unknownKey} is not accepted by ${className} (accepted: ${accepted.join(', ')})`);
  }
  return init as InitObject;
}

export function requiredString(init: InitObject, key: string): string {
  const value = optionalString(init, key);
  if (value === undefined) throw fieldError(`connector_init.${key}`, `connector_init.${key} is required`);
  return value;
}

/** Absent or null → undefined. */
export function optionalString(init: InitObject, key: string): string | undefined {
  const value = fieldValue(init, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw fieldError(`connector_init.${key}`, `connector_init.${key} must be a string`);
  if (value.length === 0) throw fieldError(`connector_init.${key}`, `connector_init.${key} must not be empty`);
  return value;
}

/** Absent or null → undefined. */
export function optionalBoolean(init: InitObject, key: string): boolean | undefined {
  const value = fieldValue(init, key);
  if (value === undefined || typeof value === 'boolean') return value;
  throw fieldError(`connector_init.${key}`, `connector_init.${key} must be true or false`);
}

export function fieldError(field: string, message: string): InputError {
  return new InputError(`${message}.`, [{ field, message }]);
}

function fieldValue(init: InitObject, key: string): unknown {
  // Own properties only: a key such as "constructor" must not read the prototype.
  const value = Object.hasOwn(init, key) ? init[key] : undefined;
  return value === null ? undefined : value;
}
