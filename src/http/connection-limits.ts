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
  /** Hands bytes to Node's parser, once the connection is held (it has pipelined). */
  parse: ((chunk: Buffer) => void) | undefined = undefined;
  /** Requests Node's own read parsed past `maxPipelined`: started, in order, as others are answered. */
  deferred: Array<[IncomingMessage, ServerResponse]> = [];
}

const pausedByNode = (socket: Socket) => (socket as Socket & { _paused?: boolean })._paused === true;

/**
 * Node parses a whole 64 KiB read at once (a thousand pipelined requests): at most `maxPipelined`
 * of a connection reach `handle` at once, the others wait for their turn.
 */
export function limitConnections(
  server: Server,
  limits: Pick<HttpConfig, 'maxPipelined' | 'idleTimeoutMs'> & { checkEveryMs: number },
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): void {
  // Not a property of the socket: one added to Node's sockets makes every access to them slower.
  const connections = new Map<Socket, Held>();

  const accepts = (socket: Socket, state: Held) =>
    state.inProgress < limits.maxPipelined && !socket.writableNeedDrain && !pausedByNode(socket);

  /** Node closes at the client's end: it waits for the answers of what was sent whole. */
  const holdsEnd = (state: Held) =>
    state.waiting.length > 0 ||
    state.deferred.length > 0 ||
    (state.inProgress > 0 && state.latest?.complete === true);

  const start = (state: Held, req: IncomingMessage, res: ServerResponse): void => {
    state.inProgress++;
    state.latest = req;
    res.on('close', answered);
    handle(req, res);
  };

  const feed = (socket: Socket, state: Held): void => {
    while (state.deferred.length > 0 && accepts(socket, state) && !socket.destroyed) {
      const [req, res] = state.deferred.shift()!;
      start(state, req, res);
    }
    while (
      state.deferred.length === 0 &&
      state.waiting.length > 0 &&
      accepts(socket, state) &&
      !socket.destroyed
    ) {
      const chunk = state.waiting[0];
      const slice = chunk.subarray(0, SLICE_BYTES);
      if (slice.length === chunk.length) state.waiting.shift();
      else state.waiting[0] = chunk.subarray(SLICE_BYTES);
      state.waitingBytes -= slice.length;
      state.parse!(slice);
    }
    // A socket Node paused itself, Node resumes.
    if (state.waiting.length === 0 && socket.isPaused() && !pausedByNode(socket)) socket.resume();
    if (state.ended) {
      state.ended = false;
      socket.emit('end');
    }
  };

  /**
   * Node's parser reads the socket's handle itself, the cheap way, and cannot be held back there:
   * what one read brings is parsed whole, and requests past `maxPipelined` are deferred. From a
   * connection's second request in progress on, its bytes come through `data` events, which are
   * held while it is at `maxPipelined`.
   */
  const hold = (socket: Socket, state: Held): void => {
    const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
    state.parse = (chunk) => emit('data', chunk);
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
    // A `data` listener is what makes Node's server hand the reads over from its parser.
    socket.on('data', () => undefined);
  };

  server.on('connection', (socket: Socket) => {
    connections.set(socket, new Held());
    socket.once('close', () => connections.delete(socket));
  });

  // One function for every answer: nothing allocated per request.
  function answered(this: ServerResponse): void {
    const socket = this.req.socket;
    const state = connections.get(socket);
    if (!state) return;
    if (--state.inProgress === 0) state.latest = undefined;
    if (state.deferred.length > 0 || state.waiting.length > 0 || state.ended) feed(socket, state);
  }
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const state = connections.get(socket);
    if (!state) return handle(req, res);
    const waits = state.deferred.length > 0 || !accepts(socket, state);
    if ((waits || state.inProgress > 0) && state.parse === undefined) hold(socket, state);
    if (waits) state.deferred.push([req, res]);
    else start(state, req, res);
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
