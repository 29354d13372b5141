import type { LookupAddress } from 'node:dns';
import { expect } from 'chai';
import { InputError } from '../../kernel/errors/errors.js';
import { AddressDeniedError, UrlPolicy, type Resolver } from './url-policy.js';

/** A resolver answering from a fixed table, as a DNS server under an attacker's control would. */
function resolverOf(table: Record<string, string[]>): Resolver {
  return async (name) => (table[name] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
}

function refusal(policy: UrlPolicy, url: string, field = 'server_proxy_init.server_proxy_url'): string {
  try {
    policy.checkSyntax(url, field);
  } catch (error) {
    expect(error).to.be.instanceOf(InputError);
    return (error as InputError).message;
  }
  throw new Error(`${url} was accepted`);
}

function lookup(policy: UrlPolicy, host: string, all: boolean, port = 80): Promise<string | LookupAddress[]> {
  return new Promise((resolve, reject) => {
    policy.lookupFor(port)(host, { all }, (error, address) => (error ? reject(error) : resolve(address)));
  });
}

describe('UrlPolicy', () => {
  const production = new UrlPolicy();
  const development = new UrlPolicy({ allowLoopback: true });

  it('accepts an ordinary http or https URL and returns it parsed', () => {
    expect(production.checkSyntax('https://models.example.com/v2').hostname).to.equal('models.example.com');
    expect(production.checkSyntax('http://203.0.113.3:8080').port).to.equal('8080');
  });

  it('refuses cloud metadata addresses and names in every mode, naming the field', () => {
    for (const url of ['http://169.254.169.254/latest/meta-data', 'http://100.100.100.200/', 'http://[fd00:ec2::254]/', 'http://metadata.google.internal/', 'http://METADATA.goog./']) {
      expect(refusal(development, url)).to.match(/^server_proxy_init\.server_proxy_url is not allowed: .* is a cloud metadata address/);
    }
  });

  it('refuses link-local addresses in every mode', () => {
    expect(refusal(development, 'http://169.254.10.20/')).to.contain('169.254.10.20 is a link-local address');
    expect(refusal(development, 'http://[fe80::1]/')).to.contain('link-local');
  });

  it('refuses loopback unless development mode allows it', () => {
    for (const url of ['http://127.0.0.1:8090', 'http://127.9.9.9/', 'http://[::1]/', 'http://localhost:8090', 'http://api.localhost/']) {
      expect(refusal(production, url)).to.contain('a loopback address (allowed only in development mode)');
      expect(() => development.checkSyntax(url)).not.to.throw();
    }
  });

  it('refuses the unspecified address, which reaches the local host', () => {
    expect(refusal(development, 'http://0.0.0.0:8090/')).to.contain('0.0.0.0 is an unspecified address');
    expect(refusal(development, 'http://0:8090/')).to.contain('unspecified');
    expect(refusal(development, 'http://[::]/')).to.contain('unspecified');
  });

  it('sees through the other spellings of an IPv4 address', () => {
    expect(refusal(production, 'http://2130706433/')).to.contain('loopback');
    expect(refusal(production, 'http://0x7f.1/')).to.contain('loopback');
    expect(refusal(production, 'http://0251.0376.0251.0376/')).to.contain('cloud metadata');
  });

  it('refuses IPv4-mapped, NAT64 and IPv4-compatible forms of refused addresses', () => {
    expect(refusal(development, 'http://[::ffff:169.254.169.254]/')).to.contain('a cloud metadata address (169.254.169.254)');
    expect(refusal(development, 'http://[64:ff9b::a9fe:a9fe]/')).to.contain('cloud metadata');
    expect(refusal(production, 'http://[::ffff:127.0.0.1]/')).to.contain('loopback');
    expect(refusal(production, 'http://[::127.0.0.1]/')).to.contain('loopback');
    expect(() => development.checkSyntax('http://[::ffff:127.0.0.1]/')).not.to.throw();
    expect(() => production.checkSyntax('http://[::ffff:203.0.113.1]/')).not.to.throw();
  });

  it('judges the SIIT translated form ::ffff:0:0:0/96 as the IPv4 address it carries', () => {
    expect(refusal(development, 'http://[::ffff:0:a9fe:a9fe]/')).to.contain('a cloud metadata address (169.254.169.254)');
    expect(refusal(development, 'http://[::ffff:0:169.254.10.20]/')).to.contain('a link-local address (169.254.10.20)');
    expect(refusal(production, 'http://[::ffff:0:7f00:1]/')).to.contain('loopback');
    expect(() => production.checkSyntax('http://[::ffff:0:cb00:7101]/')).not.to.throw();
  });

  it('judges NAT64 addresses, well-known and local-use prefixes, as the IPv4 address in their last 32 bits', () => {
    expect(refusal(development, 'http://[64:ff9b::169.254.169.254]/')).to.contain('a cloud metadata address (169.254.169.254)');
    expect(refusal(development, 'http://[64:ff9b:1::a9fe:a9fe]/')).to.contain('a cloud metadata address (169.254.169.254)');
    expect(refusal(development, 'http://[64:ff9b:1:2::a9fe:a14]/')).to.contain('a link-local address (169.254.10.20)');
    expect(refusal(production, 'http://[64:ff9b:1::a00:1]/')).to.contain('a private address outside the networks the platform may call (10.0.0.1)');
    expect(() => production.checkSyntax('http://[64:ff9b:1::cb00:7101]/')).not.to.throw();
  });

  it('judges 6to4 addresses as the IPv4 address in their bits 16 to 47', () => {
    expect(refusal(development, 'http://[2002:a9fe:a9fe::]/')).to.contain('a cloud metadata address (169.254.169.254)');
    expect(refusal(development, 'http://[2002:a9fe:a14::1]/')).to.contain('a link-local address (169.254.10.20)');
    expect(refusal(production, 'http://[2002:7f00:1::]/')).to.contain('loopback');
    expect(refusal(production, 'http://[2002:c0a8:101:5::7]/')).to.contain('(192.168.1.1)');
    expect(() => production.checkSyntax('http://[2002:cb00:7101::1]/')).not.to.throw();
  });

  it('judges the embedded IPv4 address of a name that resolves to a translated form', async () => {
    const policy = new UrlPolicy({ resolve: resolverOf({ 'nat.example.com': ['64:ff9b:1::a9fe:a9fe'], 'six.example.com': ['2002:a9fe:a9fe::1'] }) });
    for (const host of ['nat.example.com', 'six.example.com']) {
      const error = await lookup(policy, host, false).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(AddressDeniedError);
      expect((error as Error).message).to.contain('cloud metadata');
    }
  });

  it('refuses a translated form of an address on the deny list', () => {
    const policy = new UrlPolicy({ deny: ['198.51.100.0/24'] });
    expect(refusal(policy, 'http://[2002:c633:6407::]/')).to.contain('on the deny list');
    expect(refusal(policy, 'http://[::ffff:0:c633:6407]/')).to.contain('on the deny list');
  });

  it('refuses other schemes, credentials in the URL and text that is not a URL', () => {
    expect(refusal(production, 'ftp://models.example.com/')).to.contain('only http and https');
    expect(refusal(production, 'file:///etc/passwd')).to.contain('only http and https');
    const credentials = refusal(production, 'https://alice:s3cret@models.example.com/');
    expect(credentials).to.contain('contains credentials');
    expect(credentials).not.to.contain('s3cret');
    expect(refusal(production, 'models.example.com')).to.equal('server_proxy_init.server_proxy_url must be an absolute http or https URL');
  });

  it('refuses what the deny list names: networks, names and suffixes', () => {
    const policy = new UrlPolicy({ deny: ['10.0.0.0/8', 'legacy.example.com', '*.internal.example'] });
    expect(refusal(policy, 'http://10.200.0.1/')).to.contain('10.200.0.1 is on the deny list');
    expect(refusal(policy, 'http://[::ffff:10.0.0.1]/')).to.contain('on the deny list');
    expect(refusal(policy, 'http://LEGACY.example.com/')).to.contain('on the deny list');
    expect(refusal(policy, 'http://a.b.internal.example/')).to.contain('on the deny list');
    expect(() => policy.checkSyntax('http://internal.example/')).not.to.throw();
    expect(() => policy.checkSyntax('http://11.0.0.1/')).not.to.throw();
  });

  it('with an allow list of names, refuses every other name when the URL is registered', () => {
    const policy = new UrlPolicy({ allow: ['*.models.example.com'] });
    expect(() => policy.checkSyntax('https://kserve.models.example.com/')).not.to.throw();
    expect(refusal(policy, 'https://other.example.com/')).to.contain('other.example.com is not on the allow list');
    expect(refusal(policy, 'http://198.51.100.1/')).to.contain('not on the allow list');
  });

  it('never lets the allow list open the built-in refusals', () => {
    const policy = new UrlPolicy({ allow: ['169.254.0.0/16', '127.0.0.0/8', 'metadata.google.internal'] });
    expect(refusal(policy, 'http://169.254.169.254/')).to.contain('cloud metadata');
    expect(refusal(policy, 'http://127.0.0.1/')).to.contain('loopback');
    expect(refusal(policy, 'http://metadata.google.internal/')).to.contain('cloud metadata');
  });

  it('refuses a malformed allow or deny entry when it is configured', () => {
    expect(() => new UrlPolicy({ allow: ['10.0.0.0/33'] })).to.throw(/Invalid host pattern "10.0.0.0\/33"/);
    expect(() => new UrlPolicy({ deny: ['exa mple.com'] })).to.throw(/Invalid host pattern/);
  });

  describe('lookup', () => {
    it('refuses a name that resolves to loopback, so DNS cannot smuggle a private target past registration', async () => {
      const policy = new UrlPolicy({ resolve: resolverOf({ 'rebind.example.com': ['127.0.0.1'] }) });
      expect(() => policy.checkSyntax('http://rebind.example.com/')).not.to.throw();
      const error = await lookup(policy, 'rebind.example.com', true).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(AddressDeniedError);
      expect((error as AddressDeniedError).code).to.equal('ERR_ADDRESS_DENIED');
      expect((error as Error).message).to.equal('Refused to connect to rebind.example.com: it resolves to 127.0.0.1, which is a loopback address (allowed only in development mode)');
    });

    it('refuses the name when any one of its addresses is refused', async () => {
      const policy = new UrlPolicy({ resolve: resolverOf({ 'mixed.example.com': ['203.0.113.7', '::ffff:169.254.169.254'] }) });
      const error = await lookup(policy, 'mixed.example.com', true).catch((e: unknown) => e);
      expect((error as Error).message).to.contain('cloud metadata');
    });

    it('checks every connection, so a name that changes its answer is caught', async () => {
      const answers = [['203.0.113.7'], ['169.254.169.254']];
      const policy = new UrlPolicy({ resolve: async () => (answers.shift() ?? []).map((address) => ({ address, family: 4 })) });
      expect(await lookup(policy, 'flip.example.com', false)).to.equal('203.0.113.7');
      const error = await lookup(policy, 'flip.example.com', false).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(AddressDeniedError);
    });

    it('answers in both callback forms node uses', async () => {
      const policy = new UrlPolicy({ resolve: resolverOf({ 'two.example.com': ['203.0.113.7', '2001:db8::7'] }) });
      expect(await lookup(policy, 'two.example.com', false)).to.equal('203.0.113.7');
      expect(await lookup(policy, 'two.example.com', true)).to.deep.equal([
        { address: '203.0.113.7', family: 4 },
        { address: '2001:db8::7', family: 6 },
      ]);
    });

    it('decides an allow list of networks on the resolved addresses', async () => {
      const policy = new UrlPolicy({ allow: ['10.20.0.0/16'], privateAllow: ['10.20.0.0/16'], resolve: resolverOf({ 'in.example.com': ['10.20.3.4'], 'out.example.com': ['192.0.2.1'] }) });
      expect(() => policy.checkSyntax('http://out.example.com/')).not.to.throw();
      expect(await lookup(policy, 'in.example.com', false)).to.equal('10.20.3.4');
      const error = await lookup(policy, 'out.example.com', false).catch((e: unknown) => e);
      expect((error as Error).message).to.contain('192.0.2.1, which is not on the allow list');
    });

    it('fails like the system resolver when a name has no address', async () => {
      const policy = new UrlPolicy({ resolve: resolverOf({}) });
      const error = await lookup(policy, 'nowhere.example.com', false).catch((e: unknown) => e);
      expect((error as NodeJS.ErrnoException).code).to.equal('ENOTFOUND');
    });

    it('uses the system resolver by default: localhost resolves, and is allowed only in development mode', async () => {
      const addresses = (await lookup(development, 'localhost', true)) as LookupAddress[];
      expect(addresses.map((a) => a.address)).to.include.oneOf(['127.0.0.1', '::1']);
      const error = await lookup(production, 'localhost', true).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(AddressDeniedError);
    });
  });
});
