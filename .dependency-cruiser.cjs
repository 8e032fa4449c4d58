/**
 * The layers of docs/architecture.md as rules: `npm run lint` fails on an import that breaks one,
 * naming the rule. Floors, from the ground: common/ < config/ < the infrastructure (database/,
 * http/, observability/) < the cross-cutting modules (auth/, audit/, events/, rate-limit/, idempotency/) < the
 * features (pets/, health/, every generated module) < the app (app.module, setup-app, features,
 * the OpenAPI document) and the entry points (main, cli/).
 */
const LOWER = '^src/(common|config|database|http|observability)/';
const CROSS_CUTTING = '^src/(auth|audit|events|rate-limit|idempotency)/';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files that import each other in a loop: one of them belongs a floor lower.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-not-to-test',
      severity: 'error',
      comment: 'The service never imports its tests or their helpers.',
      from: { path: '^src/' },
      to: { path: '^test/' },
    },
    {
      name: 'common-is-the-ground',
      severity: 'error',
      comment: 'common/ imports nothing of src/ outside itself.',
      from: { path: '^src/common/' },
      to: { path: '^src/', pathNot: '^src/common/' },
    },
    {
      name: 'config-on-common-only',
      severity: 'error',
      comment: 'config/ imports only common/.',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(common|config)/' },
    },
    {
      name: 'infrastructure-below-modules',
      severity: 'error',
      comment:
        'database/, http/ and observability/ import no module (auth, rate limits, idempotency, features) ' +
        'and nothing of the app above them: they are handed what they need.',
      from: { path: '^src/(database|http|observability)/' },
      to: { path: '^src/', pathNot: LOWER },
    },
    {
      name: 'cross-cutting-below-features',
      severity: 'error',
      comment: 'auth/, audit/, events/, rate-limit/ and idempotency/ import no feature module and nothing of the app.',
      from: { path: CROSS_CUTTING },
      to: { path: '^src/', pathNot: [LOWER, CROSS_CUTTING] },
    },
    ...['webhooks', 'nats'].map((room) => ({
      name: `events-${room}-through-its-module`,
      severity: 'error',
      comment:
        `events/ holds the feed and the outbox; ${room}/ consumes it. Nothing outside ${room}/ reaches ` +
        'into it but through its module file (and its schema file, for the entities).',
      from: { pathNot: `^src/events/${room}/` },
      to: { path: `^src/events/${room}/`, pathNot: '[.](module|schema)[.]ts$' },
    })),
    {
      name: 'features-through-their-doors',
      severity: 'error',
      comment:
        'A feature module reaches another only through its module, service, errors or entity file ' +
        '(the entity for a foreign key), never its controller, DTOs or internals.',
      from: { path: '^src/([^/]+)/', pathNot: [LOWER, CROSS_CUTTING, '^src/(app|cli|openapi)/'] },
      to: {
        path: '^src/[^/]+/',
        pathNot: [LOWER, CROSS_CUTTING, '^src/$1/', '[.](module|service|errors|entity)[.]ts$'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '[.]spec[.]ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
