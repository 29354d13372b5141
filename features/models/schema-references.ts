import { InputError } from '../../kernel/errors/errors.js';

// The reference graph of a tenant's JSON Schema. A schema of a few hundred
// bytes whose `$ref`s reuse one another is a tree of exponential size once
// expanded, and validation walks that whole tree; one that refers back to
// itself never ends. Both are refused at registration, before ajv sees them.

/** Keywords holding one subschema applied to the instance or a part of it. */
const SINGLE = ['not', 'if', 'then', 'else', 'items', 'additionalItems', 'contains', 'additionalProperties', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'];
/** Keywords holding an array of applied subschemas. */
const ARRAY = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
/** Keywords holding a map of applied subschemas. */
const MAP = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies'];
/** Keywords holding a map of subschemas applied only where a `$ref` names them. */
const DEFINITIONS = ['$defs', 'definitions'];

const isSchema = (value: unknown): value is object | boolean => typeof value === 'boolean' || (typeof value === 'object' && value !== null && !Array.isArray(value));
const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The subschemas `node` applies, as [JSON Pointer, subschema]; `$defs` only when `withDefinitions`. */
function childrenOf(node: unknown, pointer: string, withDefinitions: boolean): Array<[string, unknown]> {
  if (typeof node !== 'object' || node === null) return [];
  const record = node as Record<string, unknown>;
  const children: Array<[string, unknown]> = [];
  for (const keyword of SINGLE) if (isSchema(record[keyword])) children.push([`${pointer}/${keyword}`, record[keyword]]);
  for (const keyword of ARRAY) {
    const list = record[keyword];
    if (Array.isArray(list)) list.forEach((item, i) => isSchema(item) && children.push([`${pointer}/${keyword}/${i}`, item]));
  }
  for (const keyword of withDefinitions ? [...MAP, ...DEFINITIONS] : MAP) {
    const map = record[keyword];
    if (!isSchema(map) || typeof map === 'boolean') continue;
    for (const [key, item] of Object.entries(map)) if (isSchema(item)) children.push([`${pointer}/${keyword}/${escape(key)}`, item]);
  }
  return children;
}

/** The value at a JSON Pointer ('' is the root), or undefined. */
function at(root: unknown, pointer: string): unknown {
  let node = root;
  for (const token of pointer.split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return undefined;
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * The schema's anchors by name. Refuses what a static graph cannot follow: a
 * nested `$id` moves the base of every `$ref` under it, `$dynamicRef` resolves at run time.
 */
function anchorsOf(root: object, field: string): Map<string, string> {
  const anchors = new Map<string, string>();
  const walk = (node: unknown, pointer: string) => {
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    const where = `${field}${pointer.replace(/\//g, '.')}`;
    if (pointer !== '' && '$id' in record) throw new InputError(`${where}.$id: a nested $id is not supported; refer to subschemas with "#/…" pointers or "#name" anchors.`);
    for (const keyword of ['$dynamicRef', '$recursiveRef']) if (keyword in record) throw new InputError(`${where}.${keyword}: not supported; use $ref.`);
    for (const keyword of ['$anchor', '$dynamicAnchor']) if (typeof record[keyword] === 'string' && !anchors.has(record[keyword])) anchors.set(record[keyword], pointer);
    for (const [childPointer, child] of childrenOf(node, pointer, true)) walk(child, childPointer);
  };
  walk(root, '');
  return anchors;
}

/** The JSON Pointer a local `$ref` names (`#`, `#/…`, `#name`), or undefined for another document, which ajv refuses or knows. */
function targetOf(ref: string, root: object, anchors: Map<string, string>): string | undefined {
  if (!ref.startsWith('#')) return undefined;
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  const pointer = fragment === '' || fragment.startsWith('/') ? fragment : anchors.get(fragment);
  return pointer !== undefined && isSchema(at(root, pointer)) ? pointer : undefined;
}

const named = (pointer: string) => `#${pointer}`;

/** A schema's size once each `$ref` is expanded where it is used: its subschemas, and the sum of a weight of each. */
export interface Expansion {
  nodes: number;
  weight: number;
}

/**
 * Refuses a schema whose references form a cycle, naming it, and one whose
 * expansion, each `$ref` counted every time it is used, holds more than
 * `maxNodes` subschemas. Each subschema's expanded size is computed once, so
 * the check costs the size of the schema, not of its expansion. Returns
 * that expanded size.
 */
export function checkReferences(schema: object, field: string, maxNodes: number): number {
  return expansionOf(schema, field, maxNodes, () => 0).nodes;
}

/** checkReferences, and the sum of `weightOf` over the expanded subschemas (each `$ref` counted where it is used). */
export function expansionOf(schema: object, field: string, maxNodes: number, weightOf: (node: unknown) => number): Expansion {
  const anchors = anchorsOf(schema, field);
  const sizes = new Map<string, Expansion>();
  const tooLarge = () => new InputError(`${field}: the schema expands to more than ${maxNodes} subschemas once each $ref is counted where it is used; at most ${maxNodes}.`);
  // An explicit stack, not recursion: a chain of references may be thousands long.
  interface Frame {
    pointer: string;
    /** Reached through a `$ref`, rather than nested in its parent. */
    byRef: boolean;
    edges: Array<{ pointer: string; byRef: boolean }>;
    next: number;
    size: Expansion;
  }
  const open = new Map<string, number>();
  const stack: Frame[] = [];
  const enter = (pointer: string, byRef: boolean) => {
    const node = at(schema, pointer);
    const edges = childrenOf(node, pointer, false).map(([child]) => ({ pointer: child, byRef: false }));
    const ref = typeof node === 'object' && node !== null ? (node as Record<string, unknown>).$ref : undefined;
    const target = typeof ref === 'string' ? targetOf(ref, schema, anchors) : undefined;
    if (target !== undefined) edges.push({ pointer: target, byRef: true });
    open.set(pointer, stack.length);
    stack.push({ pointer, byRef, edges, next: 0, size: { nodes: 1, weight: weightOf(node) } });
  };
  const add = (to: Expansion, more: Expansion) => {
    to.nodes += more.nodes;
    to.weight += more.weight;
  };
  enter('', false);
  while (stack.length) {
    const frame = stack[stack.length - 1]!;
    const edge = frame.edges[frame.next++];
    if (edge) {
      const known = sizes.get(edge.pointer);
      if (known !== undefined) add(frame.size, known);
      else if (open.has(edge.pointer)) {
        const cycle = stack.slice(open.get(edge.pointer)! + 1).filter((f) => f.byRef).map((f) => named(f.pointer));
        const path = [named(edge.pointer), ...cycle, named(edge.pointer)].join(' → ');
        throw new InputError(`${field}: its references form a cycle, ${path}; a schema may not refer back to itself.`);
      } else enter(edge.pointer, edge.byRef);
    } else {
      stack.pop();
      open.delete(frame.pointer);
      sizes.set(frame.pointer, frame.size);
      const parent = stack[stack.length - 1];
      if (parent) add(parent.size, frame.size);
    }
    if (frame.size.nodes > maxNodes) throw tooLarge();
  }
  return sizes.get('')!;
}

/** Every subschema of the schema, `$defs` included, with its field path (`field` then the keywords down to it). */
export function subschemasOf(schema: object, field: string): Array<{ node: unknown; path: string }> {
  const found: Array<{ node: unknown; path: string }> = [];
  const stack: Array<[unknown, string]> = [[schema, '']];
  while (stack.length) {
    const [node, pointer] = stack.pop()!;
    found.push({ node, path: `${field}${pointer.replace(/\//g, '.')}` });
    for (const [childPointer, child] of childrenOf(node, pointer, true)) stack.push([child, childPointer]);
  }
  return found;
}
