// Figures as the report and the progress line print them.

/** "1234567.5" -> "1,234,567.5": thousands grouped the same whatever the machine's locale. */
export function group(decimal: string): string {
  const [whole, frac] = decimal.split('.');
  return `${(whole ?? '').replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${frac === undefined ? '' : `.${frac}`}`;
}

/** A count: fmtInt(1234567) -> "1,234,567". */
export const fmtInt = (n: number): string => group(String(Math.round(n)));

/** With `digits` decimals: fmtFixed(9837.24, 1) -> "9,837.2". */
export const fmtFixed = (n: number, digits: number): string => group(n.toFixed(digits));
