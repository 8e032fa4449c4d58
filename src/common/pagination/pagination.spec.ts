import type { Response } from 'express';
import { ApiException } from '../errors/api-exception';
import { decodeCursor, encodeCursor } from './cursor';
import { setNextLink } from './next-link';

describe('keyset pagination helpers', () => {
  describe('cursor', () => {
    it('decodes what it encoded, for the same filter', () => {
      expect(decodeCursor(encodeCursor({ afterId: 42, filter: 'sold' }), 'sold')).toEqual({
        afterId: 42,
        filter: 'sold',
      });
      expect(decodeCursor(encodeCursor({ afterId: 0, filter: null }), undefined)).toEqual({
        afterId: 0,
        filter: null,
      });
    });

    it('refuses an edited cursor and one of another filter, naming the filter', () => {
      const cursor = encodeCursor({ afterId: 42, filter: null });
      const edited = `${cursor.slice(0, 3)}${cursor[3] === 'A' ? 'B' : 'A'}${cursor.slice(4)}`;
      expect(() => decodeCursor(edited, null)).toThrow(ApiException);
      expect(() => decodeCursor(cursor, 'sold', 'status')).toThrow(
        expect.objectContaining({
          code: 'validation_failed',
          details: [{ field: 'cursor', message: 'cursor belongs to a list with another status filter' }],
        }),
      );
    });
  });

  describe('setNextLink', () => {
    const response = () => {
      const headers: Record<string, string> = {};
      const res = { setHeader: (name: string, value: string) => (headers[name] = value) };
      return { res: res as unknown as Response, headers };
    };

    it('keeps the given parameters in order, leaves out undefined ones, and adds the cursor', () => {
      const { res, headers } = response();
      setNextLink(res, 'orders', { limit: 5, state: undefined, tag: 'a b' }, 'abc.def');
      expect(headers).toEqual({ Link: '</v1/orders?limit=5&tag=a+b&cursor=abc.def>; rel="next"' });
    });

    it('sets nothing on the last page', () => {
      const { res, headers } = response();
      setNextLink(res, 'orders', { limit: 5 }, undefined);
      expect(headers).toEqual({});
    });
  });
});
