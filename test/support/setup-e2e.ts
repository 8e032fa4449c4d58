import { dropTestSchemas } from './app';

// Every PostgreSQL schema a test file made is dropped when the file is done.
afterAll(dropTestSchemas);
