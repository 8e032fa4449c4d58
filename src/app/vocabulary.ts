import { Global, Module, RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { routeScope } from '../auth/api-key.guard';
import { collectionScope, SERVICE_SCOPES, Vocabulary, VOCABULARY } from '../common/scopes';
import { FEATURES } from '../features';

const CHANGES: Record<string, string> = { POST: 'created', PATCH: 'updated', DELETE: 'deleted' };

/**
 * What the feature modules' routes ask for, with the service's own scopes, and the events their
 * changes publish: `<item>.created` for a create, `.updated` for a change, `.deleted` for a delete,
 * `<item>` the id parameter in kebab case (`:storeOrderId`: `store-order`), as the generator names
 * both; so a generated module's scopes and events are known without an edit.
 */
export function vocabularyOf(modules: readonly Type[]): Vocabulary {
  const scopes = new Set<string>(SERVICE_SCOPES);
  const eventTypes = new Map<string, string>();
  for (const module of modules)
    for (const controller of (Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, module) ?? []) as Type[]) {
      const collection = String(Reflect.getMetadata(PATH_METADATA, controller));
      const routes = Object.getOwnPropertyNames(controller.prototype)
        .map((name) => (controller.prototype as Record<string, object>)[name])
        .filter((handler) => Reflect.hasMetadata(METHOD_METADATA, handler))
        .map((handler) => ({
          method: RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod],
          path: String(Reflect.getMetadata(PATH_METADATA, handler)),
          scope: routeScope(controller, handler),
        }));
      const item = routes.map(({ path }) => /^:([a-z][A-Za-z0-9]*)Id$/.exec(path)?.[1]).find(Boolean);
      for (const { method, path, scope } of routes) {
        if (scope === null) continue;
        scopes.add(scope);
        const change = CHANGES[method];
        if (!item || !change || scope !== collectionScope(collection, method)) continue;
        const type = `${item.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}.${change}`;
        if (method !== 'POST' || path === '/') eventTypes.set(type, `${collection}:read`);
      }
    }
  return { scopes, eventTypes };
}

/** Hands the features' vocabulary to every module whose controllers check names against it (keys, webhooks). */
@Global()
@Module({
  providers: [
    { provide: VOCABULARY, useFactory: () => vocabularyOf(FEATURES.map((feature) => feature.module)) },
  ],
  exports: [VOCABULARY],
})
export class VocabularyModule {}
