/**
 * The shape of the XML configuration file as xmlToShape.ts hands it over (attributes prefixed `@_`,
 * repeated elements as arrays), validated with zod so that every complaint can name the element and
 * attribute at fault. Names, keys and values are not trimmed here: validate.ts applies names.ts's rules,
 * the same ones every management endpoint applies.
 */
import { z } from 'zod';

/** An empty element (`<sentinels/>`) parses as "": treat it as an element without children. */
const element = <S extends z.ZodRawShape>(shape: S) =>
  z.preprocess((v) => (v === '' || v === null ? {} : v), z.object(shape));

const list = <T extends z.ZodType>(item: T) => z.array(item).optional().default([]);

const bool = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return fallback;
      const lowered = v.trim().toLowerCase();
      if (lowered === 'true') return true;
      if (lowered === 'false') return false;
      ctx.addIssue({ code: 'custom', message: `expected "true" or "false", got "${v}"` });
      return z.NEVER;
    });

const wholeNumber = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return fallback;
      if (/^\s*\d{1,9}\s*$/.test(v)) return Number(v);
      ctx.addIssue({ code: 'custom', message: `expected a whole number, got "${v}"` });
      return z.NEVER;
    });

const authorizationWord = (fallback: 'Allow' | 'Deny') =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return fallback;
      const lowered = v.trim().toLowerCase();
      if (lowered === 'allow') return 'Allow' as const;
      if (lowered === 'deny') return 'Deny' as const;
      ctx.addIssue({ code: 'custom', message: `expected "Allow" or "Deny", got "${v}"` });
      return z.NEVER;
    });

const requiredText = z.string({ error: 'is required' }).min(1, 'must not be empty');
const optionalText = z.string().optional();
const pattern = z.string().optional().default('*');

export const recoveryOptionsXml = element({
  '@_restartAfterFailure': bool(true),
  '@_numberOfRetry': wholeNumber(3),
  '@_resetCounterAfterMinutes': wholeNumber(15),
  '@_restartPackageAfterSeconds': wholeNumber(30),
});

/** Text, as in Constellation's files (`id="Paradox"`); absent ids are numbered by position. */
const ruleId = z.string().optional();

const authorizationsXml = element({
  stateObjects: element({
    '@_defaultAuthorization': authorizationWord('Allow'),
    authorization: list(
      element({
        '@_id': ruleId,
        '@_authorization': authorizationWord('Allow'),
        '@_sentinelName': pattern,
        '@_packageName': pattern,
        '@_name': pattern,
      }),
    ),
  }).optional(),
  messages: element({
    '@_defaultAuthorization': authorizationWord('Allow'),
    authorization: list(
      element({
        '@_id': ruleId,
        '@_authorization': authorizationWord('Allow'),
        '@_scope': pattern,
        '@_args': pattern,
        '@_messageKey': pattern,
      }),
    ),
  }).optional(),
  groups: element({
    '@_defaultAuthorization': authorizationWord('Allow'),
    authorization: list(
      element({
        '@_id': ruleId,
        '@_authorization': authorizationWord('Allow'),
        '@_groupName': pattern,
      }),
    ),
  }).optional(),
});

const settingXml = element({
  '@_key': requiredText,
  '@_value': optionalText,
  content: optionalText,
});

const settingsXml = element({
  setting: list(settingXml),
  import: list(element({ settingGroup: list(element({ '@_groupName': requiredText })) })),
});

const packageXml = element({
  '@_name': requiredText,
  '@_enable': bool(true),
  '@_filename': optionalText,
  '@_credential': optionalText,
  '@_autostart': bool(true),
  settings: settingsXml.optional(),
  groups: element({ group: list(element({ '@_name': requiredText })) }).optional(),
  recoveryOptions: recoveryOptionsXml.optional(),
});

export const configurationXml = element({
  listenUris: element({ uri: list(element({ '@_listenUri': requiredText })) }).optional(),
  recoveryOptions: recoveryOptionsXml.optional(),
  credentials: element({
    credential: list(
      element({
        '@_name': requiredText,
        '@_accessKey': requiredText,
        '@_enable': bool(true),
        '@_enableControlHub': bool(false),
        '@_enableManagementAPI': bool(false),
        '@_enableDeveloperAccess': bool(false),
        authorizations: authorizationsXml.optional(),
      }),
    ),
  }).optional(),
  sentinels: element({
    sentinel: list(
      element({
        '@_name': requiredText,
        '@_credential': requiredText,
        packages: element({ package: list(packageXml) }).optional(),
      }),
    ),
  }).optional(),
  settingsGroups: element({
    group: list(element({ '@_name': requiredText, settings: settingsXml.optional() })),
  }).optional(),
});

export type SettingsXml = z.infer<typeof settingsXml>;
export type RecoveryOptionsXml = z.infer<typeof recoveryOptionsXml>;
