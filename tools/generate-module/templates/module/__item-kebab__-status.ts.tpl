import { Lifecycle } from '../common/lifecycle';

/** Where __a_noun__ stands; a new value needs a migration of the CHECK too. */
export const __ITEM___STATUSES = [__STATES__] as const;
export type __Item__Status = (typeof __ITEM___STATUSES)[number];
// @if defaultState
// @if createStatus
/** What __a_noun__ created without a status gets (entity, DTO and document say so). */
// @end
// @if !createStatus
/** Where every new __noun__ starts: a create takes no status. */
// @end
export const DEFAULT___ITEM___STATUS: __Item__Status = __DEFAULT_STATE__;
// @end
// @if !defaultState
/** __Noun__s may be created without a status; once given one, they keep one. */
export const DEFAULT___ITEM___STATUS = null;
// @end

/** Where each status may go next (it may always stay); one that may go nowhere is final. */
export const __ITEM___LIFECYCLE = new Lifecycle(
  __ITEM___STATUSES,
  __TRANSITIONS__,
  '__a_noun__',
  DEFAULT___ITEM___STATUS,
);
