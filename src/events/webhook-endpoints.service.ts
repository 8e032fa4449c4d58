import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Request } from 'express';
import { FindOptionsWhere, LessThan, Repository } from 'typeorm';
import { AUDIT_LOG, AuditLog } from '../common/audit-context';
import { ApiException, validationFailed } from '../common/errors/api-exception';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor';
import { Page } from '../common/pagination/page';
import {
  ChangeContext,
  ResourceStore,
  ResourceStores,
  runTransaction,
  WithCreated,
} from '../database/resource-store';
import { AddressPolicy, checkEndpointUrl } from './address-policy';
import { NewWebhookEndpointDto, WebhookEndpointPatchDto } from './dto/webhook-endpoint.dto';
import { EVENTS_ERRORS } from './events.errors';
import { newSigningSecret } from './signature';
import { DeliveryStatus, WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookEndpointEntity } from './webhook-endpoint.entity';

export const ADDRESS_POLICY = Symbol('ADDRESS_POLICY');
export const DEFAULT_SECRET_GRACE_MS = 86_400_000;

@Injectable()
export class WebhookEndpointsService {
  private readonly endpoints: ResourceStore<WebhookEndpointEntity>;

  constructor(
    @InjectRepository(WebhookEndpointEntity) repository: Repository<WebhookEndpointEntity>,
    stores: ResourceStores,
    @InjectRepository(WebhookDeliveryEntity) private readonly deliveries: Repository<WebhookDeliveryEntity>,
    @Inject(ADDRESS_POLICY) private readonly policy: AddressPolicy,
    @Optional() @Inject(AUDIT_LOG) private readonly audit?: AuditLog,
  ) {
    this.endpoints = stores.of(repository, { mutable: true });
  }

  /** Checks the address (a DNS lookup, never a connection); the secret is made here. */
  async create(body: NewWebhookEndpointDto, inTransaction?: WithCreated<WebhookEndpointEntity>) {
    await this.checkUrl(body.url);
    return this.endpoints.create(
      {
        url: body.url,
        description: body.description ?? null,
        eventTypes: (body.eventTypes ?? ['*']).join(' '),
        enabled: body.enabled ?? true,
        disabledReason: null,
        secret: newSigningSecret(),
        previousSecret: null,
        previousSecretExpiresAt: null,
        createdAt: Date.now(),
        version: 1,
      },
      inTransaction,
    );
  }

  list(query: { limit: number; cursor?: string }): Promise<Page<WebhookEndpointEntity>> {
    return this.endpoints.page(query);
  }

  async get(id: number): Promise<WebhookEndpointEntity> {
    return this.found(id, await this.endpoints.get(id));
  }

  async update(
    id: number,
    patch: WebhookEndpointPatchDto,
    ifMatch: (current: WebhookEndpointEntity) => void,
    context: ChangeContext,
  ): Promise<WebhookEndpointEntity> {
    if (patch.url !== undefined) await this.checkUrl(patch.url);
    const changes = {
      url: patch.url,
      description: patch.description,
      eventTypes: patch.eventTypes?.join(' '),
      enabled: patch.enabled,
      ...(patch.enabled === true ? { disabledReason: null } : {}),
    };
    return this.found(id, await this.endpoints.update(id, changes, ifMatch, context));
  }

  async delete(id: number, ifMatch: (current: WebhookEndpointEntity) => void, context: ChangeContext) {
    if (!(await this.endpoints.delete(id, ifMatch, context))) throw notFound(id);
  }

  /** A new secret; the current one keeps signing too, for `graceMs`. */
  async rotate(id: number, graceMs: number, context: ChangeContext): Promise<WebhookEndpointEntity> {
    for (;;) {
      const current = await this.get(id);
      const changes = {
        secret: newSigningSecret(),
        previousSecret: current.secret,
        previousSecretExpiresAt: Date.now() + graceMs,
      };
      const unchanged = (row: WebhookEndpointEntity) => {
        if (row.secret !== current.secret) throw new RotatedMeanwhile();
      };
      const rotated = await this.endpoints.update(id, changes, unchanged, context).catch((error: unknown) => {
        if (error instanceof RotatedMeanwhile) return undefined;
        throw error;
      });
      if (rotated !== undefined) return this.found(id, rotated);
    }
  }

  async disable(id: number, reason: string): Promise<void> {
    await this.endpoints.update(id, { enabled: false, disabledReason: reason }, () => undefined);
  }

  async deliveriesOf(
    id: number,
    query: { limit: number; cursor?: string; status?: DeliveryStatus },
  ): Promise<Page<WebhookDeliveryEntity>> {
    await this.get(id);
    const filter = query.status ?? null;
    const beforeId = query.cursor === undefined ? 0 : decodeCursor(query.cursor, filter, 'status').afterId;
    const where: FindOptionsWhere<WebhookDeliveryEntity> = { endpointId: id };
    if (beforeId > 0) where.id = LessThan(beforeId);
    if (query.status) where.status = query.status;
    const rows = await this.deliveries.find({ where, order: { id: 'DESC' }, take: query.limit + 1 });
    if (rows.length <= query.limit) return { items: rows };
    const items = rows.slice(0, query.limit);
    return { items, nextCursor: encodeCursor({ afterId: items[items.length - 1].id, filter }) };
  }

  async resend(id: number, deliveryId: number, request: Request): Promise<WebhookDeliveryEntity> {
    await this.get(id);
    return runTransaction(this.deliveries.manager.connection, async (transaction) => {
      const where = { id: deliveryId, endpointId: id };
      const delivery = await transaction.findOneBy(WebhookDeliveryEntity, where);
      if (!delivery) throw new ApiException('not_found', `Endpoint ${id} has no delivery ${deliveryId}.`);
      if (delivery.status === 'pending') throw new ApiException(EVENTS_ERRORS.delivery_pending);
      const again = { status: 'pending' as const, tries: 0, nextAttemptAt: Date.now() };
      const { affected } = await transaction.update(
        WebhookDeliveryEntity,
        { ...where, status: delivery.status },
        again,
      );
      if (affected !== 1) throw new ApiException(EVENTS_ERRORS.delivery_pending);
      await this.audit?.record(transaction, [
        { request, resource: 'webhook-endpoints', resourceId: id, outcome: 202 },
      ]);
      return { ...delivery, ...again };
    });
  }

  private async checkUrl(url: string): Promise<void> {
    const problem = await checkEndpointUrl(url, this.policy);
    if (problem !== undefined) throw validationFailed([{ field: 'url', message: problem }]);
  }

  private found(id: number, endpoint: WebhookEndpointEntity | null): WebhookEndpointEntity {
    if (!endpoint) throw notFound(id);
    return endpoint;
  }
}

class RotatedMeanwhile extends Error {}

const notFound = (id: number) => new ApiException('not_found', `No webhook endpoint has id ${id}.`);
