import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  expand,
  FEATURES_MARKER,
  generateModule,
  ModuleOptions,
  moduleNames,
  nounOf,
  parseFields,
  parseLifecycle,
  parseOperations,
  pathsFrom,
  referencedModule,
  registerFeature,
  render,
  singularOf,
} from './generate-module';

const ROOT = join(__dirname, '..', '..');

describe('generate:module', () => {
  describe('names', () => {
    it('spells a plural name every way the templates need', () => {
      expect(moduleNames('store-orders')).toEqual({
        kebabPlural: 'store-orders',
        kebabSingular: 'store-order',
        pascalPlural: 'StoreOrders',
        pascalSingular: 'StoreOrder',
        camelPlural: 'storeOrders',
        camelSingular: 'storeOrder',
        constantPlural: 'STORE_ORDERS',
        constantSingular: 'STORE_ORDER',
        table: 'store_orders',
        nounPlural: 'store orders',
        nounSingular: 'store order',
      });
    });

    it.each([
      ['orders', 'order'],
      ['categories', 'category'],
      ['boxes', 'box'],
      ['addresses', 'address'],
      ['keys', 'key'],
      ['statuses', 'status'],
      ['buses', 'bus'],
    ])('guesses the singular of %s: %s', (plural, singular) => {
      expect(singularOf(plural)).toBe(singular);
    });

    it('takes the singular it is given, and refuses a name it cannot use', () => {
      expect(moduleNames('people', 'person').pascalSingular).toBe('Person');
      expect(() => moduleNames('sheep')).toThrow('pass --singular <word>');
      expect(() => moduleNames('sheep', 'sheep')).toThrow('must differ');
      expect(() => moduleNames('people', 'Person')).toThrow('--singular takes one lower-case word');
      expect(moduleNames('store-people', 'person').pascalSingular).toBe('StorePerson');
      expect(() => moduleNames('classes')).toThrow('"class" is a reserved word');
      expect(() => moduleNames('ids')).toThrow('"id" is a reserved word');
      for (const bad of ['Orders', 'store_orders', '-orders', 'orders-', '1orders', 'store--orders', '']) {
        expect(() => moduleNames(bad)).toThrow('is not a module name');
      }
    });
  });

  it('renders every token, and refuses a template with a token it does not know', () => {
    expect(
      render('class __Item__Entity in __items-kebab__', { __Item__: 'Order', '__items-kebab__': 'orders' }),
    ).toBe('class OrderEntity in orders');
    expect(() => render('__Unknown__', {})).toThrow('unknown template token __Unknown__');
    expect(() => render('__proto__', {})).toThrow('unknown template token __proto__');
  });

  it('keeps the `// @if` blocks of the flags that hold and repeats `// @each reference` per reference', () => {
    const template = [
      'a',
      '  // @if update',
      'patch',
      '  // @if !references',
      'alone',
      '  // @end',
      '  // @end',
      '  // @each reference',
      'ref __ref__ of __Item__',
      '  // @end',
      'z',
    ].join('\n');
    const reference = [{ tokens: { __ref__: 'pet' } }, { tokens: { __ref__: 'owner' } }];

    expect(expand(template, { update: true, references: true }, { reference })).toBe(
      'a\npatch\nref pet of __Item__\nref owner of __Item__\nz',
    );
    expect(expand(template, { update: true, references: false }, { reference: [] })).toBe(
      'a\npatch\nalone\nz',
    );
    expect(expand(template, { update: false, references: false }, { reference: [] })).toBe('a\nz');
    expect(() => expand('// @if nothing\n// @end', {}, {})).toThrow('unknown template flag nothing');
    expect(() => expand('// @each nothing\n// @end', {}, {})).toThrow('unknown template list nothing');
  });

  it("asks an `// @each` item's own flags first, then the template's", () => {
    const template = [
      '// @each field',
      '// @if optional',
      '__f__?',
      '// @end',
      '// @if !optional',
      '__f__!',
      '// @end',
      '// @if update',
      'u',
      '// @end',
      '// @end',
    ].join('\n');
    const field = [
      { tokens: { __f__: 'a' }, flags: { optional: true } },
      { tokens: { __f__: 'b' }, flags: { optional: false } },
    ];
    expect(expand(template, { update: true }, { field })).toBe('a?\nu\nb!\nu');
    expect(() => expand(template, { update: true }, { field: [{ tokens: {} }] })).toThrow(
      'unknown template flag optional',
    );
  });

  it('reads fields, states and transitions, and a noun with its plural', () => {
    expect(parseFields('categoryId:int64,note:text(40)?')).toEqual([
      { name: 'categoryId', type: 'int64', maxLength: 255, optional: false },
      { name: 'note', type: 'text', maxLength: 40, optional: true },
    ]);
    expect(parseLifecycle()).toEqual({
      states: ['active', 'archived'],
      initial: 'active',
      transitions: { active: ['archived'], archived: ['active'] },
    });
    expect(parseLifecycle('a,b,c', 'none', 'a>b, b>c')).toEqual({
      states: ['a', 'b', 'c'],
      initial: null,
      transitions: { a: ['b'], b: ['c'], c: [] },
    });
    expect(nounOf('animal')).toEqual({ singular: 'animal', plural: 'animals' });
    expect(nounOf('category').plural).toBe('categories');
    expect(nounOf('person,people').plural).toBe('people');
  });

  it('finds the fewest changes that bring a record from a state to each one it can reach', () => {
    const lifecycle = parseLifecycle('a,b,c,d', undefined, 'a>b,b>c,a>c,c>a');
    expect(pathsFrom(lifecycle, 'a')).toEqual({ a: [], b: ['b'], c: ['c'] });
    expect(pathsFrom(lifecycle, 'b')).toEqual({ b: [], c: ['c'], a: ['c', 'a'] });
  });

  it('takes operations that include list, get and create, in their order', () => {
    expect(parseOperations('delete,list,get,create')).toEqual(['list', 'get', 'create', 'delete']);
    expect(() => parseOperations('list,get')).toThrow('must include list, get, create');
    expect(() => parseOperations('list,get,create,upsert')).toThrow('unknown operation upsert');
  });

  it('reads a referenced module from its files, and refuses one it cannot refer to', () => {
    expect(referencedModule(ROOT, 'pets')).toEqual({
      folder: 'pets',
      moduleClass: 'PetsModule',
      serviceClass: 'PetsService',
      entityClass: 'PetEntity',
      entityFile: 'pet.entity',
      table: 'pets',
      camelSingular: 'pet',
      newSchema: 'NewPet',
    });
    expect(() => referencedModule(ROOT, 'nothing')).toThrow('there is no module src/nothing');
    expect(() => referencedModule(ROOT, 'auth')).toThrow('must have auth.module.ts, auth.service.ts');
  });

  it('registers the module after the last import and before the marker', () => {
    const source = `import { A } from './a';\nimport {\n  B,\n} from './b';\n\nexport const FEATURES = [\n  { module: A },\n${FEATURES_MARKER}\n];\n`;
    expect(registerFeature(source, moduleNames('orders'))).toBe(
      `import { A } from './a';\nimport {\n  B,\n} from './b';\n` +
        `import { OrdersModule } from './orders/orders.module';\n` +
        `import { ORDERS_SCHEMA } from './orders/orders.schema';\n` +
        `\nexport const FEATURES = [\n  { module: A },\n  { module: OrdersModule, schema: ORDERS_SCHEMA },\n${FEATURES_MARKER}\n];\n`,
    );
    expect(() => registerFeature('export const FEATURES = [];', moduleNames('orders'))).toThrow('marker');
  });

  it("shows in docs/extending.md's worked example the command check.sh runs and the code of worked-example.diff", () => {
    const docs = readFileSync(join(ROOT, 'docs', 'extending.md'), 'utf8');
    const blocks = [
      ...docs.slice(docs.indexOf('## Worked example')).matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm),
    ];
    const oneLine = (text: string) => text.replace(/\\\n/g, ' ').replace(/\s+/g, ' ').trim();
    const command = oneLine(blocks.find(([, language]) => language === 'sh')![2]);
    const check = oneLine(readFileSync(join(__dirname, 'check.sh'), 'utf8'));
    expect(command).toMatch(/^npm run generate:module -- store-orders /);
    expect(check).toContain(`${command.replace('npm run generate:module --', 'generate')} --no-build`);

    // What each hunk of the diff leaves in its file: its context and added lines.
    const hunks = readFileSync(join(__dirname, 'worked-example.diff'), 'utf8')
      .split(/^(?:@@ .*|diff --git .*)$/m)
      .map((hunk) =>
        hunk
          .split('\n')
          .filter((line) => /^[ +]/.test(line) && !line.startsWith('+++ '))
          .map((line) => line.slice(1))
          .join('\n'),
      );
    const code = blocks.filter(([, language]) => language === 'ts').map(([, , text]) => text);
    expect(code.length).toBeGreaterThan(0);
    for (const text of code) expect(hunks.filter((hunk) => hunk.includes(text.trimEnd()))).toHaveLength(1);
  });

  describe('in a copy of src/features.ts and the templates', () => {
    let root: string;

    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), 'generate-module-'));
      mkdirSync(join(root, 'src'));
      mkdirSync(join(root, 'test'));
      cpSync(join(ROOT, 'src', 'features.ts'), join(root, 'src', 'features.ts'));
      mkdirSync(join(root, 'src', 'pets'));
    });

    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it('writes the module, its e2e spec and the registration, with no token left', () => {
      const written = generateModule(root, moduleNames('orders'), {}, 1700000000000);

      expect(written).toEqual(
        expect.arrayContaining([
          'src/orders/order.entity.ts',
          'src/orders/orders.controller.ts',
          'src/orders/orders.module.ts',
          'src/orders/orders.service.ts',
          'src/orders/orders.service.spec.ts',
          'src/orders/orders.schema.ts',
          'src/orders/dto/new-order.dto.ts',
          'src/orders/dto/order.dto.ts',
          'src/orders/migrations/1700000000000-CreateOrders.ts',
          'test/orders.e2e-spec.ts',
          'src/features.ts',
        ]),
      );
      for (const file of written)
        expect(readFileSync(join(root, file), 'utf8')).not.toMatch(/__[A-Za-z_-]+__/);
      expect(
        readFileSync(join(root, 'src/orders/migrations/1700000000000-CreateOrders.ts'), 'utf8'),
      ).toContain("name = 'CreateOrders1700000000000'");
      expect(readFileSync(join(root, 'src/features.ts'), 'utf8')).toContain(
        '{ module: OrdersModule, schema: ORDERS_SCHEMA },',
      );
    });

    it('with references and every operation: the foreign key, the code, PATCH and DELETE', () => {
      cpSync(join(ROOT, 'src', 'pets'), join(root, 'src', 'pets'), { recursive: true });
      const operations = parseOperations('list,get,create,update,delete');
      const written = generateModule(root, moduleNames('orders'), { operations, references: ['pets'] }, 1);
      const read = (file: string) => readFileSync(join(root, file), 'utf8');

      expect(written).toContain('src/orders/dto/update-order.dto.ts');
      for (const file of written) expect(read(file)).not.toMatch(/__[A-Za-z_-]+__|\/\/ @(if|each|end)/);
      expect(read('src/orders/order.entity.ts')).toContain("name: 'fk_orders_pet_id'");
      expect(read('src/orders/migrations/1-CreateOrders.ts')).toContain("referencedTableName: 'pets'");
      expect(read('src/orders/orders.errors.ts')).toContain('unknown_pet: {');
      expect(read('src/orders/orders.controller.ts')).toMatch(/@UpdateOperation[\s\S]*@DeleteOperation/);
      expect(() => generateModule(root, moduleNames('baskets'), { references: ['pets', 'pets'] })).toThrow(
        'names a module twice',
      );
    });

    it('leaves out what the options do not ask for', () => {
      const written = generateModule(root, moduleNames('orders'), {}, 1);
      expect(written).not.toContain('src/orders/dto/update-order.dto.ts');
      expect(written).not.toContain('src/orders/orders.errors.ts');
      expect(readFileSync(join(root, 'src/orders/orders.controller.ts'), 'utf8')).not.toMatch(
        /Update|Delete|ifMatch/,
      );
    });

    it('writes the fields, states and lifecycle it is given', () => {
      const written = generateModule(
        root,
        moduleNames('orders'),
        {
          operations: parseOperations('list,get,create,update'),
          fields: parseFields('quantity:int64,note:text(40)?'),
          lifecycle: parseLifecycle('placed,paid,shipped', 'none', 'placed>paid,paid>shipped'),
          noun: nounOf('purchase'),
        },
        1,
      );
      const read = (file: string) => readFileSync(join(root, file), 'utf8');
      for (const file of written) expect(read(file)).not.toMatch(/__[A-Za-z_-]+__|\/\/ @(if|each|end)/);
      expect(read('src/orders/order.entity.ts')).toContain(
        "@Column({ name: 'quantity', type: 'bigint', transformer: int64AsNumber })",
      );
      expect(read('src/orders/order.entity.ts')).toContain(
        'length: 40, nullable: true })\n  note!: string | null;',
      );
      expect(read('src/orders/order.entity.ts')).toContain(
        `@Check('chk_orders_status', \`"status" IN ('placed', 'paid', 'shipped')\`)`,
      );
      expect(read('src/orders/order-status.ts')).toContain(
        "{ placed: ['paid'], paid: ['shipped'], shipped: [] }",
      );
      expect(read('src/orders/order-status.ts')).toContain('export const DEFAULT_ORDER_STATUS = null;');
      expect(read('src/orders/orders.service.ts')).toContain(
        "new ApiException('not_found', `No purchase has id ${id}.`)",
      );
      expect(read('test/orders.e2e-spec.ts')).toContain(
        "const TRANSITIONS: Record<string, readonly string[]> = { placed: ['paid'], paid: ['shipped'], shipped: [] };",
      );
    });

    it('without a status on create, and with fields a patch cannot change', () => {
      cpSync(join(ROOT, 'src', 'pets'), join(root, 'src', 'pets'), { recursive: true });
      const written = generateModule(
        root,
        moduleNames('orders'),
        {
          operations: parseOperations('list,get,create,update'),
          references: ['pets'],
          fields: parseFields('quantity:int64,note:text(40)?'),
          lifecycle: parseLifecycle(
            'placed,delivered,cancelled',
            undefined,
            'placed>delivered,placed>cancelled',
          ),
          createStatus: false,
          immutable: ['petId'],
        },
        1,
      );
      const read = (file: string) => readFileSync(join(root, file), 'utf8');
      for (const file of written) expect(read(file)).not.toMatch(/__[A-Za-z_-]+__|\/\/ @(if|each|end)/);
      expect(read('src/orders/dto/new-order.dto.ts')).not.toContain('status?:');
      expect(read('src/orders/dto/new-order.dto.ts')).toContain('A patch cannot change it.');
      expect(read('src/orders/dto/update-order.dto.ts')).toMatch(
        /quantity\?: number;[\s\S]*status\?: OrderStatus;/,
      );
      expect(read('src/orders/dto/update-order.dto.ts')).not.toContain('petId');
      expect(read('src/orders/orders.service.ts')).toContain('      status: DEFAULT_ORDER_STATUS,\n');
      expect(read('src/orders/orders.service.ts')).not.toContain('requireReferences(patch');
      expect(read('src/orders/orders.controller.ts')).toContain(
        'const UPDATE_ERRORS: ModuleErrorCode[] = [\n];',
      );
      expect(read('src/orders/orders.controller.ts')).toContain(
        '{ errors: UPDATE_ERRORS, lifecycle: ORDER_LIFECYCLE }',
      );
      expect(read('test/orders.e2e-spec.ts')).toContain(
        "const PATHS: Record<string, readonly string[]> = { placed: [], delivered: ['delivered'], cancelled: ['cancelled'] };",
      );
    });

    it.each([
      [
        '--no-create-status without update',
        { createStatus: false, operations: ['list', 'get', 'create'] },
        'add update',
      ],
      [
        '--immutable without update',
        { immutable: ['quantity'], operations: ['list', 'get', 'create'] },
        'add update',
      ],
      [
        '--no-create-status and no default state',
        { createStatus: false, lifecycle: parseLifecycle('a,b', 'none') },
        'gives none',
      ],
      [
        '--no-create-status and a final default state',
        { createStatus: false, lifecycle: parseLifecycle('a,b', 'a', 'b>a') },
        'would stay a',
      ],
      ['--immutable naming no field', { immutable: ['colour'] }, 'colour is not a required field'],
      ['--immutable naming an optional field', { immutable: ['note'] }, 'note is not a required field'],
      ['--immutable naming a field twice', { immutable: ['quantity', 'quantity'] }, 'names a field twice'],
    ] as [string, ModuleOptions, string][])('refuses %s, and writes nothing', (_label, options, message) => {
      const fields = parseFields('quantity:int64,note:text(40)?');
      const operations = parseOperations('list,get,create,update');
      expect(() => generateModule(root, moduleNames('orders'), { operations, fields, ...options })).toThrow(
        message,
      );
      expect(readdirSync(join(root, 'src')).sort()).toEqual(['features.ts', 'pets']);
    });

    it.each([
      ['--fields', () => parseFields('Quantity:int64'), 'is not <name>:<type>[?]'],
      ['--fields', () => parseFields('note:text(0)'), 'takes N from 1 to 10000'],
      ['--fields', () => parseFields('status:text'), 'a property every module has'],
      ['--fields', () => parseFields('a:int64,a:text'), 'names a field twice'],
      ['--states', () => parseLifecycle('only'), 'two or more distinct states'],
      ['--default-state', () => parseLifecycle('a,b', 'c'), 'c is not one of --states a,b'],
      ['--transitions', () => parseLifecycle('a,b', undefined, 'a>c'), 'c is not one of --states'],
      ['--transitions', () => parseLifecycle('a,b', undefined, 'a>a'), 'a state may always stay'],
      ['--transitions', () => parseLifecycle('a,b', undefined, 'a-b'), 'is not <from>>to>'],
      ['--noun', () => nounOf('Animal'), '--noun takes lower-case words'],
    ])('refuses a wrong %s', (_option, parse, message) => {
      expect(parse).toThrow(message);
    });

    it('refuses a module whose folder, table or OpenAPI schema is taken, and writes nothing', () => {
      mkdirSync(join(root, 'src', 'shop'));
      writeFileSync(
        join(root, 'src', 'shop', 'basket.entity.ts'),
        "@Entity({ name: 'baskets' })\nclass A {}\n@ApiSchema({ name: 'NewItem' })\nclass B {}\n",
      );
      expect(() => generateModule(root, moduleNames('pets'))).toThrow('src/pets exists');
      expect(() => generateModule(root, moduleNames('migrations'))).toThrow(
        "the table migrations is TypeORM's own",
      );
      expect(() => generateModule(root, moduleNames('baskets'))).toThrow(
        'the table baskets belongs to another module',
      );
      expect(() => generateModule(root, moduleNames('items'))).toThrow('the OpenAPI schema NewItem belongs');
      expect(readdirSync(join(root, 'src')).sort()).toEqual(['features.ts', 'pets', 'shop']);
      expect(readFileSync(join(root, 'src', 'features.ts'), 'utf8')).toBe(
        readFileSync(join(ROOT, 'src', 'features.ts'), 'utf8'),
      );
    });
  });
});
