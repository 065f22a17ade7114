import { useEffect, useState } from 'preact/hooks';
import { management } from '../api';
import { ErrorAlert, Num, Time, useLoad } from '../components';
import type { HubProcess } from '../types';

const REFRESH_MS = 5000;

/**
 * The hub processes sharing the database (`management/server/processes`), refreshed every 5 s: on
 * SQLite the one process, on PostgreSQL each process that heartbeats into the database.
 */
export function ServerProcesses() {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  const list = useLoad(() => management<{ Processes: HubProcess[] }>('server/processes'), [tick]);
  const processes = list.data?.Processes;
  return (
    <section aria-labelledby="processes-title">
      <h2 id="processes-title">Processes</h2>
      <ErrorAlert error={list.error} />
      {processes ? (
        <div class="table-wrap">
          <table class="stack" aria-label="Hub processes">
            <thead>
              <tr>
                <th scope="col">Process</th>
                <th scope="col">State</th>
                <th scope="col">Version</th>
                <th scope="col">Waiting long-polls</th>
                <th scope="col">Started</th>
                <th scope="col">Last heartbeat</th>
              </tr>
            </thead>
            <tbody>
              {processes.map((p) => (
                <tr key={p.Id}>
                  <th scope="row">
                    {p.Host} pid {p.Pid}
                    {p.Self ? <span class="badge">serving this page</span> : null}
                  </th>
                  <td data-label="State">
                    <span class={p.Alive ? 'state ok' : 'state off'}>{p.Alive ? '● alive' : '○ not answering'}</span>
                  </td>
                  <td data-label="Version">{p.Version}</td>
                  <td data-label="Waiting long-polls">
                    <Num value={p.WaitingLongPolls} />
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
      ) : null}
    </section>
  );
}
