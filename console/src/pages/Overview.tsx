import { useEffect, useRef, useState } from 'preact/hooks';
import { management } from '../api';
import { ErrorAlert, Num, Page, Stat, Time, useLoad } from '../components';
import { formatDuration, formatNumber } from '../format';
import type { OverviewSentinel, ServerStatus } from '../types';
import { allProcesses } from './ServerProcesses';

const REFRESH_MS = 5000;

/**
 * Requests per second over every process answering: each process's own counter between two of its
 * readings (the serving process's now, another's at its heartbeat), summed. Successive refreshes may
 * be served by different processes behind a load balancer; a counter is only ever compared with itself.
 */
function useRate(status: ServerStatus | undefined): number | undefined {
  const previous = useRef(new Map<string, { total: number; at: number; rate?: number }>());
  const [rate, setRate] = useState<number | undefined>(undefined);
  useEffect(() => {
    if (!status) return;
    const readings = new Map<string, { total: number; at: number; rate?: number }>();
    for (const p of status.Processes.filter((process) => process.Alive)) {
      const at = Date.parse(p.Self ? status.Now : p.LastHeartbeat);
      const last = previous.current.get(p.Id);
      const rate = last && at > last.at ? (p.RequestsTotal - last.total) / ((at - last.at) / 1000) : last?.rate;
      readings.set(p.Id, last && at <= last.at ? last : { total: p.RequestsTotal, at, rate });
    }
    previous.current = readings;
    const rates = [...readings.values()].map((r) => r.rate);
    if (rates.some((r) => r !== undefined)) setRate(rates.reduce<number>((sum, r) => sum + (r ?? 0), 0));
  }, [status]);
  return rate;
}

export function Overview() {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  const overview = useLoad(() => management<{ Sentinels: OverviewSentinel[] }>('overview'), [tick]);
  const status = useLoad(() => management<ServerStatus>('server/status'), [tick]);
  const s = status.data;
  const rate = useRate(s);
  const all = s ? allProcesses(s.Processes) : undefined;
  return (
    <Page title="Overview">
      <ErrorAlert error={overview.error ?? status.error} />
      {s && all ? (
        <dl class="stats" aria-label="Server">
          <Stat label="Version">{s.Version}</Stat>
          <Stat label="License">
            {s.License.Edition} ({s.License.Licensee}){s.License.IsExpired ? ' — expired' : ''}
          </Stat>
          {all.listed > 1 ? (
            <Stat label="Processes answering">
              <Num value={all.alive} />
            </Stat>
          ) : (
            <Stat label="Uptime">{formatDuration(s.UptimeSeconds)}</Stat>
          )}
          <Stat label="Waiting long-polls">
            <Num value={all.waitingLongPolls} />
          </Stat>
          <Stat label="Requests per second">
            {rate === undefined ? 'measuring…' : formatNumber(Math.round(rate * 10) / 10)}
          </Stat>
          <Stat label="StateObjects">
            <Num value={s.StateObjects} />
          </Stat>
          <Stat label="Queued messages">
            <Num value={s.QueuedMessages} />
          </Stat>
        </dl>
      ) : null}
      <h2>Sentinels</h2>
      {overview.data?.Sentinels.length === 0 ? (
        <p>No sentinel is declared yet: add one on the Sentinels page.</p>
      ) : null}
      {overview.data?.Sentinels.map((sentinel) => (
        <article class="card" key={sentinel.Name} aria-label={`Sentinel ${sentinel.Name}`}>
          <h3>
            {sentinel.Name} <span class="muted">credential {sentinel.Credential}</span>
          </h3>
          {sentinel.Packages.length === 0 ? (
            <p class="muted">No package instance.</p>
          ) : (
            <div class="table-wrap">
              <table class="stack">
                <thead>
                  <tr>
                    <th scope="col">Package</th>
                    <th scope="col">Connection</th>
                    <th scope="col">StateObjects</th>
                    <th scope="col">Queued messages</th>
                    <th scope="col">Last log</th>
                  </tr>
                </thead>
                <tbody>
                  {sentinel.Packages.map((p) => (
                    <tr key={p.Name}>
                      <th scope="row">
                        {p.Name}
                        {p.Enable ? null : <span class="badge">disabled</span>}
                        {p.Groups.map((g) => (
                          <span class="badge" key={g}>
                            {g}
                          </span>
                        ))}
                      </th>
                      <td data-label="Connection">
                        <span class={p.Connected ? 'state ok' : 'state off'}>
                          {p.Connected ? '● connected' : '○ not connected'}
                        </span>
                        <div class="muted small">
                          seen <Time iso={p.LastSeen} />
                        </div>
                      </td>
                      <td data-label="StateObjects">
                        <Num value={p.StateObjects} />
                      </td>
                      <td data-label="Queued messages">
                        <Num value={p.QueuedMessages} />
                      </td>
                      <td data-label="Last log">
                        {p.LastLog ? (
                          <>
                            <span class={`level level-${p.LastLog.Level.toLowerCase()}`}>{p.LastLog.Level}</span>{' '}
                            {p.LastLog.Message}
                            <div class="muted small">
                              <Time iso={p.LastLog.Date} />
                            </div>
                          </>
                        ) : (
                          <span class="muted">none</span>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </article>
      ))}
    </Page>
  );
}
