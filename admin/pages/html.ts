// The pages' HTML: escaped by construction (every interpolation goes through `esc` unless it is already `Html`),
// one inline stylesheet allowed by its hash in the Content-Security-Policy, no script and no external asset.
import { createHash } from 'node:crypto';

/** Markup that is already safe (built by `html` or escaped). */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export const esc = (value: string): string => value.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);

type Part = string | number | Html | readonly Html[] | undefined | null | false;

/** A template literal whose values are escaped unless they are Html (or arrays of Html). */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    if (v instanceof Html) out += v.markup;
    else if (Array.isArray(v)) out += v.map((h: Html) => h.markup).join('');
    else if (v !== undefined && v !== null && v !== false) out += esc(String(v));
    out += strings[i + 1] ?? '';
  });
  return new Html(out);
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem}.muted{color:#5b5b5b}.warn{color:#8a4b00}.error{color:#a4000f}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{font-weight:600}
label{display:block;margin:.8rem 0 .2rem}input,select{font:inherit;padding:.3rem;width:100%;box-sizing:border-box}
.actions{display:flex;gap:.8rem;margin-top:1.2rem}button{font:inherit;padding:.5rem 1rem;cursor:pointer}
form.inline{display:inline}header{display:flex;justify-content:space-between;align-items:center}`;

/** The CSP source of the one inline stylesheet. */
export const STYLE_SOURCE = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

export function layout(title: string, body: Html, header?: Html): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${title} · payroute</title><style>${new Html(STYLE)}</style></head>
<body><header><strong>payroute</strong>${header}</header><main>${body}</main></body></html>`;
}
