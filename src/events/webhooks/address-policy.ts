import { lookup as dnsLookup, LookupAddress, promises as dns } from 'node:dns';
import { isIP, LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { EventsConfig } from '../../config/app-config';

export type AddressPolicy = Pick<EventsConfig, 'allowHttp' | 'allowPrivateNetworks'>;

const RANGES: Record<string, string> = {
  carrierGradeNat: 'carrier-grade NAT',
  linkLocal: 'link-local (cloud metadata among them)',
  uniqueLocal: 'unique local',
  rfc6145: 'IPv4-translated',
  rfc6052: 'NAT64',
  '6to4': '6to4',
  teredo: 'Teredo',
};
/** Deprecated (RFC 4291), and named by no ipaddr.js range: its last 32 bits are an IPv4 address. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
/** Where IANA allocates public IPv6 addresses; ipaddr.js calls every range it does not name unicast. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

const reason = (range: string) => (range === 'unicast' ? undefined : (RANGES[range] ?? range));

/**
 * Why a webhook must never contact `ip`, or undefined. IPv4: only ipaddr.js's `unicast` (globally
 * routable) passes. IPv6: a mapped address as its IPv4 one; the forms that embed an IPv4 address
 * (NAT64, 6to4, Teredo, translated, compatible) never; else only unicast in 2000::/3.
 */
export function forbiddenAddress(ip: string): string | undefined {
  if (!ipaddr.isValid(ip)) return 'not an IP address';
  const address = ipaddr.parse(ip);
  if (address instanceof ipaddr.IPv4) return reason(address.range());
  if (address.isIPv4MappedAddress()) return reason(address.toIPv4Address().range());
  const range = address.range();
  if (range !== 'unicast') return reason(range);
  if (address.match(IPV4_COMPATIBLE))
    return reason(ipaddr.fromByteArray(address.toByteArray().slice(12)).range()) ?? 'IPv4-compatible';
  return address.match(GLOBAL_UNICAST) ? undefined : 'outside global unicast';
}

type Lookup = (hostname: string, options: { all: true; verbatim?: boolean }) => Promise<LookupAddress[]>;

const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** What is wrong with `url` as a webhook endpoint, or undefined; it resolves the name but never connects. */
export async function checkEndpointUrl(
  url: string,
  policy: AddressPolicy,
  lookup: Lookup = dns.lookup,
): Promise<string | undefined> {
  if (!URL.canParse(url)) return 'url must be an absolute https URL';
  const parsed = new URL(url);
  if (parsed.protocol === 'http:' && !policy.allowHttp)
    return 'url must be https (http only where WEBHOOK_ALLOW_HTTP is set)';
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'url must be an https URL';
  if (parsed.username || parsed.password) return 'url must not hold a user name or password';
  if (url.includes('#')) return 'url must not have a fragment';
  if (policy.allowPrivateNetworks) return undefined;
  const host = hostOf(parsed);
  const addresses = isIP(host)
    ? [host]
    : await lookup(host, { all: true, verbatim: true }).then(
        (all) => all.map((a) => a.address),
        () => [],
      );
  if (addresses.length === 0) return `url's host ${host} does not resolve`;
  const forbidden = addresses.map((address) => forbiddenAddress(address)).find((why) => why !== undefined);
  return forbidden && `url must reach a public address: ${host} is ${forbidden}`;
}

/** `lookup` for each new connection: DNS may answer otherwise than at registration (IP literals: `refusedHost`). */
export function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = policy.allowPrivateNetworks
        ? undefined
        : addresses.map(({ address }) => forbiddenAddress(address)).find((reason) => reason !== undefined);
      if (refused !== undefined || addresses.length === 0) {
        const denied = new Error(`${hostname} resolves to a ${refused ?? 'missing'} address`);
        return callback(Object.assign(denied, { code: 'EADDRNOTALLOWED' }), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** Why a URL whose host is an IP literal must not be contacted; undefined for a name or a public address. */
export function refusedHost(url: URL, policy: AddressPolicy): string | undefined {
  const host = hostOf(url);
  return policy.allowPrivateNetworks || !isIP(host) ? undefined : forbiddenAddress(host);
}
