import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import ts from 'typescript';
import { startApp, TEST_KEY } from './support/app';
import { committedDocument, OPENAPI_FILE } from './support/openapi';

const ROOT = join(__dirname, '..');
const OUT = join(__dirname, 'artifacts', 'typed-client');
const TYPES_FILE = join(OUT, 'petstore-api.d.ts');
const CLIENT_FILE = join(__dirname, 'typed-client', 'round-trip.ts');

/** Runs the openapi-typescript CLI, as a developer would (its ESM dependencies do not load in Jest). */
function generateTypes(): void {
  const cli = join(dirname(require.resolve('openapi-typescript/package.json')), 'bin', 'cli.js');
  mkdirSync(OUT, { recursive: true });
  const run = spawnSync(process.execPath, [cli, OPENAPI_FILE, '--output', TYPES_FILE], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30000,
  });
  if (run.status !== 0)
    throw new Error(`openapi-typescript failed (${run.status}):\n${run.stdout}${run.stderr}`);
}

/** Type-checks the client against the generated types, strictly; returns the diagnostics. */
function typeCheck(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    esModuleInterop: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules', '@types')],
  });
  const host: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => '\n',
  };
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.formatDiagnostic(diagnostic, host).trim());
}

describe('A typed client generated from openapi.yaml (openapi-typescript + openapi-fetch, e2e)', () => {
  let app: NestExpressApplication;
  let baseUrl: string;

  beforeAll(async () => {
    app = await startApp();
    await app.listen(0, '127.0.0.1');
    // The first server of the document is this instance, relative to where the document is served.
    const server = (await committedDocument()).servers?.[0].url ?? '';
    baseUrl = new URL(server, await app.getUrl()).toString();
  });

  afterAll(async () => {
    await app.close();
  });

  it('generates the types, type-checks a client against them and round-trips create → list → get', async () => {
    generateTypes();
    expect(readFileSync(TYPES_FILE, 'utf8')).toContain('listPets: {');

    // Also proves the types are strict: each misuse in the client must be a type error.
    expect(typeCheck(CLIENT_FILE)).toEqual([]);

    // Loaded by path, after the type check: `npm run typecheck` must not follow it to types that
    // exist only once this test has generated them.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { roundTrip } = require(CLIENT_FILE);
    const result = await roundTrip(baseUrl, TEST_KEY);

    const created = { id: expect.any(Number), name: 'Typed Rex', categoryId: 42, status: 'pending' };
    expect(result.created).toEqual(created);
    expect(result.location).toBe(`/v1/pets/${result.created.id}`);
    expect(result.listed).toContainEqual(result.created);
    expect(result.listed.every((pet: { status?: string }) => pet.status === 'pending')).toBe(true);
    expect(result.fetched).toEqual(result.created);
    expect(result.deprecation).toBe('@1735689600');
    expect(result.missing).toEqual({
      status: 404,
      error: { code: 'not_found', message: 'No animal has id 987654321.', status: 404 },
    });
  });
});
