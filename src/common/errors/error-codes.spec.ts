import { declareErrorCodes, errorCatalogueTable, errorCodes, errorSpec } from './error-codes';
import { ApiException } from './api-exception';

const spec = { status: 422, message: 'No such thing.', when: 'the thing is unknown' };

describe('the error catalogue', () => {
  it('is a table with one row per code, by status', () => {
    const rows = errorCatalogueTable().split('\n').slice(2);
    expect(rows).toHaveLength(errorCodes().length);
    expect(rows[0]).toBe(
      '| 400 | `validation_failed` | body or parameters break a rule; `message` and `details` name each field |',
    );
    const statuses = rows.map((row) => Number(row.split('|')[1]));
    expect(statuses).toEqual([...statuses].sort((a, b) => a - b));
  });

  it("takes a module's codes: they are thrown like the service's and join the table at their status", () => {
    const { unknown_widget } = declareErrorCodes('gadgets', { unknown_widget: spec });
    const error = new ApiException(unknown_widget, undefined, [{ field: 'widgetId', message: 'unknown' }]);

    expect(error.getStatus()).toBe(422);
    expect(error.message).toBe('No such thing.');
    expect(errorSpec(unknown_widget)).toMatchObject(spec);
    const codes = errorCodes();
    expect(codes.indexOf(unknown_widget)).toBe(codes.indexOf('idempotency_key_reused') + 1);
    expect(errorCatalogueTable()).toContain('| 422 | `unknown_widget` | the thing is unknown |');
  });

  it('keeps codes unique across modules, and a module to client errors in snake_case', () => {
    declareErrorCodes('gizmos', { gizmo_gone: spec });
    // The same module loaded again declares the same codes again.
    expect(() => declareErrorCodes('gizmos', { gizmo_gone: spec })).not.toThrow();
    expect(() => declareErrorCodes('others', { gizmo_gone: spec })).toThrow(/taken by gizmos/);
    expect(() => declareErrorCodes('others', { not_found: spec })).toThrow(/taken by the service/);
    expect(() => declareErrorCodes('others', { 'Bad-Code': spec })).toThrow(/snake_case/);
    expect(() => declareErrorCodes('others', { broke: { ...spec, status: 500 } })).toThrow(/4xx/);
    expect(() => errorSpec('never_declared' as never)).toThrow(/not in the catalogue/);
  });
});
