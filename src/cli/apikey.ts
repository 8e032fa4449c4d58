import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { parseArgs, ParseArgsConfig } from 'node:util';
import { DataSource } from 'typeorm';
import { ApiKeyEntity } from '../auth/api-key.entity';
import { ApiKeyError, ApiKeysService, CreatedApiKey, DEFAULT_GRACE_MS } from '../auth/api-keys.service';
import { Transactions } from '../database/transactions';
import { AppConfig, describeDatabase } from '../config/app-config';
import { configFromEnvironment } from '../config/environment';
import { dataSourceOptions, openDatabase } from '../database/database.options';
import { FEATURES, SCHEMAS } from '../features';
import { vocabularyOf } from '../app/vocabulary';
import { unknownScope } from '../common/scopes';

const USAGE = `usage: npm run apikey -- <command> [--init]
  create --name <client> [--scopes <scope,...>] [--expires-in <n>d|h|m]
                           create a key for a client and print it (shown only this once);
                           without --scopes it has every scope (e.g. --scopes pets:read)
  list [--json]            list keys: id, name, prefix, scopes, created, expires, last used, revoked
  rotate <id|prefix> [--grace <n>d|h|m]
                           a new secret, printed once; the old one works for the grace (default 24h, at most 7d)
  revoke <id|prefix>       revoke a key; every instance refuses it within a second
  --init                   create the SQLite database if it does not exist yet
The database is the service's (DATABASE_PATH or DATABASE_URL, .env included); it is named on stderr.`;

const VOCABULARY = vocabularyOf(FEATURES.map((feature) => feature.module));

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

class UsageError extends Error {}

type Output = Record<'out' | 'err', (line: string) => void>;

const TIMES = ['createdAt', 'expiresAt', 'lastUsedAt', 'revokedAt'] as const;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const when = (ms: number | null) => iso(ms) ?? '-';

function table(keys: ApiKeyEntity[]): string[] {
  const rows = [
    ['ID', 'NAME', 'PREFIX', 'SCOPES', 'CREATED', 'EXPIRES', 'LAST USED', 'REVOKED'],
    ...keys.map((k) => [
      String(k.id),
      k.name,
      k.prefix,
      k.scopes.replaceAll(' ', ','),
      ...TIMES.map((time) => when(k[time])),
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

const parse = <T extends ParseArgsConfig['options']>(args: string[], options: T) =>
  parseArgs({ args, options, strict: true, allowPositionals: true });

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

function duration(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,5})([dhm])$/.exec(value);
  if (!match)
    throw new UsageError(`${option} takes a number of days, hours or minutes, such as 30d, 12h or 90m`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

function printNewKey(io: Output, verb: string, { key, record }: CreatedApiKey): void {
  const expires = record.expiresAt === null ? '' : `, expires ${when(record.expiresAt)}`;
  io.out(
    `${verb} API key ${record.id} "${record.name}" (prefix ${record.prefix}${expires}). It is shown only this once:`,
  );
  io.out(key);
}

async function run(command: string, args: string[], keys: ApiKeysService, io: Output): Promise<void> {
  switch (command) {
    case 'create': {
      const { values, positionals } = parse(args, {
        name: { type: 'string' },
        scopes: { type: 'string' },
        'expires-in': { type: 'string' },
      });
      if (values.name === undefined || positionals.length > 0)
        throw new UsageError('create needs --name <client>, and may take --scopes and --expires-in');
      const lifetime = duration('--expires-in', values['expires-in']);
      const scopes = values.scopes?.split(',').map((s) => s.trim());
      const unknown = unknownScope(VOCABULARY, scopes);
      if (unknown !== undefined)
        throw new ApiKeyError(
          `"${unknown.slice(0, 70)}" is not a scope of this service: use ${[...VOCABULARY.scopes].sort().join(', ')}`,
        );
      const created = await keys.create(values.name, {
        scopes,
        expiresAt: lifetime === undefined ? null : Date.now() + lifetime,
      });
      printNewKey(io, 'Created', created);
      return;
    }
    case 'rotate': {
      const { values, positionals } = parse(args, { grace: { type: 'string' } });
      if (positionals.length !== 1) throw new UsageError('rotate needs exactly one <id|prefix>');
      const grace = duration('--grace', values.grace) ?? DEFAULT_GRACE_MS;
      const rotated = await keys.rotate(positionals[0], grace);
      printNewKey(io, 'Rotated', rotated);
      io.out(`The old secret works until ${when(rotated.record.previousExpiresAt)}.`);
      return;
    }
    case 'list': {
      const { values, positionals } = parse(args, { json: { type: 'boolean' } });
      if (positionals.length > 0) throw new UsageError('list takes no arguments');
      const all = await keys.list();
      if (values.json) {
        const visible = all.map((k) => ({
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          scopes: k.scopes.split(' '),
          ...Object.fromEntries(TIMES.map((time) => [time, iso(k[time])])),
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
      const { positionals } = parse(args, {});
      if (positionals.length !== 1) throw new UsageError('revoke needs exactly one <id|prefix>');
      const key = await keys.revoke(positionals[0]);
      io.out(`Revoked API key ${key.id} "${key.name}" (prefix ${key.prefix}) at ${when(key.revokedAt)}.`);
      return;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

export async function apiKeyCli(
  argv: string[],
  { database, auth }: Pick<AppConfig, 'database' | 'auth'>,
  io: Output,
): Promise<number> {
  const init = argv.includes('--init');
  const [command, ...args] = argv.filter((arg) => arg !== '--init');
  const help = command === 'help' || argv.some((arg) => arg === '--help' || arg === '-h');
  if (command === undefined || help) {
    (help ? io.out : io.err)(USAGE);
    return help ? EXIT_OK : EXIT_USAGE;
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
    const keys = new ApiKeysService(
      dataSource.getRepository(ApiKeyEntity),
      new Transactions(dataSource),
      auth,
    );
    await run(command, args, keys, io);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`apikey: ${(error as Error).message}\n${USAGE}`);
      return EXIT_USAGE;
    }
    if (error instanceof ApiKeyError) io.err(`apikey: ${error.message}`);
    else io.err(`apikey: failed: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT_FAILED;
  } finally {
    await dataSource?.destroy();
  }
}

if (require.main === module)
  void apiKeyCli(process.argv.slice(2), configFromEnvironment('apikey'), {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  }).then((status) => process.exit(status));
