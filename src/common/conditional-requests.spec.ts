import { etagOf, ifMatch } from './conditional-requests';

const v2 = { version: 2 };
const code = (check: () => void) => {
  try {
    check();
    return 'holds';
  } catch (error) {
    return (error as { code: string }).code;
  }
};

describe('If-Match', () => {
  it('holds for `*` and for a list naming the current ETag by strong comparison, else 412', () => {
    expect(etagOf(v2)).toBe('"2"');
    expect(code(() => ifMatch('*', true)(v2))).toBe('holds');
    expect(code(() => ifMatch('"2"', true)(v2))).toBe('holds');
    expect(code(() => ifMatch('"1", "2"', true)(v2))).toBe('holds');
    expect(code(() => ifMatch('"1"', true)(v2))).toBe('precondition_failed');
    expect(code(() => ifMatch('W/"2"', true)(v2))).toBe('precondition_failed');
  });

  it('is 428 when required and absent (once the row is found), no condition when optional and absent, 400 when malformed', () => {
    const absent = ifMatch(undefined, true);
    expect(code(() => absent(v2))).toBe('precondition_required');
    expect(code(() => ifMatch(undefined, false)(v2))).toBe('holds');
    for (const malformed of ['2', '"2', '"2",', '*, "2"', `"${'9'.repeat(1030)}"`])
      expect(code(() => ifMatch(malformed, false))).toBe('validation_failed');
  });
});
