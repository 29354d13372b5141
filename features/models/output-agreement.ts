// Whether a shadow invocation answered what its primary answered, from the
// responses the executors store (the model server's JSON answer).

/** The default absolute tolerance between two numbers that are not both integers. */
export const DEFAULT_TOLERANCE = 1e-6;
/** The largest tolerance asked for: beyond it nearly any two numbers would agree. */
export const MAX_TOLERANCE = 1e6;

/**
 * The outputs of a stored response: an Open Inference (or KServe v2) answer's
 * `outputs` as each tensor's `data` by name, a v1 or MLflow answer's
 * `predictions`, else the whole document; a response that is not JSON is
 * its text. Names and versions of the model that answered are left out, so
 * two versions answering the same thing agree.
 */
export function outputsOf(response: string): unknown {
  let document: unknown;
  try {
    document = JSON.parse(response);
  } catch {
    return response;
  }
  if (!isObject(document)) return document;
  if (Array.isArray(document.outputs)) {
    return Object.fromEntries(document.outputs.map((tensor, index) => (isObject(tensor) ? [String(tensor.name ?? index), tensor.data] : [String(index), tensor])));
  }
  if ('predictions' in document) return document.predictions;
  return document;
}

/**
 * Labels (strings, booleans, integers, null) equal exactly; two numbers not
 * both integers within `tolerance`; arrays of equal length element by
 * element; objects with the same keys key by key; anything else disagrees.
 */
export function outputsAgree(primary: unknown, shadow: unknown, tolerance: number): boolean {
  if (typeof primary === 'number' && typeof shadow === 'number') {
    if (Number.isInteger(primary) && Number.isInteger(shadow)) return primary === shadow;
    return Math.abs(primary - shadow) <= tolerance;
  }
  if (Array.isArray(primary) || Array.isArray(shadow)) {
    if (!Array.isArray(primary) || !Array.isArray(shadow) || primary.length !== shadow.length) return false;
    return primary.every((value, index) => outputsAgree(value, shadow[index], tolerance));
  }
  if (isObject(primary) && isObject(shadow)) {
    const keys = Object.keys(primary);
    if (keys.length !== Object.keys(shadow).length) return false;
    return keys.every((key) => Object.hasOwn(shadow, key) && outputsAgree(primary[key], shadow[key], tolerance));
  }
  return primary === shadow;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
