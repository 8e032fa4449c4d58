import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';

/** The old generation's growth past the live heap before V8 collects (its own choice: up to 300 %). */
export const HEAP_GROWING_PERCENT = 70;

export interface GcContext {
  execArgv: readonly string[];
  nodeOptions: string;
  cpus: number;
}

function given(args: readonly string[], flags: RegExp): boolean {
  return args.some((arg) => flags.test(arg));
}

/** A heap limit of the process's own: V8 then sizes its growth by it. */
const HEAP_LIMIT =
  /^--(max[-_]old[-_]space[-_]size|max[-_]old[-_]space[-_]size[-_]percentage|max[-_]heap[-_]size)(=|$)/;
const GROWTH = /^--heap[-_]growing[-_]percent(=|$)/;
const MARKING = /^--(no-?|no_)?concurrent[-_]marking(=|$)/;
const PRETENURING = /^--(no-?|no_)?allocation[-_]site[-_]pretenuring(=|$)/;

/**
 * The V8 flags set at start, unless the command line (or NODE_OPTIONS, for heap limits) gives
 * its own: `--heap-growing-percent`; `--no-concurrent-marking` on one CPU, where the marking
 * thread would stall the request thread for tens of milliseconds at every full collection; and
 * `--no-allocation-site-pretenuring`: a burst of creates, each waiting for its commit, made V8
 * allocate the objects of every later request in the old generation, which then needed a full
 * collection every few hundred milliseconds for the rest of the process's life (list 0.65x,
 * p99 3-4x, peak RSS 1.2x, in about half the starts).
 */
export function gcFlags(context: GcContext): string[] {
  const all = [...context.execArgv, ...context.nodeOptions.split(/\s+/)];
  const flags: string[] = [];
  if (!given(context.execArgv, GROWTH) && !given(all, HEAP_LIMIT)) {
    flags.push(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  }
  if (context.cpus <= 1 && !given(context.execArgv, MARKING)) flags.push('--no-concurrent-marking');
  if (!given(context.execArgv, PRETENURING)) flags.push('--no-allocation-site-pretenuring');
  return flags;
}

/** Sets `gcFlags` for this process; they apply from the next collection on. */
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
