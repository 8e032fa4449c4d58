import { ApiException } from '../common/errors/api-exception';
import { declareErrorCodes } from '../common/errors/error-codes';
import { keepReferences, Reference, requireReferences } from './references';

const CODES = declareErrorCodes('references-spec', {
  spec_unknown_pet: { status: 422, message: '`petId` names no pet.', when: 'no pet' },
  spec_unknown_owner: { status: 422, message: '`ownerId` names no owner.', when: 'no owner' },
});

/** Records 1 to 3 exist; the lookup of any other is 404, as a module's `get` answers. */
const lookup = (existing: number[]) => (id: number) =>
  existing.includes(id) ? Promise.resolve({ id }) : Promise.reject(new ApiException('not_found'));

describe('references', () => {
  let pets: number[];
  let owners: number[];
  let references: Reference[];

  beforeEach(() => {
    pets = [1, 2, 3];
    owners = [1, 2, 3];
    references = [
      { field: 'petId', code: CODES.spec_unknown_pet, get: (id) => lookup(pets)(id) },
      { field: 'ownerId', code: CODES.spec_unknown_owner, get: (id) => lookup(owners)(id) },
    ];
  });

  it('names the one field whose record is missing, with its code and message, whichever it is', async () => {
    await expect(requireReferences({ petId: 1, ownerId: 9 }, references)).rejects.toMatchObject({
      code: 'spec_unknown_owner',
      message: '`ownerId` names no owner.',
      details: [{ field: 'ownerId', message: '`ownerId` names no owner.' }],
    });
    await expect(requireReferences({ petId: 1, ownerId: 2 }, references)).resolves.toBeUndefined();
    await expect(requireReferences({ name: 'only a name' }, references)).resolves.toBeUndefined();
  });

  it('names every missing field, the first one giving the code', async () => {
    await expect(requireReferences({ petId: 8, ownerId: 9 }, references)).rejects.toMatchObject({
      code: 'spec_unknown_pet',
      details: [{ field: 'petId' }, { field: 'ownerId' }],
    });
  });

  it('answers a write the foreign keys refused with the fields whose records are gone now', async () => {
    const refusedByForeignKey = Object.assign(new Error('FOREIGN KEY constraint failed'), {
      code: 'SQLITE_CONSTRAINT',
    });
    owners = [1];
    await expect(
      keepReferences(Promise.reject(refusedByForeignKey), { petId: 2, ownerId: 2 }, references),
    ).rejects.toMatchObject({ code: 'spec_unknown_owner', details: [{ field: 'ownerId' }] });
    const other = new Error('disk full');
    await expect(keepReferences(Promise.reject(other), { petId: 2 }, references)).rejects.toBe(other);
  });
});
