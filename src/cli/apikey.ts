import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { parseArgs, ParseArgsConfig } from 'node:util';
import { DataSource } from 'typeorm';
import { ApiKeyEntity } from '../auth/api-key.entity';
import { ApiKeyError, ApiKeysService } from '../auth/api-keys.service';
import { DatabaseConfig, describeDatabase } from '../config/app-config';
import { configFromEnvironment } from '../config/environment';
import { dataSourceOptions, openDatabase } from '../database/database.options';
import { SCHEMAS } from '../features';

const USAGE = `usage: npm run apikey -- <command> [--init]
  create --name <client>   create a key for a client and print it (shown only this once)
  list [--json]            list keys: id, name, prefix, created, last used, revoked (never the key)
  revoke <id|prefix>       revoke a key; every instance refuses it within a second
  --init                   create the SQLite database if it does not exist yet
The database is the service's (DATABASE_PATH or DATABASE_URL, .env included); it is named on stderr.`;

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

class UsageError extends Error {}

interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

const when = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

function table(keys: ApiKeyEntity[]): string[] {
  const rows = [
    ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'],
    ...keys.map((k) => [
      String(k.id),
      k.name,
      k.prefix,
      ...[k.createdAt, k.lastUsedAt, k.revokedAt].map(when),
    ]),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => [...row[column]].length)));
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd(),
  );
}

const parse = (args: string[], options: ParseArgsConfig['options'] = {}) =>
  parseArgs({ args, options, strict: true, allowPositionals: true });

async function run(
  command: string | undefined,
  args: string[],
  keys: ApiKeysService,
  io: Output,
): Promise<void> {
  switch (command) {
    case 'create': {
      const { values, positionals } = parse(args, { name: { type: 'string' } });
      if (typeof values.name !== 'string' || positionals.length > 0) {
        throw new UsageError('create needs --name <client> and nothing else');
      }
      const { key, record } = await keys.create(values.name);
      io.out(
        `Created API key ${record.id} "${record.name}" (prefix ${record.prefix}). It is shown only this once:`,
      );
      io.out(key);
      return;
    }
    case 'list': {
      const { values, positionals } = parse(args, { json: { type: 'boolean' } });
      if (positionals.length > 0) throw new UsageError('list takes no arguments');
      const all = await keys.list();
      const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
      if (values.json) {
        const visible = all.map(({ id, name, prefix, createdAt, lastUsedAt, revokedAt }) => ({
          id,
          name,
          prefix,
          createdAt: iso(createdAt),
          lastUsedAt: iso(lastUsedAt),
          revokedAt: iso(revokedAt),
        }));
        io.out(JSON.stringify(visible, null, 2));
      } else if (all.length === 0) {
        io.out('No API keys are stored.');
      } else {
        table(all).forEach((line) => io.out(line));
      }
      return;
    }
    case 'revoke': {
      const { positionals } = parse(args);
      if (positionals.length !== 1) throw new UsageError('revoke needs exactly one <id|prefix>');
      const key = await keys.revoke(positionals[0]);
      io.out(`Revoked API key ${key.id} "${key.name}" (prefix ${key.prefix}) at ${when(key.revokedAt)}.`);
      return;
    }
    default:
      throw new UsageError(command === undefined ? 'no command given' : `unknown command "${command}"`);
  }
}

export async function apiKeyCli(argv: string[], database: DatabaseConfig, io: Output): Promise<number> {
  const init = argv.includes('--init');
  const [command, ...args] = argv.filter((arg) => arg !== '--init');
  if (command === undefined || command === '--help' || command === 'help') {
    (command === undefined ? io.err : io.out)(USAGE);
    return command === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (database.url === null && database.path === ':memory:') {
    io.err('apikey: DATABASE_PATH is :memory:, so there are no stored keys to manage');
    return EXIT_FAILED;
  }
  // Else a mistyped path would make a new, empty database whose keys the service never sees.
  if (database.url === null && !init && !existsSync(database.path)) {
    io.err(
      `apikey: no database at ${database.path}: run from the service's folder, or set DATABASE_PATH ` +
        '(or DATABASE_URL) as the service has it; add --init to create a new database there',
    );
    return EXIT_FAILED;
  }
  io.err(`apikey: database ${describeDatabase(database)}`);
  let dataSource: DataSource | undefined;
  try {
    dataSource = await openDatabase(database, dataSourceOptions(database, SCHEMAS));
    await run(command, args, new ApiKeysService(dataSource.getRepository(ApiKeyEntity)), io);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`apikey: ${(error as Error).message}\n${USAGE}`);
      return EXIT_USAGE;
    }
    if (error instanceof ApiKeyError) {
      io.err(`apikey: ${error.message}`);
      return EXIT_FAILED;
    }
    io.err(`apikey: failed: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT_FAILED;
  } finally {
    await dataSource?.destroy();
  }
}

if (require.main === module) {
  void apiKeyCli(process.argv.slice(2), configFromEnvironment('apikey').database, {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  }).then((status) => process.exit(status));
}
