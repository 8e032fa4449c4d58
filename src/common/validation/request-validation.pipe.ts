import {
  ArgumentMetadata,
  Injectable,
  PipeTransform,
  ValidationError,
  ValidationPipe,
  ValidationPipeOptions,
} from '@nestjs/common';
import { TransformationType } from 'class-transformer';
import { getMetadataStorage, ValidationArguments, ValidationTypes } from 'class-validator';
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

// class-transformer's decorators, which it keeps out of its public API.
const { defaultMetadataStorage } =
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('class-transformer/cjs/storage') as typeof import('class-transformer/types/storage');

type Dto = new () => object;

/** A property's rules: the conditions under which it is checked (`ValidateIf`), and its checks. */
interface Rule {
  property: string;
  when: Array<(object: object, value: unknown) => boolean>;
  checks: Array<{ validate: (value: unknown, args: ValidationArguments) => unknown; constraints: unknown[] }>;
}

/**
 * The DTO's rules where each is a plain synchronous check class-validator would run, and
 * class-transformer would copy the body as it is; else null (another kind of rule, groups, `each`,
 * a transform).
 */
function plainRules(dto: Dto): Rule[] | null {
  const validators = getMetadataStorage();
  const metadatas = validators.getTargetValidationMetadatas(dto, '', false, false);
  if (metadatas.length === 0 || defaultMetadataStorage.getStrategy(dto) !== 'none') return null;
  const rules = new Map<string, Rule>();
  for (const metadata of metadatas) {
    const { propertyName: property, type } = metadata;
    if (metadata.each || metadata.always || (metadata.groups?.length ?? 0) > 0) return null;
    if (
      defaultMetadataStorage.findTypeMetadata(dto, property) ||
      defaultMetadataStorage.findExposeMetadata(dto, property) ||
      defaultMetadataStorage.findExcludeMetadata(dto, property) ||
      defaultMetadataStorage.findTransformMetadatas(dto, property, TransformationType.PLAIN_TO_CLASS).length >
        0
    )
      return null;
    let rule = rules.get(property);
    if (!rule) rules.set(property, (rule = { property, when: [], checks: [] }));
    if (type === ValidationTypes.CONDITIONAL_VALIDATION)
      rule.when.push(metadata.constraints[0] as Rule['when'][number]);
    else if (type === ValidationTypes.CUSTOM_VALIDATION || type === ValidationTypes.IS_DEFINED) {
      for (const constraint of validators.getTargetValidatorConstraints(metadata.constraintCls)) {
        if (constraint.async) return null;
        rule.checks.push({
          validate: (value, args) => constraint.instance.validate(value, args),
          constraints: metadata.constraints,
        });
      }
    } else if (type !== ValidationTypes.WHITELIST) return null;
  }
  return [...rules.values()];
}

/** Unknown body properties are refused by name; unknown query parameters are ignored. */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  private readonly bodies = new ValidationPipe({ ...BASE_OPTIONS, forbidNonWhitelisted: true });
  private readonly queries = new ValidationPipe({ ...BASE_OPTIONS, forbidNonWhitelisted: false });
  /** A pure function of the DTO and strings, and the same few recur: each is validated once, then copied. */
  private readonly validQueries = new Map<unknown, LRUCache<string, object>>();
  private readonly declaredProperties = new Map<unknown, ReadonlySet<string>>();
  private readonly bodyRules = new Map<unknown, Rule[] | null>();

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
    return (
      this.passing(dto as Dto, value as Record<string, unknown>) ?? this.bodies.transform(value, metadata)
    );
  }

  /**
   * The DTO made from a body of plain values that passes every rule, as ValidationPipe would make
   * it, at a fraction of its cost; undefined for any other body, which ValidationPipe then judges
   * and words.
   */
  private passing(dto: Dto, value: Record<string, unknown>): object | undefined {
    let rules = this.bodyRules.get(dto);
    if (rules === undefined) this.bodyRules.set(dto, (rules = plainRules(dto)));
    if (rules === null) return undefined;
    for (const key in value) if (typeof value[key] === 'object' && value[key] !== null) return undefined;
    const object = Object.assign(new dto(), value) as Record<string, unknown>;
    for (const { property, when, checks } of rules) {
      const current = object[property];
      if (!when.every((applies) => applies(object, current))) continue;
      for (const { validate, constraints } of checks) {
        const args = { targetName: dto.name, property, object, value: current, constraints };
        if (validate(current, args) !== true) return undefined;
      }
    }
    return object;
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
