// Merchant (c'): an MPP `evm` charge merchant built with mppx/server whose challenges carry
// `header="Payment-Authorization"`: `Mppx.create({ requiresAuth: true })`, for a route whose `Authorization` field is
// the application's own. mppx 0.11's evm charge method brings its own transport, which reads `Authorization` only
// (evm/server/Charge.js `createMppPath`: `Transport.http()` without requiresAuth) although the challenge names
// Payment-Authorization; the method is therefore given `Transport.http({ requiresAuth: true })`, which reads the
// credential from `Payment-Authorization` only (server/Transport.js) and offers no x402 leg, so only the MPP
// challenge can be paid. Settlement runs on the stub chain as in mppx.ts; every request's headers are recorded.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Mppx, Transport } from 'mppx/server';
import type { StubChain } from './chain.js';
import { type Running, listen } from './listen.js';
import { stubChainCharge } from './mppx.js';

export interface MppxHeaderMerchant extends Running {
  readonly paidPath: string;
  /** Headers of every request received, oldest first. */
  readonly seen: IncomingHttpHeaders[];
  /** Settlements mppx asked for (after its own verification passed). */
  readonly settled: { reference: string; from: string; nonce: string }[];
}

/** The method with the credential read from `Payment-Authorization` (see above). */
const withTransport = <M extends object>(method: M): M => ({
  ...method,
  transport: Transport.http({ requiresAuth: true }),
});

export async function startMppxHeaderMerchant(o: {
  chain: StubChain;
  recipient: string;
  amount: string;
}): Promise<MppxHeaderMerchant> {
  const seen: IncomingHttpHeaders[] = [];
  const settled: MppxHeaderMerchant['settled'] = [];
  const mppx = Mppx.create({
    requiresAuth: true,
    methods: [withTransport(stubChainCharge(o.chain, o.recipient, settled))],
    secretKey: 'test-merchant-secret-key-at-least-32-bytes-long',
    realm: 'mppx-header-merchant.test',
  });
  const charge = mppx.charge({ amount: o.amount, description: 'A paid answer — MPP, Payment-Authorization' });

  const send = async (res: ServerResponse, r: Response) => {
    const out: Record<string, string> = {};
    r.headers.forEach((v, k) => {
      if (!['payment-required', 'content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(k))
        out[k] = v;
    });
    res.writeHead(r.status, out);
    res.end(Buffer.from(await r.arrayBuffer()));
  };

  const running = await listen((req: IncomingMessage, res: ServerResponse) => {
    seen.push(req.headers);
    if (req.url !== '/paid') {
      res.writeHead(404).end();
      return;
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === 'string') headers.set(k, v);
      else if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    }
    const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
      method: req.method ?? 'GET',
      headers,
    });
    (async () => {
      const result = await charge(request);
      if (result.status === 402) await send(res, result.challenge);
      else await send(res, result.withReceipt(Response.json({ answer: 42 })));
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  return { ...running, paidPath: '/paid', seen, settled };
}
