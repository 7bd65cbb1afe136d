// The chain's failures as the error catalogue's codes.
import { AppError } from '../../errors/app-error.js';
import type { ChainUnavailable } from './client.js';

/** 503 BCK.CHAIN.0001: the JSON-RPC endpoint did not answer usefully; nothing was written, a retry may succeed. */
export function chainUnavailableError(err: ChainUnavailable): AppError {
  return new AppError('BCK.CHAIN.0001', { details: `the chain could not be read (${err.operation})` });
}
