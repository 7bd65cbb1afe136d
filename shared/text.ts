// Strings from strangers. Every free string field of every boundary schema (bodies, query values, path
// parameters, the streaming proxy's X-Router-* headers) is one of these, so what no field needs is refused with a
// 400 naming the field, before any service, log line or database sees it:
//
// - C0 controls (U+0000-U+001F), DEL and C1 controls (U+0080-U+009F). A NUL reached SQLite inlined into the SQL
//   text (MikroORM formats the parameters of its entity queries into the statement) and answered a 500; PostgreSQL
//   refuses a NUL in a text column even when bound ("invalid byte sequence for encoding UTF8: 0x00"). ESC and CSI
//   (C1) start terminal escape sequences in whoever reads a log or a listing; CR and LF split log lines and,
//   copied into a header, HTTP messages.
// - Unpaired UTF-16 surrogates: JSON's `\ud800` escape parses to one, but it is not Unicode text (UTF-8 cannot
//   encode it: Buffer.from writes U+FFFD instead, PostgreSQL refuses it), so a stored name would not read back as
//   written.
//
// Multi-line free text (descriptions) may keep TAB, LF and CR. Bidi marks and other format characters are letters
// of real names in right-to-left scripts: they are kept, and bounded like everything else.
import { z } from 'zod';

// Lone surrogates only: with the `u` flag a well-formed pair is one code point, outside the class.
const SURROGATE = /[\uD800-\uDFFF]/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's purpose.
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's purpose.
const CONTROL_BUT_WHITESPACE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;

export const CONTROL_MESSAGE = 'must not contain control characters';
export const TEXT_CONTROL_MESSAGE = 'must not contain control characters other than tab and line breaks';
export const SURROGATE_MESSAGE = 'must be well-formed Unicode (no unpaired surrogates)';

/** Whether `s` is fit for a single-line field: no C0/C1 control, no DEL, no unpaired surrogate. */
export const isSingleLine = (s: string): boolean => !CONTROL.test(s) && !SURROGATE.test(s);

/** Whether `s` is fit for a multi-line field: as isSingleLine, but TAB, LF and CR are allowed. */
export const isMultiLine = (s: string): boolean => !CONTROL_BUT_WHITESPACE.test(s) && !SURROGATE.test(s);

/**
 * A single-line string (names, identifiers, URLs, tokens, header values) of at most `max` characters (code
 * points, as zod counts them and as PostgreSQL's varchar(n) does).
 * `trim` drops surrounding spaces after the character check and before the length check. Chain `.min()`,
 * `.regex()` or `.refine()` for more.
 */
export function line(max: number, opts: { trim?: boolean } = {}): z.ZodString {
  const checked = z
    .string()
    .refine((s) => !CONTROL.test(s), CONTROL_MESSAGE)
    .refine(wellFormed, SURROGATE_MESSAGE);
  return (opts.trim === true ? checked.trim() : checked).max(max);
}

/** Multi-line free text (descriptions) of at most `max` characters: TAB, LF and CR are allowed. */
export function text(max: number): z.ZodString {
  return z
    .string()
    .refine((s) => !CONTROL_BUT_WHITESPACE.test(s), TEXT_CONTROL_MESSAGE)
    .refine(wellFormed, SURROGATE_MESSAGE)
    .max(max);
}

/**
 * A whole number from `min` to `max` written in decimal digits only (query values): `z.coerce.number()` also reads
 * ` 5`, `\v5`, `0x10`, `1e3` and `5.0` (Number() trims whitespace, controls included, and parses other notations),
 * so a control character or a typo passed as a number. At most as many digits as `max` has.
 */
export function wholeNumber(min: number, max: number) {
  return line(64)
    .regex(new RegExp(`^[0-9]{1,${String(max).length}}$`), `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

function wellFormed(s: string): boolean {
  return !SURROGATE.test(s);
}
