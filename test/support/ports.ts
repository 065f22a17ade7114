/**
 * Ports for servers the tests start themselves.
 */
import fs from 'node:fs';
import net from 'node:net';

/** The lowest port of the kernel's range for outgoing connections (32768 by default on Linux). */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (low > 0) return low;
  } catch {
    // not Linux: the usual range
  }
  return 32768;
}

/** Whether 127.0.0.1:`port` can be listened on now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free port for a server a test starts, stops and starts again on the same number (a hub process
 * behind nginx, a PostgreSQL cluster): below the kernel's ephemeral range, so that no outgoing
 * connection (of any test's process: vitest runs files in parallel) is given it between the check and
 * the server's own bind, or while the server is down (a port the kernel picks for `listen(0)` is in it).
 */
export async function stablePort(): Promise<number> {
  const low = ephemeralLow();
  const from = Math.min(10_000, low - 1000);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = from + Math.floor(Math.random() * (low - from));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port below ${low} after 100 tries`);
}
