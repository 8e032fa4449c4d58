import { METHODS } from 'node:http';
import { match, MatchFunction } from 'path-to-regexp';

/**
 * Whether a route answers every method: then it is middleware Nest mounted with `all()` (a
 * module's `forRoutes`), not an endpoint, and says nothing about which methods a path allows.
 */
export function isMiddlewareRoute(methods: Record<string, boolean>): boolean {
  return METHODS.every((method) => methods[method.toLowerCase()]);
}

interface ExpressRouteLayer {
  route?: { path: unknown; methods: Record<string, boolean> };
}

interface ExpressApp {
  router?: { stack: ExpressRouteLayer[] };
}

interface IndexedRoute {
  matches: MatchFunction<object>;
  methods: string[];
}

/**
 * The methods each registered route answers, read from Express once its routes exist, so that
 * a known path asked with another method gets 405 with an `Allow` header instead of 404.
 */
export class RouteIndex {
  private routes: IndexedRoute[] | undefined;

  private readonly app: ExpressApp;

  /** `app`: the Express application, whose router is read once it has its routes. */
  constructor(app: unknown) {
    this.app = app as ExpressApp;
  }

  /** Methods allowed on `path` (HEAD implied by GET), or an empty list when no route has it. */
  allowedMethods(path: string): string[] {
    const allowed = new Set<string>();
    for (const route of this.index()) {
      if (route.matches(path)) route.methods.forEach((method) => allowed.add(method));
    }
    if (allowed.has('GET')) allowed.add('HEAD');
    return [...allowed].sort();
  }

  private index(): IndexedRoute[] {
    if (this.routes) return this.routes;
    const layers = this.app.router?.stack ?? [];
    this.routes = layers
      .filter(
        (layer) =>
          layer.route && typeof layer.route.path === 'string' && !isMiddlewareRoute(layer.route.methods),
      )
      .map((layer) => ({
        matches: match(layer.route!.path as string, { decode: false }),
        methods: Object.keys(layer.route!.methods)
          .filter((method) => method !== '_all')
          .map((method) => method.toUpperCase()),
      }));
    return this.routes;
  }
}
