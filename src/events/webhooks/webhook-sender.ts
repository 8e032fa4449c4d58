import { Agent } from 'undici';
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
function retryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * POSTs once, never throws, follows no redirect, ends at `timeoutMs` and reads `excerptBytes` at
 * most. It drives undici's dispatcher directly: its `request()` wraps each answer in a stream and
 * an AbortSignal, a third of a delivery's HTTP cost for an answer that is mostly discarded (measured).
 */
export function send(
  target: { url: string; headers: Record<string, string>; body: string },
  options: SendOptions,
): Promise<Attempt> {
  const started = performance.now();
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return Promise.resolve({ ok: false, error: 'the URL is not valid', excerpt: '', durationMs: 0 });
  }
  const refused = refusedHost(url, options.policy);
  if (refused)
    return Promise.resolve({ ok: false, error: `the address is ${refused}`, excerpt: '', durationMs: 0 });
  return new Promise<Attempt>((resolve) => {
    let status: number | undefined;
    let retryAfter: string | undefined;
    const kept: Buffer[] = [];
    let length = 0;
    let abort: ((reason: Error) => void) | undefined;
    let timedOut = false;
    let settled = false;
    // One deadline for the whole attempt: a receiver that trickles its answer meets it too.
    const timer = setTimeout(() => {
      timedOut = true;
      // Not connected yet: undici calls onConnect only then, and it cancels the request at once.
      if (abort) abort(new Error('timeout'));
      else failed(new Error('timeout'));
    }, options.timeoutMs);
    const settle = (attempt: Omit<Attempt, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...attempt, durationMs: Math.round(performance.now() - started) });
    };
    const answered = () =>
      settle({
        ok: status! >= 200 && status! < 300,
        status,
        ...(status === 429 || status === 503 ? { retryAfterMs: retryAfterMs(retryAfter) } : {}),
        excerpt: Buffer.concat(kept).toString('utf8'),
      });
    const failed = (error: Error) => {
      if (timedOut)
        return settle({ ok: false, error: `no answer within ${options.timeoutMs} ms`, excerpt: '' });
      const { code, message } = error as NodeJS.ErrnoException;
      settle({ ok: false, error: ERRORS[code ?? ''] ?? message.slice(0, 200), excerpt: '' });
    };
    try {
      agentFor(options).dispatch(
        {
          origin: url.origin,
          path: url.pathname + url.search,
          method: 'POST',
          headers: {
            ...target.headers,
            'content-type': 'application/json',
            'user-agent': 'petstore-webhooks/1.0',
          },
          body: target.body,
        },
        {
          onConnect: (cancel) => {
            abort = cancel;
            if (timedOut) cancel(new Error('timeout'));
          },
          onHeaders: (statusCode, headers) => {
            if (statusCode < 200) return true; // informational (103): the final answer follows
            status = statusCode;
            for (let index = 0; index < headers.length; index += 2)
              if (
                headers[index].length === 11 &&
                headers[index].toString('latin1').toLowerCase() === 'retry-after'
              )
                retryAfter = headers[index + 1].toString('latin1');
            return true;
          },
          onData: (chunk) => {
            kept.push(chunk.subarray(0, options.excerptBytes - length));
            length += chunk.length;
            if (length <= options.excerptBytes) return true;
            // The rest is never read: the answer is settled and its connection closed.
            answered();
            abort?.(new Error('excerpt read'));
            return false;
          },
          onComplete: answered,
          onError: failed,
        },
      );
    } catch (error) {
      failed(error as Error);
    }
  });
}
