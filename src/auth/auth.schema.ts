import { ModuleSchema } from '../database/module-schema';
import { ApiKeyEntity } from './api-key.entity';
import { CreateApiKeys1763863200000 } from './migrations/1763863200000-CreateApiKeys';
import { AddApiKeyScopes1796428800000 } from './migrations/1796428800000-AddApiKeyScopes';

export const AUTH_SCHEMA: ModuleSchema = {
  module: 'auth',
  entities: [ApiKeyEntity],
  migrations: [CreateApiKeys1763863200000, AddApiKeyScopes1796428800000],
};
