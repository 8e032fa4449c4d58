/** Where __a_noun__ stands; a new value needs a migration of the CHECK too. */
export const __ITEM___STATUSES = ['active', 'archived'] as const;
export type __Item__Status = (typeof __ITEM___STATUSES)[number];
/** What __a_noun__ created without one gets (entity, DTO and document say so). */
export const DEFAULT___ITEM___STATUS: __Item__Status = 'active';
