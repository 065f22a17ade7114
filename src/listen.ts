/**
 * Where to listen: every `listenUri` of the configuration (Constellation's http.sys syntax: `+` or `*`
 * for every interface, an optional path prefix), or the one address HUB_HOST / HUB_PORT give.
 */

export interface ListenAddress {
  protocol: 'http' | 'https';
  /** undefined: every interface. */
  host: string | undefined;
  port: number;
  /** '' or a prefix such as '/constellation' (no trailing slash) under which `/rest/…` is served. */
  prefix: string;
  /** The URI as the configuration wrote it. */
  uri: string;
}

/** Parses one listen URI; throws an Error saying what is wrong with it. */
export function parseListenUri(uri: string): ListenAddress {
  // `+` and `*` are the configuration's "every interface"; URL() rejects them as host names.
  const match = /^(https?):\/\/(\+|\*|\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?(\/[^?#\s]*)?$/i.exec(uri);
  if (!match)
    throw new Error(
      `"${uri}" is not of the form http://HOST:PORT/ or https://HOST:PORT/PATH/ (HOST may be + or * for every interface)`,
    );
  const protocol = match[1].toLowerCase() as 'http' | 'https';
  const port = match[3] ? Number(match[3]) : protocol === 'https' ? 443 : 80;
  if (port < 1 || port > 65535) throw new Error(`"${uri}": port ${port} is out of range`);
  const rawHost = match[2];
  const host = rawHost === '+' || rawHost === '*' ? undefined : rawHost.replace(/^\[|\]$/g, '');
  let prefix = match[4] ?? '';
  prefix = prefix.replace(/\/+$/, '');
  if (prefix && !/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+$/.test(prefix))
    throw new Error(`"${uri}": the path "${match[4]}" is not a plain path prefix`);
  return { protocol, host, port, prefix, uri };
}

/**
 * The addresses to serve. With HUB_HOST or HUB_PORT set, only one: the first listen URI's scheme and
 * path prefix on the given host/port (tests, containers); the other URIs are not served then.
 */
export function listenAddresses(listenUris: string[], overrides: { host?: string; port?: number }): ListenAddress[] {
  const parsed = listenUris.length ? listenUris.map(parseListenUri) : [parseListenUri('http://+:8088/')];
  const schemes = new Map<string, ListenAddress>();
  for (const a of parsed) {
    const other = schemes.get(`${a.host ?? '*'}:${a.port}`);
    if (other && other.protocol !== a.protocol)
      throw new Error(`"${other.uri}" and "${a.uri}" share a port with different schemes`);
    schemes.set(`${a.host ?? '*'}:${a.port}`, a);
  }
  if (overrides.host === undefined && overrides.port === undefined) {
    const seen = new Set<string>();
    return parsed.filter((a) => {
      // Several prefixes on one port share one server (createHub groups them); exact repeats are dropped.
      const key = `${a.protocol}:${a.host ?? '*'}:${a.port}${a.prefix}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
  const first = parsed[0];
  return [{ ...first, host: overrides.host ?? first.host, port: overrides.port ?? first.port }];
}
