import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived a full collection before it
 * collects again. V8's own choice on a machine with memory to spare is up to 300 % (four times
 * the live heap), and under load nearly all of it is garbage that requests promoted: the
 * service's peak memory followed four times its live heap. At 100 % the peak under load fell
 * from 231 to 166 MB at the same CPU; 70 % took another 8-10 MB off for 2-4 % more CPU with
 * 10,000 animals cached (docs/performance.md, step 19).
 */
export const HEAP_GROWING_PERCENT = 70;

/** What decides the settings: how the process was started, and the CPUs it may run on. */
export interface GcContext {
  execArgv: readonly string[];
  nodeOptions: string;
  cpus: number;
}

function given(args: readonly string[], flags: RegExp): boolean {
  return args.some((arg) => flags.test(arg));
}

/** A heap limit of the process's own: then V8 chooses its growth from it. */
const HEAP_LIMIT =
  /^--(max[-_]old[-_]space[-_]size|max[-_]old[-_]space[-_]size[-_]percentage|max[-_]heap[-_]size)(=|$)/;
const GROWTH = /^--heap[-_]growing[-_]percent(=|$)/;
const MARKING = /^--(no-?|no_)?concurrent[-_]marking(=|$)/;

/**
 * The V8 flags the service sets at start:
 * - `--heap-growing-percent`, unless the process was started with a growth or a heap limit of
 *   its own (`--heap-growing-percent` on the command line; `--max-old-space-size` and the other
 *   heap limits on the command line or in NODE_OPTIONS), which then stands;
 * - `--no-concurrent-marking` when the process may use one CPU only (pinned, or a one-CPU
 *   machine; `os.availableParallelism()` does not see a container's CPU quota): V8's marking
 *   thread then takes that CPU from the request thread for about 30 ms at every full
 *   collection, the longest stall under load; marked in small steps on the request thread
 *   instead, the 99th percentile of a cached get fell from 40 to 26 ms (docs/performance.md,
 *   step 20). Unless a `--concurrent-marking` flag was given on the command line.
 * Node refuses these V8 flags in NODE_OPTIONS, so the command line is where to give them.
 */
export function gcFlags(context: GcContext): string[] {
  const all = [...context.execArgv, ...context.nodeOptions.split(/\s+/)];
  const flags: string[] = [];
  if (!given(context.execArgv, GROWTH) && !given(all, HEAP_LIMIT)) {
    flags.push(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  }
  if (context.cpus <= 1 && !given(context.execArgv, MARKING)) flags.push('--no-concurrent-marking');
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
