// What the service's own endpoints answer: the health checks and this API description.
import { ReadinessBody } from '../../../shared/readiness.js';
import { z } from 'zod';
import { named } from './common.js';

export const Health = named(
  'Health',
  z.object({ status: z.literal('ok'), service: z.enum(['admin', 'proxy']) }),
  'The process is up. On the public port the proxy answers; the admin process answers on its own port.',
);

export const Readiness = named(
  'Readiness',
  ReadinessBody,
  'Whether this process takes traffic: `ready` (200), or why not (503).',
);

export const OpenApiDocument = named(
  'OpenApiDocument',
  z.looseObject({ openapi: z.literal('3.1.0'), info: z.looseObject({ title: z.string() }), paths: z.looseObject({}) }),
  'This document: an OpenAPI 3.1 description generated from the route tables and their schemas.',
);
