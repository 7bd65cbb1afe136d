// The HTML page of a load run: one self-contained file (inline CSS and SVG, no script, no font, image or style
// sheet fetched from anywhere) so it opens from disk, from a CI artefact or from a mail attachment alike. Throughput
// over time and the latency histogram are SVG bar charts; every bar carries its figures in a <title> (the browser's
// tooltip), and the per-second figures are in a table too.
import { fmtFixed, fmtInt, group } from './format.js';
import type { LoadReport } from './report-schema.js';
import { niceCeil } from './stats.js';

const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** An axis label: a round number without trailing zeros (2.5, 1,000). */
const fmtAxis = (n: number): string => group(String(Number(n.toPrecision(6))));

const ms = (v: number | null | undefined): string => (v === null || v === undefined ? '-' : fmtFixed(v, 2));

const calls = (n: number): string => `${fmtInt(n)} call${n === 1 ? '' : 's'}`;

interface Segment {
  readonly value: number;
  readonly cls: string;
}

interface Bar {
  readonly segments: Segment[];
  /** The bar's tooltip. */
  readonly title: string;
}

interface Chart {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly bars: Bar[];
  /** The label of each bar boundary (bars.length + 1 of them); only some are drawn. */
  readonly edges: string[];
}

const W = 760;
const H = 260;
const M = { left: 64, right: 16, top: 16, bottom: 44 };

/** A bar chart of stacked segments with a y axis from 0, as inline SVG. */
function barChart(c: Chart): string {
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const out: string[] = [
    `<svg class="chart" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(c.title)}">`,
    `<title>${esc(c.title)}</title>`,
  ];
  if (c.bars.length === 0) {
    out.push(`<text x="${W / 2}" y="${H / 2}" text-anchor="middle" class="muted">no data</text></svg>`);
    return out.join('\n');
  }
  const top = niceCeil(Math.max(...c.bars.map((b) => b.segments.reduce((a, s) => a + s.value, 0))));
  const y = (v: number) => M.top + plotH - (v / top) * plotH;
  const bw = plotW / c.bars.length;
  for (let i = 0; i <= 4; i += 1) {
    const v = (top * i) / 4;
    const yy = y(v).toFixed(1);
    out.push(`<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${yy}" y2="${yy}"/>`);
    out.push(`<text class="tick" x="${M.left - 6}" y="${yy}" text-anchor="end" dy="0.32em">${fmtAxis(v)}</text>`);
  }
  c.bars.forEach((b, i) => {
    const x = M.left + i * bw;
    let base = 0;
    const rects = b.segments
      .filter((s) => s.value > 0)
      .map((s) => {
        const r = `<rect class="${s.cls}" x="${(x + bw * 0.08).toFixed(1)}" y="${y(base + s.value).toFixed(1)}" width="${(bw * 0.84).toFixed(1)}" height="${(y(base) - y(base + s.value)).toFixed(1)}"/>`;
        base += s.value;
        return r;
      });
    out.push(`<g><title>${esc(b.title)}</title>${rects.join('')}</g>`);
  });
  const every = Math.max(1, Math.ceil(c.bars.length / 10));
  c.edges.forEach((label, i) => {
    if (i % every !== 0 && i !== c.edges.length - 1) return;
    const x = (M.left + i * bw).toFixed(1);
    out.push(`<line class="axis" x1="${x}" x2="${x}" y1="${M.top + plotH}" y2="${M.top + plotH + 4}"/>`);
    out.push(`<text class="tick" x="${x}" y="${M.top + plotH + 16}" text-anchor="middle">${esc(label)}</text>`);
  });
  out.push(
    `<line class="axis" x1="${M.left}" x2="${W - M.right}" y1="${M.top + plotH}" y2="${M.top + plotH}"/>`,
    `<text class="label" x="${M.left + plotW / 2}" y="${H - 6}" text-anchor="middle">${esc(c.xLabel)}</text>`,
    `<text class="label" transform="translate(14 ${M.top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(c.yLabel)}</text>`,
    '</svg>',
  );
  return out.join('\n');
}

function throughputChart(r: LoadReport): string {
  // The last bucket is usually a fraction of a second (the loop's end): say so, or its short bar reads as a drop.
  const lastCovers = r.summary.seconds - (r.perSecond.length - 1);
  const note =
    r.perSecond.length > 1 && lastCovers > 0 && lastCovers < 0.95
      ? `\n<p class="muted">The last bar covers only the last ${fmtFixed(lastCovers, 1)} s of the load.</p>`
      : '';
  return `${barChart({
    title: 'Throughput: calls completed per second (failed ones in red)',
    xLabel: 'seconds since the start of the load',
    yLabel: 'calls per second',
    bars: r.perSecond.map((s) => ({
      segments: [
        { value: s.ok, cls: 'ok' },
        { value: s.failed, cls: 'failed' },
      ],
      title: `second ${s.second}: ${fmtInt(s.ok)} ok, ${fmtInt(s.failed)} failed, p50 ${ms(s.p50)} ms, p99 ${ms(s.p99)} ms`,
    })),
    edges: Array.from({ length: r.perSecond.length + 1 }, (_, i) => String(i)),
  })}${note}`;
}

function latencyChart(r: LoadReport): string {
  const { bins, overflow } = r.histogram;
  const bars: Bar[] = bins.map((b) => ({
    segments: [{ value: b.count, cls: 'ok' }],
    title: `${ms(b.from)} to ${ms(b.to)} ms: ${calls(b.count)}`,
  }));
  const edges = [...bins.map((b) => fmtAxis(b.from)), ...(bins.length > 0 ? [fmtAxis(bins.at(-1)?.to ?? 0)] : [])];
  if (overflow !== null) {
    bars.push({
      segments: [{ value: overflow.count, cls: 'over' }],
      title: `above ${ms(overflow.from)} ms (up to ${ms(overflow.to)} ms): ${calls(overflow.count)}`,
    });
    edges.push(`${fmtAxis(overflow.to)}`);
  }
  return barChart({
    title: 'Latency of the successful calls: calls per bin (in grey, those beyond the last bin)',
    xLabel: 'latency (ms)',
    yLabel: 'calls',
    bars,
    edges,
  });
}

const row = (k: string, v: string): string => `<tr><th scope="row">${esc(k)}</th><td>${esc(v)}</td></tr>`;

const CSS = `
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330; margin: 2rem auto; max-width: 800px; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: 0.25rem; }
h2 { font-size: 1.15rem; margin-top: 2rem; }
.verdict { display: inline-block; padding: 0.1rem 0.6rem; border-radius: 4px; color: #fff; font-size: 0.95rem; vertical-align: middle; }
.verdict.pass { background: #2f8a4c; } .verdict.fail { background: #c23b3b; }
table { border-collapse: collapse; margin: 0.5rem 0; }
th, td { text-align: left; padding: 0.2rem 0.9rem 0.2rem 0; border-bottom: 1px solid #e3e6ec; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: #6b7385; fill: #6b7385; }
svg.chart { max-width: 100%; height: auto; font-size: 11px; }
svg .grid { stroke: #e3e6ec; } svg .axis { stroke: #6b7385; }
svg .tick, svg .label { fill: #4a5163; } svg .label { font-size: 12px; }
svg .ok { fill: #3b6fd8; } svg .failed { fill: #d64545; } svg .over { fill: #9aa1ad; }
code { font-size: 0.9em; }
`;

export function renderHtml(r: LoadReport): string {
  const s = r.summary;
  const l = s.latency;
  const verdict = r.passed ? '<span class="verdict pass">PASS</span>' : '<span class="verdict fail">FAIL</span>';
  const e = r.settings.endpoints;
  const errors =
    r.errors.length === 0
      ? '<p>No failed calls.</p>'
      : `<table><thead><tr><th class="num">calls</th><th>error</th></tr></thead><tbody>${r.errors
          .map((x) => `<tr><td class="num">${fmtInt(x.count)}</td><td><code>${esc(x.message)}</code></td></tr>`)
          .join('')}</tbody></table>`;
  const perSecond = r.perSecond
    .map(
      (p) =>
        `<tr><td class="num">${p.second}</td><td class="num">${fmtInt(p.ok)}</td><td class="num">${fmtInt(p.failed)}</td>` +
        `<td class="num">${ms(p.p50)}</td><td class="num">${ms(p.p99)}</td></tr>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>payroute load test: ${esc(r.scenario)} (${esc(r.startedAt)})</title>
<style>${CSS}</style>
</head>
<body>
<h1>Load test: ${esc(r.scenario)} ${verdict}</h1>
<p class="muted">${esc(r.description)}</p>
<h2>Summary</h2>
<table>
${row('Requests', fmtInt(s.requests))}
${row('Successful', fmtInt(s.ok))}
${row('Failed (non-2xx, failed checks, connection errors)', fmtInt(s.failed))}
${row('Throughput', `${fmtFixed(s.rate, 1)} successful calls/s`)}
${row('Latency min / mean', `${ms(l?.min)} / ${ms(l?.mean)} ms`)}
${row('Latency p50 / p90 / p99', `${ms(l?.p50)} / ${ms(l?.p90)} / ${ms(l?.p99)} ms`)}
${row('Latency max', `${ms(l?.max)} ms`)}
</table>
<h2>Run</h2>
<table>
${row('Started', r.startedAt)}
${row('Finished', r.finishedAt)}
${row('Load', `${fmtFixed(s.seconds, 1)} s measured of ${r.settings.durationSeconds} s asked${r.interrupted ? ' (interrupted)' : ''}`)}
${row('Connections', String(r.settings.connections))}
${row('Database', r.settings.db)}
${row('Proxy / admin', `${e.proxy} / ${e.admin}`)}
${row('Upstream / merchant', `${e.upstream} / ${e.merchant}`)}
</table>
<h2>Throughput over time</h2>
${throughputChart(r)}
<h2>Latency histogram</h2>
${latencyChart(r)}
<h2>Errors</h2>
${errors}
<details>
<summary>Per-second figures</summary>
<table><thead><tr><th class="num">second</th><th class="num">ok</th><th class="num">failed</th><th class="num">p50 (ms)</th><th class="num">p99 (ms)</th></tr></thead>
<tbody>${perSecond}</tbody></table>
</details>
</body>
</html>
`;
}
