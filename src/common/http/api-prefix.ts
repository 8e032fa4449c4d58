/** The version segment every API route lives under (the contract's base URLs end in it). */
export const API_PREFIX = 'v1';
