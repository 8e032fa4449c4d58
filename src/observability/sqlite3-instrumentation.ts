import { context, Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  InstrumentationBase,
  InstrumentationConfig,
  InstrumentationNodeModuleDefinition,
  isWrapped,
} from '@opentelemetry/instrumentation';

/** Those TypeORM and the CLI use; each takes a callback last. */
const METHODS = ['run', 'all', 'get', 'exec'] as const;
/** Those of prepared statements (src/database/sql.ts), which know their SQL. */
const STATEMENT_METHODS = ['run', 'all'] as const;

type Callback = (this: unknown, error: Error | null, ...rest: unknown[]) => unknown;
type QueryMethod = (this: unknown, ...args: unknown[]) => unknown;

interface Sqlite3Module {
  Database: { prototype: Record<(typeof METHODS)[number], QueryMethod> };
  Statement: { prototype: Record<(typeof STATEMENT_METHODS)[number], QueryMethod> };
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
        const wrap = (
          prototype: Record<string, QueryMethod>,
          methods: readonly string[],
          prepared: boolean,
        ) => {
          for (const method of methods) {
            if (isWrapped(prototype[method])) this._unwrap(prototype, method);
            this._wrap(prototype, method, (original: QueryMethod) => this.traced(original, prepared));
          }
        };
        wrap(exports.Database.prototype, METHODS, false);
        wrap(exports.Statement.prototype, STATEMENT_METHODS, true);
        return exports;
      },
      (exports: Sqlite3Module) => {
        for (const method of METHODS) this._unwrap(exports.Database.prototype, method);
        for (const method of STATEMENT_METHODS) this._unwrap(exports.Statement.prototype, method);
      },
    );
  }

  /** `prepared`: a statement's method, whose SQL is the statement's own (its arguments are parameters). */
  private traced(original: QueryMethod, prepared: boolean): QueryMethod {
    const tracer = (): ReturnType<typeof trace.getTracer> => this.tracer;
    return function (this: unknown, ...args: unknown[]) {
      const sql = prepared ? (this as { sql?: unknown }).sql : args[0];
      const last = args.length - 1;
      const parent = context.active();
      // A query where no span is active gets none, so it starts no trace of its own.
      if (typeof sql !== 'string' || typeof args[last] !== 'function' || !trace.getSpan(parent)) {
        return original.apply(this, args);
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
      const callback = args[last] as Callback;
      args[last] = context.bind(parent, function (this: unknown, error: Error | null, ...results: unknown[]) {
        if (error) {
          span.recordException(error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
        }
        span.end();
        // `this` is sqlite3's Statement: TypeORM reads lastID and changes from it.
        return callback.call(this, error, ...results);
      });
      return original.apply(this, args);
    };
  }
}
