/** One page of a keyset-paged list, and the cursor of the next page (absent on the last one). */
export interface Page<T> {
  items: readonly T[];
  nextCursor?: string;
}
