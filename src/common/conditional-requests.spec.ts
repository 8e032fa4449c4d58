import { etagOf, ifMatch } from './conditional-requests';

const v2 = { version: 2 };

describe('If-Match', () => {
  it('holds for `*` and for a list naming the current ETag by strong comparison', () => {
    expect(etagOf(v2)).toBe('"2"');
    expect(ifMatch('*', true)(v2)).toBe(true);
    expect(ifMatch('"2"', true)(v2)).toBe(true);
    expect(ifMatch('"1", "2"', true)(v2)).toBe(true);
    expect(ifMatch('"1"', true)(v2)).toBe(false);
    expect(ifMatch('W/"2"', true)(v2)).toBe(false);
  });

  it('is 428 when required and absent, no condition when optional and absent, 400 when malformed', () => {
    expect(() => ifMatch(undefined, true)).toThrow(
      expect.objectContaining({ code: 'precondition_required' }),
    );
    expect(ifMatch(undefined, false)(v2)).toBe(true);
    for (const malformed of ['2', '"2', '"2",', '*, "2"', `"${'9'.repeat(1030)}"`])
      expect(() => ifMatch(malformed, false)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  });
});
