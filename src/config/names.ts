import { z } from 'zod';

/** Names of sentinels, packages, credentials, groups and settings travel in URL paths and friendly names. */
const MAX_NAME_LENGTH = 128;

/** Returns why `name` is not acceptable, or undefined when it is. */
export function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters`;
  if (name.includes('/')) return 'must not contain "/"';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'must not contain control characters';
  if (name !== name.trim()) return 'must not start or end with white space';
  return undefined;
}

/** A zod string that must be an acceptable name (bodies, manifests). */
export const nameSchema = z.string().superRefine((value, ctx) => {
  const problem = nameProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
