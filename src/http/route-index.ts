import { METHODS } from 'node:http';
import { match, MatchFunction } from 'path-to-regexp';

/** A route answering every method is middleware mounted with `all()` (`forRoutes`), not an endpoint. */
export function isMiddlewareRoute(methods: Record<string, boolean>): boolean {
  return METHODS.every((method) => methods[method.toLowerCase()]);
}

interface ExpressApp {
  router?: { stack: { route?: { path: unknown; methods: Record<string, boolean> } }[] };
}

/** Read from Express lazily, once its routes exist; matched as strictly as the router matches. */
export class RouteIndex {
  private routes: { matches: MatchFunction<object>; methods: string[] }[] | undefined;

  constructor(private readonly app: unknown) {}

  allowedMethods(path: string): string[] {
    this.routes ??= ((this.app as ExpressApp).router?.stack ?? []).flatMap(({ route }) =>
      route && typeof route.path === 'string' && !isMiddlewareRoute(route.methods)
        ? {
            matches: match(route.path, { decode: false, sensitive: true, trailing: false }),
            methods: Object.keys(route.methods)
              .filter((method) => method !== '_all')
              .map((method) => method.toUpperCase()),
          }
        : [],
    );
    const allowed = new Set(this.routes.flatMap((route) => (route.matches(path) ? route.methods : [])));
    if (allowed.has('GET')) allowed.add('HEAD');
    return [...allowed].sort();
  }
}
