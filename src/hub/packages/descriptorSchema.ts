/**
 * The Package Descriptor (specification, "Package Descriptor"). Member `Type` of an entry:
 * 0 = enumeration value, 1 = property, 2 = MessageCallback parameter (what firmware sends; wire.md).
 */
import { z } from 'zod';

export const EntryType = { EnumValue: 0, Property: 1, Parameter: 2 } as const;

const entry = z.object({
  Name: z.string().min(1, 'must not be empty'),
  TypeName: z.string().min(1, 'must not be empty'),
  Description: z.string().nullish(),
  Type: z.union([z.literal(0), z.literal(1), z.literal(2)], {
    error: 'must be 0 (enumeration value), 1 (property) or 2 (MessageCallback parameter)',
  }),
  IsOptional: z.boolean().nullish(),
  DefaultValue: z.unknown().optional(),
});

const entriesOf = (expected: number, what: string) =>
  z
    .array(entry)
    .nullish()
    .superRefine((entries, ctx) => {
      entries?.forEach((e, i) => {
        if (e.Type !== expected) {
          ctx.addIssue({ code: 'custom', path: [i, 'Type'], message: `must be ${expected} for ${what}` });
        }
      });
    });

const typeDescription = z
  .object({
    TypeName: z.string().min(1, 'must not be empty'),
    TypeFullname: z.string().min(1, 'must not be empty'),
    Description: z.string().nullish(),
    IsGeneric: z.boolean().nullish(),
    IsArray: z.boolean().nullish(),
    GenericParameters: z.array(z.string()).nullish(),
    IsEnum: z.boolean().nullish(),
    EnumValues: entriesOf(EntryType.EnumValue, 'an enumeration value').nullish(),
    Properties: entriesOf(EntryType.Property, 'a property').nullish(),
  })
  .superRefine((t, ctx) => {
    if (t.IsEnum && !(t.EnumValues && t.EnumValues.length > 0)) {
      ctx.addIssue({
        code: 'custom',
        path: ['EnumValues'],
        message: 'must list the values of an enumeration (IsEnum is true)',
      });
    }
    if ((t.IsGeneric || t.IsArray) && !(t.GenericParameters && t.GenericParameters.length > 0)) {
      ctx.addIssue({
        code: 'custom',
        path: ['GenericParameters'],
        message: 'must name the type parameters of a generic or array type',
      });
    }
  });

const messageCallback = z.object({
  MessageKey: z.string().min(1, 'must not be empty'),
  Description: z.string().nullish(),
  ResponseType: z.string().nullish(),
  Parameters: entriesOf(EntryType.Parameter, 'a MessageCallback parameter'),
});

export const packageDescriptor = z.object({
  PackageName: z.string().min(1, 'must not be empty'),
  MessageCallbacks: z.array(messageCallback).nullish(),
  MessageCallbackTypes: z.array(typeDescription).nullish(),
  StateObjectTypes: z.array(typeDescription).nullish(),
});

export type PackageDescriptor = z.infer<typeof packageDescriptor>;
