import type { Router } from '@koa/router';
import type { AdminDeps } from '../deps.js';
import type { AdminState } from '../http/state.js';

export function creditsRoutes(_router: Router<AdminState>, _deps: AdminDeps): void {}
