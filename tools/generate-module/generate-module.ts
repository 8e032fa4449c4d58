import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * `npm run generate:module -- <name> [--singular <word>] [--no-build]`: writes a resource module
 * (entity, migration, DTOs, service, controller, unit specs) to `src/<name>/` and its e2e spec
 * to `test/`, registers it in `src/features.ts`, then builds and regenerates `openapi.yaml`.
 * The templates are in `templates/`: `module/` goes to `src/<name>/`, `test/` to `test/`.
 */

const ROOT = join(__dirname, '..', '..');
const TEMPLATES = join(__dirname, 'templates');
export const FEATURES_MARKER = '  // generate:module adds new features above this line';

/** Lower-case words joined by single hyphens: the path segment, folder and table of a module. */
const NAME_FORMAT = /^[a-z][a-z0-9]*(-[a-z][a-z0-9]*)*$/;

/** Tables no module may take: TypeORM's own record of the migrations that ran. */
const RESERVED_TABLES = new Set(['migrations', 'typeorm_metadata']);

/** Every spelling of a module's name the templates use, e.g. for `store-orders`. */
export interface ModuleNames {
  /** `store-orders`: URL path, folder, file names. */
  kebabPlural: string;
  /** `store-order`: file names of the entity and DTOs. */
  kebabSingular: string;
  /** `StoreOrders`: classes of module, controller, service; the OpenAPI tag. */
  pascalPlural: string;
  /** `StoreOrder`: entity and DTO classes; the OpenAPI schemas. */
  pascalSingular: string;
  /** `storeOrders`, `storeOrder`: variables, operationIds, the id parameter. */
  camelPlural: string;
  camelSingular: string;
  /** `STORE_ORDERS`: the schema constant. */
  constantPlural: string;
  /** `store_orders`: the table. */
  table: string;
  /** `store orders`, `store order`: words in docs and messages. */
  nounPlural: string;
  nounSingular: string;
}

/** The singular of an English plural, for the usual cases; `--singular` covers the rest. */
export function singularOf(word: string): string {
  if (/[^aeiou]ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/(ss|sh|ch|x|z|us)es$/.test(word)) return word.slice(0, -2);
  if (/[^s]s$/.test(word)) return word.slice(0, -1);
  return word;
}

/**
 * Words the generated code cannot use as a variable name (the camel-case spellings become ones):
 * the language's reserved words, and `id`, the parameter of the service's `get`.
 */
const RESERVED_WORDS = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false ' +
    'finally for function if import in instanceof new null return super switch this throw true try ' +
    'typeof var void while with yield let static implements interface package private protected public await ' +
    'arguments eval id'
  ).split(' '),
);

const capitalised = (word: string) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`;

/** The names of module `name` (a plural: `orders`), its singular from `singular` or guessed. */
export function moduleNames(name: string, singular?: string): ModuleNames {
  if (!NAME_FORMAT.test(name)) {
    throw new Error(
      `"${name}" is not a module name: use lower-case words joined by hyphens, e.g. store-orders`,
    );
  }
  const words = name.split('-');
  const last = words[words.length - 1];
  if (singular !== undefined && !/^[a-z][a-z0-9]*$/.test(singular)) {
    throw new Error(
      `--singular takes one lower-case word, the singular of "${last}" (e.g. --singular person)`,
    );
  }
  const singularLast = singular ?? singularOf(last);
  if (singularLast === last) {
    throw new Error(
      `the singular of "${last}" must differ from it (class and variable names would collide): ` +
        `pass --singular <word>, or choose a name whose last word is a plural`,
    );
  }
  const singularWords = [...words.slice(0, -1), singularLast];
  const reserved = [words, singularWords]
    .map((parts) => parts.join(''))
    .find((word) => RESERVED_WORDS.has(word));
  if (reserved)
    throw new Error(
      `"${reserved}" is a reserved word in TypeScript or the generated code: choose another name`,
    );
  const pascal = (parts: string[]) => parts.map(capitalised).join('');
  const camel = (parts: string[]) => `${parts[0]}${pascal(parts.slice(1))}`;
  return {
    kebabPlural: name,
    kebabSingular: singularWords.join('-'),
    pascalPlural: pascal(words),
    pascalSingular: pascal(singularWords),
    camelPlural: camel(words),
    camelSingular: camel(singularWords),
    constantPlural: words.join('_').toUpperCase(),
    table: words.join('_'),
    nounPlural: words.join(' '),
    nounSingular: singularWords.join(' '),
  };
}

/** The value of every `__token__` the templates (contents and file names) may hold. */
export function templateTokens(names: ModuleNames, timestamp: number): Record<string, string> {
  const article = /^[aeiou]/.test(names.nounSingular) ? 'an' : 'a';
  return {
    __Items__: names.pascalPlural,
    __Item__: names.pascalSingular,
    __items__: names.camelPlural,
    __item__: names.camelSingular,
    __ITEMS__: names.constantPlural,
    '__items-kebab__': names.kebabPlural,
    '__item-kebab__': names.kebabSingular,
    __items_table__: names.table,
    __nouns__: names.nounPlural,
    __noun__: names.nounSingular,
    __Noun__: capitalised(names.nounSingular),
    __a_noun__: `${article} ${names.nounSingular}`,
    __TIMESTAMP__: String(timestamp),
  };
}

/** `text` with every token replaced; a token the table does not know is an error, not left in. */
export function render(text: string, tokens: Record<string, string>): string {
  return text.replace(/__[A-Za-z][A-Za-z_-]*?__/g, (token) => {
    if (!Object.hasOwn(tokens, token)) throw new Error(`unknown template token ${token}`);
    return tokens[token];
  });
}

/** `src/features.ts` with the module's imports and its entry (before the marker line) added. */
export function registerFeature(source: string, names: ModuleNames): string {
  if (!source.includes(FEATURES_MARKER)) {
    throw new Error(`src/features.ts has lost its marker line ("${FEATURES_MARKER.trim()}")`);
  }
  const moduleClass = `${names.pascalPlural}Module`;
  const schemaConstant = `${names.constantPlural}_SCHEMA`;
  const imports =
    `import { ${moduleClass} } from './${names.kebabPlural}/${names.kebabPlural}.module';\n` +
    `import { ${schemaConstant} } from './${names.kebabPlural}/${names.kebabPlural}.schema';\n`;
  const lastImport = source.lastIndexOf('\nimport ');
  const afterImports = source.indexOf('\n', source.indexOf(';', lastImport)) + 1;
  const withImports = source.slice(0, afterImports) + imports + source.slice(afterImports);
  return withImports.replace(
    FEATURES_MARKER,
    `  { module: ${moduleClass}, schema: ${schemaConstant} },\n${FEATURES_MARKER}`,
  );
}

/** Every template file below `folder`, as paths relative to it. */
function templateFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? templateFiles(join(folder, entry.name)).map((file) => join(entry.name, file))
      : entry.name.endsWith('.tpl')
        ? [entry.name]
        : [],
  );
}

/** Every `.ts` file below `folder` (node_modules aside). */
function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? entry.name === 'node_modules'
        ? []
        : sourceFiles(join(folder, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(folder, entry.name)]
        : [],
  );
}

/**
 * Why `names` cannot be used in the project at `root`, or undefined: its folder exists, or its
 * table, or one of its OpenAPI schemas (`Order`, `NewOrder`) already belongs to another module.
 */
export function nameTaken(root: string, names: ModuleNames): string | undefined {
  if (existsSync(join(root, 'src', names.kebabPlural))) return `src/${names.kebabPlural} exists`;
  if (RESERVED_TABLES.has(names.table)) return `the table ${names.table} is TypeORM's own`;
  const sources = sourceFiles(join(root, 'src')).map((file) => readFileSync(file, 'utf8'));
  const declared = (pattern: RegExp) =>
    sources.flatMap((text) => [...text.matchAll(pattern)].map((m) => m[1]));
  const tables = declared(/@Entity\(\{\s*name:\s*'([^']+)'/g);
  if (tables.includes(names.table)) return `the table ${names.table} belongs to another module`;
  const schemas = declared(/@ApiSchema\(\{\s*name:\s*'([^']+)'/g);
  const clash = [names.pascalSingular, `New${names.pascalSingular}`].find((schema) =>
    schemas.includes(schema),
  );
  return clash && `the OpenAPI schema ${clash} belongs to another module`;
}

/** Writes the module into the project at `root`; returns the files written (relative to root). */
export function generateModule(root: string, names: ModuleNames, timestamp = Date.now()): string[] {
  const taken = nameTaken(root, names);
  if (taken) throw new Error(`${taken}: choose another name`);
  const tokens = templateTokens(names, timestamp);
  const targets: [template: string, target: string][] = [
    ...templateFiles(join(TEMPLATES, 'module')).map((file): [string, string] => [
      join(TEMPLATES, 'module', file),
      join(root, 'src', names.kebabPlural, render(file, tokens).replace(/\.tpl$/, '')),
    ]),
    ...templateFiles(join(TEMPLATES, 'test')).map((file): [string, string] => [
      join(TEMPLATES, 'test', file),
      join(root, 'test', render(file, tokens).replace(/\.tpl$/, '')),
    ]),
  ];
  const existing = targets.filter(([, target]) => existsSync(target));
  if (existing.length > 0) {
    throw new Error(`would overwrite ${existing.map(([, target]) => relative(root, target)).join(', ')}`);
  }

  const features = join(root, 'src', 'features.ts');
  const registered = registerFeature(readFileSync(features, 'utf8'), names);
  for (const [template, target] of targets) {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, render(readFileSync(template, 'utf8'), tokens));
  }
  writeFileSync(features, registered);
  return [...targets.map(([, target]) => relative(root, target)), relative(root, features)];
}

function main(argv: string[]): void {
  const args = [...argv];
  const unknown = args.filter((arg) => arg.startsWith('--') && arg !== '--no-build' && arg !== '--singular');
  if (unknown.length > 0)
    throw new Error(`unknown option ${unknown.join(', ')} (options: --singular <word>, --no-build)`);
  const build = !args.includes('--no-build');
  const singularAt = args.indexOf('--singular');
  const singular = singularAt >= 0 ? args.splice(singularAt, 2)[1] : undefined;
  const positional = args.filter((arg) => !arg.startsWith('--'));
  if (positional.length !== 1 || (singularAt >= 0 && !singular)) {
    throw new Error(
      'usage: npm run generate:module -- <name> [--singular <word>] [--no-build]   e.g. orders',
    );
  }
  const names = moduleNames(positional[0], singular);
  console.log(
    `Generating ${names.nounPlural}: /v1/${names.kebabPlural}/{${names.camelSingular}Id}, ` +
      `${names.pascalSingular}Entity, table ${names.table} (wrong singular? --singular <word>)`,
  );
  const written = generateModule(ROOT, names);
  const run = (command: string, commandArgs: string[]) =>
    execFileSync(command, commandArgs, { cwd: ROOT, stdio: 'inherit' });
  run(join(ROOT, 'node_modules', '.bin', 'prettier'), ['--write', '--log-level', 'warn', ...written]);
  console.log(`Wrote:\n${written.map((file) => `  ${file}`).join('\n')}`);
  if (build) {
    try {
      run('npm', ['run', '-s', 'openapi:export']);
    } catch {
      throw new Error(
        'the build or the export failed (above). The files listed are written and registered: fix ' +
          `them and run \`npm run openapi:export\`, or delete them and undo src/features.ts to start again`,
      );
    }
  }
  console.log(
    `\nThe ${names.nounPlural} module answers at /v1/${names.kebabPlural}. Next: add its columns ` +
      `(entity, a migration, DTOs; docs/extending.md), then \`npm run migration:check\` and ` +
      `\`npx jest src/${names.kebabPlural} test/${names.kebabPlural}.e2e-spec.ts\`.`,
  );
}

if (require.main === module) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    console.error(`generate:module: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
