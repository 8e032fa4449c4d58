import { declareErrorCodes } from '../common/errors/error-codes';

export const AUTH_ERRORS = declareErrorCodes('auth', {
  api_key_revoked: {
    status: 409,
    message: 'The API key is revoked: it cannot change or be rotated.',
    when: 'a change or rotation of a revoked API key',
  },
});
