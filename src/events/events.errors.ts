import { declareErrorCodes } from '../common/errors/error-codes';

export const EVENTS_ERRORS = declareErrorCodes('events', {
  delivery_pending: {
    status: 409,
    message: 'The delivery is still pending: it is retried on its own.',
    when: 'a re-send of a webhook delivery that is still pending',
  },
});
