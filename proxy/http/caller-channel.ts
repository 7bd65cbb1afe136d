// The streaming proxy's CallerChannel (shared/router/caller-channel.ts) over node:http. A class, not an object of
// closures made per request: its methods exist once, and the free relay is the proxy's hot path.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallerChannel, StreamedAnswer } from '../../shared/router/caller-channel.js';
import { type BodyLimits, readBody } from './read-body.js';
import type { RequestFacts } from './route-table.js';
import { relay } from './stream-answer.js';

export class NodeCallerChannel implements CallerChannel {
  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly facts: RequestFacts,
    private readonly limits: BodyLimits,
  ) {}

  readBody(): Promise<Buffer> {
    return readBody(this.req, this.limits);
  }

  left(): boolean {
    return this.res.destroyed;
  }

  relay(answer: StreamedAnswer, extra?: Record<string, string>): Promise<boolean> {
    return relay(this.res, answer, extra);
  }

  paid(paymentId: string): void {
    this.facts.paymentId = paymentId;
  }
}
