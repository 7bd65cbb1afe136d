// `npm run loadtest -- <relay|paid|mint|commerce> [--duration S] [--connections N] [--db postgresql] ...`: starts the
// seeded stack and its counterparts on the fixed ports (loadtest/world.ts), drives one scenario for the duration
// with a live progress line on stderr, writes loadtest/results/<scenario>-<time>.html and .json, prints their paths,
// and stops everything it started — at the end, on a failure, and on Ctrl-C (a second Ctrl-C kills at once).
//
// Exit status: 0 when every call succeeded, 1 when a call failed (a non-2xx, a paid call not paid and settled, a
// mint without a credential, a connection error) or none succeeded or the run could not start, 2 for a command line
// that does not parse, 130 when interrupted.
import { relative } from 'node:path';
import { fmtFixed, fmtInt } from './format.js';
import { onInterrupt, runCommand } from './cli.js';
import { type RunArgs, RUN_USAGE, parseRunArgs } from './options.js';
import { killAll } from './processes.js';
import { startProgress } from './progress.js';
import { type LoadReport, writeReport } from './report.js';
import { SPECS, runScenario } from './scenarios.js';
import { Recorder } from './stats.js';
import { type World, assertPortsFree, startWorld } from './world.js';

/** What the start-up may take on a loaded machine (migrations, five processes), beyond the load itself. */
const SETUP_ALLOWANCE_MS = 5 * 60_000;

const hostPort = (url: string): string => new URL(url).host;

/** A path as the person typed it would look: relative to where they stand when that is shorter. */
const shown = (p: string): string => {
  const r = relative(process.cwd(), p);
  return r.startsWith('..') ? p : r;
};

async function main(args: RunArgs): Promise<number> {
  const spec = SPECS[args.scenario];
  const connections = args.connections ?? spec.connections;
  const stopLoad = new AbortController();
  let world: World | undefined;
  onInterrupt('loadtest', () => stopLoad.abort());
  const watchdog = setTimeout(
    () => {
      process.stderr.write('loadtest: watchdog fired, killing everything\n');
      killAll('SIGKILL');
      process.exit(1);
    },
    args.duration * 1000 + SETUP_ALLOWANCE_MS,
  );
  watchdog.unref();

  try {
    await assertPortsFree(args.ports);
    process.stderr.write(`loadtest: starting the stack (${args.db}) and its counterparts\n`);
    world = await startWorld({ db: args.db, ports: args.ports, commerce: spec.commerce });
    if (stopLoad.signal.aborted) return 130;
    process.stderr.write(
      `loadtest: proxy ${world.stack.proxyUrl}, admin ${world.stack.adminUrl}, upstream ${world.upstream.url}, ` +
        `merchant ${world.merchant.url}\nloadtest: ${args.scenario} for ${args.duration} s at ${connections} connections\n`,
    );
    const startedAt = new Date().toISOString();
    const recorder = new Recorder();
    const progress = startProgress(args.scenario, args.duration, recorder);
    try {
      await runScenario(args.scenario, world, {
        seconds: args.duration,
        connections,
        sink: recorder,
        signal: stopLoad.signal,
      });
    } finally {
      progress.stop();
    }
    const f = recorder.finish();
    const report: LoadReport = {
      scenario: args.scenario,
      description: spec.description,
      startedAt,
      finishedAt: new Date().toISOString(),
      settings: {
        durationSeconds: args.duration,
        connections,
        db: args.db,
        endpoints: {
          proxy: hostPort(world.stack.proxyUrl),
          admin: hostPort(world.stack.adminUrl),
          upstream: hostPort(world.upstream.url),
          merchant: hostPort(world.merchant.url),
        },
      },
      interrupted: stopLoad.signal.aborted,
      summary: {
        seconds: f.seconds,
        requests: f.ok + f.failed,
        ok: f.ok,
        failed: f.failed,
        rate: f.rate,
        latency: f.latency,
      },
      perSecond: f.perSecond,
      histogram: f.histogram,
      errors: f.errors,
      passed: f.failed === 0 && f.ok > 0,
    };
    await world.stop();
    const paths = writeReport(report, args.out);
    const l = f.latency;
    process.stdout.write(
      `${args.scenario}: ${fmtInt(f.ok + f.failed)} calls in ${fmtFixed(f.seconds, 1)} s, ` +
        `${fmtFixed(f.rate, 1)} successful/s, p50 ${l === null ? '-' : fmtFixed(l.p50, 2)} ms, ` +
        `p99 ${l === null ? '-' : fmtFixed(l.p99, 2)} ms, ${fmtInt(f.failed)} failed: ${report.passed ? 'PASS' : 'FAIL'}` +
        `${report.interrupted ? ' (interrupted)' : ''}\n` +
        `${f.errors.map((e) => `  ${fmtInt(e.count)} x ${e.message}\n`).join('')}` +
        `report:  ${shown(paths.html)}\nfigures: ${shown(paths.json)}\n`,
    );
    if (report.interrupted) return 130;
    return report.passed ? 0 : 1;
  } catch (err) {
    process.stderr.write(`loadtest failed: ${String(err instanceof Error ? err.message : err)}\n`);
    return stopLoad.signal.aborted ? 130 : 1;
  } finally {
    await world?.stop();
    clearTimeout(watchdog);
  }
}

runCommand('loadtest', RUN_USAGE, parseRunArgs, main);
