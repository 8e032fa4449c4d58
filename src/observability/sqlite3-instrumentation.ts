import { context, Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  InstrumentationBase,
  InstrumentationConfig,
  InstrumentationNodeModuleDefinition,
  isWrapped,
} from '@opentelemetry/instrumentation';

/** Those TypeORM and the CLI use; each takes a callback last. */
const METHODS = ['run', 'all', 'get', 'exec'] as const;

type Callback = (this: unknown, error: Error | null, ...rest: unknown[]) => unknown;
type QueryMethod = (this: unknown, sql: unknown, ...rest: unknown[]) => unknown;

interface Sqlite3Module {
  Database: { prototype: Record<(typeof METHODS)[number], QueryMethod> };
}

/** No OpenTelemetry instrumentation exists for sqlite3. Bound parameter values are never recorded. */
export class Sqlite3Instrumentation extends InstrumentationBase {
  constructor(config: InstrumentationConfig = {}) {
    super('petstore-sqlite3', '1.0.0', config);
  }

  protected init(): InstrumentationNodeModuleDefinition {
    return new InstrumentationNodeModuleDefinition(
      'sqlite3',
      ['>=5 <7'],
      (exports: Sqlite3Module) => {
        const prototype = exports.Database.prototype;
        for (const method of METHODS) {
          if (isWrapped(prototype[method])) this._unwrap(prototype, method);
          this._wrap(prototype, method, (original: QueryMethod) => this.traced(original));
        }
        return exports;
      },
      (exports: Sqlite3Module) => {
        for (const method of METHODS) this._unwrap(exports.Database.prototype, method);
      },
    );
  }

  private traced(original: QueryMethod): QueryMethod {
    const tracer = (): ReturnType<typeof trace.getTracer> => this.tracer;
    return function (this: unknown, sql: unknown, ...rest: unknown[]) {
      const last = rest.length - 1;
      const parent = context.active();
      // A query where no span is active gets none, so it starts no trace of its own.
      if (typeof sql !== 'string' || typeof rest[last] !== 'function' || !trace.getSpan(parent)) {
        return original.call(this, sql, ...rest);
      }
      const operation = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'QUERY';
      const span: Span = tracer().startSpan(
        `${operation} sqlite`,
        {
          kind: SpanKind.CLIENT,
          attributes: { 'db.system.name': 'sqlite', 'db.operation.name': operation, 'db.query.text': sql },
        },
        parent,
      );
      const callback = rest[last] as Callback;
      rest[last] = context.bind(parent, function (this: unknown, error: Error | null, ...results: unknown[]) {
        if (error) {
          span.recordException(error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
        }
        span.end();
        // `this` is sqlite3's Statement: TypeORM reads lastID and changes from it.
        return callback.call(this, error, ...results);
      });
      return original.call(this, sql, ...rest);
    };
  }
}
