import type { SchemaObject } from '@nestjs/swagger';
import request from 'supertest';
import { AUTH, useApp } from './support/app';
import { committedDocument, operationsOf } from './support/openapi';
import { sampleBody } from './support/samples';

/**
 * The sample bodies with which tests make records of other modules (a generated module's specs
 * make the records it refers to so): valid, and records that a rule of the referring module may
 * ask for, in the first state of their lifecycle.
 */
describe('sample bodies (test/support/samples.ts)', () => {
  const target = useApp();

  it('make an available animal, as an order for one would need', async () => {
    expect(await sampleBody('NewPet')).toEqual({ name: 'Rex', categoryId: 7, status: 'available' });
  });

  it('make a record of every collection with a status, in the first state of its lifecycle', async () => {
    const document = await committedDocument();
    const schemas = document.components?.schemas ?? {};
    const creates = operationsOf(document)
      .filter(({ method, template }) => method === 'POST' && !template.includes('{'))
      .map(({ template, operation }) => {
        const body = operation.requestBody as { content: Record<string, { schema: { $ref: string } }> };
        return { template, schema: Object.values(body.content)[0].schema.$ref.split('/').pop()! };
      })
      .filter(({ schema }) => (schemas[schema] as SchemaObject).properties?.status);
    expect(creates.map(({ template }) => template)).toContain('/pets');

    for (const { template, schema } of creates) {
      const status = (schemas[schema] as SchemaObject).properties!.status as SchemaObject;
      const states = (schemas[(status.allOf![0] as { $ref: string }).$ref.split('/').pop()!] as SchemaObject)
        .enum;
      const made = await request(target.http)
        .post(`/v1${template}`)
        .set(AUTH)
        .send(await sampleBody(schema));
      expect({ template, status: made.status, state: made.body.status }).toEqual({
        template,
        status: 201,
        state: states![0],
      });
    }
  });
});
