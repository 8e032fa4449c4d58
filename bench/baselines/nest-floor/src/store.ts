import Database from 'better-sqlite3';

/** A pet as the API returns it; `status` is left out (not null) when the pet has none. */
export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

/** A pet and its version, the ETag of a change. */
export interface Versioned {
  pet: Pet;
  version: number;
}

type PetRow = [id: number, name: string, categoryId: number, status: string | null, version: number];
/** What a store answers: at once (SQLite, synchronous) or later (PostgreSQL). */
type Answer<T> = T | Promise<T>;

export const STATUSES: readonly string[] = ['available', 'pending', 'sold'];

/** The pets table on SQLite (DATABASE_PATH) or, with FLOOR_DB_URL, on PostgreSQL. */
export interface Store {
  list(limit: number, status: string | undefined): Answer<Pet[]>;
  find(id: number | bigint): Answer<Versioned | undefined>;
  /** Stores a pet and returns its id. */
  insert(name: string, categoryId: number, status: string | undefined): Answer<number>;
  /** Writes `pet` as the version after `version` if the row is still at `version`; false when not. */
  update(pet: Pet, version: number): Answer<boolean>;
  close(): Answer<void>;
}

const COLUMNS = 'id, name, category_id, status, version';

const petOf = (row: PetRow): Pet => ({
  id: row[0],
  name: row[1],
  categoryId: row[2],
  status: row[3] === null ? undefined : row[3],
});

function sqliteStore(): Store {
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
      status TEXT,
      version INTEGER NOT NULL DEFAULT 1
    );
    CREATE INDEX IF NOT EXISTS pets_status ON pets (status);
  `);
  // Prepared once; rows come back as arrays, as in the raw-node baseline.
  const page = db.prepare<[number], PetRow>(`SELECT ${COLUMNS} FROM pets ORDER BY id LIMIT ?`).raw();
  const pageByStatus = db
    .prepare<[string, number], PetRow>(`SELECT ${COLUMNS} FROM pets WHERE status = ? ORDER BY id LIMIT ?`)
    .raw();
  const one = db.prepare<[number | bigint], PetRow>(`SELECT ${COLUMNS} FROM pets WHERE id = ?`).raw();
  const insert = db.prepare<[string, number, string | null]>(
    'INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)',
  );
  const update = db.prepare<[string, number, string | null, number, number]>(
    'UPDATE pets SET name = ?, category_id = ?, status = ?, version = version + 1 WHERE id = ? AND version = ?',
  );
  return {
    list: (limit, status) =>
      (status === undefined ? page.all(limit) : pageByStatus.all(status, limit)).map(petOf),
    find: (id) => {
      const row = one.get(id);
      return row === undefined ? undefined : { pet: petOf(row), version: row[4] };
    },
    insert: (name, categoryId, status) =>
      Number(insert.run(name, categoryId, status ?? null).lastInsertRowid),
    update: (pet, version) =>
      update.run(pet.name, pet.categoryId, pet.status ?? null, pet.id, version).changes === 1,
    close: () => void db.close(),
  };
}

/** The same on PostgreSQL through node-postgres: a pool of FLOOR_PG_POOL (10), prepared statements. */
async function postgresStore(url: string): Promise<Store> {
  const { Pool } = await import('pg');
  const pool = new Pool({ connectionString: url, max: Number(process.env.FLOOR_PG_POOL || 10) });
  await pool.query(`
    CREATE TABLE IF NOT EXISTS pets (
      id BIGSERIAL PRIMARY KEY,
      name TEXT NOT NULL,
      category_id BIGINT NOT NULL,
      status TEXT,
      version BIGINT NOT NULL DEFAULT 1
    );
    CREATE INDEX IF NOT EXISTS pets_status ON pets (status, id);
  `);
  const rows = async (name: string, text: string, values: unknown[]): Promise<PetRow[]> =>
    (await pool.query<unknown[]>({ name, text, values, rowMode: 'array' })).rows.map(
      (row) => [Number(row[0]), row[1], Number(row[2]), row[3], Number(row[4])] as PetRow,
    );
  return {
    list: async (limit, status) =>
      (status === undefined
        ? await rows('page', `SELECT ${COLUMNS} FROM pets ORDER BY id LIMIT $1`, [limit])
        : await rows('byStatus', `SELECT ${COLUMNS} FROM pets WHERE status = $1 ORDER BY id LIMIT $2`, [
            status,
            limit,
          ])
      ).map(petOf),
    find: async (id) => {
      const [row] = await rows('one', `SELECT ${COLUMNS} FROM pets WHERE id = $1`, [String(id)]);
      return row === undefined ? undefined : { pet: petOf(row), version: row[4] };
    },
    insert: async (name, categoryId, status) =>
      Number(
        (
          await pool.query<{ id: string }>({
            name: 'insert',
            text: 'INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING id',
            values: [name, categoryId, status ?? null],
          })
        ).rows[0].id,
      ),
    update: async (pet, version) =>
      (
        await pool.query({
          name: 'update',
          text:
            'UPDATE pets SET name = $1, category_id = $2, status = $3, version = version + 1 ' +
            'WHERE id = $4 AND version = $5',
          values: [pet.name, pet.categoryId, pet.status ?? null, pet.id, version],
        })
      ).rowCount === 1,
    close: () => pool.end(),
  };
}

export let store: Store;

export async function openStore(): Promise<void> {
  store = process.env.FLOOR_DB_URL ? await postgresStore(process.env.FLOOR_DB_URL) : sqliteStore();
}

/** `answer`, then `then` of it: synchronously where the store answered at once. */
export function after<T, R>(answer: Answer<T>, then: (value: T) => R): Answer<R> {
  return answer instanceof Promise ? answer.then(then) : then(answer);
}
