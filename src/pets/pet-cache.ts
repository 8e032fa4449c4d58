import { ByteBoundedLru } from '../common/memory/bounded-lru';
import { DEFAULT_PET_CACHE_MB, DEFAULT_PET_CACHE_SIZE } from '../config/app-config';
import { Metrics } from '../observability/metrics';
import { PetEntity } from './pet.entity';
import type { Page } from '../common/pagination/page';
import type { PetQuery } from './pet-page';

/** Full pages kept (each at most 100 animals, shared with the by-id entries where both hold one). */
export const MAX_CACHED_PAGES = 1000;

/**
 * The bytes an animal is estimated to hold in the cache: the entity, its JSON text (made once
 * for its answers), its key and the cache's bookkeeping, 240 bytes together, plus its name
 * twice (entity and text) at up to 2 bytes per UTF-16 unit: 280 for a 10-character name.
 * Measured (heap after a forced GC, 5,000 to 20,000 such animals cached with their texts):
 * 165 to 386 bytes each, depending on how far the cache's tables have grown.
 */
export function petBytes(pet: PetEntity): number {
  return 240 + 4 * pet.name.length;
}

/** A page's estimate: each of its animals counted in full (it may hold the only reference to them). */
export function pageBytes(page: Page<PetEntity>): number {
  let bytes = 200;
  for (const pet of page.items) bytes += petBytes(pet);
  return bytes;
}

/**
 * In-process read caches for animals. They are exact, not eventually consistent, because an
 * animal never changes once created and ids only grow (SQLite assigns them at commit, one
 * writer at a time):
 * - an animal by id is the same forever once it has been read;
 * - a page that came back full (as many animals as its limit) holds the oldest matching
 *   animals after its starting point; every animal created later has a larger id and lands
 *   after it, so the page never changes. A page that was not full would gain the next animal,
 *   so it is never kept. Nor is a 404: the id may be created later.
 *
 * For the day animals can be updated or deleted: call `forget(id)` after the change is
 * committed. It drops the animal and every page (any page may hold it, or may gain or lose it
 * through a status change), and bumps the generation, so that a read which started before the
 * change and finishes after it cannot put what it read back in (see `generation`).
 * With several processes over one database, each must hear of the change, or keep no caches.
 */
export class PetCache {
  private readonly pets: ByteBoundedLru<number, PetEntity> | undefined;
  private readonly pages: ByteBoundedLru<string, Page<PetEntity>> | undefined;
  private currentGeneration = 0;

  /**
   * At most `maxPets` animals and `maxPages` full pages, each cache within half of `maxMegabytes`
   * (estimated: `petBytes`, `pageBytes`), the least recently used dropped first; nothing is
   * reserved up front. `maxPets` 0 keeps nothing at all (no animals, no pages). Lookups are
   * counted in `metrics`.
   */
  constructor(
    maxPets = DEFAULT_PET_CACHE_SIZE,
    maxPages = MAX_CACHED_PAGES,
    private readonly metrics: Metrics = new Metrics(),
    maxMegabytes = DEFAULT_PET_CACHE_MB,
  ) {
    const halfBytes = (maxMegabytes * 1024 * 1024) / 2;
    if (maxPets > 0) this.pets = new ByteBoundedLru(maxPets, halfBytes, petBytes);
    if (maxPets > 0 && maxPages > 0) this.pages = new ByteBoundedLru(maxPages, halfBytes, pageBytes);
  }

  /** Taken before a read of the database and handed back with what it read. */
  get generation(): number {
    return this.currentGeneration;
  }

  pet(id: number): PetEntity | undefined {
    const pet = this.pets?.get(id);
    this.metrics.readCache('pet', pet !== undefined);
    return pet;
  }

  /** Keeps an animal read from the database at `generation`. */
  putPet(pet: PetEntity, generation: number): void {
    if (generation === this.currentGeneration) this.pets?.set(pet.id, pet);
  }

  page(query: PetQuery): Page<PetEntity> | undefined {
    const page = this.pages?.get(pageKey(query));
    this.metrics.readCache('page', page !== undefined);
    return page;
  }

  /**
   * Keeps a page read at `generation` if more animals follow it: such a page is full and can
   * never change (nor can its "more follow"). A last page may still grow, so it is not kept.
   */
  putPage(query: PetQuery, page: Page<PetEntity>, generation: number): void {
    if (page.nextCursor !== undefined && generation === this.currentGeneration) {
      this.pages?.set(pageKey(query), page);
    }
  }

  /** Call after an animal was changed or deleted (not needed after a create). */
  forget(id: number): void {
    this.currentGeneration += 1;
    this.pets?.delete(id);
    this.pages?.clear();
  }

  /** Call after many animals were changed or deleted at once: drops everything. */
  clear(): void {
    this.currentGeneration += 1;
    this.pets?.clear();
    this.pages?.clear();
  }

  get size(): { pets: number; pages: number } {
    return { pets: this.pets?.size ?? 0, pages: this.pages?.size ?? 0 };
  }

  /** The bytes both caches are estimated to hold. */
  get bytes(): number {
    return (this.pets?.bytes ?? 0) + (this.pages?.bytes ?? 0);
  }
}

/** Every field of the query, in a fixed order, so that a new query field is part of the key. */
function pageKey(query: PetQuery): string {
  return JSON.stringify(query, Object.keys(query).sort());
}
