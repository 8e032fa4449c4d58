import {
  ArgumentMetadata,
  Injectable,
  PipeTransform,
  ValidationError,
  ValidationPipe,
  ValidationPipeOptions,
} from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { LRUCache } from 'lru-cache';
import { boundedLru } from '../bounded-lru';
import { invalidField, validationFailed } from '../errors/api-exception';

/** Deeper JSON than this is refused before any library walks it recursively. */
export const MAX_BODY_DEPTH = 32;
export const MAX_REMEMBERED_QUERIES = 1000;

/** Recursion stops at `limit`, so the check itself never goes deep. */
const depthExceeds = (value: unknown, limit: number): boolean =>
  typeof value === 'object' &&
  value !== null &&
  (limit === 0 || Object.values(value).some((child) => depthExceeds(child, limit - 1)));

const BASE_OPTIONS: ValidationPipeOptions = {
  transform: true,
  whitelist: true,
  transformOptions: { enableImplicitConversion: false },
  validationError: { target: false, value: false },
  stopAtFirstError: true,
  exceptionFactory: (errors: ValidationError[]) =>
    validationFailed(
      errors.map((error) => ({
        field: error.property,
        message: Object.values(error.constraints ?? {})[0] ?? `${error.property} is not valid`,
      })),
    ),
};

/** Unknown body properties are refused by name; unknown query parameters are ignored. */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  private readonly bodies = new ValidationPipe({ ...BASE_OPTIONS, forbidNonWhitelisted: true });
  private readonly queries = new ValidationPipe({ ...BASE_OPTIONS, forbidNonWhitelisted: false });
  /** A pure function of the DTO and strings, and the same few recur: each is validated once, then copied. */
  private readonly validQueries = new Map<unknown, LRUCache<string, object>>();
  private readonly declaredProperties = new Map<unknown, ReadonlySet<string>>();

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const dto = metadata.metatype;
    if (!dto || [String, Number, Boolean, Object, Array].includes(dto as never)) return value;
    if (metadata.type === 'query') return this.transformQuery(value, metadata);
    if (metadata.type !== 'body') return value;
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw invalidField('body', 'the request body must be a JSON object');
    let known = this.declaredProperties.get(dto);
    if (!known) {
      known = new Set(
        getMetadataStorage()
          .getTargetValidationMetadatas(dto, '', true, false)
          .map((meta) => meta.propertyName),
      );
      this.declaredProperties.set(dto, known);
    }
    const unknown = Object.keys(value).filter((key) => !known.has(key));
    if (unknown.length > 0)
      throw validationFailed(
        unknown.slice(0, 10).map((key) => ({
          field: key.slice(0, 64),
          message: `${key.slice(0, 64)} is not an allowed property`,
        })),
      );
    if (depthExceeds(value, MAX_BODY_DEPTH))
      throw invalidField('body', `the request body is nested deeper than ${MAX_BODY_DEPTH} levels`);
    return this.bodies.transform(value, metadata);
  }

  private async transformQuery(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    let remembered = this.validQueries.get(metadata.metatype);
    if (!remembered) {
      remembered = boundedLru<string, object>(MAX_REMEMBERED_QUERIES);
      this.validQueries.set(metadata.metatype, remembered);
    }
    const key = JSON.stringify(value) ?? '';
    let valid = remembered.get(key);
    if (!valid) {
      valid = (await this.queries.transform(value, metadata)) as object;
      remembered.set(key, valid);
    }
    return Object.assign(Object.create(Object.getPrototypeOf(valid) as object) as object, valid);
  }
}
