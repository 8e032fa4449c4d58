/** The version segment every API route lives under (the contract's base URLs end in it). */
export const API_PREFIX = 'v1';

export function resourceLocation(collection: string, id: number): string {
  return `/${API_PREFIX}/${collection}/${id}`;
}
