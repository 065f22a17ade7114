/**
 * What the command line says when PostgreSQL (HUB_DATABASE_URL) cannot be used: what failed, where
 * (host:port/database, never the password) and what to do, instead of the driver's bare message
 * (`getaddrinfo ENOTFOUND nowhere`), whichever step met it first (a start's migrations, `hub migrate`,
 * `hub config export`).
 */

/** `url` with its password replaced by `***`. */
export const redactedUrl = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

interface Place {
  host: string;
  port: string;
  database: string;
  user: string;
}

function placeOf(url: string): Place | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const user = decodeURIComponent(parsed.username) || process.env.PGUSER || process.env.USER || 'postgres';
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || parsed.searchParams.get('host') || 'localhost',
    port: parsed.port || '5432',
    database: decodeURIComponent(parsed.pathname.slice(1)) || user,
    user,
  };
}

/** The driver's error and its causes, outermost first (a failed migration wraps what PostgreSQL said). */
function* causes(error: unknown): Generator<Error & { code?: string }> {
  for (let e = error; e instanceof Error; e = e.cause) yield e as Error & { code?: string };
}

/** Why `url` could not be used, in one sentence a user can act on; undefined when `error` is no such problem. */
export function postgresProblem(error: unknown, url: string): string | undefined {
  const place = placeOf(url);
  if (!place) return undefined;
  const { host, port, database, user } = place;
  const where = `${host}:${port}/${database}`;
  const inUrl = `HUB_DATABASE_URL (${redactedUrl(url)})`;
  for (const cause of causes(error)) {
    const said = cause.message || cause.code || String(cause);
    switch (cause.code) {
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `cannot reach PostgreSQL at ${where}: the host name "${host}" is not known (${said}). Check the host in ${inUrl}.`;
      case 'ECONNREFUSED':
        return `cannot reach PostgreSQL at ${where}: nothing accepts connections on ${host} port ${port} (${said}). Start PostgreSQL, or check the host and port in ${inUrl}.`;
      case 'ETIMEDOUT':
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
        return `cannot reach PostgreSQL at ${where}: ${said}. Check the host and port in ${inUrl}, and that no firewall is in the way.`;
      case '3D000':
        return `PostgreSQL at ${host}:${port} has no database "${database}" (${said}). Create it (createdb -h ${host} -p ${port} -U ${user} ${database}), or fix the database name in ${inUrl}.`;
      case '28000':
        return /pg_hba/.test(said)
          ? `PostgreSQL at ${where} refused the connection of user "${user}" (${said}). Allow it with a line in pg_hba.conf, or use another user in ${inUrl}.`
          : `PostgreSQL at ${where} refused user "${user}" (${said}). Create the role (createuser -h ${host} -p ${port} ${user}), or fix the user in ${inUrl}.`;
      case '28P01':
        return `PostgreSQL at ${where} refused the password of user "${user}" (${said}). Fix the password in ${inUrl}.`;
      case '57P03':
        return `PostgreSQL at ${where} does not accept connections yet (${said}). Start again once it is up.`;
      case '42501':
        return `user "${user}" may not create the hub's tables in ${where} (${said}). Make it the database's owner (createdb -O ${user} …), or grant it CREATE on the schema public.`;
    }
    if (/timeout/i.test(said) && /connect/i.test(said))
      return `cannot reach PostgreSQL at ${where}: no answer (${said}). Check the host and port in ${inUrl}, and that no firewall is in the way.`;
  }
  return undefined;
}
