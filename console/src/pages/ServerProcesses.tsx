import { Num, Time } from '../components';
import type { HubProcess } from '../types';

/** The processes answering now (their figures are as of their last heartbeat, the serving one's now). */
export function allProcesses(processes: HubProcess[]) {
  const alive = processes.filter((p) => p.Alive);
  const total = (figure: (p: HubProcess) => number) => alive.reduce((sum, p) => sum + figure(p), 0);
  return {
    alive: alive.length,
    listed: processes.length,
    waitingLongPolls: total((p) => p.WaitingLongPolls),
  };
}

/** Where a process is reached, then its host and pid (which tell apart processes behind one address). */
export function processName(p: HubProcess): string {
  return `${p.Addresses.length ? `${p.Addresses.join(', ')} — ` : ''}${p.Host} pid ${p.Pid}`;
}

/**
 * The hub processes sharing the database, from the same answer as the page's cards
 * (`management/server/status`): on SQLite the one process, on PostgreSQL each process that heartbeats
 * into the database, each with its own figures; the one that answered is marked.
 */
export function ServerProcesses({ processes }: { processes: HubProcess[] }) {
  return (
    <section aria-labelledby="processes-title">
      <h2 id="processes-title">Processes</h2>
      <div class="table-wrap">
        <table class="stack" aria-label="Hub processes">
          <thead>
            <tr>
              <th scope="col">Process</th>
              <th scope="col">State</th>
              <th scope="col">Version</th>
              <th scope="col">Waiting long-polls</th>
              <th scope="col">Requests served</th>
              <th scope="col">Refused authentications</th>
              <th scope="col">Started</th>
              <th scope="col">Last heartbeat</th>
            </tr>
          </thead>
          <tbody>
            {processes.map((p) => (
              <tr key={p.Id}>
                <th scope="row">
                  {p.Addresses.map((address) => (
                    <code key={address} class="address">
                      {address}
                    </code>
                  ))}
                  <span class="muted small">
                    {' '}
                    {p.Host} pid {p.Pid}
                  </span>
                  {p.Self ? <span class="badge">serving this page</span> : null}
                </th>
                <td data-label="State">
                  <span class={p.Alive ? 'state ok' : 'state off'}>{p.Alive ? '● alive' : '○ not answering'}</span>
                </td>
                <td data-label="Version">{p.Version}</td>
                <td data-label="Waiting long-polls">
                  <Num value={p.WaitingLongPolls} />
                </td>
                <td data-label="Requests served">
                  <Num value={p.RequestsTotal} />
                </td>
                <td data-label="Refused authentications">
                  <Num value={p.AuthFailures} />
                </td>
                <td data-label="Started">
                  <Time iso={p.StartedAt} />
                </td>
                <td data-label="Last heartbeat">
                  <Time iso={p.LastHeartbeat} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="muted small">
        Each process writes its row every 5 s; one that stops writing shows as not answering after 15 s and leaves the
        list after a minute (HUB_PROCESS_FORGET_MS). Refreshed every 5 s.
      </p>
    </section>
  );
}
