import { ModuleSchema } from '../database/module-schema';
import { ApiKeyEntity } from './api-key.entity';
import { CreateApiKeys1763863200000 } from './migrations/1763863200000-CreateApiKeys';

export const API_KEYS_SCHEMA: ModuleSchema = {
  module: 'api-keys',
  entities: [ApiKeyEntity],
  migrations: [CreateApiKeys1763863200000],
};
