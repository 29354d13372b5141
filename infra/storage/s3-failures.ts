// Turns what the minio client or the network threw into a short reason a
// supervisor can act on. Whatever the source, the secret key is cut out of the
// text: a message may be shown in a response or written to a log.

// Refused by the outbound policy, refused by the host, no answer: one reason, so that
// nobody can map which private addresses answer by registering endpoints.
const UNREACHABLE = 'the endpoint could not be reached';
const UNREACHABLE_CODES = ['ERR_ADDRESS_DENIED', 'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT'];

const REASONS = new Map<string, string>([
  ...UNREACHABLE_CODES.map((code): [string, string] => [code, UNREACHABLE]),
  ['InvalidAccessKeyId', 'the access key is not known to the server'],
  ['SignatureDoesNotMatch', 'the secret key does not match the access key'],
  ['AccessDenied', 'access denied: check the access key, the secret key and the bucket policy'],
  ['NoSuchBucket', 'the bucket does not exist'],
  ['AuthorizationHeaderMalformed', 'the region does not match the bucket'],
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
