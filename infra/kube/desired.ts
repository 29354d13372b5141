// What the cluster should hold for one deployment or storage configuration,
// independent of where it comes from (a database row) and where it goes (a CR
// and a Secret). Credentials travel separately from everything else.

export type InitValue = string | boolean;

export interface Connector {
  className: string;
  /** Never a credential. */
  init: Record<string, string>;
}

export interface DesiredDeployment {
  kind: 'deployment';
  workspace: string;
  key: string;
  registry: Connector;
  serverProxy: Connector;
  /** Credentials of both connectors (their names never clash): they go to the Secret only. */
  secrets: Record<string, string>;
  credentialsVersion?: string;
}

export interface DesiredStorage {
  kind: 'storage';
  workspace: string;
  key: string;
  className: string;
  /** Never a credential. */
  init: Record<string, InitValue>;
  secrets: Record<string, string>;
  /**
   * Names this version of the credentials without revealing them (a digest of
   * their sealed form): the resource carries it, so changed credentials change
   * the resource, and the API never has to read the Secret to compare.
   */
  credentialsVersion?: string;
}

export type Desired = DesiredDeployment | DesiredStorage;

/** Keeps the values a spec may carry: strings (and booleans where allowed); drops null and anything nested. */
export function stringValues(init: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(init).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

export function scalarValues(init: Record<string, unknown>): Record<string, InitValue> {
  return Object.fromEntries(Object.entries(init).filter((entry): entry is [string, InitValue] => typeof entry[1] === 'string' || typeof entry[1] === 'boolean'));
}
