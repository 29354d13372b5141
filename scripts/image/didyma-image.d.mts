// Types of didyma-image.mjs (plain JavaScript: it runs before `npm ci` too).
export interface ImageConfig {
  Env: string[];
  WorkingDir: string;
  ExposedPorts: Record<string, object>;
  User?: string;
  Entrypoint?: string[];
  Cmd?: string[];
}
export interface ImageCopy {
  from?: string;
  source: string;
  target: string;
  intoDirectory: boolean;
}
export const IMAGE_REPOSITORY: string;
/** The final stage, and the Node.js major release of its `FROM node:<major>…` base. */
export function runtimeStage(dockerfileText: string): { config: ImageConfig; copies: ImageCopy[]; nodeMajor: number };
/** Throws unless `version` (`node --version`) is of release line `nodeMajor`. */
export function checkNodeRelease(nodeMajor: number, version: string): void;
export function sourceOf(copy: ImageCopy, root: string, prodModules: string): string;
export function buildImage(root: string, options?: { containerdSocket?: string }): string;
export const OWNER_LABEL: string;
export function staleImages(listing: string, keep: string[], repository?: string, ownerAlive?: (pid: string) => boolean): string[];
export function temporaryImageName(repository: string): string;
export function importArchive(containerdSocket: string, archive: string, temporaryName: string, reference: string): void;
