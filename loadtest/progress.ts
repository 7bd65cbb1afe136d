// The live progress line of a load run, on stderr (stdout keeps the result lines a script may read): rewritten in
// place every second on a terminal, a plain line every five seconds otherwise (a CI log, a pipe), where carriage
// returns would pile up into one unreadable line; a last one when the load stops.
import { fmtFixed, fmtInt } from './format.js';
import type { Recorder, WindowFigures } from './stats.js';

/** One progress line: totals so far, and the rate and percentiles of the calls since the previous line. */
export function progressLine(label: string, seconds: number, done: number, failed: number, w: WindowFigures): string {
  const lat = (v: number) => (Number.isNaN(v) ? '-' : `${fmtFixed(v, 2)} ms`);
  return (
    `${label} ${fmtFixed(Math.min(w.elapsedSeconds, seconds), 0)}/${seconds} s | ${fmtInt(done)} done | ` +
    `${fmtFixed(w.rate, 0)}/s | p50 ${lat(w.p50)} | p99 ${lat(w.p99)} | ${fmtInt(failed)} errors`
  );
}

export function startProgress(
  label: string,
  seconds: number,
  recorder: Recorder,
  stream: NodeJS.WriteStream = process.stderr,
): { stop(): void } {
  const tty = stream.isTTY === true;
  const every = tty ? 1000 : 5000;
  let last = Number.NEGATIVE_INFINITY;
  const print = () => {
    last = performance.now();
    const line = progressLine(label, seconds, recorder.done, recorder.failed, recorder.window());
    // \r and "erase line" (ECMA-48 EL, CSI 2 K): the line is rewritten in place.
    stream.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
  };
  const timer = setInterval(print, every);
  return {
    stop() {
      clearInterval(timer);
      // The last figures, unless a line has just shown them (its window would be a sliver of a second).
      if (performance.now() - last > every / 2) print();
      if (tty) stream.write('\n');
    },
  };
}
