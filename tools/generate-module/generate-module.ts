import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * `npm run generate:module -- <name> [options]` (USAGE below): writes a resource module (entity,
 * migration, DTOs, lifecycle, error codes, service, controller, unit specs) to `src/<name>/` and
 * its e2e spec to `test/`, registers it in `src/features.ts`, then builds and regenerates
 * `openapi.yaml`. The templates are in `templates/`: `module/` goes to `src/<name>/`, `test/` to
 * `test/`; their `// @if <flag>` / `// @each <list>` ... `// @end` lines choose what each option
 * adds (inside an `@each`, `@if` asks the item's own flags first).
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
  /** `STORE_ORDERS`, `STORE_ORDER`: constants. */
  constantPlural: string;
  constantSingular: string;
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

/** `animal` or `person,people`: a noun and its plural (guessed: `animals`, `categories`, `boxes`). */
export function nounOf(value: string): { singular: string; plural: string } {
  const [singular, plural, ...rest] = value.split(',').map((word) => word.trim());
  if (
    !/^[a-z][a-z ]*$/.test(singular) ||
    rest.length > 0 ||
    (plural !== undefined && !/^[a-z][a-z ]*$/.test(plural))
  )
    throw new Error('--noun takes lower-case words, and optionally their plural: --noun person,people');
  const guessed = /[^aeiou]y$/.test(singular)
    ? `${singular.slice(0, -1)}ies`
    : /(s|sh|ch|x|z)$/.test(singular)
      ? `${singular}es`
      : `${singular}s`;
  return { singular, plural: plural ?? guessed };
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
    constantSingular: singularWords.join('_').toUpperCase(),
    table: words.join('_'),
    nounPlural: words.join(' '),
    nounSingular: singularWords.join(' '),
  };
}

export const OPERATIONS = ['list', 'get', 'create', 'update', 'delete'] as const;
export type Operation = (typeof OPERATIONS)[number];
export const DEFAULT_OPERATIONS: readonly Operation[] = ['list', 'get', 'create'];

/** `list,get,create,update,delete` or a part of it; list, get and create are always in it. */
export function parseOperations(value: string): Operation[] {
  const asked = value.split(',').map((operation) => operation.trim());
  const unknown = asked.filter((operation) => !(OPERATIONS as readonly string[]).includes(operation));
  if (unknown.length > 0)
    throw new Error(`unknown operation ${unknown.join(', ')} (operations: ${OPERATIONS.join(', ')})`);
  const missing = DEFAULT_OPERATIONS.filter((operation) => !asked.includes(operation));
  if (missing.length > 0)
    throw new Error(`--operations must include ${DEFAULT_OPERATIONS.join(', ')} (every module has them)`);
  return OPERATIONS.filter((operation) => asked.includes(operation));
}

/** A module another one refers to, as its files spell it (`pets`: PetEntity, PetsService, PetsModule). */
export interface ReferencedModule {
  folder: string;
  moduleClass: string;
  serviceClass: string;
  entityClass: string;
  entityFile: string;
  table: string;
  /** `pet`: the field is `petId`, the column `pet_id`. */
  camelSingular: string;
  /** The OpenAPI schema of its create body: a sample of it makes a referenced record in tests. */
  newSchema: string;
}

/** Reads what a reference needs from the module in `src/<folder>/`, or says why it cannot. */
export function referencedModule(root: string, folder: string): ReferencedModule {
  const dir = join(root, 'src', folder);
  if (!NAME_FORMAT.test(folder) || !existsSync(dir))
    throw new Error(`--references ${folder}: there is no module src/${folder}`);
  const read = (file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8') : '');
  const moduleClass = /export class (\w+Module)\b/.exec(read(`${folder}.module.ts`))?.[1];
  const service = read(`${folder}.service.ts`);
  const serviceClass = /export class (\w+Service)\b/.exec(service)?.[1];
  const entityFile = readdirSync(dir).find((file) => file.endsWith('.entity.ts'));
  const entity = entityFile ? read(entityFile) : '';
  const table = /@Entity\(\{\s*name:\s*'([^']+)'/.exec(entity)?.[1];
  const entityClass = /export class (\w+)Entity\b/.exec(entity)?.[1];
  if (
    !moduleClass ||
    !serviceClass ||
    !entityFile ||
    !table ||
    !entityClass ||
    !/\bget\(id: number\b/.test(service)
  )
    throw new Error(
      `--references ${folder}: src/${folder} must have ${folder}.module.ts, ${folder}.service.ts ` +
        '(with get(id: number), 404 when none) and one *.entity.ts, as generated modules do',
    );
  if (!new RegExp(`exports:\\s*\\[[^\\]]*\\b${serviceClass}\\b`).test(read(`${folder}.module.ts`)))
    throw new Error(`--references ${folder}: ${moduleClass} must export ${serviceClass}`);
  return {
    folder,
    moduleClass,
    serviceClass,
    entityClass: `${entityClass}Entity`,
    entityFile: entityFile.replace(/\.ts$/, ''),
    table,
    camelSingular: `${entityClass.charAt(0).toLowerCase()}${entityClass.slice(1)}`,
    newSchema: `New${entityClass}`,
  };
}

/** Codes the modules of `root` declare already (`declareErrorCodes`), which a new one must not take. */
function declaredCodes(root: string): Set<string> {
  const codes = sourceFiles(join(root, 'src'))
    .filter((file) => file.endsWith('.errors.ts'))
    .flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/^\s*([a-z][a-z0-9_]*): \{/gm)].map((m) => m[1]),
    );
  return new Set(codes);
}

/** The tokens of one reference (`__Ref__`, `__ref__` ...) in the module `names`. */
export function referenceTokens(
  names: ModuleNames,
  reference: ReferencedModule,
  taken: ReadonlySet<string> = new Set(),
): Record<string, string> {
  const snake = reference.camelSingular.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
  const code = taken.has(`unknown_${snake}`)
    ? `${names.table.replace(/s$/, '')}_unknown_${snake}`
    : `unknown_${snake}`;
  return {
    __ref__: reference.camelSingular,
    __Ref__: capitalised(reference.camelSingular),
    __ref_column__: `${snake}_id`,
    __ref_table__: reference.table,
    __ref_folder__: reference.folder,
    __RefEntity__: reference.entityClass,
    __ref_entity_file__: reference.entityFile,
    __RefsService__: reference.serviceClass,
    __RefsModule__: reference.moduleClass,
    __refs__: `${reference.folder.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase())}`,
    __ref_code__: code,
    __NewRef__: reference.newSchema,
    __ref_fk__: `fk_${names.table}_${snake}_id`,
    __ref_index__: `idx_${names.table}_${snake}_id`,
  };
}

/** One item of an `// @each <list>` block: its tokens, and the flags its `// @if` lines may ask. */
export interface ListItem {
  tokens: Record<string, string>;
  flags?: Readonly<Record<string, boolean>>;
}

/**
 * `text` with its `// @if <flag>` (or `!<flag>`) blocks kept or dropped and its `// @each <list>`
 * blocks written once per item of `lists[list]`, each with that item's tokens rendered.
 */
export function expand(
  text: string,
  flags: Readonly<Record<string, boolean>>,
  lists: Readonly<Record<string, readonly ListItem[]>> = {},
): string {
  const lines = text.split('\n');
  const DIRECTIVE = /^\s*\/\/ @(if|each|end)\b\s*(!?)([\w-]*)\s*$/;
  let index = 0;
  /** Past the `// @end` of the block that starts at `index`. */
  const skip = () => {
    for (let depth = 1; depth > 0 && index < lines.length; index++) {
      const kind = DIRECTIVE.exec(lines[index])?.[1];
      if (kind === 'end') depth--;
      else if (kind !== undefined) depth++;
    }
  };
  const block = (scope: Readonly<Record<string, boolean>>): string[] => {
    const out: string[] = [];
    while (index < lines.length) {
      const line = lines[index++];
      const directive = DIRECTIVE.exec(line);
      if (!directive) {
        out.push(line);
        continue;
      }
      const [, kind, not, name] = directive;
      if (kind === 'end') return out;
      const start = index;
      if (kind === 'if') {
        if (!(name in scope)) throw new Error(`unknown template flag ${name}`);
        const inner = block(scope);
        if (scope[name] !== (not === '!')) out.push(...inner);
        continue;
      }
      const items = lists[name];
      if (items === undefined) throw new Error(`unknown template list ${name}`);
      skip();
      const end = index;
      for (const item of items) {
        index = start;
        out.push(
          ...block({ ...scope, ...item.flags }).map((innerLine) => render(innerLine, item.tokens, true)),
        );
      }
      index = end;
    }
    return out;
  };
  return block(flags).join('\n');
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
    __ITEM__: names.constantSingular,
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

/**
 * `text` with every token replaced; a token the table does not know is an error, not left in
 * (or, with `partial`, left for a later table).
 */
export function render(text: string, tokens: Record<string, string>, partial = false): string {
  return text.replace(/__[A-Za-z][A-Za-z_-]*?__/g, (token) => {
    if (Object.hasOwn(tokens, token)) return tokens[token];
    if (partial) return token;
    throw new Error(`unknown template token ${token}`);
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

/** A column of the module besides `id`, `name`, `status`, `version` and its references. */
export interface FieldSpec {
  /** `categoryId`: the property; its column is snake_case (`category_id`). */
  name: string;
  type: 'text' | 'int64';
  /** Of text: the most characters (code points). */
  maxLength: number;
  /** May be left out (text: stored as NULL, answered absent; removed by a patch's `null`). */
  optional: boolean;
}

const FIELD_FORMAT = /^([a-z][a-zA-Z0-9]*):(text(?:\((\d{1,5})\))?|int64)(\?)?$/;
/** Properties every module has, which `--fields` cannot name. */
const OWN_PROPERTIES = new Set(['id', 'name', 'status', 'version']);

/** `description:text(1000)?,categoryId:int64`: name, type (`text`, `text(N)`, `int64`), `?` when optional. */
export function parseFields(value: string): FieldSpec[] {
  if (value.trim() === '') return [];
  const fields = value.split(',').map((entry): FieldSpec => {
    const match = FIELD_FORMAT.exec(entry.trim());
    if (!match)
      throw new Error(
        `--fields: "${entry}" is not <name>:<type>[?] with a camelCase name and a type of text, text(N) or int64`,
      );
    const [, name, type, length, optional] = match;
    if (OWN_PROPERTIES.has(name) || RESERVED_WORDS.has(name))
      throw new Error(`--fields: ${name} is a property every module has, or a reserved word`);
    const maxLength = Number(length ?? 255);
    if (maxLength < 1 || maxLength > 10000)
      throw new Error(`--fields: ${name}: text(N) takes N from 1 to 10000`);
    return { name, type: type === 'int64' ? 'int64' : 'text', maxLength, optional: optional === '?' };
  });
  const names = fields.map((field) => field.name);
  if (new Set(names).size !== names.length) throw new Error('--fields names a field twice');
  return fields;
}

export const DEFAULT_FIELDS = 'description:text(1000)?';

/** The states, the one a record is created with when it sends none (null: none), and the changes allowed. */
export interface LifecycleSpec {
  states: string[];
  initial: string | null;
  transitions: Record<string, string[]>;
}

const STATE_FORMAT = /^[a-z][a-z0-9_]{0,15}$/;

/**
 * `--states a,b,c` (the first is the default), `--default-state <state|none>`, `--transitions
 * 'a>b,b>c'` (every other change is refused; without it every change is allowed).
 */
export function parseLifecycle(
  states = 'active,archived',
  initial?: string,
  transitions?: string,
): LifecycleSpec {
  const list = states.split(',').map((state) => state.trim());
  const bad = list.find((state) => !STATE_FORMAT.test(state));
  if (bad !== undefined || list.length < 2 || new Set(list).size !== list.length)
    throw new Error(
      '--states takes two or more distinct states of a-z, 0-9 and _ (at most 16 characters each)',
    );
  const known = (state: string, option: string) => {
    if (!list.includes(state))
      throw new Error(`${option}: ${state} is not one of --states ${list.join(',')}`);
    return state;
  };
  const table: Record<string, string[]> = Object.fromEntries(list.map((state) => [state, []]));
  if (transitions === undefined) {
    for (const from of list) table[from] = list.filter((to) => to !== from);
  } else {
    for (const pair of transitions.split(',')) {
      const [from, to, ...rest] = pair.split('>').map((state) => state.trim());
      if (to === undefined || rest.length > 0) throw new Error(`--transitions: "${pair}" is not <from>>to>`);
      known(from, '--transitions');
      if (from === known(to, '--transitions'))
        throw new Error(`--transitions: ${pair}: a state may always stay`);
      if (!table[from].includes(to)) table[from].push(to);
    }
  }
  const start =
    initial === undefined ? list[0] : initial === 'none' ? null : known(initial, '--default-state');
  return { states: list, initial: start, transitions: table };
}

export interface ModuleOptions {
  operations?: readonly Operation[];
  /** Folders of the modules it refers to (`pets`). */
  references?: readonly string[];
  fields?: readonly FieldSpec[];
  lifecycle?: LifecycleSpec;
  /** The words of its docs and messages, singular and plural, when not the module's name. */
  noun?: { singular: string; plural: string };
  /** False: a create takes no status; a record starts in the default state and moves only by patches. */
  createStatus?: boolean;
  /** Required fields and references' fields (`petId`) that a patch cannot change. */
  immutable?: readonly string[];
}

const quoted = (values: readonly string[]) => values.map((value) => `'${value}'`).join(', ');

/** The tokens and flags of each field (an `// @each field` block), and the samples tests send. */
function fieldItems(
  fields: readonly FieldSpec[],
  immutable: readonly string[],
): { items: ListItem[]; tokens: Record<string, string> } {
  const sample = (field: FieldSpec) => (field.type === 'int64' ? '7' : "'More'");
  const literal = (entries: FieldSpec[]) =>
    `{ ${entries.map((field) => `${field.name}: ${sample(field)}`).join(', ')} }`;
  return {
    items: fields.map((field) => ({
      tokens: {
        __field__: field.name,
        __field_column__: field.name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`),
        __field_max__: String(field.maxLength),
        __field_sample__: sample(field),
      },
      flags: {
        text: field.type === 'text',
        int64: field.type === 'int64',
        optional: field.optional,
        immutable: immutable.includes(field.name),
      },
    })),
    tokens: {
      __REQUIRED_FIELDS__: literal(fields.filter((field) => !field.optional)),
      __OPTIONAL_FIELDS__: literal(fields.filter((field) => field.optional)),
      __OPTIONAL_NAMES__: `[${quoted(fields.filter((field) => field.optional).map((field) => field.name))}]`,
      __IMMUTABLE_NAMES__: `[${quoted(immutable)}]`,
    },
  };
}

/** The changes that bring a record from `start` to each state it can reach (breadth first: the fewest). */
export function pathsFrom(lifecycle: LifecycleSpec, start: string): Record<string, string[]> {
  const paths: Record<string, string[]> = { [start]: [] };
  const queue = [start];
  for (let from = queue.shift(); from !== undefined; from = queue.shift())
    for (const to of lifecycle.transitions[from])
      if (!(to in paths)) {
        paths[to] = [...paths[from], to];
        queue.push(to);
      }
  return paths;
}

/** The lifecycle's tokens; without a status on create, the tests' moves start where every record does. */
function lifecycleTokens(lifecycle: LifecycleSpec, createStatus: boolean): Record<string, string> {
  const table = lifecycle.states
    .map((state) => `${state}: [${quoted(lifecycle.transitions[state])}]`)
    .join(', ');
  const start = lifecycle.initial ?? lifecycle.states[0];
  const other = createStatus
    ? lifecycle.states.find((state) => state !== start)!
    : lifecycle.transitions[start][0];
  const from = createStatus
    ? lifecycle.states.find((state) => lifecycle.transitions[state].length > 0)
    : start;
  const paths = Object.entries(pathsFrom(lifecycle, start))
    .map(([state, path]) => `${state}: [${quoted(path)}]`)
    .join(', ');
  return {
    __PATHS__: `{ ${paths} }`,
    __move_from__: from ?? '',
    __move_to__: from === undefined ? '' : lifecycle.transitions[from][0],
    __STATES__: quoted(lifecycle.states),
    __STATES_TEXT__: lifecycle.states.join(', '),
    __DEFAULT_STATE__: lifecycle.initial === null ? 'null' : `'${lifecycle.initial}'`,
    __default_state__: lifecycle.initial ?? '',
    __other_state__: other,
    __TRANSITIONS__: `{ ${table} }`,
  };
}

/**
 * Refuses what `--no-create-status` and `--immutable` cannot mean here: both need update (the
 * only way a record changes), a new record needs a state to start in and a way out of it, and
 * only a required field or a reference (`fields`) can be fixed at create.
 */
function checkChangeRules(
  operations: readonly Operation[],
  lifecycle: LifecycleSpec,
  createStatus: boolean,
  immutable: readonly string[],
  fields: readonly string[],
): void {
  const option = [
    ...(createStatus ? [] : ['--no-create-status']),
    ...(immutable.length > 0 ? ['--immutable'] : []),
  ];
  if (option.length > 0 && !operations.includes('update'))
    throw new Error(`${option.join(' and ')}: a record changes only by a patch; add update to --operations`);
  if (!createStatus && lifecycle.initial === null)
    throw new Error(
      '--no-create-status: a new record starts in the default state; --default-state none gives none',
    );
  if (!createStatus && lifecycle.transitions[lifecycle.initial!].length === 0)
    throw new Error(
      `--no-create-status: every record would stay ${lifecycle.initial}; give it a transition (--transitions)`,
    );
  if (new Set(immutable).size !== immutable.length) throw new Error('--immutable names a field twice');
  const unknown = immutable.find((field) => !fields.includes(field));
  if (unknown !== undefined)
    throw new Error(
      `--immutable: ${unknown} is not a required field or a reference's field (${fields.join(', ') || 'none'})`,
    );
}

/** Writes the module into the project at `root`; returns the files written (relative to root). */
export function generateModule(
  root: string,
  names: ModuleNames,
  options: ModuleOptions = {},
  timestamp = Date.now(),
): string[] {
  const taken = nameTaken(root, names);
  if (taken) throw new Error(`${taken}: choose another name`);
  const words = options.noun
    ? { ...names, nounSingular: options.noun.singular, nounPlural: options.noun.plural }
    : names;
  const operations = options.operations ?? DEFAULT_OPERATIONS;
  const folders = options.references ?? [];
  if (new Set(folders).size !== folders.length) throw new Error('--references names a module twice');
  const codes = declaredCodes(root);
  const references = folders.map((folder) => referenceTokens(names, referencedModule(root, folder), codes));
  const fieldSpecs = options.fields ?? parseFields(DEFAULT_FIELDS);
  const clash = fieldSpecs.find((field) => references.some((ref) => `${ref.__ref__}Id` === field.name));
  if (clash) throw new Error(`--fields: ${clash.name} is a reference's field already`);
  const lifecycle = options.lifecycle ?? parseLifecycle();
  const createStatus = options.createStatus ?? true;
  const immutable = options.immutable ?? [];
  checkChangeRules(operations, lifecycle, createStatus, immutable, [
    ...fieldSpecs.filter((field) => !field.optional).map((field) => field.name),
    ...references.map((ref) => `${ref.__ref__}Id`),
  ]);
  const fields = fieldItems(fieldSpecs, immutable);
  const tokens = {
    ...templateTokens(words, timestamp),
    ...fields.tokens,
    ...lifecycleTokens(lifecycle, createStatus),
  };
  const refItems = references.map((tokens) => ({
    tokens,
    flags: { immutable: immutable.includes(`${tokens.__ref__}Id`) },
  }));
  const flags = {
    update: operations.includes('update'),
    delete: operations.includes('delete'),
    mutable: operations.includes('update') || operations.includes('delete'),
    references: references.length > 0,
    defaultState: lifecycle.initial !== null,
    moves: lifecycle.states.some((state) => lifecycle.transitions[state].length > 0),
    int64Fields: fieldSpecs.some((field) => field.type === 'int64'),
    removable: fieldSpecs.some((field) => field.optional) || lifecycle.initial === null,
    createStatus,
    /** A new record's body has a property that may be left out. */
    omittable: createStatus || fieldSpecs.some((field) => field.optional),
    immutables: immutable.length > 0,
    /** Some reference a patch cannot change: an update answers fewer of the module's codes than a create. */
    immutableReferences: refItems.some((item) => item.flags.immutable),
    /** Some reference a patch can change: an update checks it. */
    patchableReferences: refItems.some((item) => !item.flags.immutable),
    /** A patch takes an id or an int64. */
    patchableIds:
      refItems.some((item) => !item.flags.immutable) ||
      fieldSpecs.some((field) => field.type === 'int64' && !immutable.includes(field.name)),
    /** The tests expect what a create answers from the body they sent (its references differ each time). */
    expectSent: references.length > 0 || !createStatus,
  };
  const lists = { reference: refItems, field: fields.items };
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
  const written: string[] = [];
  for (const [template, target] of targets) {
    const text = render(expand(readFileSync(template, 'utf8'), flags, lists), tokens);
    if (text.trim() === '') continue; // a file only some options have (`// @if update` around it all)
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    written.push(relative(root, target));
  }
  writeFileSync(features, registered);
  return [...written, relative(root, features)];
}

/** Takes `--<option> <value>` out of `args`; undefined when absent. */
function takeOption(args: string[], option: string): string | undefined {
  const at = args.indexOf(option);
  if (at < 0) return undefined;
  const [, value] = args.splice(at, 2);
  if (value === undefined || value.startsWith('--')) throw new Error(`${option} needs a value`);
  return value;
}

const USAGE = `usage: npm run generate:module -- <name> [options]
  --singular <word>            the singular of the name's last word, where it is not the usual one
  --noun <word>[,<plural>]     the words of its docs and messages (default: from the name)
  --fields <name>:<type>[?],...  its columns besides id, name and status; types text, text(N) (at
                               most N characters, 255 by default), int64; ? when optional
                               (default ${DEFAULT_FIELDS})
  --states <a>,<b>,...         its statuses (default active,archived); the first is the default
  --default-state <state|none> what a record created without a status gets; none: no status
  --transitions '<a>><b>,...'  the only status changes allowed (default: every one)
  --no-create-status           a create takes no status: a record starts in the default state and
                               changes it only by a patch (needs update)
  --references <module>,...    modules its records belong to (a foreign key each)
  --immutable <field>,...      required fields or references (petId) that a patch cannot change
  --operations list,get,create[,update][,delete]
  --no-build                   leave openapi.yaml as it is
  --timestamp <ms>             the create migration's time (default: now)
e.g. store-orders --references pets --immutable petId --operations list,get,create,update`;

function main(argv: string[]): void {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return;
  }
  const args = [...argv];
  const singular = takeOption(args, '--singular');
  const references = takeOption(args, '--references')
    ?.split(',')
    .map((folder) => folder.trim());
  const operationsValue = takeOption(args, '--operations');
  const operations = operationsValue === undefined ? undefined : parseOperations(operationsValue);
  const fieldsValue = takeOption(args, '--fields');
  const fields = fieldsValue === undefined ? undefined : parseFields(fieldsValue);
  const lifecycle = parseLifecycle(
    takeOption(args, '--states'),
    takeOption(args, '--default-state'),
    takeOption(args, '--transitions'),
  );
  const nounValue = takeOption(args, '--noun');
  const timestamp = takeOption(args, '--timestamp');
  const immutable = takeOption(args, '--immutable')
    ?.split(',')
    .map((field) => field.trim());
  const switches = ['--no-build', '--no-create-status'];
  const unknown = args.filter((arg) => arg.startsWith('--') && !switches.includes(arg));
  if (unknown.length > 0) throw new Error(`unknown option ${unknown.join(', ')}\n${USAGE}`);
  const build = !args.includes('--no-build');
  const createStatus = !args.includes('--no-create-status');
  const positional = args.filter((arg) => !arg.startsWith('--'));
  if (positional.length !== 1) throw new Error(USAGE);
  const names = moduleNames(positional[0], singular);
  const noun = nounValue === undefined ? undefined : nounOf(nounValue);
  console.log(
    `Generating ${names.nounPlural}: /v1/${names.kebabPlural}/{${names.camelSingular}Id}, ` +
      `${names.pascalSingular}Entity, table ${names.table} (wrong singular? --singular <word>)`,
  );
  const written = generateModule(
    ROOT,
    names,
    { operations, references, fields, lifecycle, noun, createStatus, immutable },
    timestamp === undefined ? undefined : Number(timestamp),
  );
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
