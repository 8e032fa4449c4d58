import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compiled } from './support/entry-points';

/**
 * Every command a user runs with arguments answers `--help` (and `-h`) with its usage on stdout
 * and exit status 0, doing nothing else. Each runs as its npm script runs it, without the build
 * some do first: the compiled entry points are this run's (test/support/entry-points.ts).
 */
const ROOT = join(__dirname, '..');
const run = promisify(execFile);
const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

const SCRIPTS = [
  'generate:module',
  'apikey',
  'migration:check',
  'openapi:export',
  'migration:generate',
  'migration:run',
  'migration:revert',
  'migration:show',
  'bench',
  'bench:compare',
  'test:generator',
  'test:container',
];

/** What `npm run <script> -- <args>` runs: the arguments go to the script's last command. */
function commandOf(script: string): string[] {
  const words = scripts[script].split(' && ').at(-1)!.split(' ');
  return words.map((word) => (word.startsWith('dist/') ? compiled(word.slice('dist/'.length)) : word));
}

async function help(command: string[], flag: string): Promise<{ code: number; stdout: string }> {
  const [program, ...args] = command;
  const executable =
    program === 'node'
      ? process.execPath
      : program.includes('/')
        ? program
        : join(ROOT, 'node_modules', '.bin', program);
  try {
    const { stdout } = await run(program === 'bash' ? 'bash' : executable, [...args, flag], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', TS_NODE_PROJECT: join(ROOT, 'tsconfig.json') },
      timeout: 60_000,
    });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: `${failed.stdout}${failed.stderr}` };
  }
}

describe('--help', () => {
  it.each(SCRIPTS)(
    'npm run %s -- --help prints the usage and exits 0',
    async (script) => {
      const result = await help(commandOf(script), '--help');

      expect(result).toEqual({
        code: 0,
        stdout: expect.stringMatching(/^(usage: |typeorm-ts-node-commonjs )/),
      });
    },
    60_000,
  );

  it.each(['generate:module', 'apikey', 'migration:check', 'openapi:export', 'bench', 'bench:compare'])(
    'npm run %s -- -h does the same',
    async (script) => {
      expect(await help(commandOf(script), '-h')).toEqual({
        code: 0,
        stdout: expect.stringMatching(/^usage: /),
      });
    },
    60_000,
  );

  it('apikey answers it after a command too, and deploy/build-base-image.sh (not an npm script)', async () => {
    expect(await help([...commandOf('apikey'), 'create'], '--help')).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^usage: npm run apikey/),
    });
    expect(await help(['bash', 'deploy/build-base-image.sh'], '--help')).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^usage: sudo deploy\/build-base-image\.sh/),
    });
  });
});
