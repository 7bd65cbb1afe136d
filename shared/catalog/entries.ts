// The operator's side of the catalog (the CLI): an entry is a slug, the upstream base URL callers never see, and what
// an agent reads to choose it (name, description, category, protocol, price hint).
import type { ServiceContext } from '../context.js';
import { CatalogEntry } from '../db/entities/index.js';
import { AppError } from '../errors/app-error.js';
import { parseTargetUrl } from '../upstream/index.js';
import { CatalogMetadata, Slug, UpstreamBase } from './requests.js';
import { operatorEntry } from './responses.js';

/** A flag the CLI was given, as text; the metadata's own checks say what is wrong with it. */
export interface EntryInput {
  readonly url?: string | undefined;
  readonly name?: string | undefined;
  readonly description?: string | undefined;
  readonly category?: string | undefined;
  readonly protocol?: string | undefined;
  readonly priceHint?: string | undefined;
}

const FLAGS: Record<keyof CatalogMetadata, string> = {
  name: '--name',
  description: '--description',
  category: '--category',
  protocol: '--protocol',
  priceHint: '--price-hint',
};

function slugOf(input: string): string {
  const slug = Slug.safeParse(input);
  if (!slug.success)
    throw new AppError('BCK.HTTP.0400', { details: `--slug ${slug.error.issues[0]?.message ?? 'is invalid'}` });
  return slug.data;
}

/** The upstream base as stored: checked against the router's own outbound policy, fragment dropped. */
function baseOf(ctx: ServiceContext, input: string): string {
  const url = UpstreamBase.safeParse(input);
  if (!url.success)
    throw new AppError('BCK.HTTP.0400', { details: '--url must be an absolute http(s) URL without credentials' });
  // The proxy would refuse a private or internal base at every call (and name it in the refusal): refuse it here,
  // under the same policy (ROUTER_ALLOW_PRIVATE_TARGETS), where only the operator sees the reason.
  const policy = parseTargetUrl(url.data, { allowPrivate: ctx.config.ROUTER_ALLOW_PRIVATE_TARGETS });
  if (!policy.ok)
    throw new AppError('BCK.HTTP.0400', { details: `--url is refused by the outbound policy: ${policy.reason}` });
  const base = new URL(url.data);
  base.hash = '';
  return base.toString();
}

/** The metadata flags given: a value sets the field, an empty one (`--category=`) clears it, an absent one keeps it. */
function metadataOf(input: EntryInput): CatalogMetadata {
  const raw: Record<string, string | null> = {};
  for (const key of Object.keys(FLAGS) as (keyof CatalogMetadata)[]) {
    const v = input[key];
    if (v !== undefined) raw[key] = v === '' ? null : v;
  }
  const r = CatalogMetadata.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    const flag = FLAGS[String(issue?.path[0]) as keyof CatalogMetadata] ?? 'a flag';
    throw new AppError('BCK.HTTP.0400', { details: `${flag} ${issue?.message ?? 'is invalid'}` });
  }
  return r.data;
}

/** `catalog add`: the entry for the slug, made or replaced whole (a field not given is cleared). */
export async function addCatalogEntry(ctx: ServiceContext, slugInput: string, input: EntryInput) {
  const slug = slugOf(slugInput);
  const upstreamUrl = baseOf(ctx, input.url ?? '');
  const m = metadataOf(input);
  const em = ctx.db.em();
  const now = ctx.now();
  const fields = {
    upstreamUrl,
    name: m.name ?? null,
    description: m.description ?? null,
    category: m.category ?? null,
    protocol: m.protocol ?? null,
    priceHint: m.priceHint ?? null,
    updatedAt: now,
  };
  const existing = await em.findOne(CatalogEntry, { slug });
  if (existing === null) em.create(CatalogEntry, { slug, ...fields, createdAt: now });
  else em.assign(existing, fields);
  await em.flush();
  return operatorEntry(await em.findOneOrFail(CatalogEntry, { slug }));
}

/** `catalog update SLUG`: changes only the fields given. */
export async function updateCatalogEntry(ctx: ServiceContext, slugInput: string, input: EntryInput) {
  const slug = slugOf(slugInput);
  const em = ctx.db.em();
  const entry = await em.findOne(CatalogEntry, { slug });
  if (entry === null) throw new AppError('BCK.CATALOG.0001', { details: `no catalog entry ${slug}` });
  const changes = { ...metadataOf(input), ...(input.url === undefined ? {} : { upstreamUrl: baseOf(ctx, input.url) }) };
  em.assign(entry, { ...changes, updatedAt: ctx.now() });
  await em.flush();
  return operatorEntry(entry);
}

/** `catalog list`: every entry with its upstream (the operator's view). */
export async function listCatalog(ctx: ServiceContext) {
  const rows = await ctx.db.em().find(CatalogEntry, {}, { orderBy: { slug: 'asc' } });
  return { entries: rows.map(operatorEntry) };
}
