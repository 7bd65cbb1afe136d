const MAX_SHOWN = 64;

/**
 * A caller's value as an error's details may repeat it: printable ASCII only (a decoded path parameter can hold
 * control characters, newlines or markup meant for whoever reads the error or a log) and at most 64 characters,
 * so an error never grows with the input.
 */
export function shownValue(value: string): string {
  const printable = value.slice(0, MAX_SHOWN + 1).replace(/[^\x20-\x7e]/g, '?');
  return printable.length > MAX_SHOWN ? `${printable.slice(0, MAX_SHOWN - 3)}...` : printable;
}
