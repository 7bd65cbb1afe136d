// GET /router/payments?format=csv: the ledger listing as CSV.
import type { PaymentRecord } from './responses.js';

const CSV_COLUMNS = [
  'paymentId',
  'createdAt',
  'status',
  'protocol',
  'x402Version',
  'delegationId',
  'clientId',
  'requestId',
  'recipient',
  'amount',
  'asset',
  'network',
  'scheme',
  'approxCents',
  'feeBps',
  'feeAmount',
  'feeCents',
  'capChargedCents',
  'txHash',
  'resourceUrl',
] as const;

/** RFC 4180 CSV; cells that a spreadsheet would run as a formula are prefixed with a quote (CWE-1236). */
export function paymentsCsv(records: readonly PaymentRecord[]): string {
  const cell = (v: unknown): string => {
    let s = v === null || v === undefined ? '' : String(v);
    if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  const lines = records.map((r) =>
    [
      r.paymentId,
      r.createdAt,
      r.status,
      r.protocol,
      r.x402Version ?? '',
      r.delegationId,
      r.clientId,
      r.requestId,
      r.settlement.recipient,
      r.settlement.amount,
      r.settlement.asset,
      r.settlement.network,
      r.settlement.scheme,
      r.settlement.approxCents,
      r.fee.bps,
      r.fee.amount,
      r.fee.cents,
      r.fee.capChargedCents,
      r.txHash,
      r.resourceUrl,
    ]
      .map(cell)
      .join(','),
  );
  return `${[CSV_COLUMNS.join(','), ...lines].join('\r\n')}\r\n`;
}
