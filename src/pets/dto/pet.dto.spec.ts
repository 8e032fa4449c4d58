import { PetEntity } from '../pet.entity';
import { PetStatus } from '../pet-status';
import { PetDto } from './pet.dto';

describe('PetDto.fromEntity', () => {
  it('copies id, name, categoryId and status', () => {
    const entity: PetEntity = { id: 1, name: 'Rex', categoryId: 7, status: PetStatus.sold };

    expect(PetDto.fromEntity(entity)).toStrictEqual({ id: 1, name: 'Rex', categoryId: 7, status: 'sold' });
  });

  it('leaves the status key out entirely when the animal has none', () => {
    const dto = PetDto.fromEntity({ id: 2, name: 'Tom', categoryId: 3, status: null });

    expect(dto).toStrictEqual({ id: 2, name: 'Tom', categoryId: 3 });
    expect(Object.keys(dto)).toEqual(['id', 'name', 'categoryId']);
    expect(JSON.stringify(dto)).toBe('{"id":2,"name":"Tom","categoryId":3}');
  });

  it('copies nothing else the entity carries', () => {
    const entity = Object.assign(
      { id: 3, name: 'Kit', categoryId: 1, status: PetStatus.pending },
      { createdAt: new Date(0), internalNote: 'x' },
    );

    expect(JSON.stringify(PetDto.fromEntity(entity))).toBe(
      '{"id":3,"name":"Kit","categoryId":1,"status":"pending"}',
    );
  });

  it('returns the name exactly as stored', () => {
    expect(PetDto.fromEntity({ id: 4, name: '  Zoë 😀 ', categoryId: 1, status: null }).name).toBe(
      '  Zoë 😀 ',
    );
  });
});
