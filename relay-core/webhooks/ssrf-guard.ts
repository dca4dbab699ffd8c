// Outbound webhook targets: which addresses the relay may connect to (checked at registration and on every delivery).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

// The check runs again after DNS resolution, and the checked address is the one connected to: no DNS rebinding.

/**
 * Why an address is refused, or null when it is a public unicast address. Only ipaddr.js's `unicast`
 * range passes: loopback, private, link-local (169.254.169.254 and other cloud metadata), CGNAT
 * (100.100.100.200), unique-local (fd00:ec2::254), multicast, broadcast, unspecified, reserved,
 * documentation and the v6 ranges that embed a v4 address (NAT64, 6to4, Teredo) are all refused.
 * IPv4-mapped v6 addresses are judged as the v4 address they carry.
 */
export function refusedAddressReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  return range === 'unicast' ? null : `${parsed.toString()} is a ${range} address`;
}

export class WebhookTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

export interface TargetPolicy {
  /** RELAY_WEBHOOK_ALLOW_PRIVATE: loopback and private receivers allowed (tests, local development). */
  allowPrivate: boolean;
}

/** The URL's host without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

/**
 * Throws WebhookTargetError unless the URL is http(s) and every address its host resolves to now may be
 * contacted. Used when a webhook URL is registered (the card update refuses it, nothing stored).
 */
export async function assertAllowedTarget(rawUrl: string, policy: TargetPolicy): Promise<void> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new WebhookTargetError('is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new WebhookTargetError('must be an http or https URL');
  if (policy.allowPrivate) return;
  const host = hostOf(url);
  if (isIP(host)) {
    const reason = refusedAddressReason(host);
    if (reason) throw new WebhookTargetError(`refused: ${reason} (webhooks go to public addresses only)`);
    return;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host);
  } catch {
    // A name that does not resolve (yet, or from here) is accepted: every delivery resolves and checks it again.
    return;
  }
  for (const { address } of addresses) {
    const reason = refusedAddressReason(address);
    if (reason)
      throw new WebhookTargetError(`refused: ${host} resolves to ${reason} (webhooks go to public addresses only)`);
  }
}

/**
 * A `lookup` for http(s).request: resolves the host, refuses it when any address is not allowed, and
 * hands the socket exactly the address it checked, so a second DNS answer cannot point it elsewhere.
 */
export function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, verbatim: true, family: options.family }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const refused = policy.allowPrivate
        ? null
        : addresses.map((a) => refusedAddressReason(a.address)).find((r) => r !== null);
      const first = addresses[0];
      if (refused || !first) {
        const err = new WebhookTargetError(
          refused ? `refused: ${hostname} resolves to ${refused}` : `${hostname} has no address`,
        );
        return callback(err as NodeJS.ErrnoException, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [first]);
      callback(null, first.address, first.family);
    });
  };
}

/** Checks an IP-literal host at delivery time (sockets skip `lookup` for literals). */
export function assertAllowedLiteral(url: URL, policy: TargetPolicy): void {
  const host = hostOf(url);
  if (policy.allowPrivate || !isIP(host)) return;
  const reason = refusedAddressReason(host);
  if (reason) throw new WebhookTargetError(`refused: ${reason}`);
}
