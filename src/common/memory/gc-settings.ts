import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived a full collection before it
 * collects again. V8's own choice on a machine with memory to spare is up to 300 % (four times
 * the live heap), and under load nearly all of it is garbage that requests promoted: the
 * service's peak memory followed four times its live heap. At 70 % the peak under load was
 * about 65 MB lower, for no measurable CPU; 50 % cost 3-5 % more CPU (docs/performance.md).
 */
export const HEAP_GROWING_PERCENT = 70;

/** What decides the settings: how the process was started, and the CPUs it may run on. */
export interface GcContext {
  execArgv: readonly string[];
  nodeOptions: string;
  cpus: number;
}

function given(context: GcContext, flags: RegExp): boolean {
  return [...context.execArgv, ...context.nodeOptions.split(/\s+/)].some((arg) => flags.test(arg));
}

/**
 * The V8 flags the service sets at start:
 * - `--heap-growing-percent`, unless the process was started with a growth or a heap limit of
 *   its own (`--heap-growing-percent`, `--max-old-space-size`), which then stands;
 * - `--no-concurrent-marking` when the process may use one CPU only (pinned, or a one-CPU
 *   machine): V8's marking threads then take that CPU from the request thread for about 30 ms
 *   at every full collection, the longest stall under load; marked in small steps on the
 *   request thread instead, the 99th percentile of a cached get fell from 40 to 26 ms at the
 *   same throughput (docs/performance.md). Unless a `--concurrent-marking` flag was given.
 */
export function gcFlags(context: GcContext): string[] {
  const flags: string[] = [];
  if (!given(context, /^--(heap[-_]growing[-_]percent|max[-_]old[-_]space[-_]size)(=|$)/)) {
    flags.push(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  }
  if (context.cpus <= 1 && !given(context, /^--(no[-_])?concurrent[-_]marking(=|$)/)) {
    flags.push('--no-concurrent-marking');
  }
  return flags;
}

/** Sets `gcFlags` for this process. Call it first thing: they apply from the next collection on. */
export function applyGcSettings(
  context: GcContext = {
    execArgv: process.execArgv,
    nodeOptions: process.env.NODE_OPTIONS ?? '',
    cpus: availableParallelism(),
  },
): string[] {
  const flags = gcFlags(context);
  for (const flag of flags) setFlagsFromString(flag);
  return flags;
}
