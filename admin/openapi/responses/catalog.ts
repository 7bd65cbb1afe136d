// What the catalog endpoints answer (shared/catalog/services.ts): services as agents see them, never the upstream.
import { z } from 'zod';
import type { PublicService, catalogDocument, listCategories } from '../../../shared/catalog/services.js';
import { CatalogProtocol } from '../../../shared/catalog/requests.js';
import { type Fits, named, pageOf } from './common.js';

export const CatalogService = named(
  'CatalogService',
  z.object({
    slug: z.string(),
    /** The operator's name for it; the slug when none was given. */
    name: z.string(),
    description: z.string().nullable(),
    category: z.string().nullable(),
    protocol: CatalogProtocol.nullable(),
    /** A price as the operator states it ("0.01 USDC per call"); the merchant's 402 decides what is paid. */
    priceHint: z.string().nullable(),
  }),
  'A service of the catalog: call it through the router with its `slug` (the upstream is never shown).',
);

export const CatalogServicePage = named(
  'CatalogServicePage',
  pageOf('services', CatalogService),
  'A page of services, by slug.',
);

export const CatalogCategories = named(
  'CatalogCategories',
  z.object({ categories: z.array(z.object({ category: z.string(), count: z.number().int().positive() })) }),
  'The categories in use, each with how many services it holds.',
);

export const CatalogDocument = named(
  'CatalogDocument',
  z.object({ issuer: z.string(), services: z.array(CatalogService) }),
  'The whole catalog (up to 1000 services), for agents that read it once.',
);

export type CheckService = Fits<typeof CatalogService, PublicService>;
export type CheckCategories = Fits<typeof CatalogCategories, Awaited<ReturnType<typeof listCategories>>>;
export type CheckDocument = Fits<typeof CatalogDocument, Awaited<ReturnType<typeof catalogDocument>>>;
