// The API description of the catalog (admin/routes/catalog.ts).
import { z } from 'zod';
import { ServicesFilter } from '../../shared/catalog/requests.js';
import { PageQuery } from '../http/pagination.js';
import { type Operations, json } from './operation.js';
import { CatalogCategories, CatalogDocument, CatalogService, CatalogServicePage } from './responses/catalog.js';

export const CATALOG_OPERATIONS: Operations = {
  'GET /api/v1/catalog/services': {
    summary: 'Search the catalog',
    description:
      'Public. Services by slug; `query` matches slug, name and description (case-insensitive), `category` exactly. Call one through `/router/route` or `/router/commerce/route` with its `slug`.',
    tags: ['Catalog'],
    request: { query: PageQuery.extend(ServicesFilter.shape) },
    responses: { 200: json('A page of services.', CatalogServicePage) },
    codes: ['BCK.HTTP.0400'],
  },
  'GET /api/v1/catalog/services/:slug': {
    summary: 'Read a service',
    description: 'Public.',
    tags: ['Catalog'],
    request: { path: { slug: z.string() } },
    responses: { 200: json('The service.', CatalogService) },
    codes: ['BCK.CATALOG.0001'],
  },
  'GET /api/v1/catalog/categories': {
    summary: 'List the categories',
    description: 'Public.',
    tags: ['Catalog'],
    responses: { 200: json('The categories in use.', CatalogCategories) },
    codes: [],
  },
  'GET /.well-known/agent-services-catalog.json': {
    summary: 'The catalog, as one document',
    description: 'Public; cached for a minute.',
    tags: ['Discovery'],
    responses: { 200: json('The catalog.', CatalogDocument) },
    codes: [],
  },
};
