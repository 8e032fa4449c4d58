/** An event as published: Standard Webhooks' payload shape. */
export interface PublishedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: object;
}
/** Where the outbox relay hands committed events, oldest first; resolves once every one is durably accepted. */
export interface EventSink {
  readonly name: string;
  publish(events: readonly PublishedEvent[]): Promise<void>;
  close(): Promise<void>;
}
