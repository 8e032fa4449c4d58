export interface Page<T> {
  items: readonly T[];
  nextCursor?: string;
}
