import { applyDecorators, INestApplication, SetMetadata } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { ApiTags } from '@nestjs/swagger';

const RESOURCE_TAG = 'petstore:resource-tag';

export interface ResourceTag {
  name: string;
  description: string;
}

/** Tags a controller's operations with its collection's path segment, one rule for every module. */
export function ApiResource(collection: string, description: string): ClassDecorator {
  return applyDecorators(ApiTags(collection), SetMetadata(RESOURCE_TAG, { name: collection, description }));
}

export function resourceTags(app: INestApplication): ResourceTag[] {
  const tags = new Map<string, ResourceTag>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const controller of module.controllers.values()) {
      if (!controller.metatype) continue;
      const tag = Reflect.getMetadata(RESOURCE_TAG, controller.metatype) as ResourceTag | undefined;
      if (tag && !tags.has(tag.name)) tags.set(tag.name, tag);
    }
  }
  return [...tags.values()];
}
