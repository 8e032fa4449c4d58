import http from 'node:http';
import https from 'node:https';
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

// Kept alive: a connect and TLS handshake less per delivery; each socket's address was checked as it connected.
const agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: 4000 }),
  'https:': new https.Agent({ keepAlive: true, timeout: 4000 }),
};
const ERRORS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved',
  EHOSTUNREACH: 'the host is unreachable',
};

/** Retry-After in ms (seconds or an HTTP date); undefined if absent or malformed. */
function retryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** POSTs once, never throws, follows no redirect, ends at `timeoutMs` and reads `excerptBytes` at most. */
export function send(
  target: { url: string; headers: Record<string, string>; body: string },
  { policy, timeoutMs, excerptBytes }: { policy: AddressPolicy; timeoutMs: number; excerptBytes: number },
): Promise<Attempt> {
  const started = performance.now();
  const url = new URL(target.url);
  const refused = refusedHost(url, policy);
  if (refused)
    return Promise.resolve({ ok: false, error: `the address is ${refused}`, excerpt: '', durationMs: 0 });
  return new Promise((resolve) => {
    // The first outcome wins: a promise settles once.
    const finish = (attempt: Omit<Attempt, 'durationMs'>) => {
      clearTimeout(timer);
      resolve({ ...attempt, durationMs: Math.round(performance.now() - started) });
    };
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(
      url,
      {
        method: 'POST',
        agent: agents[url.protocol as keyof typeof agents],
        lookup: guardedLookup(policy),
        headers: {
          ...target.headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(target.body),
          'user-agent': 'petstore-webhooks/1.0',
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let kept = 0;
        const answered = () =>
          finish({
            ok: status >= 200 && status < 300,
            status,
            ...(status === 429 || status === 503
              ? { retryAfterMs: retryAfterMs(response.headers['retry-after']) }
              : {}),
            excerpt: Buffer.concat(chunks).toString('utf8'),
          });
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk.subarray(0, excerptBytes - kept));
          kept = Math.min(excerptBytes, kept + chunk.length);
          if (kept < excerptBytes) return;
          answered();
          response.destroy(); // the rest is never read
        });
        response.on('end', answered);
        response.on('error', answered);
      },
    );
    const timer = setTimeout(() => {
      finish({ ok: false, error: `no answer within ${timeoutMs} ms`, excerpt: '' });
      request.destroy();
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({ ok: false, error: ERRORS[error.code ?? ''] ?? error.message.slice(0, 200), excerpt: '' }),
    );
    request.end(target.body);
  });
}
