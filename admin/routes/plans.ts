import type { Router } from '@koa/router';
import type { AdminDeps } from '../deps.js';
import type { AdminState } from '../http/state.js';

export function plansRoutes(_router: Router<AdminState>, _deps: AdminDeps): void {}
