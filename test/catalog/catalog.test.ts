// The catalog: the operator adds entries with what an agent needs to choose them (CLI functions), and anyone reads
// them over HTTP by slug, searched by text and category, paged; the upstream URL never appears in a public answer.
import { addCatalogEntry, listCatalog, updateCatalogEntry } from '../../shared/catalog/entries.js';
import { AppError } from '../../shared/errors/app-error.js';
import { forEachDb } from '../support/matrix.js';

const UPSTREAM = 'https://weather.upstream.example/api/';
/** The weather entry's metadata, as the operator gives it and as everyone reads it back. */
const WEATHER = {
  name: 'Weather',
  description: 'Forecasts for any city',
  category: 'weather',
  protocol: 'x402',
  priceHint: '0.01 USDC per call',
} as const;

forEachDb(
  ({ stack, test }) => {
    const get = async (path: string) => {
      const r = await fetch(`${stack().proxyUrl}${path}`);
      return { status: r.status, body: (await r.json()) as Record<string, unknown>, text: '', headers: r.headers };
    };

    test('entries: add, update, list (the operator sees the upstream), validation by flag', async (t) => {
      const ctx = stack().ctx;
      const added = await addCatalogEntry(ctx, 'weather', { url: UPSTREAM, ...WEATHER });
      t.like(added, { slug: 'weather', ...WEATHER, url: UPSTREAM });
      await addCatalogEntry(ctx, 'news', { url: 'https://news.upstream.example/', category: 'media' });
      await addCatalogEntry(ctx, 'quotes', { url: 'https://quotes.upstream.example/', name: 'Stock quotes' });
      const updated = await updateCatalogEntry(ctx, 'news', { name: 'Headlines', description: 'Top news' });
      t.like(updated, { slug: 'news', name: 'Headlines', description: 'Top news', category: 'media', protocol: null });
      t.like(await updateCatalogEntry(ctx, 'news', { category: '' }), { category: null }, 'an empty value clears');
      await updateCatalogEntry(ctx, 'news', { category: 'media' });
      t.deepEqual(
        (await listCatalog(ctx)).entries.map((e) => [e.slug, e.url]),
        [
          ['news', 'https://news.upstream.example/'],
          ['quotes', 'https://quotes.upstream.example/'],
          ['weather', UPSTREAM],
        ],
      );
      const refused = async (p: Promise<unknown>, details: RegExp) => {
        const err = await t.throwsAsync(p);
        t.true(err instanceof AppError);
        t.regex(String((err as AppError).details), details);
      };
      await refused(addCatalogEntry(ctx, 'x', { url: UPSTREAM, category: 'Not A Slug' }), /^--category /);
      await refused(addCatalogEntry(ctx, 'x', { url: UPSTREAM, protocol: 'ftp' }), /^--protocol /);
      await refused(addCatalogEntry(ctx, 'x', { url: UPSTREAM, name: 'a\u0007b' }), /^--name /);
      await refused(addCatalogEntry(ctx, 'x', { url: UPSTREAM, priceHint: 'p'.repeat(101) }), /^--price-hint /);
      await refused(addCatalogEntry(ctx, 'x', { url: 'http://169.254.169.254/' }), /outbound policy/);
      const missing = await t.throwsAsync(updateCatalogEntry(ctx, 'nope', { name: 'N' }));
      t.is((missing as AppError).code, 'BCK.CATALOG.0001');
    });

    test('public reads: search by text and category, paged; one service; categories; the document', async (t) => {
      const all = await get('/api/v1/catalog/services');
      t.is(all.status, 200);
      t.deepEqual(all.body, {
        services: [
          {
            slug: 'news',
            name: 'Headlines',
            description: 'Top news',
            category: 'media',
            protocol: null,
            priceHint: null,
          },
          { slug: 'quotes', name: 'Stock quotes', description: null, category: null, protocol: null, priceHint: null },
          { slug: 'weather', ...WEATHER },
        ],
        total: 3,
        page: 1,
        offset: 10,
      });
      const slugs = async (q: string) =>
        ((await get(`/api/v1/catalog/services?${q}`)).body.services as { slug: string }[]).map((s) => s.slug);
      t.deepEqual(await slugs('query=FORECAST'), ['weather'], 'description, case-insensitive');
      t.deepEqual(await slugs('query=stock'), ['quotes'], 'name');
      t.deepEqual(await slugs('query=new'), ['news'], 'slug');
      t.deepEqual(await slugs('category=media'), ['news']);
      t.deepEqual(await slugs('category=media&query=weather'), []);
      const page2 = await get('/api/v1/catalog/services?page=2&offset=2');
      t.like(page2.body, { total: 3, page: 2, offset: 2 });
      t.deepEqual(
        (page2.body.services as { slug: string }[]).map((s) => s.slug),
        ['weather'],
      );
      for (const bad of ['category=Bad%20One', 'offset=0', 'offset=101', 'page=x', 'query=%07']) {
        const r = await get(`/api/v1/catalog/services?${bad}`);
        t.is(r.status, 400, bad);
        t.is(r.body.code, 'BCK.HTTP.0400');
      }

      const one = await get('/api/v1/catalog/services/weather');
      t.is(one.status, 200);
      t.like(one.body, { slug: 'weather', name: 'Weather', protocol: 'x402' });
      for (const slug of ['nope', 'Bad%20Slug', 'a'.repeat(64)]) {
        const r = await get(`/api/v1/catalog/services/${slug}`);
        t.is(r.status, 404, slug);
        t.is(r.body.code, 'BCK.CATALOG.0001');
      }

      t.deepEqual((await get('/api/v1/catalog/categories')).body, {
        categories: [
          { category: 'media', count: 1 },
          { category: 'weather', count: 1 },
        ],
      });
      const doc = await get('/.well-known/agent-services-catalog.json');
      t.is(doc.status, 200);
      t.is(doc.headers.get('cache-control'), 'public, max-age=60');
      t.is(doc.body.issuer, stack().ctx.config.publicUrl);
      t.deepEqual(
        (doc.body.services as { slug: string }[]).map((s) => s.slug),
        ['news', 'quotes', 'weather'],
      );

      // No public answer names an upstream.
      for (const path of [
        '/api/v1/catalog/services',
        '/api/v1/catalog/services/weather',
        '/.well-known/agent-services-catalog.json',
      ]) {
        const text = JSON.stringify((await get(path)).body);
        t.false(text.includes('upstream.example'), path);
      }
    });
  },
  {},
  { serial: true },
); // the reads assert the whole catalog of the database the first test filled
