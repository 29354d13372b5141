// Documented paths as a tree of segments. A request path is matched segment by
// segment, a literal before a parameter at each level (so `/files/request_upload`
// wins over `/files/{file_id}`), without a regular expression per route.
// Literals compare case-insensitively and parameters are percent-decoded,
// as express routes did.

interface Node<T> {
  literals: Map<string, Node<T>>;
  parameter?: { name: string; node: Node<T> };
  /** Method (lower case) → value, for a path that ends here. */
  methods?: Map<string, T>;
}

export interface PathMatch<T> {
  /** Method → value of every operation of the matched path. */
  methods: ReadonlyMap<string, T>;
  /** Decoded path parameters; null when one is not valid percent-encoding. */
  params: Record<string, string> | null;
}

const newNode = <T>(): Node<T> => ({ literals: new Map() });

export class PathTable<T> {
  private readonly root: Node<T> = newNode();

  /** `path` as OpenAPI writes it: `/api/model/{modelCode}/session`. */
  add(path: string, method: string, value: T): void {
    let node = this.root;
    for (const segment of segmentsOf(path)) {
      const parameter = /^\{([^}]+)\}$/.exec(segment)?.[1];
      if (parameter) {
        if (node.parameter && node.parameter.name !== parameter) throw new Error(`OpenAPI path ${path}: parameter {${parameter}} where another path has {${node.parameter.name}}`);
        node.parameter ??= { name: parameter, node: newNode() };
        node = node.parameter.node;
      } else {
        const key = segment.toLowerCase();
        let next = node.literals.get(key);
        if (!next) node.literals.set(key, (next = newNode()));
        node = next;
      }
    }
    node.methods ??= new Map();
    if (node.methods.has(method)) throw new Error(`OpenAPI path ${path}: ${method.toUpperCase()} is defined twice`);
    node.methods.set(method, value);
  }

  /** The documented path `path` (already without query string) falls under, if any. */
  match(path: string): PathMatch<T> | undefined {
    const segments = segmentsOf(path);
    const values: string[] = [];
    const names: string[] = [];
    const node = this.walk(this.root, segments, 0, names, values);
    if (!node?.methods) return undefined;
    return { methods: node.methods, params: decode(names, values) };
  }

  private walk(node: Node<T>, segments: string[], index: number, names: string[], values: string[]): Node<T> | undefined {
    if (index === segments.length) return node.methods ? node : undefined;
    const segment = segments[index]!;
    const literal = node.literals.get(segment.toLowerCase());
    if (literal) {
      const found = this.walk(literal, segments, index + 1, names, values);
      if (found) return found;
    }
    if (node.parameter && segment !== '') {
      names.push(node.parameter.name);
      values.push(segment);
      const found = this.walk(node.parameter.node, segments, index + 1, names, values);
      if (found) return found;
      names.pop();
      values.pop();
    }
    return undefined;
  }
}

function segmentsOf(path: string): string[] {
  return path.split('/').slice(1);
}

function decode(names: string[], values: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  try {
    for (let i = 0; i < names.length; i++) params[names[i]!] = values[i]!.includes('%') ? decodeURIComponent(values[i]!) : values[i]!;
  } catch {
    return null;
  }
  return params;
}
