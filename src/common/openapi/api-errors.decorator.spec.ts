import { declareErrorCodes } from '../errors/error-codes';
import { ApiErrors } from './api-errors.decorator';

const { order_for_sold_pet: ownConflict } = declareErrorCodes('api-errors-spec', {
  order_for_sold_pet: { status: 409, message: 'The animal is sold.', when: 'an order names a sold animal' },
});

/** The responses `ApiErrors(entries)` documents, by status. */
function documented(entries: Parameters<typeof ApiErrors>[0]) {
  class Controller {
    handler(): void {}
  }
  const descriptor = Object.getOwnPropertyDescriptor(Controller.prototype, 'handler')!;
  ApiErrors(entries)(Controller.prototype, 'handler', descriptor);
  return Reflect.getMetadata('swagger/apiResponse', descriptor.value as object) as Record<
    string,
    { description: string; headers?: Record<string, { required: boolean; description: string }> }
  >;
}

describe('ApiErrors', () => {
  it("requires Retry-After on a 409 only where every code of it sends one: a module's own 409 does not", () => {
    expect(documented([409])['409'].headers?.['Retry-After'].required).toBe(true);

    const shared = documented([409, ownConflict])['409'];
    expect(shared.headers?.['Retry-After']).toMatchObject({
      required: false,
      description: expect.stringContaining('Sent with `idempotency_conflict`.'),
    });
    expect(shared.description).toContain('(`idempotency_conflict`)');
    expect(shared.description).toContain('An order names a sold animal (`order_for_sold_pet`).');
  });

  it('takes a code with a description of its own', () => {
    const response = documented([{ code: 'invalid_transition', description: 'Not along the table.' }])['409'];
    expect(response.description).toBe('Not along the table.');
    expect(response.headers).toBeUndefined();
  });
});
