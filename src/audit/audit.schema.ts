import { ModuleSchema } from '../database/module-schema';
import { AuditEventEntity } from './audit-event.entity';
import { CreateAuditEvents1796515200000 } from './migrations/1796515200000-CreateAuditEvents';
import { AddAuditSubjects1796688000000 } from './migrations/1796688000000-AddAuditSubjects';

export const AUDIT_SCHEMA: ModuleSchema = {
  module: 'audit',
  entities: [AuditEventEntity],
  migrations: [CreateAuditEvents1796515200000, AddAuditSubjects1796688000000],
};
