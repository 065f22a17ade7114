/** Repeated slashes collapsed (`//rest//consumer/x` → `/rest/consumer/x`): the one path normaliser. */
export const collapseSlashes = (path: string): string => (path.includes('//') ? path.replace(/\/{2,}/g, '/') : path);
