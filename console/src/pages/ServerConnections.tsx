import { Time } from '../components';
import type { SignalRConnection } from '../types';

const TRANSPORTS: Record<string, string> = {
  webSockets: 'WebSockets',
  serverSentEvents: 'server-sent events',
  longPolling: 'long polling',
};

/**
 * The SignalR connections (Constellation's pages and packages) held by the process that served the
 * page, from the same answer as its cards (`management/server/status`); other processes' are not listed.
 */
export function ServerConnections({ connections }: { connections: SignalRConnection[] }) {
  return (
    <section aria-labelledby="connections-title">
      <h2 id="connections-title">SignalR connections of this process</h2>
      {connections.length === 0 ? (
        <p class="muted" aria-label="No SignalR connections">
          No SignalR connection to this process now.
        </p>
      ) : (
        <div class="table-wrap">
          <table class="stack" aria-label="SignalR connections">
            <thead>
              <tr>
                <th scope="col">Who</th>
                <th scope="col">Credential</th>
                <th scope="col">Hubs</th>
                <th scope="col">Transport</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {connections.map((c) => (
                <tr key={c.Id}>
                  <th scope="row">{c.Who}</th>
                  <td data-label="Credential">{c.Credential}</td>
                  <td data-label="Hubs">{c.Hubs.join(', ')}</td>
                  <td data-label="Transport">
                    {c.Transport ? (TRANSPORTS[c.Transport] ?? c.Transport) : <span class="muted">connecting</span>}
                  </td>
                  <td data-label="Since">
                    <Time iso={c.Since} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="muted small">
        Only the connections this process holds: behind a load balancer, each process lists its own. Refreshed every 5
        s.
      </p>
    </section>
  );
}
