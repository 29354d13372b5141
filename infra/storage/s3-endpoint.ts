import { fieldError } from './init-fields.js';

// `endpoint` is accepted as a URL (http://127.0.0.1:59000) or as host[:port]
// and stored in one normalized form, the URL origin, with `use_ssl` matching
// its scheme: the stored configuration then says exactly what is contacted.

export interface S3Endpoint {
  /** Normalized origin, e.g. `http://127.0.0.1:59000`. Never carries credentials. */
  origin: string;
  host: string;
  port?: number;
  useSSL: boolean;
}

const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Without a scheme, TLS is used unless `use_ssl` is false. */
export function parseEndpoint(value: string, useSsl: boolean | undefined): S3Endpoint {
  const withScheme = HAS_SCHEME.test(value);
  const url = parseUrl(withScheme ? value : `${useSsl === false ? 'http' : 'https'}://${value}`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw endpointError('must use http or https');
  if (url.username || url.password) throw endpointError('must not contain credentials; use access_key and secret_key');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) throw endpointError('must be a scheme, host and port only, without a path');
  const useSSL = url.protocol === 'https:';
  if (withScheme && useSsl !== undefined && useSsl !== useSSL) {
    throw fieldError('connector_init.use_ssl', `connector_init.use_ssl contradicts the ${url.protocol.slice(0, -1)} scheme of connector_init.endpoint`);
  }
  return {
    origin: url.origin,
    // The client wants an IPv6 address without its URL brackets.
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : undefined,
    useSSL,
  };
}

function parseUrl(value: string): URL {
  try {
    const url = new URL(value);
    if (!url.hostname) throw new Error('no host');
    return url;
  } catch {
    throw endpointError('must be a URL such as http://host:9000, or host:port');
  }
}

function endpointError(problem: string) {
  return fieldError('connector_init.endpoint', `connector_init.endpoint ${problem}`);
}
