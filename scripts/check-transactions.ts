// Fails when a network call (Kubernetes, HTTP, AMQP, S3, SMTP, DNS) can run
// inside a `db.transaction(...)` callback: `npm run lint:transactions`, part
// of `make lint`. A transaction held open across a network call holds its
// locks and its pooled connection for as long as the peer takes
// (docs/decisions.md, "No network call inside a transaction").
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { sourceFiles } from './check-layers.js';

/** The folders of production code: tests, benches and scripts may do as they need. */
export const CHECKED_FOLDERS = ['kernel', 'infra', 'features', 'platform', 'api', 'executor', 'operator', 'cli'];

/** Project files whose functions and interfaces talk to the network (the callers of their declarations are flagged). */
export const NETWORK_FILES: readonly RegExp[] = [
  /^infra\/kube\/(api|connection|writer|secrets|informer)\.ts$/,
  /^infra\/net\/(http-client|delivery-client|http-exchange|outbound|url-policy)\.ts$/,
  /^infra\/queue\/(queue|rabbitmq)\.ts$/,
  /^infra\/storage\/(backend|s3-storage|s3-class)\.ts$/,
  /^infra\/connectors\/(types|http-server-proxy)\.ts$/,
  /^infra\/connectors\/(mlflow|open-inference)\//,
  /^infra\/mail\//,
  /^features\/metrics\/prometheus\.ts$/,
];

/** Libraries and Node.js modules whose calls go to the network. */
export const NETWORK_MODULES: readonly RegExp[] = [
  /\/node_modules\/(@kubernetes\/client-node|amqplib|@types\/amqplib|@aws-sdk\/[^/]+|@smithy\/[^/]+|undici|undici-types|nodemailer|@types\/nodemailer)\//,
  /\/node_modules\/@types\/node\/(http|https|http2|net|tls|dns|dgram)\.d\.ts$/,
];

/** How far the check follows calls into the project's own functions. */
const MAX_DEPTH = 6;

export interface Finding {
  file: string;
  line: number;
  /** The calls from the transaction's callback to the network, outermost first. */
  chain: string[];
}

type Body = ts.Node;

/**
 * The network calls each `transaction(callback)` of knex may make: calls in
 * the callback's body, followed into the project's functions and methods
 * (those with a body; a call through an interface stops there unless the
 * interface itself is a network one) up to MAX_DEPTH calls deep.
 */
export function findNetworkCallsInTransactions(program: ts.Program, root: string, files: readonly string[]): Finding[] {
  const checker = program.getTypeChecker();
  const relative = (fileName: string) => path.relative(root, fileName).split(path.sep).join('/');
  const inProject = (fileName: string) => !fileName.includes('/node_modules/') && !fileName.endsWith('.d.ts') && fileName.startsWith(root);
  const isNetwork = (fileName: string) => (inProject(fileName) ? NETWORK_FILES.some((re) => re.test(relative(fileName))) : NETWORK_MODULES.some((re) => re.test(fileName)));
  const memo = new Map<Body, string[] | null>();

  const declarationOf = (call: ts.CallExpression | ts.NewExpression): ts.Declaration | undefined => {
    const declaration = checker.getResolvedSignature(call)?.getDeclaration();
    if (declaration) return declaration;
    // An unresolved callee (any, a union of signatures): its symbol still names where it comes from.
    const symbol = checker.getSymbolAtLocation(ts.isPropertyAccessExpression(call.expression) ? call.expression.name : call.expression);
    const target = symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return target?.declarations?.[0];
  };
  const describe = (call: ts.CallExpression | ts.NewExpression, declaration: ts.Declaration) => {
    const source = call.getSourceFile();
    const line = source.getLineAndCharacterOfPosition(call.getStart(source)).line + 1;
    const callee = call.expression.getText(source).replace(/\s+/g, ' ');
    const where = inProject(declaration.getSourceFile().fileName) ? relative(declaration.getSourceFile().fileName) : path.basename(declaration.getSourceFile().fileName);
    return `${callee}() at ${relative(source.fileName)}:${line} (${where})`;
  };
  const bodyOf = (declaration: ts.Declaration): Body | undefined => {
    if ((ts.isFunctionDeclaration(declaration) || ts.isMethodDeclaration(declaration) || ts.isFunctionExpression(declaration) || ts.isArrowFunction(declaration) || ts.isConstructorDeclaration(declaration)) && declaration.body) return declaration.body;
    if (ts.isVariableDeclaration(declaration) && declaration.initializer && (ts.isArrowFunction(declaration.initializer) || ts.isFunctionExpression(declaration.initializer))) return declaration.initializer.body;
    if (ts.isPropertyAssignment(declaration) && (ts.isArrowFunction(declaration.initializer) || ts.isFunctionExpression(declaration.initializer))) return declaration.initializer.body;
    return undefined;
  };

  /** The first chain of calls from `body` to the network, or null. */
  const networkChain = (body: Body, depth: number): string[] | null => {
    if (memo.has(body)) return memo.get(body)!;
    memo.set(body, null); // a cycle is no network call
    let found: string[] | null = null;
    const visit = (node: ts.Node): void => {
      if (found) return;
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const declaration = declarationOf(node);
        const fileName = declaration?.getSourceFile().fileName;
        if (declaration && fileName) {
          if (isNetwork(fileName) || isGlobalFetch(node, declaration)) found = [describe(node, declaration)];
          else if (inProject(fileName) && depth < MAX_DEPTH) {
            const inner = bodyOf(declaration);
            const chain = inner && networkChain(inner, depth + 1);
            if (chain) found = [describe(node, declaration), ...chain];
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(body);
    memo.set(body, found);
    return found;
  };

  const findings: Finding[] = [];
  for (const fileName of files) {
    const source = program.getSourceFile(fileName);
    if (!source) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && isKnexTransaction(checker, node)) {
        const callback = node.arguments.find((arg) => ts.isArrowFunction(arg) || ts.isFunctionExpression(arg)) as ts.ArrowFunction | ts.FunctionExpression | undefined;
        const chain = callback && networkChain(callback.body, 0);
        if (chain) findings.push({ file: relative(fileName), line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, chain });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return findings;
}

/** `x.transaction(…)` where `transaction` is knex's (on the database or on a transaction). */
function isKnexTransaction(checker: ts.TypeChecker, call: ts.CallExpression): boolean {
  if (!ts.isPropertyAccessExpression(call.expression) || call.expression.name.text !== 'transaction') return false;
  const declaration = checker.getResolvedSignature(call)?.getDeclaration() ?? checker.getSymbolAtLocation(call.expression.name)?.declarations?.[0];
  return Boolean(declaration?.getSourceFile().fileName.includes('/node_modules/knex/'));
}

/** fetch() of the runtime (declared by the TypeScript or Node.js type libraries). */
function isGlobalFetch(call: ts.CallExpression | ts.NewExpression, declaration: ts.Declaration): boolean {
  return ts.isIdentifier(call.expression) && call.expression.text === 'fetch' && declaration.getSourceFile().fileName.endsWith('.d.ts');
}

/** A program over the production code with the repository's compiler options. */
export function productionProgram(root: string): { program: ts.Program; files: string[] } {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), { noEmit: true, incremental: false }, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error('cannot read tsconfig.json');
  const files = CHECKED_FOLDERS.flatMap((folder) => sourceFiles(path.join(root, folder))).filter((file) => !file.endsWith('.test.ts'));
  return { program: ts.createProgram(files, { ...config.options, noEmit: true, incremental: false }), files };
}

/** Prints each transaction that may call the network and answers the exit code: 1 when there is one, else 0. */
export function main(root: string, print: (line: string) => void = console.error): number {
  const { program, files } = productionProgram(root);
  const findings = findNetworkCallsInTransactions(program, root, files);
  for (const f of findings) print(`${f.file}:${f.line}: a network call inside db.transaction(): ${f.chain.join(' → ')}`);
  if (!findings.length) return 0;
  print(`${findings.length} transaction(s) that may call the network: make the call before the transaction or after its commit (docs/decisions.md)`);
  return 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(path.resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url))));
}
