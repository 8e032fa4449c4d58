import {
  ArgumentsHost,
  BadRequestException,
  ForbiddenException,
  HttpException,
  Logger,
  NotFoundException,
  PayloadTooLargeException,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AllExceptionsFilter } from './all-exceptions.filter';
import { ApiException } from '../common/errors/api-exception';

interface FakeResponse {
  headersSent: boolean;
  status: jest.Mock;
  set: jest.Mock;
  json: jest.Mock;
  destroy: jest.Mock;
}

interface FakeRequest {
  method: string;
  path: string;
  route?: { path: string };
}

function fakeResponse(headersSent = false): FakeResponse {
  const response = { headersSent } as FakeResponse;
  response.status = jest.fn(() => response);
  response.set = jest.fn(() => response);
  response.json = jest.fn(() => response);
  response.destroy = jest.fn();
  return response;
}

function fakeHost(request: FakeRequest, response: FakeResponse): ArgumentsHost {
  return {
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => response }),
  } as unknown as ArgumentsHost;
}

const EXPRESS_APP = {
  router: {
    stack: [
      { name: 'jsonParser' },
      { route: { path: '/v1/pets', methods: { get: true, post: true } } },
      { route: { path: '/v1/pets/:petId', methods: { get: true } } },
      { route: { path: '/health', methods: { _all: true, get: true } } },
    ],
  },
};

function fakeAdapterHost(app: object = EXPRESS_APP): {
  adapterHost: HttpAdapterHost;
  getInstance: jest.Mock;
} {
  const getInstance = jest.fn(() => app);
  return { adapterHost: { httpAdapter: { getInstance } } as unknown as HttpAdapterHost, getInstance };
}

/** Runs the filter and returns what it wrote, in order. */
function written(exception: unknown, request: FakeRequest = { method: 'GET', path: '/v1/pets' }) {
  const response = fakeResponse();
  new AllExceptionsFilter(fakeAdapterHost().adapterHost).catch(exception, fakeHost(request, response));
  expect(response.status).toHaveBeenCalledTimes(1);
  expect(response.set).toHaveBeenCalledTimes(1);
  expect(response.json).toHaveBeenCalledTimes(1);
  expect(response.destroy).not.toHaveBeenCalled();
  return {
    status: response.status.mock.calls[0][0] as number,
    headers: response.set.mock.calls[0][0] as Record<string, string>,
    body: response.json.mock.calls[0][0] as unknown,
  };
}

describe('AllExceptionsFilter', () => {
  let loggerError: jest.SpyInstance;

  beforeEach(() => {
    loggerError = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('writes an ApiException with its code, message, status, details and headers', () => {
    const exception = new ApiException(
      'validation_failed',
      'Validation failed: name is required.',
      [{ field: 'name', message: 'name is required' }],
      { 'X-Extra': 'yes' },
    );

    expect(written(exception)).toEqual({
      status: 400,
      headers: { 'X-Extra': 'yes' },
      body: {
        code: 'validation_failed',
        message: 'Validation failed: name is required.',
        status: 400,
        details: [{ field: 'name', message: 'name is required' }],
      },
    });
    expect(loggerError).not.toHaveBeenCalled();
  });

  it('writes an ApiException with the default message of its code', () => {
    expect(written(new ApiException('rate_limited', undefined, undefined, { 'Retry-After': '30' }))).toEqual({
      status: 429,
      headers: { 'Retry-After': '30' },
      body: { code: 'rate_limited', message: 'Too many requests: retry later.', status: 429 },
    });
  });

  it('leaves out an empty details array', () => {
    expect(written(new ApiException('validation_failed', 'Validation failed.', []))).toEqual({
      status: 400,
      headers: {},
      body: { code: 'validation_failed', message: 'Validation failed.', status: 400 },
    });
  });

  it('writes the 401 of the guard with its WWW-Authenticate header', () => {
    const exception = new ApiException('unauthorized', 'The API key is not valid.', undefined, {
      'WWW-Authenticate': 'Bearer realm="petstore", error="invalid_token"',
    });

    expect(written(exception)).toEqual({
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer realm="petstore", error="invalid_token"' },
      body: { code: 'unauthorized', message: 'The API key is not valid.', status: 401 },
    });
  });

  it('keeps a not_found ApiException a 404 without looking at the routes', () => {
    const response = fakeResponse();
    const { adapterHost, getInstance } = fakeAdapterHost();

    new AllExceptionsFilter(adapterHost).catch(
      new ApiException('not_found', 'No animal has id 7.'),
      fakeHost({ method: 'DELETE', path: '/v1/pets' }, response),
    );

    expect(response.status).toHaveBeenCalledWith(404);
    expect(response.json).toHaveBeenCalledWith({
      code: 'not_found',
      message: 'No animal has id 7.',
      status: 404,
    });
    expect(getInstance).not.toHaveBeenCalled();
  });

  it.each([
    [
      new HttpException('You shall not pass: ForbiddenException at /srv/app.js', 403),
      403,
      'forbidden',
      'The request is not allowed.',
    ],
    [new ForbiddenException('internal detail'), 403, 'forbidden', 'The request is not allowed.'],
    [
      new BadRequestException(['name must be a string']),
      400,
      'validation_failed',
      'The request breaks a validation rule.',
    ],
    [new PayloadTooLargeException(), 413, 'payload_too_large', 'The request body is larger than the limit.'],
    [new HttpException('busy', 503), 503, 'service_unavailable', 'The service is temporarily unavailable.'],
    [new HttpException('bad gateway', 502), 500, 'internal_error', 'An unexpected error occurred.'],
    [new HttpException('teapot', 418), 400, 'bad_request', 'The request is malformed.'],
  ])(
    'writes a Nest HttpException (%s) with the code and default message of the table',
    (exception, status, code, message) => {
      expect(written(exception)).toEqual({ status, headers: {}, body: { code, message, status } });
      expect(loggerError).not.toHaveBeenCalled();
    },
  );

  it('answers an unexpected error 500 internal_error, logs its stack and reveals nothing of it', () => {
    const error = new Error('SELECT * FROM secret WHERE password = 1');

    const result = written(error, { method: 'POST', path: '/v1/pets', route: { path: '/v1/pets' } });

    expect(result).toEqual({
      status: 500,
      headers: {},
      body: { code: 'internal_error', message: 'An unexpected error occurred.', status: 500 },
    });
    expect(JSON.stringify(result)).not.toContain('SELECT');
    expect(JSON.stringify(result)).not.toContain('secret');
    expect(loggerError).toHaveBeenCalledWith(
      { reqId: undefined, err: { stack: error.stack } },
      'Unexpected error on POST /v1/pets',
    );
  });

  it.each([
    ['a string', 'SELECT * FROM secret', 'SELECT * FROM secret'],
    ['undefined', undefined, 'undefined'],
    ['null', null, 'null'],
    ['an object', { sql: 'SELECT * FROM secret' }, '[object Object]'],
  ])('answers a thrown non-error (%s) 500 internal_error', (_label, thrown, logged) => {
    const result = written(thrown, { method: 'GET', path: '/nowhere' });

    expect(result).toEqual({
      status: 500,
      headers: {},
      body: { code: 'internal_error', message: 'An unexpected error occurred.', status: 500 },
    });
    expect(JSON.stringify(result)).not.toContain('SELECT');
    expect(loggerError).toHaveBeenCalledWith(
      { reqId: undefined, err: { stack: logged } },
      'Unexpected error on GET unmatched path',
    );
  });

  describe('when no handler matched (NotFoundException)', () => {
    it('answers 405 with an Allow header for a known path and another method', () => {
      expect(
        written(new NotFoundException('Cannot DELETE /v1/pets'), { method: 'DELETE', path: '/v1/pets' }),
      ).toEqual({
        status: 405,
        headers: { Allow: 'GET, HEAD, POST' },
        body: {
          code: 'method_not_allowed',
          message: 'DELETE is not allowed here; allowed: GET, HEAD, POST.',
          status: 405,
        },
      });
    });

    it('matches route parameters', () => {
      expect(written(new NotFoundException(), { method: 'PUT', path: '/v1/pets/42' })).toEqual({
        status: 405,
        headers: { Allow: 'GET, HEAD' },
        body: {
          code: 'method_not_allowed',
          message: 'PUT is not allowed here; allowed: GET, HEAD.',
          status: 405,
        },
      });
    });

    it('does not list the internal _all method', () => {
      expect(written(new NotFoundException(), { method: 'POST', path: '/health' }).headers).toEqual({
        Allow: 'GET, HEAD',
      });
    });

    it.each(['/v1/nothing', '/v1/pets/42/owner', '/', '/v1'])(
      'answers 404 not_found for %s, a path no route has',
      (path) => {
        expect(written(new NotFoundException(`Cannot GET ${path}`), { method: 'GET', path })).toEqual({
          status: 404,
          headers: {},
          body: { code: 'not_found', message: 'The requested resource could not be found.', status: 404 },
        });
      },
    );

    it('answers 404 when the adapter has no router', () => {
      const response = fakeResponse();
      new AllExceptionsFilter(fakeAdapterHost({}).adapterHost).catch(
        new NotFoundException(),
        fakeHost({ method: 'DELETE', path: '/v1/pets' }, response),
      );

      expect(response.status).toHaveBeenCalledWith(404);
      expect(response.set).toHaveBeenCalledWith({});
      expect(response.json).toHaveBeenCalledWith({
        code: 'not_found',
        message: 'The requested resource could not be found.',
        status: 404,
      });
    });

    it('reads the routes of the adapter once', () => {
      const { adapterHost, getInstance } = fakeAdapterHost();
      const filter = new AllExceptionsFilter(adapterHost);

      filter.catch(new NotFoundException(), fakeHost({ method: 'DELETE', path: '/v1/pets' }, fakeResponse()));
      filter.catch(new NotFoundException(), fakeHost({ method: 'GET', path: '/v1/none' }, fakeResponse()));

      expect(getInstance).toHaveBeenCalledTimes(1);
    });
  });

  it('destroys the connection when the headers have already been sent', () => {
    const response = fakeResponse(true);

    new AllExceptionsFilter(fakeAdapterHost().adapterHost).catch(
      new ApiException('not_found'),
      fakeHost({ method: 'GET', path: '/v1/pets/1' }, response),
    );

    expect(response.destroy).toHaveBeenCalledTimes(1);
    expect(response.status).not.toHaveBeenCalled();
    expect(response.set).not.toHaveBeenCalled();
    expect(response.json).not.toHaveBeenCalled();
  });

  it('still logs an unexpected error raised after the headers were sent', () => {
    const response = fakeResponse(true);
    const error = new Error('stream failed');

    new AllExceptionsFilter(fakeAdapterHost().adapterHost).catch(
      error,
      fakeHost({ method: 'GET', path: '/v1/pets' }, response),
    );

    expect(response.destroy).toHaveBeenCalledTimes(1);
    expect(loggerError).toHaveBeenCalledWith(
      { reqId: undefined, err: { stack: error.stack } },
      'Unexpected error on GET unmatched path',
    );
  });
});
