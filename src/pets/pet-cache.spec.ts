import { Metrics } from '../observability/metrics';
import { pageBytes, PetCache, petBytes } from './pet-cache';
import { PetEntity } from './pet.entity';
import { PetStatus } from './pet-status';
import type { Page } from '../common/pagination/page';
import type { PetQuery } from './pet-page';

function pet(id: number, status: PetStatus | null = null): PetEntity {
  return { id, name: `Pet ${id}`, categoryId: 1, status };
}

function pets(count: number, status: PetStatus | null = null): PetEntity[] {
  return Array.from({ length: count }, (_, index) => pet(index + 1, status));
}

/** A page that more animals follow: full, and never to change. */
function full(animals: PetEntity[]): Page<PetEntity> {
  return { items: animals, nextCursor: 'next' };
}

describe('PetCache', () => {
  let cache: PetCache;

  beforeEach(() => {
    cache = new PetCache(3, 2);
  });

  describe('animals by id', () => {
    it('keeps an animal and answers nothing for one it does not hold', () => {
      cache.putPet(pet(7), cache.generation);

      expect(cache.pet(7)).toEqual(pet(7));
      expect(cache.pet(8)).toBeUndefined();
    });

    it('holds at most its size, dropping the least recently used first', () => {
      [1, 2, 3].forEach((id) => cache.putPet(pet(id), cache.generation));
      cache.pet(1);
      cache.putPet(pet(4), cache.generation);

      expect([1, 2, 3, 4].map((id) => cache.pet(id)?.id)).toEqual([1, undefined, 3, 4]);
      expect(cache.size.pets).toBe(3);
    });
  });

  describe('pages', () => {
    it('keeps a page that more animals follow', () => {
      cache.putPage({ limit: 3 }, full(pets(3)), cache.generation);

      expect(cache.page({ limit: 3 })).toEqual(full(pets(3)));
    });

    it('never keeps a last page, even a full one: the next animal created would belong in it or after it', () => {
      cache.putPage({ limit: 3 }, { items: pets(2) }, cache.generation);
      cache.putPage({ limit: 2 }, { items: pets(2) }, cache.generation);
      cache.putPage({ limit: 3, status: PetStatus.sold }, { items: [] }, cache.generation);

      expect(cache.page({ limit: 3 })).toBeUndefined();
      expect(cache.page({ limit: 2 })).toBeUndefined();
      expect(cache.page({ limit: 3, status: PetStatus.sold })).toBeUndefined();
    });

    it('keys a page by every field of its query', () => {
      cache.putPage({ limit: 2 }, full(pets(2)), cache.generation);

      expect(cache.page({ limit: 2, status: PetStatus.sold })).toBeUndefined();
      expect(cache.page({ limit: 1 })).toBeUndefined();
      expect(cache.page({ status: undefined, limit: 2 })).toEqual(full(pets(2)));
    });

    it('takes a query field added later into the key too', () => {
      const after = (id: number): PetQuery => ({ limit: 1, afterId: id });
      cache.putPage(after(5), full([pet(6)]), cache.generation);

      expect(cache.page(after(5))).toEqual(full([pet(6)]));
      expect(cache.page(after(6))).toBeUndefined();
      expect(cache.page({ limit: 1 })).toBeUndefined();
    });

    it('holds at most its number of pages, dropping the least recently used first', () => {
      [1, 2].forEach((limit) => cache.putPage({ limit }, full(pets(limit)), cache.generation));
      cache.page({ limit: 1 });
      cache.putPage({ limit: 3 }, full(pets(3)), cache.generation);

      expect(cache.page({ limit: 2 })).toBeUndefined();
      expect(cache.page({ limit: 1 })).toEqual(full(pets(1)));
      expect(cache.page({ limit: 3 })).toEqual(full(pets(3)));
      expect(cache.size.pages).toBe(2);
    });
  });

  describe('clear (after a bulk change)', () => {
    it('drops every animal and page, and refuses what was read before it', () => {
      const before = cache.generation;
      cache.putPet(pet(1), before);
      cache.putPage({ limit: 1 }, full([pet(1)]), before);

      cache.clear();
      cache.putPet(pet(2), before);

      expect(cache.pet(1)).toBeUndefined();
      expect(cache.pet(2)).toBeUndefined();
      expect(cache.page({ limit: 1 })).toBeUndefined();
      expect(cache.size).toEqual({ pets: 0, pages: 0 });
    });
  });

  describe('forget (for updates and deletes)', () => {
    it('drops the animal and every page, and keeps the other animals', () => {
      cache.putPet(pet(1), cache.generation);
      cache.putPet(pet(2), cache.generation);
      cache.putPage({ limit: 2 }, full(pets(2)), cache.generation);
      cache.putPage({ limit: 1, status: PetStatus.sold }, full([pet(9, PetStatus.sold)]), cache.generation);

      cache.forget(1);

      expect(cache.pet(1)).toBeUndefined();
      expect(cache.pet(2)).toEqual(pet(2));
      expect(cache.page({ limit: 2 })).toBeUndefined();
      expect(cache.page({ limit: 1, status: PetStatus.sold })).toBeUndefined();
    });

    it('refuses what a read that started before the change brings back after it', () => {
      const before = cache.generation;
      cache.forget(1);
      cache.putPet(pet(1), before);
      cache.putPage({ limit: 1 }, full([pet(1)]), before);

      expect(cache.pet(1)).toBeUndefined();
      expect(cache.page({ limit: 1 })).toBeUndefined();

      cache.putPet(pet(1), cache.generation);
      expect(cache.pet(1)).toEqual(pet(1));
    });
  });

  describe('bounded by bytes', () => {
    const megabyte = 1024 * 1024;

    it('holds animals within half its megabytes, the least recently used dropped first', () => {
      const cache = new PetCache(1_000_000, 1000, new Metrics(), 1);
      for (let id = 1; id <= 5000; id++) cache.putPet(pet(id), cache.generation);

      const held = Math.floor(megabyte / 2 / petBytes(pet(5000)));
      expect(cache.size.pets).toBeGreaterThanOrEqual(held - 20);
      expect(cache.size.pets).toBeLessThanOrEqual(held);
      expect(cache.bytes).toBeLessThanOrEqual(megabyte / 2);
      expect(cache.pet(5000)).toEqual(pet(5000));
      expect(cache.pet(1)).toBeUndefined();
    });

    it('counts a long name for more than a short one', () => {
      const long = { ...pet(1), name: 'x'.repeat(255) };
      expect(petBytes(long) - petBytes(pet(1))).toBe(4 * (255 - 'Pet 1'.length));
      expect(pageBytes(full([long, pet(2)]))).toBeGreaterThan(petBytes(long) + petBytes(pet(2)));
    });

    it('holds pages within the other half, the least recently used dropped first', () => {
      const cache = new PetCache(1_000_000, 1000, new Metrics(), 1);
      const hundred = pets(100);
      for (let afterId = 0; afterId < 100; afterId++) {
        cache.putPage({ limit: 100, afterId }, full(hundred), cache.generation);
      }

      expect(cache.size.pages).toBe(Math.floor(megabyte / 2 / pageBytes(full(hundred))));
      expect(cache.page({ limit: 100, afterId: 99 })).toEqual(full(hundred));
      expect(cache.page({ limit: 100, afterId: 0 })).toBeUndefined();
      expect(cache.bytes).toBeLessThanOrEqual(megabyte / 2);
    });
  });

  it('keeps nothing at all with size 0', () => {
    const off = new PetCache(0);
    off.putPet(pet(1), off.generation);
    off.putPage({ limit: 1 }, full([pet(1)]), off.generation);

    expect(off.pet(1)).toBeUndefined();
    expect(off.page({ limit: 1 })).toBeUndefined();
    expect(off.size).toEqual({ pets: 0, pages: 0 });
  });

  it('keeps animals but no pages with 0 pages', () => {
    const noPages = new PetCache(3, 0);
    noPages.putPet(pet(1), noPages.generation);
    noPages.putPage({ limit: 1 }, full([pet(1)]), noPages.generation);

    expect(noPages.pet(1)).toEqual(pet(1));
    expect(noPages.page({ limit: 1 })).toBeUndefined();
    expect(noPages.size).toEqual({ pets: 1, pages: 0 });
  });
});
