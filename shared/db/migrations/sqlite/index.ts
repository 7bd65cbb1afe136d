// Migrations are listed statically so they load the same way under tsx, in the container and in tests.
import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121224521_initial } from './Migration20261121224521_initial.js';

export const sqliteMigrations: MigrationObject[] = [{ name: 'Migration20261121224521_initial', class: Migration20261121224521_initial }];
