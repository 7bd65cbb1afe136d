import test from 'ava';
import { uuidv7 } from '../../shared/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('uuidv7: RFC 9562 layout, the 48-bit timestamp first', (t) => {
  const ms = Date.UTC(2026, 10, 22, 1, 2, 3, 456);
  const id = uuidv7(ms);
  t.regex(id, V7);
  t.is(Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16), ms);
  t.is(uuidv7(0).slice(0, 13), '00000000-0000');
  t.is(uuidv7(2 ** 48 - 1).slice(0, 13), 'ffffffff-ffff');
});

test('uuidv7: ids of later milliseconds sort after earlier ones; no repeats', (t) => {
  const seen = new Set<string>();
  let last = '';
  for (let i = 0; i < 5000; i++) {
    const id = uuidv7(1_700_000_000_000 + i);
    t.true(id > last);
    last = id;
    seen.add(id);
  }
  for (let i = 0; i < 20_000; i++) seen.add(uuidv7(1_800_000_000_000));
  t.is(seen.size, 25_000, '74 random bits: no collision within one millisecond');
});
