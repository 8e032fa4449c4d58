import { applyDecorators, INestApplication, SetMetadata } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { ApiTags } from '@nestjs/swagger';

const RESOURCE_TAG = 'petstore:resource-tag';

/** Tags a controller's operations with its collection's path segment, one rule for every module. */
export function ApiResource(collection: string, description: string): ClassDecorator {
  return applyDecorators(ApiTags(collection), SetMetadata(RESOURCE_TAG, [collection, description]));
}

/** Each collection's description by its tag name, as the first of its controllers gives it. */
export function resourceTags(app: INestApplication): Map<string, string> {
  const tags = new Map<string, string>();
  for (const module of app.get(ModulesContainer).values())
    for (const { metatype } of module.controllers.values()) {
      if (!metatype) continue;
      const [name, description] = (Reflect.getMetadata(RESOURCE_TAG, metatype) ?? []) as string[];
      if (name !== undefined && !tags.has(name)) tags.set(name, description);
    }
  return tags;
}
