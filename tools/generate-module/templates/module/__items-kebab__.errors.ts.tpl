// @if references
import { declareErrorCodes } from '../common/errors/error-codes';

/**
 * The error codes of the __nouns__ module: they join the service's catalogue (the exception
 * filter, `@ApiErrors`, the OpenAPI document, docs/api.md after `npm run openapi:export`).
 */
export const __ITEMS___ERRORS = declareErrorCodes('__items-kebab__', {
  // @each reference
  __ref_code__: {
    status: 422,
    message: '`__ref__Id` names no __ref__.',
    when: 'the `__ref__Id` of __a_noun__ names no __ref__',
  },
  // @end
});
// @end
