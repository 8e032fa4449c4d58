import { responseJson, responseOf } from './response-of';

describe('responseOf', () => {
  const toBody = jest.fn((row: { id: number }) => ({ id: row.id }));

  it('makes the body of a source object once, and gives the same body for it after', () => {
    const row = { id: 1 };
    const body = responseOf(row, toBody);

    expect(responseOf(row, toBody)).toBe(body);
    expect(responseOf({ id: 1 }, toBody)).not.toBe(body);
    expect(toBody).toHaveBeenCalledTimes(2);
  });

  it('serialises such a body once, with its length in bytes; any other object is not its business', () => {
    const body = responseOf({ id: 2 }, () => ({ name: 'Zoë' }));
    const json = responseJson(body);

    expect(json).toEqual({ text: '{"name":"Zoë"}', bytes: 15 });
    expect(responseJson(body)).toBe(json);
    expect(responseJson({ name: 'Zoë' })).toBeUndefined();
  });
});
