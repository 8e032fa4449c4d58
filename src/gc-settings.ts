import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';

/** The old generation's growth past the live heap before V8 collects (its own choice: up to 300 %). */
export const HEAP_GROWING_PERCENT = 40;

export interface GcContext {
  execArgv: readonly string[];
  nodeOptions: string;
  cpus: number;
}

function given(args: readonly string[], flags: RegExp): boolean {
  return args.some((arg) => flags.test(arg));
}

/** A heap limit of the process's own: V8 then sizes its growth by it (NODE_OPTIONS included). */
const HEAP_LIMIT = /^--(max[-_]old[-_]space[-_]size([-_]percentage)?|max[-_]heap[-_]size)(=|$)/;
const GROWTH = /^--heap[-_]growing[-_]percent(=|$)/;
const MARKING = /^--(no-?|no_)?concurrent[-_]marking(=|$)/;
const PRETENURING = /^--(no-?|no_)?allocation[-_]site[-_]pretenuring(=|$)/;

// Unless the command line gives its own. One CPU: concurrent marking stalled requests tens of ms per full GC.
// Pretenuring: a burst of creates put every later request's objects in the old generation, then full GCs
// every few hundred ms for the process's life (list 0.65x, p99 3-4x, peak RSS 1.2x, in half the starts).
export function gcFlags(context: GcContext): string[] {
  const all = [...context.execArgv, ...context.nodeOptions.split(/\s+/)];
  const flags: string[] = [];
  if (!given(context.execArgv, GROWTH) && !given(all, HEAP_LIMIT))
    flags.push(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  if (context.cpus <= 1 && !given(context.execArgv, MARKING)) flags.push('--no-concurrent-marking');
  if (!given(context.execArgv, PRETENURING)) flags.push('--no-allocation-site-pretenuring');
  return flags;
}

/** They apply from the next collection on. */
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
