import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';

/**
 * How far the old generation grows past what survived a full collection before V8 collects again.
 * V8's own choice here is up to 300 %, and under load nearly all of it is garbage: the peak
 * memory followed four times the live heap (docs/performance.md#memory).
 */
export const HEAP_GROWING_PERCENT = 70;

/** How the process was started, and the CPUs it may run on. */
export interface GcContext {
  execArgv: readonly string[];
  nodeOptions: string;
  cpus: number;
}

function given(args: readonly string[], flags: RegExp): boolean {
  return args.some((arg) => flags.test(arg));
}

/** A heap limit of the process's own: V8 then chooses its growth from it. */
const HEAP_LIMIT =
  /^--(max[-_]old[-_]space[-_]size|max[-_]old[-_]space[-_]size[-_]percentage|max[-_]heap[-_]size)(=|$)/;
const GROWTH = /^--heap[-_]growing[-_]percent(=|$)/;
const MARKING = /^--(no-?|no_)?concurrent[-_]marking(=|$)/;

/**
 * The V8 flags set at start, unless the command line (or NODE_OPTIONS, for heap limits) gives
 * its own: `--heap-growing-percent`, and `--no-concurrent-marking` on one CPU, where the marking
 * thread would stall the request thread for tens of milliseconds at every full collection.
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
