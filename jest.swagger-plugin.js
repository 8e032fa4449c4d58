/**
 * The Jest transformer of src/ for the e2e tests: it compiles as `nest build` does, one
 * TypeScript program of the files of tsconfig.build.json emitted with the @nestjs/swagger plugin
 * (which needs the program's type checker), so the app the tests boot carries the same OpenAPI
 * metadata. No type check: that is `npm run typecheck`'s job.
 *
 * The program is made only when a file has to be compiled, once per worker. Jest keeps each
 * output under a key that covers every file of the program, because the plugin's output for one
 * file depends on the types of others: an edit anywhere in src/ compiles src/ again, and a run
 * with nothing changed compiles nothing.
 */
const { createHash } = require('node:crypto');
const { readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');
const ts = require('typescript');
const plugin = require('@nestjs/swagger/plugin');

const CONFIG = join(__dirname, 'tsconfig.build.json');

/** The files and options of tsconfig.build.json, as `nest build` reads them (once per worker). */
function readConfig() {
  const config = ts.getParsedCommandLineOfConfigFile(CONFIG, undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  const options = {
    ...config.options,
    noEmit: false,
    declaration: false,
    incremental: false,
    tsBuildInfoFile: undefined,
    sourceMap: false,
    inlineSourceMap: true,
    inlineSources: true,
  };
  const setup = createHash('sha256')
    .update(readFileSync(__filename))
    .update(JSON.stringify(options))
    .update(ts.version)
    .digest('hex');
  return { fileNames: config.fileNames, options, setup };
}
let config;
const currentConfig = () => (config ??= readConfig());

/** A digest of every file of the program, read again only when its size or time changes. */
const digests = new Map();
function sourcesDigest(fileNames) {
  const hash = createHash('sha256');
  for (const file of fileNames) {
    const { size, mtimeMs } = statSync(file);
    let known = digests.get(file);
    if (!known || known.size !== size || known.mtimeMs !== mtimeMs) {
      known = { size, mtimeMs, digest: createHash('sha256').update(readFileSync(file)).digest('hex') };
      digests.set(file, known);
    }
    hash.update(`${file}\n${known.digest}\n`);
  }
  return hash.digest('hex');
}

let compiled; // { digest, program }

function programWith(sourcePath) {
  const { fileNames, options } = currentConfig();
  const digest = sourcesDigest(fileNames);
  if (compiled?.digest !== digest) {
    compiled = { digest, program: ts.createProgram(fileNames, options, undefined, compiled?.program) };
  }
  return compiled.program.getSourceFile(sourcePath) ? compiled.program : undefined;
}

module.exports = {
  // Not the Jest configuration: `npm run test:quick` runs another selection of the same files.
  getCacheKey(sourceText, sourcePath, { transformerConfig }) {
    const { fileNames, setup } = currentConfig();
    return createHash('sha256')
      .update(setup)
      .update(JSON.stringify(transformerConfig))
      .update(sourcesDigest(fileNames))
      .update(sourcePath)
      .update(sourceText)
      .digest('hex');
  },

  process(sourceText, sourcePath, { transformerConfig }) {
    let program = programWith(sourcePath);
    if (!program) {
      // A file made since this worker read the configuration.
      config = undefined;
      program = programWith(sourcePath);
    }
    const sourceFile = program?.getSourceFile(sourcePath);
    if (!sourceFile || sourceFile.text !== sourceText) {
      throw new Error(`${sourcePath} is not a file of ${CONFIG} as it is on disk`);
    }
    let code;
    const result = program.emit(
      sourceFile,
      (name, text) => {
        if (name.endsWith('.js')) code = text;
      },
      undefined,
      false,
      { before: [plugin.before({ ...transformerConfig }, program)] },
    );
    if (result.emitSkipped || code === undefined) throw new Error(`${sourcePath} was not compiled`);
    return { code };
  },
};
