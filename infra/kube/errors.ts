// Failed Kubernetes calls, told apart by the HTTP status that client-node's
// ApiException carries as `code`. Read structurally, not with instanceof: this
// module loads in every process, the client library only in Kubernetes mode.

/** The HTTP status of a failed Kubernetes API call; undefined when no answer came back. */
export function statusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (error: unknown) => statusOf(error) === 404;
export const isConflict = (error: unknown) => statusOf(error) === 409;
