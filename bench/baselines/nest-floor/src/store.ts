import Database from 'better-sqlite3';

/** A pet as the API returns it; `status` is left out (not null) when the pet has none. */
export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

type PetRow = [id: number, name: string, categoryId: number, status: string | null];

export const STATUSES: readonly string[] = ['available', 'pending', 'sold'];

const db = new Database(process.env.DATABASE_PATH || 'petstore.sqlite');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
// No CHECK on status: the controller validates it.
db.exec(`
  CREATE TABLE IF NOT EXISTS pets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    category_id INTEGER NOT NULL,
    status TEXT
  );
  CREATE INDEX IF NOT EXISTS pets_status ON pets (status);
`);

// Prepared once; rows come back as arrays, as in the raw-node baseline.
const selectPage = db
  .prepare<[number], PetRow>('SELECT id, name, category_id, status FROM pets ORDER BY id LIMIT ?')
  .raw();
const selectPageByStatus = db
  .prepare<[string, number], PetRow>(
    'SELECT id, name, category_id, status FROM pets WHERE status = ? ORDER BY id LIMIT ?',
  )
  .raw();
const selectOne = db
  .prepare<[number | bigint], PetRow>('SELECT id, name, category_id, status FROM pets WHERE id = ?')
  .raw();
const insertPet = db.prepare<[string, number, string | null]>(
  'INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)',
);

const petOf = (row: PetRow): Pet => ({
  id: row[0],
  name: row[1],
  categoryId: row[2],
  status: row[3] === null ? undefined : row[3],
});

export function listPets(limit: number, status: string | undefined): Pet[] {
  const rows = status === undefined ? selectPage.all(limit) : selectPageByStatus.all(status, limit);
  return rows.map(petOf);
}

export function findPet(id: number | bigint): Pet | undefined {
  const row = selectOne.get(id);
  return row === undefined ? undefined : petOf(row);
}

/** Stores a pet and returns its id. */
export function insert(name: string, categoryId: number, status: string | undefined): number {
  return Number(insertPet.run(name, categoryId, status ?? null).lastInsertRowid);
}

export function closeStore(): void {
  db.close();
}
