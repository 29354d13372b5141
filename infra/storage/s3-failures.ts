// Turns what the minio client or the network threw into a short reason a
// supervisor can act on. Whatever the source, the secret key is cut out of the
// text: a message may be shown in a response or written to a log.

const REASONS = new Map<string, string>([
  ['InvalidAccessKeyId', 'the access key is not known to the server'],
  ['SignatureDoesNotMatch', 'the secret key does not match the access key'],
  ['AccessDenied', 'access denied: check the access key, the secret key and the bucket policy'],
  ['NoSuchBucket', 'the bucket does not exist'],
  ['AuthorizationHeaderMalformed', 'the region does not match the bucket'],
  ['ERR_ADDRESS_DENIED', 'the outbound URL policy refuses the address the endpoint resolves to'],
  ['ECONNREFUSED', 'connection refused'],
  ['ECONNRESET', 'the connection was reset'],
  ['ENOTFOUND', 'the host name does not resolve'],
  ['EAI_AGAIN', 'the host name could not be resolved right now'],
  ['EHOSTUNREACH', 'the host is unreachable'],
  ['ENETUNREACH', 'the network is unreachable'],
  ['ETIMEDOUT', 'no answer in time'],
  ['EPROTO', 'TLS handshake failed: is use_ssl right for this endpoint?'],
  ['ERR_SSL_WRONG_VERSION_NUMBER', 'TLS handshake failed: is use_ssl right for this endpoint?'],
  ['DEPTH_ZERO_SELF_SIGNED_CERT', 'the TLS certificate is self-signed and not trusted'],
  ['SELF_SIGNED_CERT_IN_CHAIN', 'the TLS certificate chain is not trusted'],
  ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'the TLS certificate is not trusted'],
  ['CERT_HAS_EXPIRED', 'the TLS certificate has expired'],
  ['ERR_TLS_CERT_ALTNAME_INVALID', 'the TLS certificate does not match the host name'],
]);

const MAX_REASON_LENGTH = 300;

export function describeFailure(error: unknown, secret: string): string {
  const code = codeOf(error);
  const reason = (code !== undefined ? REASONS.get(code) : undefined) ?? messageOf(error);
  return withoutSecret(reason, secret).slice(0, MAX_REASON_LENGTH);
}

/** S3 error code (`NoSuchKey`) or Node error code (`ECONNREFUSED`), looking through AggregateError and `cause`. */
export function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errors, cause } = error as { code?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string' && code !== '') return code;
  // Node reports a failed connection to a host with several addresses as an AggregateError.
  if (Array.isArray(errors)) return errors.map(codeOf).find((inner) => inner !== undefined);
  return cause instanceof Error ? codeOf(cause) : undefined;
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.trim() || 'unknown error';
}

function withoutSecret(text: string, secret: string): string {
  return secret ? text.split(secret).join('***') : text;
}
