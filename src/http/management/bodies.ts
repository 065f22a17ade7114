/** zod schemas of the management interface's JSON bodies (PascalCase, wire.md). */
import { z } from 'zod';
import type { CredentialAuthorizations, RecoveryOptions } from '../../config/model.js';
import { keyProblem, keySchema, nameSchema as name, refineWith, textProblem } from '../../config/names.js';
import { withKeys } from '../bodies.js';

const flag = z.boolean().nullish();

export const sentinelBody = withKeys(['Name', 'Credential'], z.object({ Name: name, Credential: name }));

export const instanceBody = withKeys(
  ['Name', 'PackageFile', 'Enable', 'Credential', 'AutoStart'],
  z.object({
    Name: name,
    PackageFile: z.string().max(256).superRefine(refineWith(textProblem)).nullish(),
    Enable: flag,
    Credential: name.nullish(),
    AutoStart: flag,
  }),
);

export const credentialBody = withKeys(
  ['Name', 'AccessKey', 'Enable', 'EnableControlHub', 'EnableManagementAPI', 'EnableDeveloperAccess'],
  z.object({
    Name: name,
    AccessKey: z.string().min(8, 'must be at least 8 characters').max(256).superRefine(refineWith(keyProblem)),
    Enable: flag,
    EnableControlHub: flag,
    EnableManagementAPI: flag,
    EnableDeveloperAccess: flag,
  }),
);

export const recoveryBody = withKeys(
  ['RestartAfterFailure', 'NumberOfRetry', 'ResetCounterAfterMinutes', 'RestartPackageAfterSeconds'],
  z.object({
    RestartAfterFailure: z.boolean().default(true),
    NumberOfRetry: z.number().int().min(0).max(1_000_000).default(3),
    ResetCounterAfterMinutes: z.number().int().min(0).max(1_000_000).default(15),
    RestartPackageAfterSeconds: z.number().int().min(0).max(1_000_000).default(30),
  }),
).transform((r): RecoveryOptions => ({
  restartAfterFailure: r.RestartAfterFailure,
  numberOfRetry: r.NumberOfRetry,
  resetCounterAfterMinutes: r.ResetCounterAfterMinutes,
  restartPackageAfterSeconds: r.RestartPackageAfterSeconds,
}));

export const groupsBody = z.array(name);

/** Setting keys follow names.ts's key rule; values become text (objects and arrays JSON) that XML can carry. */
export const settingsBody = z
  .record(
    z.string(),
    z.unknown().superRefine((v, ctx) => {
      if (v === undefined) return ctx.addIssue({ code: 'custom', message: 'is required' });
      const problem = textProblem(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  )
  .superRefine((record, ctx) => {
    for (const key of Object.keys(record)) {
      const problem = keyProblem(key);
      if (problem)
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `is refused: the setting key ${JSON.stringify(key)} ${problem}`,
        });
    }
  });

const authorization = z.enum(['Allow', 'Deny']);
const pattern = keySchema.default('*');
/** Rule ids are text (Constellation's `id="Paradox"`); a number is taken as its text. */
const ruleId = z.union([keySchema, z.number().int().min(0).transform(String)]).optional();
const ruleSet = <T extends z.ZodRawShape>(names: string[], rule: T) =>
  withKeys(
    ['DefaultAuthorization', 'Authorizations'],
    z.object({
      DefaultAuthorization: authorization.default('Allow'),
      Authorizations: z
        .array(
          withKeys(
            ['Id', 'Authorization', ...names],
            z.object({ Id: ruleId, Authorization: authorization.default('Allow'), ...rule }),
          ),
        )
        .default([]),
    }),
  ).default({ DefaultAuthorization: 'Allow', Authorizations: [] });

export const authorizationsBody = withKeys(
  ['StateObjects', 'Messages', 'Groups'],
  z.object({
    StateObjects: ruleSet(['SentinelName', 'PackageName', 'Name'], {
      SentinelName: pattern,
      PackageName: pattern,
      Name: pattern,
    }),
    Messages: ruleSet(['Scope', 'Args', 'MessageKey'], { Scope: pattern, Args: pattern, MessageKey: pattern }),
    Groups: ruleSet(['GroupName'], { GroupName: pattern }),
  }),
).transform((a): CredentialAuthorizations => ({
  stateObjects: {
    defaultAuthorization: a.StateObjects.DefaultAuthorization,
    rules: a.StateObjects.Authorizations.map((r, i) => ({
      id: r.Id ?? String(i + 1),
      authorization: r.Authorization,
      sentinelName: r.SentinelName,
      packageName: r.PackageName,
      name: r.Name,
    })),
  },
  messages: {
    defaultAuthorization: a.Messages.DefaultAuthorization,
    rules: a.Messages.Authorizations.map((r, i) => ({
      id: r.Id ?? String(i + 1),
      authorization: r.Authorization,
      scope: r.Scope,
      args: r.Args,
      messageKey: r.MessageKey,
    })),
  },
  groups: {
    defaultAuthorization: a.Groups.DefaultAuthorization,
    rules: a.Groups.Authorizations.map((r, i) => ({
      id: r.Id ?? String(i + 1),
      authorization: r.Authorization,
      groupName: r.GroupName,
    })),
  },
}));
