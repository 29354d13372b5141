import { InputError } from '../../../kernel/errors/errors.js';
import type { ConnectorInit } from '../types.js';
import { namespaceOpenTo, type KServeAccess } from './access.js';
import { PROTOCOLS } from './inference-service.js';

/** The parameters of a KServe class besides `namespaces`, each with its check. */
type Checks = Readonly<Record<string, (value: string, path: string) => string>>;

const NAMESPACE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const MAX_NAMESPACES = 20;
// A deployment may share its sealed credentials with another class; the KServe classes take none and ignore them.
const OTHERS_CREDENTIALS = ['tracking_server_pat', 'server_proxy_pat'];

export const labelSelector = (value: string, path: string): string => {
  // The API server parses it; this keeps it to the selector alphabet and a sane length.
  if (value.length > 1024 || !/^[A-Za-z0-9._/=!,()\s-]+$/.test(value)) throw invalid(path, 'must be a Kubernetes label selector (at most 1024 characters)');
  return value.trim();
};

export const protocol = (value: string, path: string): string => {
  if (!(PROTOCOLS as readonly string[]).includes(value)) throw invalid(path, `must be one of ${PROTOCOLS.join(', ')}`);
  return value;
};

/** How a KServe deployment's versions are named: `given` at registration (the default), or after each ready predictor `revision`. */
export const VERSIONINGS = ['given', 'revision'] as const;

export const versioning = (value: string, path: string): string => {
  if (!(VERSIONINGS as readonly string[]).includes(value)) throw invalid(path, `must be one of ${VERSIONINGS.join(', ')}`);
  return value;
};

/** Whether a KServe registry's init asks the platform to register each new ready revision of a registered service. */
export const followsRevisions = (init: Readonly<Record<string, unknown>>): boolean => init.versioning === 'revision';

/**
 * Checks a KServe class's init: Kubernetes mode, `namespaces` (a list, or
 * names separated by commas; stored comma-separated, as every init value is
 * a string) each opened to `workspace` by the platform's operator, and the
 * class's other parameters.
 */
export function validateKServeInit(init: unknown, field: string, className: string, checks: Checks, access: KServeAccess | undefined, workspace?: string): ConnectorInit {
  if (!access) throw invalid(field, `cannot be used: ${className} reads InferenceServices through the Kubernetes API, and this platform does not run in Kubernetes mode (DIDYMA_KUBE_MODE)`);
  if (typeof init !== 'object' || init === null || Array.isArray(init)) throw invalid(field, 'must be an object');
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(init)) {
    const path = `${field}.${key}`;
    if (OTHERS_CREDENTIALS.includes(key)) continue;
    if (key === 'namespaces') result.namespaces = namespaces(value, path).join(',');
    else if (!(key in checks)) throw invalid(path, `is not a parameter of ${className}; its parameters are ${['namespaces', ...Object.keys(checks)].join(', ')}`);
    else if (value === null || value === '') continue;
    else if (typeof value !== 'string') throw invalid(path, 'must be a string');
    else result[key] = checks[key]!(value, path);
  }
  if (!result.namespaces) throw invalid(`${field}.namespaces`, 'is required: the namespaces whose InferenceServices the deployment serves');
  if (workspace !== undefined) {
    const closed = namespacesOf(result).find((namespace) => !namespaceOpenTo(access.grants, workspace, namespace));
    if (closed) throw invalid(`${field}.namespaces`, `names ${closed}, which the platform's operator has not opened to this workspace (DIDYMA_KSERVE_NAMESPACES)`);
  }
  return Object.freeze(result);
}

/** The namespaces of a validated init, in the order given. */
export const namespacesOf = (init: ConnectorInit): string[] => (init.namespaces ?? '').split(',').filter(Boolean);

function namespaces(value: unknown, path: string): string[] {
  const names = typeof value === 'string' ? value.split(',').map((name) => name.trim()) : value;
  if (!Array.isArray(names) || names.length === 0 || !names.every((name) => typeof name === 'string' && NAMESPACE.test(name))) {
    throw invalid(path, 'must be a non-empty list of namespace names (or one string of them separated by commas)');
  }
  const unique = [...new Set(names as string[])];
  if (unique.length > MAX_NAMESPACES) throw invalid(path, `may name at most ${MAX_NAMESPACES} namespaces`);
  return unique;
}

function invalid(field: string, problem: string): InputError {
  return new InputError(`${field} ${problem}`, [{ field, message: problem }]);
}
