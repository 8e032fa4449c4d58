import dns from 'node:dns';
import { checkEndpointUrl, forbiddenAddress, guardedLookup } from './address-policy';

const STRICT = { allowHttp: false, allowPrivateNetworks: false };
/** A resolver that answers these addresses for any name, and opens nothing. */
const resolving =
  (...addresses: string[]) =>
  () =>
    Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));

describe('forbiddenAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.100.100.200', 'carrier-grade NAT'],
    ['169.254.169.254', 'link-local (cloud metadata among them)'],
    ['fe80::1', 'link-local (cloud metadata among them)'],
    ['fd00::1', 'unique local'],
    ['fd00:ec2::254', 'unique local'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local (cloud metadata among them)'],
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::a9fe:a9fe', 'link-local (cloud metadata among them)'],
    ['::a00:1', 'private'],
    ['::5db8:d822', 'IPv4-compatible'],
    ['::ffff:0:7f00:1', 'IPv4-translated'],
    ['64:ff9b::a00:1', 'NAT64'],
    ['64:ff9b::7f00:1', 'NAT64'],
    ['64:ff9b::5db8:d822', 'NAT64'],
    ['64:ff9b:1:7f00:1::', 'NAT64'],
    ['2002:a00:1::', '6to4'],
    ['2002:7f00:1::1', '6to4'],
    ['2002:a9fe:a9fe::', '6to4'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo'],
    ['4000::1', 'outside global unicast'],
    ['::2', 'unspecified'],
    ['192.0.0.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(forbiddenAddress(address)).toBe(reason);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:93.184.216.34'])(
    'accepts the public %s',
    (address) => {
      expect(forbiddenAddress(address)).toBeUndefined();
    },
  );
});

describe('checkEndpointUrl (no connection is ever opened: names resolve through a stub)', () => {
  it('accepts an https URL whose every address is public', async () => {
    await expect(
      checkEndpointUrl('https://hooks.example.com/in', STRICT, resolving('93.184.216.34')),
    ).resolves.toBeUndefined();
  });

  it.each([
    ['10.0.0.1', 'private'],
    ['169.254.169.254', 'link-local (cloud metadata among them)'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['fd00::1', 'unique local'],
    ['::7f00:1', 'loopback'],
    ['2002:7f00:1::', '6to4'],
  ])('refuses a name resolving to %s', async (address, reason) => {
    await expect(
      checkEndpointUrl('https://hooks.example.com/in', STRICT, resolving('93.184.216.34', address)),
    ).resolves.toBe(`url must reach a public address: hooks.example.com is ${reason}`);
  });

  it.each([
    ['https://10.0.0.1/in', 'url must reach a public address: 10.0.0.1 is private'],
    ['https://[fd00::1]/in', 'url must reach a public address: fd00::1 is unique local'],
    [
      'https://169.254.169.254/latest/meta-data',
      'url must reach a public address: 169.254.169.254 is link-local (cloud metadata among them)',
    ],
    ['https://0x7f.1/in', 'url must reach a public address: 127.0.0.1 is loopback'],
    ['https://[::127.0.0.1]/in', 'url must reach a public address: ::7f00:1 is loopback'],
    [
      'https://[::a9fe:a9fe]/latest/meta-data',
      'url must reach a public address: ::a9fe:a9fe is link-local (cloud metadata among them)',
    ],
    [
      'https://[::ffff:0:127.0.0.1]/in',
      'url must reach a public address: ::ffff:0:7f00:1 is IPv4-translated',
    ],
    ['https://[64:ff9b::127.0.0.1]/in', 'url must reach a public address: 64:ff9b::7f00:1 is NAT64'],
    ['http://hooks.example.com/in', 'url must be https (http only where WEBHOOK_ALLOW_HTTP is set)'],
    ['ftp://hooks.example.com/in', 'url must be an https URL'],
    ['https://user:pw@hooks.example.com/in', 'url must not hold a user name or password'],
    ['https://hooks.example.com/in#x', 'url must not have a fragment'],
    ['hooks.example.com/in', 'url must be an absolute https URL'],
  ])('refuses %s', async (url, problem) => {
    await expect(checkEndpointUrl(url, STRICT, resolving('93.184.216.34'))).resolves.toBe(problem);
  });

  it('refuses a name that does not resolve', async () => {
    const failing = () => Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' }));
    await expect(checkEndpointUrl('https://nowhere.invalid/', STRICT, failing)).resolves.toBe(
      "url's host nowhere.invalid does not resolve",
    );
  });

  it('lets private addresses and http through where the policy allows them', async () => {
    const open = { allowHttp: true, allowPrivateNetworks: true };
    await expect(checkEndpointUrl('http://10.0.0.1/in', open, resolving())).resolves.toBeUndefined();
  });
});

describe('guardedLookup (at connect: the resolver is stubbed)', () => {
  afterEach(() => jest.restoreAllMocks());

  it.each(['::7f00:1', '::ffff:7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::'])(
    'refuses a name that resolves to %s now',
    async (address) => {
      jest
        .spyOn(dns, 'lookup')
        .mockImplementation(((
          _name: string,
          _options: object,
          callback: (error: null, addresses: object[]) => void,
        ) => callback(null, [{ address, family: 6 }])) as unknown as typeof dns.lookup);
      const error = await new Promise((resolve) =>
        guardedLookup(STRICT)('hooks.example.com', {}, (failure) => resolve(failure)),
      );
      expect(error).toMatchObject({
        code: 'EADDRNOTALLOWED',
        message: `hooks.example.com resolves to a ${forbiddenAddress(address)} address`,
      });
    },
  );
});
