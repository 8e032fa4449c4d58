import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  InstrumentationBase,
  InstrumentationNodeModuleDefinition,
  isWrapped,
} from '@opentelemetry/instrumentation';

/** What a statement does when run; each runs at once, on the calling thread. */
const METHODS = ['run', 'get', 'all'] as const;

type Run = (this: { source?: unknown }, ...args: unknown[]) => unknown;
type Statements = Record<(typeof METHODS)[number], Run>;

interface BetterSqlite3Module {
  prototype: { prepare: (this: unknown, source: string) => object };
}

/** No OpenTelemetry instrumentation exists for better-sqlite3. Bound parameter values are never recorded. */
export class SqliteInstrumentation extends InstrumentationBase {
  private statements?: Statements;

  constructor() {
    super('petstore-sqlite', '1.0.0', {});
  }

  protected init(): InstrumentationNodeModuleDefinition {
    return new InstrumentationNodeModuleDefinition(
      'better-sqlite3',
      ['>=11 <13'],
      (exports: BetterSqlite3Module) => {
        if (isWrapped(exports.prototype.prepare)) this._unwrap(exports.prototype, 'prepare');
        // The statements' class is not exported: its methods are wrapped when the first one is made.
        const wrapStatements = (statement: object) =>
          this.wrapStatements(Object.getPrototypeOf(statement) as Statements);
        this._wrap(exports.prototype, 'prepare', (prepare: BetterSqlite3Module['prototype']['prepare']) => {
          return function (this: unknown, source: string) {
            const statement = prepare.call(this, source);
            wrapStatements(statement);
            return statement;
          };
        });
        return exports;
      },
      (exports: BetterSqlite3Module) => {
        this._unwrap(exports.prototype, 'prepare');
        if (this.statements) for (const method of METHODS) this._unwrap(this.statements, method);
      },
    );
  }

  private wrapStatements(statements: Statements): void {
    if (this.statements === statements) return;
    this.statements = statements;
    for (const method of METHODS) {
      if (isWrapped(statements[method])) this._unwrap(statements, method);
      this._wrap(statements, method, (original: Run) => this.traced(original));
    }
  }

  private traced(original: Run): Run {
    const tracer = (): ReturnType<typeof trace.getTracer> => this.tracer;
    return function (this: { source?: unknown }, ...args: unknown[]) {
      const parent = context.active();
      // A statement where no span is active gets none, so it starts no trace of its own.
      if (typeof this.source !== 'string' || !trace.getSpan(parent)) return original.apply(this, args);
      const operation = /^\s*(\w+)/.exec(this.source)?.[1]?.toUpperCase() ?? 'QUERY';
      const span = tracer().startSpan(
        `${operation} sqlite`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'db.system.name': 'sqlite',
            'db.operation.name': operation,
            'db.query.text': this.source,
          },
        },
        parent,
      );
      try {
        return original.apply(this, args);
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    };
  }
}
