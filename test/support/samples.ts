import type { SchemaObject } from '@nestjs/swagger';
import { committedDocument } from './openapi';

/**
 * A valid body of a schema of the committed openapi.yaml (`NewPet`), made of the examples of its
 * required properties (an enum's first value where there is none), and its `status` where it has
 * one: the first of its lifecycle (pets: `available`), so that a record made for another module is
 * one a rule of that module may ask for. How a test makes a record of another module without
 * knowing its fields.
 */
export async function sampleBody(schemaName: string): Promise<Record<string, unknown>> {
  const schemas = (await committedDocument()).components?.schemas ?? {};
  const resolve = (schema: unknown): SchemaObject => {
    const ref = (schema as { $ref?: string }).$ref;
    const resolved = (ref ? schemas[ref.split('/').pop()!] : schema) as SchemaObject;
    // A patch's status that may be null is `anyOf` its enum or null: the enum.
    const first = (resolved.allOf ?? resolved.anyOf)?.[0];
    return first ? resolve(first) : resolved;
  };
  const schema = resolve({ $ref: `#/components/schemas/${schemaName}` });
  if (!schema?.properties) throw new Error(`openapi.yaml has no object schema ${schemaName}`);
  const status = schema.properties.status && !schema.required?.includes('status') ? ['status'] : [];
  return Object.fromEntries(
    [...(schema.required ?? []), ...status].map((name) => {
      const property = schema.properties![name];
      const value =
        (property as SchemaObject).example ?? resolve(property).example ?? resolve(property).enum?.[0];
      if (value === undefined) throw new Error(`${schemaName}.${name} has no example to make a sample of`);
      return [name, value];
    }),
  );
}
