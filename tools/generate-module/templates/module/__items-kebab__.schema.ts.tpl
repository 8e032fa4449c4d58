import { ModuleSchema } from '../database/module-schema';
import { __Item__Entity } from './__item-kebab__.entity';
import { Create__Items____TIMESTAMP__ } from './migrations/__TIMESTAMP__-Create__Items__';

/** The tables of the __nouns__ module: add each new migration of `migrations/` here. */
export const __ITEMS___SCHEMA: ModuleSchema = {
  module: '__items-kebab__',
  entities: [__Item__Entity],
  migrations: [Create__Items____TIMESTAMP__],
};
