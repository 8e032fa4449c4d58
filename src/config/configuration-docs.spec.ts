import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENVIRONMENT_DEFAULTS } from './app-config';

const ROOT = join(__dirname, '..', '..');
const ENVIRONMENT_VARIABLES = [...ENVIRONMENT_DEFAULTS.keys()];
const HEADER = '| variable | default | meaning |';

/** Read by the OpenTelemetry SDK itself (see src/observability/tracing.ts), not by the schema. */
const READ_BY_THE_OPENTELEMETRY_SDK = /^OTEL_/;

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const ours = (name: string): boolean => !READ_BY_THE_OPENTELEMETRY_SDK.test(name);

/** The `| variable | default | meaning |` table of docs/configuration.md: default cell by variable. */
function documentedDefaults(): Map<string, string> {
  const lines = read('docs/configuration.md').split('\n');
  const start = lines.findIndex((line) => line.trim() === HEADER);
  expect(start).toBeGreaterThan(-1);
  const rows = new Map<string, string>();
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const [, variable, defaultCell] = lines[i].split('|').map((cell) => cell.trim());
    rows.set(variable.replace(/`/g, ''), defaultCell);
  }
  return rows;
}

/** The `NAME=value` lines of .env.example, commented out or not. */
function exampleLines(): { name: string; value: string; commented: boolean }[] {
  return read('.env.example')
    .split('\n')
    .map((line) => /^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line))
    .filter((match) => match !== null)
    .map(([, comment, name, value]) => ({ name, value, commented: comment !== undefined }));
}

/** The default as the docs write it, or undefined for a variable that is unset by default. */
function writtenDefault(name: string): string | undefined {
  const value = ENVIRONMENT_DEFAULTS.get(name);
  if (value == null || value === '' || (Array.isArray(value) && value.length === 0)) return undefined;
  return String(value);
}

describe('the environment schema and its documentation', () => {
  it('docs/configuration.md has one row per variable of the schema, and no other', () => {
    const documented = [...documentedDefaults().keys()].filter(ours);

    expect([...documented].sort()).toEqual([...ENVIRONMENT_VARIABLES].sort());
  });

  it('.env.example shows every variable of the schema, and no other', () => {
    const shown = new Set(exampleLines().map(({ name }) => name));

    expect([...shown].filter(ours).sort()).toEqual([...ENVIRONMENT_VARIABLES].sort());
  });

  it("docs/configuration.md gives each variable the schema's default", () => {
    const rows = documentedDefaults();
    const wrong = ENVIRONMENT_VARIABLES.map((name) => {
      const expected = writtenDefault(name);
      const cell = rows.get(name) ?? '';
      const agrees = expected === undefined ? cell.startsWith('unset') : cell.startsWith(`\`${expected}\``);
      return agrees ? undefined : `${name}: the schema says ${expected ?? 'unset'}, the table "${cell}"`;
    }).filter((problem) => problem !== undefined);

    expect(wrong).toEqual([]);
  });

  it(".env.example shows each variable with the schema's default, commented out or not; one unset by default only commented out", () => {
    const wrong = exampleLines()
      .filter(({ name }) => ours(name))
      .filter(({ name, value, commented }) =>
        writtenDefault(name) === undefined ? !commented : value !== writtenDefault(name),
      )
      .map(
        ({ name, value }) => `${name}=${value}, the schema's default is ${writtenDefault(name) ?? 'unset'}`,
      );

    expect(wrong).toEqual([]);
  });
});
