import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiException, invalidField } from '../../common/errors/api-exception';
import { Page } from '../../common/pagination/page';
import { Connections } from '../../database/connections';
import { ResourceStore, ResourceStores } from '../../database/resource-store';
import { Transactions } from '../../database/transactions';
import { UnitOfWork } from '../../database/unit-of-work';
import { AddressPolicy, checkEndpointUrl } from './address-policy';
import { NewWebhookEndpointDto, WebhookEndpointPatchDto } from './webhook-endpoint.dto';
import { EVENTS_ERRORS } from '../events.errors';
import { EVENTS_OPTIONS, EventsService } from '../events.service';
import { pruneBefore } from '../../database/retention';
import { newSigningSecret } from './signature';
import { DeliveryStatus, WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookEndpointEntity } from './webhook-endpoint.entity';

export const DEFAULT_SECRET_GRACE_MS = 86_400_000;

@Injectable()
export class WebhookEndpointsService {
  private readonly endpoints: ResourceStore<WebhookEndpointEntity>;

  constructor(
    @InjectRepository(WebhookEndpointEntity) repository: Repository<WebhookEndpointEntity>,
    stores: ResourceStores,
    @InjectRepository(WebhookDeliveryEntity) private readonly deliveries: Repository<WebhookDeliveryEntity>,
    @Inject(EVENTS_OPTIONS) private readonly policy: AddressPolicy,
    private readonly transactions: Transactions,
    events: EventsService,
  ) {
    this.endpoints = stores.of(repository, { mutable: true });
    events.alsoPrune((before) => pruneBefore(this.deliveries, 'createdAt', before));
  }

  /** The address as the policy allows it: a DNS lookup, never a connection; before a change, never in it. */
  async checkUrl(url: string): Promise<void> {
    const problem = await checkEndpointUrl(url, this.policy);
    if (problem !== undefined) throw invalidField('url', problem);
  }

  /** With a new signing secret; `checkUrl` first. */
  create(body: NewWebhookEndpointDto, work: UnitOfWork): Promise<WebhookEndpointEntity> {
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
      work,
    );
  }

  list(query: { limit: number; cursor?: string }): Promise<Page<WebhookEndpointEntity>> {
    return this.endpoints.page(query);
  }

  async get(id: number, work?: UnitOfWork): Promise<WebhookEndpointEntity> {
    return this.found(id, await this.endpoints.get(id, work));
  }

  /** A merge patch (`checkUrl` first for a new address). */
  async update(
    id: number,
    patch: WebhookEndpointPatchDto,
    ifMatch: (current: WebhookEndpointEntity) => void,
    work: UnitOfWork,
  ): Promise<WebhookEndpointEntity> {
    const changes = {
      url: patch.url,
      description: patch.description,
      eventTypes: patch.eventTypes?.join(' '),
      enabled: patch.enabled,
      ...(patch.enabled === true ? { disabledReason: null } : {}),
    };
    return this.found(id, await this.endpoints.update(id, changes, ifMatch, work));
  }

  async delete(id: number, ifMatch: (current: WebhookEndpointEntity) => void, work: UnitOfWork) {
    if (!(await this.endpoints.delete(id, ifMatch, work))) throw notFound(id);
  }

  /** A new secret; the current one keeps signing too, for `graceMs`. */
  async rotate(id: number, graceMs: number, work: UnitOfWork): Promise<WebhookEndpointEntity> {
    const rotated = await this.endpoints.update(
      id,
      (current) => ({
        secret: newSigningSecret(),
        previousSecret: current.secret,
        previousSecretExpiresAt: Date.now() + graceMs,
      }),
      () => undefined,
      work,
    );
    return this.found(id, rotated);
  }

  async disable(id: number, reason: string): Promise<void> {
    await this.transactions.run((work) =>
      this.endpoints.update(id, { enabled: false, disabledReason: reason }, () => undefined, work),
    );
  }

  async deliveriesOf(
    id: number,
    query: { limit: number; cursor?: string; status?: DeliveryStatus },
  ): Promise<Page<WebhookDeliveryEntity>> {
    await this.get(id);
    const where = [['endpointId', id] as const, ['status', query.status] as const];
    return Connections.of(this.deliveries.manager.connection).page(WebhookDeliveryEntity, where, {
      ...query,
      filter: query.status ?? null,
      filterName: 'status',
      descending: true,
    });
  }

  async resend(id: number, deliveryId: number, work: UnitOfWork): Promise<WebhookDeliveryEntity> {
    await this.get(id, work);
    const where = { id: deliveryId, endpointId: id };
    const delivery = await work.manager.findOneBy(WebhookDeliveryEntity, where);
    if (!delivery) throw new ApiException('not_found', `Endpoint ${id} has no delivery ${deliveryId}.`);
    if (delivery.status === 'pending') throw new ApiException(EVENTS_ERRORS.delivery_pending);
    const again = { status: 'pending' as const, tries: 0, nextAttemptAt: Date.now() };
    const { affected } = await work.manager.update(
      WebhookDeliveryEntity,
      { ...where, status: delivery.status },
      again,
    );
    if (affected !== 1) throw new ApiException(EVENTS_ERRORS.delivery_pending);
    work.audit('webhook-endpoints', id, 202);
    return { ...delivery, ...again };
  }

  private found(id: number, endpoint: WebhookEndpointEntity | null): WebhookEndpointEntity {
    if (!endpoint) throw notFound(id);
    return endpoint;
  }
}

const notFound = (id: number) => new ApiException('not_found', `No webhook endpoint has id ${id}.`);
