// Regression: a NUL byte in a string field answered 500 (MikroORM formats parameters into the SQL text and SQLite
// failed the statement; PostgreSQL refuses NUL in text outright). Control characters and unpaired surrogates are
// now a 400 at the boundary naming the field, nothing is written, and free text keeps its tabs and line breaks.
// (test/http/boundary.fuzz.test.ts sends hostile strings through every field of every endpoint.)
import { forEachDb } from '../support/matrix.js';
import { createAgent, createPlan } from '../support/registry-builders.js';

forEachDb(({ stack, test }) => {
  test('PUT /protocol/plans/:planId with a NUL in the name: 400 naming body.name, the plan unchanged', async (t) => {
    const { api } = await stack().user();
    const plan = await createPlan(api, { name: 'Before' });
    const r = await api.put(`/protocol/plans/${plan.planId}`, { name: 'a\u0000b' });
    t.is(r.status, 400, r.text);
    t.is(r.body.code, 'BCK.HTTP.0400');
    t.is(r.body.details, 'body.name: must not contain control characters');
    t.is((await api.get(`/protocol/plans/${plan.planId}`)).body.name, 'Before');
  });

  test('C1 controls, DEL and unpaired surrogates are refused like NUL; a JSON escape cannot smuggle them', async (t) => {
    const { api } = await stack().user();
    const plan = await createPlan(api);
    for (const [raw, why] of [
      ['{"name":"a\\u0085b"}', 'must not contain control characters'],
      ['{"name":"a\\u007fb"}', 'must not contain control characters'],
      ['{"name":"a\\u001b[31mb"}', 'must not contain control characters'],
      ['{"name":"a\\ud800b"}', 'must be well-formed Unicode (no unpaired surrogates)'],
      ['{"name":"a\\udfffb"}', 'must be well-formed Unicode (no unpaired surrogates)'],
    ] as const) {
      const r = await api.raw('PUT', `/protocol/plans/${plan.planId}`, raw);
      t.is(r.status, 400, `${raw}: ${r.text}`);
      t.is(r.body.details, `body.name: ${why}`, raw);
    }
  });

  test('free text keeps tabs and line breaks, names keep bidi marks and astral characters, exactly', async (t) => {
    const { api } = await stack().user();
    const description = 'line one\r\nline two\ttabbed\n';
    const name = '\u200fשלום \ud83d\ude00 "quoted" ?\\';
    const agent = await createAgent(api, { name, description });
    const read = await api.get(`/protocol/agents/${agent.agentId}`);
    t.is(read.status, 200);
    t.is(read.body.name, name);
    t.is(read.body.description, description);
    const bad = await api.put(`/protocol/agents/${agent.agentId}`, { description: 'a\u0000b' });
    t.is(bad.status, 400);
    t.is(bad.body.details, 'body.description: must not contain control characters other than tab and line breaks');
  });

  test('a NUL in the agentId path parameter of the access token: 400 naming path.agentId, not a 500', async (t) => {
    const { api } = await stack().user();
    const plan = await createPlan(api);
    const r = await api.get(`/protocol/token/${plan.planId}/did%3Apayroute%00x`);
    t.is(r.status, 400, r.text);
    t.is(r.body.details, 'path.agentId: must not contain control characters');
  });

  test('query numbers are decimal digits: a vertical tab Number() would trim is a 400, not page 1', async (t) => {
    const { api } = await stack().user();
    for (const page of ['%0B1', '%201', '1%00', '0x1', '1e0']) {
      const r = await api.get(`/protocol/plans?page=${page}`);
      t.is(r.status, 400, `${page}: ${r.text}`);
      t.regex(r.body.details, /query\.page: must be a whole number from 1 to 1000000/, page);
    }
    t.is((await api.get('/protocol/plans?page=1&offset=5')).status, 200);
  });
});
