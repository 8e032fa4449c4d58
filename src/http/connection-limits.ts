import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpConfig } from '../config/app-config';

const SLICE_BYTES = 1024;
/** Unparsed bytes one connection may have waiting: past this it is a flood, and is closed. */
const MAX_WAITING_BYTES = 256 * 1024;

class Held {
  inProgress = 0;
  /** The newest request while any is in progress; never one already answered (it would live on). */
  latest: IncomingMessage | undefined = undefined;
  ended = false;
  waiting: Buffer[] = [];
  waitingBytes = 0;
  bytes = 0;
  progressAt = Date.now();

  constructor(readonly parse: (chunk: Buffer) => void) {}
}

const pausedByNode = (socket: Socket) => (socket as Socket & { _paused?: boolean })._paused === true;

/** Node parses a whole 64 KiB read at once (a thousand pipelined requests): held past `maxPipelined`. */
export function limitConnections(
  server: Server,
  limits: Pick<HttpConfig, 'maxPipelined' | 'idleTimeoutMs'> & { checkEveryMs: number },
): void {
  // Not a property of the socket: one added to Node's sockets makes every access to them slower.
  const connections = new Map<Socket, Held>();

  const accepts = (socket: Socket, state: Held) =>
    state.inProgress < limits.maxPipelined && !socket.writableNeedDrain && !pausedByNode(socket);

  /** Node closes at the client's end: it waits for the answers of what was sent whole. */
  const holdsEnd = (state: Held) =>
    state.waiting.length > 0 || (state.inProgress > 0 && state.latest?.complete === true);

  const feed = (socket: Socket, state: Held): void => {
    while (state.waiting.length > 0 && accepts(socket, state) && !socket.destroyed) {
      const chunk = state.waiting[0];
      const slice = chunk.subarray(0, SLICE_BYTES);
      if (slice.length === chunk.length) state.waiting.shift();
      else state.waiting[0] = chunk.subarray(SLICE_BYTES);
      state.waitingBytes -= slice.length;
      state.parse(slice);
    }
    // A socket Node paused itself, Node resumes.
    if (state.waiting.length === 0 && socket.isPaused() && !pausedByNode(socket)) socket.resume();
    if (state.ended) {
      state.ended = false;
      socket.emit('end');
    }
  };

  // Node's parser otherwise reads the socket's handle itself, with no 'data' event to hold back.
  server.prependListener('connection', (socket: Socket) => {
    const handle = (socket as Socket & { _handle?: { _consumed?: boolean } })._handle;
    if (handle) handle._consumed = true;
  });
  server.on('connection', (socket: Socket) => {
    const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
    const state = new Held((chunk) => emit('data', chunk));
    connections.set(socket, state);
    socket.once('close', () => connections.delete(socket));
    socket.on('drain', () => feed(socket, state));
    socket.on('resume', () => feed(socket, state));
    socket.emit = (event: string | symbol, ...args: unknown[]): boolean => {
      if (event === 'end' && holdsEnd(state)) {
        state.ended = true;
        return true;
      }
      if (event !== 'data') return emit(event, ...args);
      const chunk = args[0] as Buffer;
      if (state.waiting.length === 0 && accepts(socket, state) && chunk.length <= SLICE_BYTES)
        return emit('data', chunk);
      state.waiting.push(chunk);
      state.waitingBytes += chunk.length;
      if (state.waitingBytes > MAX_WAITING_BYTES) {
        socket.destroy();
        return true;
      }
      socket.pause();
      feed(socket, state);
      return true;
    };
  });

  // One function for every answer: nothing allocated per request.
  function answered(this: ServerResponse): void {
    const socket = this.req.socket;
    const state = connections.get(socket);
    if (!state) return;
    if (--state.inProgress === 0) state.latest = undefined;
    if (state.waiting.length > 0 || state.ended) feed(socket, state);
  }
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = connections.get(req.socket);
    if (!state) return;
    state.inProgress++;
    state.latest = req;
    res.on('close', answered);
  });

  const check = setInterval(() => {
    const now = Date.now();
    for (const [socket, state] of connections) {
      // Node's own timeout does not fire while answers are queued; bytes still queued are no progress.
      const bytes = socket.bytesRead + socket.bytesWritten - socket.writableLength;
      if (bytes !== state.bytes) {
        state.bytes = bytes;
        state.progressAt = now;
      } else if (now - state.progressAt >= limits.idleTimeoutMs) {
        socket.destroy();
      }
    }
  }, limits.checkEveryMs).unref();
  server.once('close', () => clearInterval(check));
}
