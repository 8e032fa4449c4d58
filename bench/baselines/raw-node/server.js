'use strict';
// raw-node: the Pet Store on node:http and better-sqlite3 (synchronous, prepared statements), with
// no framework at all: the ceiling for this storage design on a given machine. It still does the
// whole job: bearer key on every request, validation, Error bodies, every pet stored in SQLite.
//
// Env: PORT (3000), HOST (127.0.0.1), API_KEYS (comma-separated), DATABASE_PATH (./petstore.sqlite)
const http = require('node:http');
const Database = require('better-sqlite3');

const port = Number(process.env.PORT || 3000);
const host = process.env.HOST || '127.0.0.1';
const databasePath = process.env.DATABASE_PATH || 'petstore.sqlite';
const apiKeys = new Set(
  (process.env.API_KEYS || '')
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean),
);
if (apiKeys.size === 0) console.warn('raw-node: API_KEYS is empty, every request will get 401');

const STATUSES = new Set(['available', 'pending', 'sold']);
const MAX_BODY = 100 * 1024;
const INT64_MAX = 2n ** 63n - 1n;

// ------------------------------------------------------------------ storage
const db = new Database(databasePath);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
db.exec(`
  CREATE TABLE IF NOT EXISTS pets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    category_id INTEGER NOT NULL,
    status TEXT CHECK (status IN ('available', 'pending', 'sold'))
  );
  CREATE INDEX IF NOT EXISTS pets_status ON pets (status);
`);
// Rows come back as arrays [id, name, category_id, status]: no per-row object built by the driver.
const selectPage = db.prepare('SELECT id, name, category_id, status FROM pets ORDER BY id LIMIT ?').raw();
const selectPageByStatus = db
  .prepare('SELECT id, name, category_id, status FROM pets WHERE status = ? ORDER BY id LIMIT ?')
  .raw();
const selectOne = db.prepare('SELECT id, name, category_id, status FROM pets WHERE id = ?').raw();
const insertPet = db.prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)');

// A pet without status has no status key (JSON.stringify leaves undefined out).
const petOf = (row) => ({
  id: row[0],
  name: row[1],
  categoryId: row[2],
  status: row[3] === null ? undefined : row[3],
});

// ------------------------------------------------------------------ answers
// Headers as a flat [name, value, ...] list, which writeHead takes as it is.
function reply(res, status, body, headers = []) {
  const json = JSON.stringify(body);
  res.writeHead(status, [
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    Buffer.byteLength(json),
    ...headers,
  ]);
  res.end(json);
}

function fail(res, status, code, message, headers) {
  reply(res, status, { code, message, status }, headers);
}

// ------------------------------------------------------------------ checks
function hasValidKey(authorization) {
  const match = authorization && /^Bearer +(\S+) *$/i.exec(authorization);
  return Boolean(match) && apiKeys.has(match[1]);
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
  if (body.status !== undefined && !STATUSES.has(body.status)) {
    return 'status must be one of available, pending, sold';
  }
  return null;
}

function isJson(contentType) {
  const type = (contentType || '').split(';')[0].trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

// ------------------------------------------------------------------ operations
function listPets(res, search) {
  const query = new URLSearchParams(search);
  const limitText = query.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (limitText !== null && (!/^\d{1,3}$/.test(limitText) || limit < 1 || limit > 100)) {
    return fail(res, 400, 'invalid_parameter', 'limit must be an integer between 1 and 100');
  }
  const status = query.get('status');
  if (status !== null && !STATUSES.has(status)) {
    return fail(res, 400, 'invalid_parameter', 'status must be one of available, pending, sold');
  }
  const rows = status === null ? selectPage.all(limit) : selectPageByStatus.all(status, limit);
  reply(res, 200, rows.map(petOf));
}

function getPet(res, petId) {
  if (!/^\d{1,19}$/.test(petId)) {
    return fail(res, 400, 'invalid_parameter', 'petId must be a positive integer');
  }
  // Ids of 16 digits and more may not fit a double; past int64 no pet can have them.
  const long = petId.length > 15 ? BigInt(petId) : null;
  const row =
    long === null ? selectOne.get(Number(petId)) : long > INT64_MAX ? undefined : selectOne.get(long);
  if (row === undefined) return fail(res, 404, 'not_found', 'Pet not found');
  reply(res, 200, petOf(row));
}

function createPet(req, res) {
  if (!isJson(req.headers['content-type'])) {
    req.resume();
    return fail(res, 400, 'invalid_body', 'Content-Type must be application/json');
  }
  const tooLarge = () =>
    fail(res, 413, 'payload_too_large', 'Request body too large', ['Connection', 'close']);
  if (Number(req.headers['content-length']) > MAX_BODY) return tooLarge();
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size <= MAX_BODY) chunks.push(chunk);
    else if (!res.headersSent) tooLarge();
  });
  req.on('end', () => {
    if (res.headersSent) return;
    let body;
    try {
      body = JSON.parse((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8'));
    } catch {
      return fail(res, 400, 'invalid_body', 'Request body is not valid JSON');
    }
    const problem = newPetProblem(body);
    if (problem !== null) return fail(res, 400, 'invalid_body', problem);
    try {
      const { name, categoryId, status } = body;
      const id = Number(insertPet.run(name, categoryId, status ?? null).lastInsertRowid);
      reply(res, 201, { id, name, categoryId, status }, ['Location', `/v1/pets/${id}`]);
    } catch (error) {
      internalError(res, error);
    }
  });
}

function internalError(res, error) {
  console.error(error);
  if (res.headersSent) res.destroy();
  else fail(res, 500, 'internal_error', 'Internal server error');
}

// ------------------------------------------------------------------ routing
const PETS = '/v1/pets';

function route(req, res) {
  if (!hasValidKey(req.headers.authorization)) {
    req.resume();
    return fail(res, 401, 'unauthorized', 'Missing or invalid API key', ['WWW-Authenticate', 'Bearer']);
  }
  const [path, search = ''] = req.url.split('?', 2);
  if (path === PETS) {
    if (req.method === 'GET') return listPets(res, search);
    if (req.method === 'POST') return createPet(req, res);
    req.resume();
    return fail(res, 405, 'method_not_allowed', 'Method not allowed', ['Allow', 'GET, POST']);
  }
  req.resume();
  const petId = path.startsWith(`${PETS}/`) ? path.slice(PETS.length + 1) : '';
  if (petId === '' || petId.includes('/')) return fail(res, 404, 'not_found', 'Resource not found');
  if (req.method !== 'GET')
    return fail(res, 405, 'method_not_allowed', 'Method not allowed', ['Allow', 'GET']);
  getPet(res, petId);
}

const server = http.createServer((req, res) => {
  try {
    route(req, res);
  } catch (error) {
    internalError(res, error);
  }
});
server.listen(port, host, () =>
  console.log(`raw-node: http://${host}:${port}/v1 (database ${databasePath})`),
);

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close();
    db.close();
    process.exit(0);
  });
}
