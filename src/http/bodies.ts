/** zod schemas of the JSON bodies of the consumer and virtual package interfaces. */
import { z } from 'zod';
import { hubError } from '../errors.js';
import { MAX_TYPE_LENGTH, requestName } from '../hub/access/requestNames.js';

/** ASP.NET-era clients vary the case of JSON keys: map them onto the canonical names. */
export function canonicalKeys(value: unknown, names: readonly string[]): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const byLower = new Map(names.map((n) => [n.toLowerCase(), n]));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [byLower.get(k.toLowerCase()) ?? k, v]));
}

/** `schema` over a body whose keys were first mapped onto `names` (case-insensitively). */
export const withKeys = <T extends z.ZodType>(names: readonly string[], schema: T) =>
  z.preprocess((v) => canonicalKeys(v, names), schema);

const scopeSchema = withKeys(
  ['Scope', 'Type', 'Args', 'SagaId'],
  z.object({
    Scope: z.union([z.string(), z.number()]).optional(),
    Type: z.union([z.string(), z.number()]).optional(),
    Args: z.array(requestName()).max(256).nullish(),
    SagaId: requestName().nullish(),
  }),
);

/** `{Scope: {Scope|Type, Args, SagaId}, Key, Data}`: either scope-type key on both interfaces. */
export const sendMessageBody = withKeys(
  ['Scope', 'Key', 'Data'],
  z.object({
    Scope: scopeSchema,
    Key: requestName().min(1, 'must not be empty'),
    Data: z.unknown().optional(),
  }),
);

export const pushStateObjectBody = withKeys(
  ['Name', 'Value', 'Type', 'Lifetime', 'Metadatas'],
  z.object({
    Name: requestName().min(1, 'must not be empty'),
    Value: z.unknown().refine((v) => v !== undefined, 'is required'),
    Type: requestName(MAX_TYPE_LENGTH).nullish(),
    Lifetime: z.number().int('must be a whole number of seconds').min(0, 'must not be negative').nullish(),
    // The specification says string values, but the Arduino library's own example sends
    // `"Metadatas":{"ChipId":10976213}`: numbers and booleans are taken and kept as their text.
    Metadatas: z
      .record(
        requestName(256),
        z
          .union([z.string(), z.number(), z.boolean()], {
            error: 'must be a string, a number or a boolean (not null, an array or an object)',
          })
          .transform(String),
      )
      .nullish(),
  }),
);

/** Parses a body with `schema`, or answers 400 naming the first field at fault. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue.path.length ? issue.path.map(String).join('.') : '(body)';
  throw hubError('InvalidBody', { field, problem: plainly(issue) }, `Field: ${field}`);
}

const KINDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
};

/** zod's own wording ("Too big: expected string to have <=256 characters") said as the hub says things. */
function plainly(issue: z.core.$ZodIssue): string {
  if (!/^(Invalid input|Too big|Too small)/.test(issue.message)) return issue.message; // the schema's own words
  const unit = (origin: string) => (origin === 'string' ? ' characters' : origin === 'array' ? ' items' : '');
  switch (issue.code) {
    case 'invalid_type':
      return issue.message.endsWith('received undefined')
        ? 'is required'
        : `must be ${KINDS[issue.expected] ?? issue.expected}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}${unit(issue.origin)}`;
    case 'too_small':
      return issue.origin === 'string' && Number(issue.minimum) === 1
        ? 'must not be empty'
        : `must be at least ${String(issue.minimum)}${unit(issue.origin)}`;
    default:
      return issue.message;
  }
}
