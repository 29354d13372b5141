import { expect } from 'chai';
import { InputError } from '../../kernel/errors/errors.js';
import { AddressDeniedError, UrlPolicy, type Resolver } from './url-policy.js';

// The private-range rules of the outbound policy: private addresses only inside the
// operator's allow-list, some addresses never, and never the platform's own services.

const resolverOf =
  (table: Record<string, string[]>): Resolver =>
  async (name) =>
    (table[name] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

function denialOf(policy: UrlPolicy, url: string): string | null {
  try {
    policy.checkSyntax(url, 'server_proxy_init.server_proxy_url');
    return null;
  } catch (error) {
    expect(error).to.be.instanceOf(InputError);
    return (error as InputError).message;
  }
}

async function connectDenial(policy: UrlPolicy, host: string, port = 80): Promise<string | null> {
  return new Promise((resolve) => {
    policy.lookupFor(port)(host, { all: true }, (error) => {
      if (error) expect(error).to.be.instanceOf(AddressDeniedError);
      resolve(error ? error.message : null);
    });
  });
}

const PRIVATE_TARGETS = ['http://10.1.2.3:8080/', 'http://172.16.0.1/', 'http://172.31.255.254/', 'http://192.168.1.20/', 'http://100.64.3.4/', 'http://[fd12:3456::1]/', 'http://[fc00::1]/'];

describe('UrlPolicy: private addresses and the allow-list of networks', () => {
  it('refuses every private range (RFC 1918, RFC 6598, IPv6 ULA) when no network is allowed', () => {
    const policy = new UrlPolicy();
    for (const url of PRIVATE_TARGETS) expect(denialOf(policy, url), url).to.contain('is a private address outside the networks the platform may call');
    for (const url of ['http://172.32.0.1/', 'http://11.0.0.1/', 'http://[2001:db8::1]/']) expect(denialOf(policy, url), url).to.equal(null);
  });

  it('allows private addresses inside the allow-list and only there', () => {
    const policy = new UrlPolicy({ privateAllow: ['10.244.0.0/16', '10.96.0.0/12', 'fd00:10::/64'] });
    for (const url of ['http://10.244.7.9:8080/', 'http://10.96.0.10/', 'http://10.111.255.1/', 'http://[fd00:10::5]/']) expect(denialOf(policy, url), url).to.equal(null);
    for (const url of ['http://10.245.0.1/', 'http://192.168.1.20/', 'http://[fd00:11::5]/']) expect(denialOf(policy, url), url).to.contain('private address');
  });

  it('sees the IPv4 address an IPv6 form carries, both ways', () => {
    expect(denialOf(new UrlPolicy(), 'http://[::ffff:10.1.2.3]/')).to.contain('a private address outside the networks the platform may call (10.1.2.3)');
    expect(denialOf(new UrlPolicy(), 'http://[64:ff9b::c0a8:114]/')).to.contain('(192.168.1.20)');
    expect(denialOf(new UrlPolicy({ privateAllow: ['10.0.0.0/8'] }), 'http://[::ffff:10.1.2.3]/')).to.equal(null);
  });

  it('never lets the allow-list open loopback, link-local, metadata, unspecified, multicast or broadcast addresses', () => {
    const everything = new UrlPolicy({ privateAllow: ['0.0.0.0/0', '::/0'] });
    const never = {
      'http://127.0.0.1/': 'loopback',
      'http://[::1]/': 'loopback',
      'http://[::ffff:127.0.0.1]/': 'loopback',
      'http://169.254.169.254/': 'cloud metadata',
      'http://[fd00:ec2::254]/': 'cloud metadata',
      'http://100.100.100.200/': 'cloud metadata',
      'http://169.254.1.1/': 'link-local',
      'http://[fe80::1]/': 'link-local',
      'http://0.0.0.0/': 'unspecified',
      'http://[::]/': 'unspecified',
      'http://224.0.0.1/': 'multicast',
      'http://239.255.255.250/': 'multicast',
      'http://[ff02::1]/': 'multicast',
      'http://255.255.255.255/': 'broadcast',
    };
    for (const [url, reason] of Object.entries(never)) expect(denialOf(everything, url), url).to.contain(reason);
  });

  it('refuses a malformed network in the allow-list when it is configured', () => {
    expect(() => new UrlPolicy({ privateAllow: ['10.0.0.0/40'] })).to.throw('Invalid network "10.0.0.0/40"');
    expect(() => new UrlPolicy({ privateAllow: ['pods.cluster.local'] })).to.throw('Invalid network');
  });

  describe('at connect time, after DNS', () => {
    const resolve = resolverOf({
      'model.example.com': ['203.0.113.7'],
      'inside.example.com': ['10.244.1.2'],
      'sneaky.example.com': ['203.0.113.7', '192.168.0.10'],
      'mapped.example.com': ['::ffff:10.1.2.3'],
      'group.example.com': ['239.1.2.3'],
      'metadata.example.com': ['169.254.169.254'],
    });
    const policy = new UrlPolicy({ privateAllow: ['10.244.0.0/16'], resolve });

    it('refuses a name that resolves to a private address outside the allow-list, even among public ones', async () => {
      expect(await connectDenial(policy, 'sneaky.example.com')).to.equal(
        'Refused to connect to sneaky.example.com: it resolves to 192.168.0.10, which is a private address outside the networks the platform may call',
      );
      expect(await connectDenial(policy, 'mapped.example.com')).to.contain('(10.1.2.3)');
    });

    it('refuses names resolving to multicast or metadata addresses', async () => {
      expect(await connectDenial(policy, 'group.example.com')).to.contain('multicast');
      expect(await connectDenial(policy, 'metadata.example.com')).to.contain('cloud metadata');
    });

    it('connects to public names and to names inside the allow-list', async () => {
      expect(await connectDenial(policy, 'model.example.com')).to.equal(null);
      expect(await connectDenial(policy, 'inside.example.com')).to.equal(null);
    });
  });
});

describe("UrlPolicy: the platform's own endpoints", () => {
  const resolve = resolverOf({ 'postgres.didyma.svc': ['10.96.0.12'], 'alias.example.com': ['10.96.0.12'], 'localhost': ['127.0.0.1', '::1'], 'models.example.com': ['10.96.0.40'] });
  const cluster = new UrlPolicy({
    privateAllow: ['10.96.0.0/12'],
    ownEndpoints: [
      { host: 'postgres.didyma.svc', port: 5432 },
      { host: '10.96.0.20', port: 5672 },
    ],
    resolve,
  });

  it('refuses their addresses on every port, even inside the allow-list, by name or by address', async () => {
    expect(await cluster.refusalOf(new URL('http://10.96.0.12:5432/'))).to.equal("10.96.0.12 is one of the platform's own services");
    expect(await cluster.refusalOf(new URL('http://10.96.0.20:15672/api/overview'))).to.equal("10.96.0.20 is one of the platform's own services");
    expect(await cluster.refusalOf(new URL('http://[::ffff:10.96.0.12]/'))).to.contain("one of the platform's own services");
    expect(await connectDenial(cluster, 'postgres.didyma.svc', 5432)).to.contain("10.96.0.12, which is one of the platform's own services");
    expect(await connectDenial(cluster, 'alias.example.com', 8080)).to.contain("one of the platform's own services");
    expect(await cluster.refusalOf(new URL('http://10.96.0.13:5432/'))).to.equal(null);
    expect(await connectDenial(cluster, 'models.example.com', 8080)).to.equal(null);
  });

  it('refuses them when a storage endpoint is registered, with the field named', async () => {
    const error = await cluster.checkUrl('http://10.96.0.20:9000', 'connector_init.endpoint').catch((e: unknown) => e);
    expect(error).to.be.instanceOf(InputError);
    expect((error as InputError).message).to.equal("connector_init.endpoint is not allowed: 10.96.0.20 is one of the platform's own services");
  });

  it('on loopback (development mode) refuses only their ports, as one machine serves the model servers too', async () => {
    const development = new UrlPolicy({ allowLoopback: true, ownEndpoints: [{ host: 'localhost', port: 5432 }], resolve });
    expect(await development.refusalOf(new URL('http://127.0.0.1:5432/'))).to.contain("one of the platform's own services");
    expect(await development.refusalOf(new URL('http://[::1]:5432/'))).to.contain("one of the platform's own services");
    expect(await connectDenial(development, 'localhost', 5432)).to.contain("one of the platform's own services");
    expect(await development.refusalOf(new URL('http://127.0.0.1:8090/'))).to.equal(null);
    expect(await connectDenial(development, 'localhost', 8090)).to.equal(null);
  });
});
