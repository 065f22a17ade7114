/** Where to listen: the configuration's listen URI, overridden by HUB_HOST / HUB_PORT. */
export interface ListenAddress {
  /** undefined: every interface. */
  host: string | undefined;
  port: number;
}

export function listenAddress(listenUris: string[], overrides: { host?: string; port?: number }): ListenAddress {
  let host: string | undefined;
  let port = 8088;
  const uri = listenUris[0];
  if (uri) {
    // `+` and `*` are the configuration's "every interface"; URL() rejects them as host names.
    const match = /^https?:\/\/([^/:]+|\[[^\]]+\])(?::(\d+))?/i.exec(uri.trim());
    if (!match) throw new Error(`listen URI '${uri}' is not of the form http://HOST:PORT/`);
    host = match[1] === '+' || match[1] === '*' ? undefined : match[1].replace(/^\[|\]$/g, '');
    if (match[2]) port = Number(match[2]);
  }
  return { host: overrides.host ?? host, port: overrides.port ?? port };
}
