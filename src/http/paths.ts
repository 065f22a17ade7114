/** Repeated slashes collapsed (`//rest//consumer/x` → `/rest/consumer/x`): the one path normaliser. */
export const collapseSlashes = (path: string): string => (path.includes('//') ? path.replace(/\/{2,}/g, '/') : path);

/** The listen prefix a request came under ('' at the root), recorded before the app sees the path without it. */
const prefixes = new WeakMap<object, string>();

export const recordPrefix = (req: object, prefix: string): void => {
  if (prefix !== '') prefixes.set(req, prefix);
};

/** The listen prefix of the request's address (`/constellation`), '' at the root. */
export const servedPrefix = (req: object): string => prefixes.get(req) ?? '';
