import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import * as ts from 'typescript';

const ROOT = join(__dirname, '..', '..');

/** Where the tests' child processes find the build of this run (set by test/support/global-setup.ts). */
export const BUILD_VARIABLE = 'PETSTORE_TEST_BUILD';

/**
 * Compiles src/ (the files of tsconfig.build.json) once per test run into a fresh folder laid
 * out as the repository is: `dist/` beside links to package.json and node_modules, so that the
 * compiled entry points run as `node dist/main.js` does. Each file is transpiled on its own, as
 * `ts-node/register/transpile-only` did at every launch (no type check: that is `npm run
 * typecheck`'s job); the output of each is kept in `cacheDirectory` under a hash of its content,
 * the compiler options and the compiler's version, so an unchanged file is not transpiled again
 * and a changed one always is. Returns the folder, which the caller removes.
 */
export function buildEntryPoints(cacheDirectory: string): string {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.build.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  if (!config) throw new Error('tsconfig.build.json could not be read');
  const compilerOptions: ts.CompilerOptions = {
    ...config.options,
    sourceMap: false,
    declaration: false,
    incremental: false,
    tsBuildInfoFile: undefined,
  };
  const optionsHash = createHash('sha256')
    .update(`${ts.version}\n${JSON.stringify(compilerOptions)}`)
    .digest('hex');
  const cache = join(cacheDirectory, 'petstore-entry-points');
  mkdirSync(cache, { recursive: true });

  const build = mkdtempSync(join(tmpdir(), 'petstore-build-'));
  symlinkSync(join(ROOT, 'node_modules'), join(build, 'node_modules'), 'dir');
  symlinkSync(join(ROOT, 'package.json'), join(build, 'package.json'));
  for (const file of config.fileNames) {
    const source = readFileSync(file, 'utf8');
    const name = relative(join(ROOT, 'src'), file);
    const key = createHash('sha256').update(`${optionsHash}\n${name}\n${source}`).digest('hex');
    const cached = join(cache, `${key}.js`);
    let output: string;
    try {
      output = readFileSync(cached, 'utf8');
    } catch {
      output = ts.transpileModule(source, { compilerOptions, fileName: file }).outputText;
      // Written whole, then renamed: a run beside this one never reads half a file.
      const partial = `${cached}.${process.pid}`;
      writeFileSync(partial, output);
      renameSync(partial, cached);
    }
    const target = join(build, 'dist', name.replace(/\.ts$/, '.js'));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, output);
  }
  return build;
}

/** The compiled form of a file of src/ in this run's build, e.g. `compiled('main.js')`. */
export function compiled(file: string): string {
  const build = process.env[BUILD_VARIABLE];
  if (!build) {
    throw new Error(
      `${BUILD_VARIABLE} is not set: run the tests through Jest with jest.config.js, whose globalSetup compiles src/`,
    );
  }
  return join(build, 'dist', file);
}
