import { Agent, request } from 'undici';
import { AddressPolicy, guardedLookup, refusedHost } from './address-policy';

/** One attempt's outcome; `excerpt` is at most the first `excerptBytes` of the answer. */
export interface Attempt {
  ok: boolean;
  status?: number;
  retryAfterMs?: number;
  error?: string;
  excerpt: string;
  durationMs: number;
}

export interface SendOptions {
  policy: AddressPolicy;
  timeoutMs: number;
  excerptBytes: number;
}

const ERRORS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  UND_ERR_SOCKET: 'the connection was reset',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved',
  EHOSTUNREACH: 'the host is unreachable',
};

/**
 * undici's agent: a keep-alive pool per receiver origin, so a connect and TLS handshake less per
 * delivery. Every new connection resolves its host through the address policy (DNS may change).
 */
const agents = new Map<boolean, Agent>();
/** One agent per lookup rule: only `allowPrivateNetworks` changes how a connection is made. */
function agentFor({ policy }: SendOptions): Agent {
  let agent = agents.get(policy.allowPrivateNetworks);
  if (!agent)
    agents.set(
      policy.allowPrivateNetworks,
      // An idle connection closes after 4 s whatever the receiver's Keep-Alive asks; the attempt's
      // own deadline (below) bounds connecting, the head and the body together.
      (agent = new Agent({
        keepAliveTimeout: 4000,
        keepAliveMaxTimeout: 4000,
        connect: { lookup: guardedLookup(policy) },
      })),
    );
  return agent;
}

/** Retry-After in ms (seconds or an HTTP date); undefined if absent or malformed. */
function retryAfterMs(header: string | string[] | undefined): number | undefined {
  if (typeof header !== 'string') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** POSTs once, never throws, follows no redirect, ends at `timeoutMs` and reads `excerptBytes` at most. */
export async function send(
  target: { url: string; headers: Record<string, string>; body: string },
  options: SendOptions,
): Promise<Attempt> {
  const started = performance.now();
  const url = new URL(target.url);
  const refused = refusedHost(url, options.policy);
  if (refused) return { ok: false, error: `the address is ${refused}`, excerpt: '', durationMs: 0 };
  // One deadline for the whole attempt: a receiver that trickles its answer meets it too.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  const outcome = (attempt: Omit<Attempt, 'durationMs'>): Attempt => ({
    ...attempt,
    durationMs: Math.round(performance.now() - started),
  });
  try {
    const response = await request(url, {
      method: 'POST',
      dispatcher: agentFor(options),
      signal: deadline.signal,
      headers: {
        ...target.headers,
        'content-type': 'application/json',
        'user-agent': 'petstore-webhooks/1.0',
      },
      body: target.body,
    });
    const status = response.statusCode;
    const kept: Buffer[] = [];
    let length = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      kept.push(chunk.subarray(0, options.excerptBytes - length));
      length += chunk.length;
      if (length >= options.excerptBytes) break; // the rest is never read: leaving the loop destroys the body
    }
    return outcome({
      ok: status >= 200 && status < 300,
      status,
      ...(status === 429 || status === 503
        ? { retryAfterMs: retryAfterMs(response.headers['retry-after']) }
        : {}),
      excerpt: Buffer.concat(kept).toString('utf8'),
    });
  } catch (error) {
    if (deadline.signal.aborted)
      return outcome({ ok: false, error: `no answer within ${options.timeoutMs} ms`, excerpt: '' });
    const { code, message } = error as NodeJS.ErrnoException;
    return outcome({ ok: false, error: ERRORS[code ?? ''] ?? message.slice(0, 200), excerpt: '' });
  } finally {
    clearTimeout(timer);
  }
}
