import { declareErrorCodes } from '../common/errors/error-codes';

export const AUTH_ERRORS = declareErrorCodes('auth', {
  api_key_revoked: {
    status: 409,
    message: 'The API key is revoked: it cannot change or be rotated.',
    when: 'a change or rotation of a revoked API key',
  },
  last_key_manager: {
    status: 409,
    message:
      'This is the last active API key that can manage keys: it keeps keys:manage, no expiry and its life.',
    when: 'revoking, expiring or narrowing the last active key that holds `keys:manage`',
  },
  api_key_changed: {
    status: 409,
    message: 'The API key changed while this request was changing it: read it again and retry.',
    when: 'a change, rotation or revocation of a key that another one made meanwhile',
  },
});
