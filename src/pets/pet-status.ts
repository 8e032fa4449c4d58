import { Lifecycle } from '../common/lifecycle';

/** Where an animal stands; a new value needs a migration of the CHECK too. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];
/** Animals may be created without a status; once given one, they keep one. */
export const DEFAULT_PET_STATUS = null;

/** Where each status may go next (it may always stay); one that may go nowhere is final. */
export const PET_LIFECYCLE = new Lifecycle(
  PET_STATUSES,
  { available: ['pending', 'sold'], pending: ['available', 'sold'], sold: [] },
  'an animal',
  DEFAULT_PET_STATUS,
);
