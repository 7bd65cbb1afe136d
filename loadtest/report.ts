// A load run's report: the JSON of all its figures (its schema in report-schema.ts, for whatever reads it back) and the HTML page
// rendered from it (loadtest/report-html.ts), written side by side as <scenario>-<ISO 8601 basic time>.{html,json}.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderHtml } from './report-html.js';
import type { LoadReport } from './report-schema.js';

export { type LoadReport, LoadReportSchema } from './report-schema.js';

/** 2026-11-25T10:15:00.123Z -> 20261125T101500Z: ISO 8601's basic format, safe in a file name on every system. */
export function basicIsoTime(iso: string): string {
  return `${iso.slice(0, 19).replace(/[-:]/g, '')}Z`;
}

/** Writes `<dir>/<scenario>-<time>.html` and `.json`; returns their paths. */
export function writeReport(report: LoadReport, dir: string): { html: string; json: string } {
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `${report.scenario}-${basicIsoTime(report.startedAt)}`);
  const paths = { html: `${base}.html`, json: `${base}.json` };
  writeFileSync(paths.json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(paths.html, renderHtml(report));
  return paths;
}
