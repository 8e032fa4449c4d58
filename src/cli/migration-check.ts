import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSourceOptions } from 'typeorm';
import { DatabaseConfig } from '../config/app-config';
import { configFromEnvironment } from '../config/environment';
import { dataSourceOptions, openDatabase } from '../database/database.options';
import { SCHEMAS } from '../features';

/**
 * The SQL TypeORM would still run after every migration on a scratch database: empty when they agree.
 * On PostgreSQL a schema of its own, dropped afterwards: the configured schema is never touched.
 * `sources` replace the schemas' entities or migrations, to test the check itself.
 */
export async function schemaDrift(
  database: DatabaseConfig,
  sources: Pick<DataSourceOptions, 'entities' | 'migrations'> = {},
): Promise<string[]> {
  const scratch: DatabaseConfig =
    database.url === null
      ? { ...database, path: ':memory:' }
      : { ...database, schema: `migration_check_${process.pid}_${randomBytes(4).toString('hex')}` };
  try {
    const options = { ...dataSourceOptions(scratch, SCHEMAS), ...sources };
    const dataSource = await openDatabase(scratch, options);
    try {
      const { upQueries } = await dataSource.driver.createSchemaBuilder().log();
      // The scratch schema's name would only make the list harder to read.
      return upQueries.map((query) => query.query.replaceAll(`"${scratch.schema}".`, ''));
    } finally {
      await dataSource.destroy();
    }
  } finally {
    if (scratch.url !== null) {
      const client = new Client({ connectionString: scratch.url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${scratch.schema}" CASCADE`).finally(() => client.end());
    }
  }
}

const USAGE = `usage: npm run migration:check
Runs every migration on a scratch database (SQLite in memory; with DATABASE_URL, a schema of its
own in that database, dropped afterwards) and prints the SQL the entities would still need.
Exit 0 when there is none, 1 when there is, 2 when it cannot tell. The database is the service's
(DATABASE_PATH or DATABASE_URL, .env included).`;

async function main(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  if (args.length > 0) {
    console.error(`migration:check: takes no arguments (got ${args.join(' ')})\n${USAGE}`);
    return 2;
  }
  const { database } = configFromEnvironment('migration:check');
  const kind = database.url === null ? 'SQLite' : 'PostgreSQL';
  const drift = await schemaDrift(database);
  if (drift.length === 0) {
    console.log(`migration:check: the migrations create exactly what the entities declare (${kind})`);
    return 0;
  }
  console.error(
    `migration:check: the entities differ from what the migrations create (${kind}); ` +
      `for the tables to match them, TypeORM would still run:`,
  );
  for (const query of drift) console.error(`  ${query.trim()};`);
  console.error(
    'Add a migration to the module (npm run migration:generate -- src/<module>/migrations/<Name> ' +
      'on a database the existing migrations have been run on; then list it in src/<module>/<module>.schema.ts), ' +
      'or correct the entity.',
  );
  return 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (status) => process.exit(status),
    (error: unknown) => {
      console.error(`migration:check: failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(2);
    },
  );
}
