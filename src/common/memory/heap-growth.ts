import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived a full collection before it
 * collects again. V8's own choice on a machine with memory to spare is up to 300 % (four times
 * the live heap), and under load nearly all of it is garbage that a request promoted: the
 * service's peak memory followed four times its live heap. At 100 % the peak follows twice the
 * live heap, about 60 MB less under load, for no measurable CPU (docs/performance.md, Memory).
 */
export const HEAP_GROWING_PERCENT = 100;

/**
 * Sets V8's heap growth to `HEAP_GROWING_PERCENT`, unless the process was started with a growth
 * or a heap limit of its own (`--heap-growing-percent`, `--max-old-space-size` on the command
 * line or in NODE_OPTIONS), which then stands. Call it first thing: it applies from the next
 * full collection on. Gives whether it set the flag.
 */
export function limitHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): boolean {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((arg) =>
    /^--(heap[-_]growing[-_]percent|max[-_]old[-_]space[-_]size)(=|$)/.test(arg),
  );
  if (given) return false;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
