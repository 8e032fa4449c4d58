'use strict';
// express-sqlite3: the Pet Store as a plain Express developer writes it. Express 5 with its
// defaults (ETag, X-Powered-By, the simple query parser), the async sqlite3 driver (queries run
// on libuv's thread pool), SQL text passed on every call: no ORM, no hand-kept prepared statements.
//
// Env: PORT (3000), HOST (127.0.0.1), API_KEYS (comma-separated), DATABASE_PATH (./petstore.sqlite)
const express = require('express');
const sqlite3 = require('sqlite3');

const port = Number(process.env.PORT || 3000);
const host = process.env.HOST || '127.0.0.1';
const databasePath = process.env.DATABASE_PATH || 'petstore.sqlite';
const apiKeys = (process.env.API_KEYS || '')
  .split(',')
  .map((key) => key.trim())
  .filter(Boolean);
if (apiKeys.length === 0) console.warn('express-sqlite3: API_KEYS is empty, every request will get 401');

const STATUSES = ['available', 'pending', 'sold'];
const SELECT_PAGE = 'SELECT id, name, category_id, status FROM pets ORDER BY id LIMIT ?';
const SELECT_PAGE_BY_STATUS =
  'SELECT id, name, category_id, status FROM pets WHERE status = ? ORDER BY id LIMIT ?';
const SELECT_ONE = 'SELECT id, name, category_id, status FROM pets WHERE id = ?';
const INSERT = 'INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)';

// ------------------------------------------------------------------ database, promisified
const db = new sqlite3.Database(databasePath);

const run = (sql, params = []) =>
  new Promise((resolve, reject) =>
    db.run(sql, params, function done(error) {
      if (error) reject(error);
      else resolve(this); // this.lastID, this.changes
    }),
  );
const all = (sql, params = []) =>
  new Promise((resolve, reject) =>
    db.all(sql, params, (error, rows) => (error ? reject(error) : resolve(rows))),
  );
const get = (sql, params = []) =>
  new Promise((resolve, reject) =>
    db.get(sql, params, (error, row) => (error ? reject(error) : resolve(row))),
  );

async function openDatabase() {
  await get('PRAGMA journal_mode = WAL');
  await run('PRAGMA synchronous = NORMAL');
  await run('PRAGMA busy_timeout = 5000');
  await run(`CREATE TABLE IF NOT EXISTS pets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    category_id INTEGER NOT NULL,
    status TEXT CHECK (status IN ('available', 'pending', 'sold'))
  )`);
  await run('CREATE INDEX IF NOT EXISTS pets_status ON pets (status)');
}

function petOf(row) {
  const pet = { id: row.id, name: row.name, categoryId: row.category_id };
  if (row.status !== null) pet.status = row.status;
  return pet;
}

// ------------------------------------------------------------------ checks
function fail(res, status, code, message) {
  res.status(status).json({ code, message, status });
}

/** Why `body` is not a NewPet, or null when it is one. */
function newPetProblem(body) {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'Request body must be a JSON object';
  }
  if (body.name === undefined) return 'name is required';
  if (typeof body.name !== 'string' || body.name.trim() === '') return 'name must be a non-empty string';
  if (body.categoryId === undefined) return 'categoryId is required';
  if (!Number.isSafeInteger(body.categoryId)) return 'categoryId must be an integer';
  if (body.status !== undefined && !STATUSES.includes(body.status)) {
    return 'status must be one of available, pending, sold';
  }
  return null;
}

// ------------------------------------------------------------------ the app
const app = express();

app.use((req, res, next) => {
  const match = /^Bearer +(\S+) *$/i.exec(req.get('authorization') || '');
  if (match && apiKeys.includes(match[1])) return next();
  res.set('WWW-Authenticate', 'Bearer');
  fail(res, 401, 'unauthorized', 'Missing or invalid API key');
});

app.use(express.json());

app.get('/v1/pets', async (req, res) => {
  const { limit = '20', status } = req.query;
  if (typeof limit !== 'string' || !/^\d{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > 100) {
    return fail(res, 400, 'invalid_parameter', 'limit must be an integer between 1 and 100');
  }
  if (status !== undefined && !STATUSES.includes(status)) {
    return fail(res, 400, 'invalid_parameter', 'status must be one of available, pending, sold');
  }
  const rows =
    status === undefined
      ? await all(SELECT_PAGE, [Number(limit)])
      : await all(SELECT_PAGE_BY_STATUS, [status, Number(limit)]);
  res.json(rows.map(petOf));
});

app.get('/v1/pets/:petId', async (req, res) => {
  const { petId } = req.params;
  if (!/^\d{1,19}$/.test(petId)) {
    return fail(res, 400, 'invalid_parameter', 'petId must be a positive integer');
  }
  // Past 2^53 the id is bound as text, which SQLite compares with the integer column as a number.
  const id = Number.isSafeInteger(Number(petId)) ? Number(petId) : petId;
  const row = await get(SELECT_ONE, [id]);
  if (row === undefined) return fail(res, 404, 'not_found', 'Pet not found');
  res.json(petOf(row));
});

app.post('/v1/pets', async (req, res) => {
  const problem = newPetProblem(req.body);
  if (problem !== null) return fail(res, 400, 'invalid_body', problem);
  const { name, categoryId, status } = req.body;
  const { lastID } = await run(INSERT, [name, categoryId, status ?? null]);
  const pet = { id: lastID, name, categoryId };
  if (status !== undefined) pet.status = status;
  res.status(201).location(`/v1/pets/${lastID}`).json(pet);
});

app.use((req, res) => fail(res, 404, 'not_found', 'Resource not found'));

// Four arguments make this Express's error handler: the body parser's errors keep their 4xx.
// eslint-disable-next-line no-unused-vars
app.use((error, req, res, next) => {
  if (error.type === 'entity.parse.failed')
    return fail(res, 400, 'invalid_body', 'Request body is not valid JSON');
  if (error.type === 'entity.too.large') return fail(res, 413, 'payload_too_large', 'Request body too large');
  if (error.status >= 400 && error.status < 500) return fail(res, error.status, 'bad_request', error.message);
  console.error(error);
  fail(res, 500, 'internal_error', 'Internal server error');
});

openDatabase().then(
  () => {
    const server = app.listen(port, host, () =>
      console.log(`express-sqlite3: http://${host}:${port}/v1 (database ${databasePath})`),
    );
    for (const signal of ['SIGTERM', 'SIGINT']) {
      process.on(signal, () => {
        server.close();
        db.close(() => process.exit(0));
      });
    }
  },
  (error) => {
    console.error('express-sqlite3: cannot open the database', error);
    process.exit(1);
  },
);
