// `npm run db:migrate`: applies pending migrations to DATABASE_URL and prints what was applied.
import { loadConfigOrExit } from '../../config/index.js';
import { migrate, openDb } from '../../shared/db/orm.js';

const config = loadConfigOrExit();
const db = await openDb(config.database);
try {
  const applied = await migrate(db);
  process.stdout.write(`${JSON.stringify({ database: config.database.kind, applied })}\n`);
} finally {
  await db.close();
}
