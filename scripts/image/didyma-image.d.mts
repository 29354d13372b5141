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
export function runtimeStage(dockerfileText: string): { config: ImageConfig; copies: ImageCopy[] };
export function sourceOf(copy: ImageCopy, root: string, prodModules: string): string;
export function buildImage(root: string, options?: { containerdSocket?: string }): string;
export function staleImages(listing: string, keep: string[], repository?: string): string[];
export function importArchive(containerdSocket: string, archive: string, temporaryName: string, reference: string): void;
