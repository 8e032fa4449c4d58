import { PetStatus } from './pet-status';

/** What a list asks for: a page size, a status filter, and where the page starts. */
export interface PetQuery {
  limit: number;
  status?: PetStatus;
  /** Start after this id (keyset pagination); 0 for the first page. */
  afterId?: number;
}
