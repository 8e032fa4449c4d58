import { Body, Controller, Headers, HttpCode, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiCallbacks, ApiOkResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ifMatch, setEtag } from '../../common/conditional-requests';
import { ApiErrors } from '../../common/openapi/api-errors.decorator';
import { etagHeaderDocs } from '../../common/openapi/headers';
import { ApiResource } from '../../common/openapi/api-resource.decorator';
import {
  CreateOperation,
  DeleteOperation,
  GetOperation,
  IdParam,
  ListOperation,
  Resource,
  UpdateOperation,
} from '../../common/openapi/operations';
import { setNextLink } from '../../common/pagination/next-link';
import { invalidField } from '../../common/errors/api-exception';
import { insufficientScope } from '../../common/errors/bearer-challenge';
import { RequiredScope, Vocabulary, VOCABULARY } from '../../common/scopes';
import { holds } from '../../auth/api-keys.service';
import { callerOf } from '../../auth/caller';
import { ApiIdParam } from '../../common/validation/id.pipe';
import { Transactions } from '../../database/transactions';
import { IdempotentRequests } from '../../idempotency/idempotent-requests';
import { EventDto } from '../dto/event.dto';
import {
  ListWebhookDeliveriesQueryDto,
  ListWebhookEndpointsQueryDto,
  NewWebhookEndpointDto,
  RotateWebhookSecretDto,
  WebhookDeliveryDto,
  WebhookEndpointDto,
  WebhookEndpointPatchDto,
  WebhookEndpointWithSecretDto,
} from './webhook-endpoint.dto';
import { EVENTS_ERRORS } from '../events.errors';
import { matchesType } from '../events.service';
import { WebhookEndpointEntity } from './webhook-endpoint.entity';
import { DEFAULT_SECRET_GRACE_MS, WebhookEndpointsService } from './webhook-endpoints.service';

const ENDPOINTS: Resource = {
  collection: 'webhook-endpoints',
  param: 'endpointId',
  noun: 'webhook endpoint',
};
const DELIVERY = ':endpointId/deliveries';
/** In its `Link` pattern, `collection` is a regular expression. */
const DELIVERIES: Resource = {
  collection: `${ENDPOINTS.collection}/[0-9]+/deliveries`,
  param: 'deliveryId',
  noun: 'delivery',
  nouns: 'deliveries',
};

/** Each type or pattern must match an event of the service: a typo is 400, never an endpoint that gets nothing. */
function knownEventTypes({ eventTypes }: Vocabulary, patterns: readonly string[] | undefined): void {
  const unknown = patterns?.find(
    (pattern) => ![...eventTypes.keys()].some((type) => matchesType(pattern, type)),
  );
  if (unknown !== undefined) throw invalidField('eventTypes', `${unknown} matches no event of this service`);
}

/** An endpoint gets only events that the key which made or last changed it can read (`pet.*`: `pets:read`). */
function mayReceive(req: Request, { eventTypes }: Vocabulary, patterns: readonly string[]): void {
  const held = callerOf(req)!.scopes;
  const lacking = [...eventTypes]
    .filter(([type, scope]) => patterns.some((pattern) => matchesType(pattern, type)) && !holds(held, scope))
    .map(([, scope]) => scope)[0];
  if (lacking !== undefined)
    throw insufficientScope(
      lacking,
      `The API key cannot have events sent that it may not read: they need the scope ${lacking}.`,
    );
}

@ApiResource(
  ENDPOINTS.collection,
  'Where events are delivered: a signed POST (Standard Webhooks: `webhook-id`, `webhook-timestamp`, ' +
    '`webhook-signature`) of each event whose type an endpoint takes, retried with backoff for about a ' +
    'day until a 2xx answers; a 410 turns the endpoint off. Addresses must be public and `https`. ' +
    'The signing secret is shown once, when the endpoint is made or its secret rotated.',
)
@RequiredScope('webhooks:manage')
@Controller(ENDPOINTS.collection)
export class WebhookEndpointsController {
  constructor(
    private readonly endpoints: WebhookEndpointsService,
    private readonly idempotent: IdempotentRequests,
    private readonly transactions: Transactions,
    @Inject(VOCABULARY) private readonly vocabulary: Vocabulary,
  ) {}

  /**
   * List webhook endpoints
   * @remarks In ascending id order; never a secret.
   */
  @ListOperation(WebhookEndpointDto, ENDPOINTS)
  async listWebhookEndpoints(
    @Query() query: ListWebhookEndpointsQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<WebhookEndpointDto[]> {
    const page = await this.endpoints.list(query);
    setNextLink(res, ENDPOINTS.collection, { limit: query.limit }, page.nextCursor);
    return page.items.map((endpoint) => WebhookEndpointDto.fromEntity(endpoint));
  }

  /**
   * Add a webhook endpoint
   * @remarks Its address is checked (a public address, `https` unless the service allows `http`),
   * never contacted. Its event types must match events of the service (400), of collections the
   * key can read (403: `pet.*` needs `pets:read`, `*` every one). The answer holds its secret, once.
   */
  @CreateOperation(WebhookEndpointWithSecretDto, ENDPOINTS, { versioned: true })
  @ApiCallbacks({
    name: 'event',
    callbackUrl: '{$request.body#/url}',
    method: 'post',
    requestBody: { type: EventDto },
    expectedResponse: {
      status: 200,
      description: 'Any 2xx: delivered. Anything else is retried; 410 turns the endpoint off.',
    },
  })
  async createWebhookEndpoint(
    @Body() body: NewWebhookEndpointDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<WebhookEndpointWithSecretDto> {
    knownEventTypes(this.vocabulary, body.eventTypes);
    await this.endpoints.checkUrl(body.url);
    mayReceive(req, this.vocabulary, body.eventTypes ?? ['*']);
    return this.idempotent.create(
      req,
      res,
      ENDPOINTS.collection,
      (work) => this.endpoints.create(body, work),
      (endpoint: WebhookEndpointEntity) => WebhookEndpointWithSecretDto.withSecret(setEtag(res, endpoint)),
    );
  }

  /**
   * Get a webhook endpoint
   * @remarks The endpoint with this id, never its secret.
   */
  @GetOperation(WebhookEndpointDto, ENDPOINTS, { versioned: true })
  async getWebhookEndpoint(
    @IdParam(ENDPOINTS) id: number,
    @Res({ passthrough: true }) res: Response,
  ): Promise<WebhookEndpointDto> {
    return WebhookEndpointDto.fromEntity(setEtag(res, await this.endpoints.get(id)));
  }

  /**
   * Change a webhook endpoint
   * @remarks A JSON merge patch (RFC 7396) of its address, description, event types or `enabled`;
   * `If-Match` must name its current `ETag`. The key must read the events it then gets (403).
   */
  @UpdateOperation(WebhookEndpointDto, WebhookEndpointPatchDto, ENDPOINTS)
  async updateWebhookEndpoint(
    @IdParam(ENDPOINTS) id: number,
    @Body() patch: WebhookEndpointPatchDto,
    @Headers('if-match') condition: string | undefined,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<WebhookEndpointDto> {
    knownEventTypes(this.vocabulary, patch.eventTypes);
    if (patch.url !== undefined) await this.endpoints.checkUrl(patch.url);
    const matches = ifMatch(condition, true);
    // Checked on the row the update locks: the endpoint's types, as the patch leaves them.
    const readable = (current: WebhookEndpointEntity) => {
      matches(current);
      mayReceive(req, this.vocabulary, patch.eventTypes ?? current.eventTypes.split(' '));
    };
    const updated = await this.transactions.run(
      (work) => this.endpoints.update(id, patch, readable, work),
      req,
    );
    return WebhookEndpointDto.fromEntity(setEtag(res, updated));
  }

  /**
   * Remove a webhook endpoint
   * @remarks Nothing more is delivered to it; its deliveries go with it.
   */
  @DeleteOperation(ENDPOINTS)
  async deleteWebhookEndpoint(
    @IdParam(ENDPOINTS) id: number,
    @Headers('if-match') condition: string | undefined,
    @Req() req: Request,
  ): Promise<void> {
    await this.transactions.run((work) => this.endpoints.delete(id, ifMatch(condition, false), work), req);
  }

  /**
   * Rotate a webhook endpoint's secret
   * @remarks A new signing secret, in the answer once. For `graceSeconds` (default a day, at most 7
   * days) deliveries carry a signature by each secret, so that the receiver can move to the new one.
   */
  @Post(':endpointId/rotate-secret')
  @HttpCode(200)
  @ApiIdParam(ENDPOINTS.param, ENDPOINTS.noun)
  @ApiOkResponse({
    type: WebhookEndpointWithSecretDto,
    description: 'The endpoint with its new secret, shown once.',
    headers: etagHeaderDocs(),
  })
  @ApiErrors([400, 401, 404, 413, 415, 429, 500, 503])
  async rotateWebhookSecret(
    @IdParam(ENDPOINTS) id: number,
    @Body() body: RotateWebhookSecretDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<WebhookEndpointWithSecretDto> {
    const graceMs = body.graceSeconds === undefined ? DEFAULT_SECRET_GRACE_MS : body.graceSeconds * 1000;
    const rotated = await this.transactions.run((work) => this.endpoints.rotate(id, graceMs, work), req);
    return WebhookEndpointWithSecretDto.withSecret(setEtag(res, rotated));
  }

  /**
   * List an endpoint's deliveries
   * @remarks Newest first, each with its last attempts (status, error, the start of the answer).
   */
  @ListOperation(WebhookDeliveryDto, DELIVERIES, ['status'], DELIVERY)
  @ApiIdParam(ENDPOINTS.param, ENDPOINTS.noun)
  async listWebhookDeliveries(
    @IdParam(ENDPOINTS) id: number,
    @Query() query: ListWebhookDeliveriesQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<WebhookDeliveryDto[]> {
    const page = await this.endpoints.deliveriesOf(id, query);
    const { limit, status } = query;
    setNextLink(res, `${ENDPOINTS.collection}/${id}/deliveries`, { limit, status }, page.nextCursor);
    return page.items.map((delivery) => WebhookDeliveryDto.fromEntity(delivery));
  }

  /**
   * Re-send a delivery
   * @remarks A delivery that failed (or succeeded) is attempted again, soon, then on the retry
   * schedule; a pending one is 409.
   */
  @Post(`${DELIVERY}/:deliveryId/resend`)
  @HttpCode(202)
  @ApiIdParam(ENDPOINTS.param, ENDPOINTS.noun)
  @ApiIdParam(DELIVERIES.param, DELIVERIES.noun)
  @ApiAcceptedResponse({ type: WebhookDeliveryDto, description: 'The delivery, pending again.' })
  @ApiErrors([400, 401, 404, EVENTS_ERRORS.delivery_pending, 429, 500, 503])
  async resendWebhookDelivery(
    @IdParam(ENDPOINTS) id: number,
    @IdParam(DELIVERIES) deliveryId: number,
    @Req() req: Request,
  ): Promise<WebhookDeliveryDto> {
    const resent = await this.transactions.run((work) => this.endpoints.resend(id, deliveryId, work), req);
    return WebhookDeliveryDto.fromEntity(resent);
  }
}
