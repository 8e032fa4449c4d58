/** Availability of an animal. The contract gives no default: an animal may have no status. */
export enum PetStatus {
  available = 'available',
  pending = 'pending',
  sold = 'sold',
}
