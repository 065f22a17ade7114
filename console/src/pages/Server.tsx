import { useEffect, useState } from 'preact/hooks';
import { authenticationHeaders, HubFailure, hubUrl, management } from '../api';
import { ErrorAlert, Num, Page, Stat, Time, useAction, useLoad } from '../components';
import { formatDuration } from '../format';
import type { License, ServerStatus } from '../types';
import { ServerConnections } from './ServerConnections';
import { allProcesses, processName, ServerProcesses } from './ServerProcesses';

interface OpenApiOperation {
  tags: string[];
  summary: string;
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
}

interface OpenApiDocument {
  info: { title: string; version: string; description: string };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, unknown> };
}

function LicenseForm({ license, onSaved }: { license: License; onSaved: () => void }) {
  const { IsExpired: _expired, ...editable } = license;
  void _expired;
  const [text, setText] = useState(JSON.stringify(editable, null, 2));
  const action = useAction();
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch (error) {
            throw new HubFailure(400, 'The license is not valid JSON.', (error as Error).message);
          }
          await management('license', { body });
          onSaved();
        });
      }}
    >
      <label for="license-json">License (JSON)</label>
      <textarea
        id="license-json"
        rows={8}
        spellcheck={false}
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
      />
      <button type="submit" disabled={action.busy}>
        Save license
      </button>
      <ErrorAlert error={action.error} />
    </form>
  );
}

function Metrics() {
  const [text, setText] = useState<string | undefined>(undefined);
  const action = useAction();
  return (
    <>
      <button
        type="button"
        onClick={() =>
          void action.run(async () => {
            const response = await fetch(hubUrl('metrics'), { headers: authenticationHeaders('management') });
            if (!response.ok) throw new HubFailure(response.status, `The hub answered ${response.status}.`);
            setText(await response.text());
          })
        }
      >
        Show the Prometheus metrics
      </button>
      <ErrorAlert error={action.error} />
      {text ? (
        <pre class="metrics" aria-label="Prometheus metrics">
          {text}
        </pre>
      ) : null}
    </>
  );
}

/** Renders /openapi.json: every operation with its parameters and request body schema. */
function ApiReference() {
  const { data, error } = useLoad(async () => {
    const response = await fetch(hubUrl('openapi.json'));
    if (!response.ok) throw new HubFailure(response.status, 'The API document could not be read.');
    return (await response.json()) as OpenApiDocument;
  });
  if (!data) return <ErrorAlert error={error} />;
  return (
    <section aria-labelledby="api-title">
      <h2 id="api-title">
        API ({data.info.title} {data.info.version})
      </h2>
      <p>
        {data.info.description} <a href={hubUrl('openapi.json')}>openapi.json</a>
      </p>
      {data.tags.map((tag) => (
        <details key={tag.name} class="api-tag">
          <summary>
            {tag.name}: {tag.description}
          </summary>
          <ul class="operations">
            {Object.entries(data.paths).flatMap(([path, methods]) =>
              Object.entries(methods)
                .filter(([, op]) => op.tags.includes(tag.name))
                .map(([method, op]) => {
                  const ref = op.requestBody ? Object.values(op.requestBody.content)[0]?.schema.$ref : undefined;
                  const schemaName = ref?.split('/').pop();
                  return (
                    <li key={`${method} ${path}`}>
                      <code class={`method method-${method}`}>{method.toUpperCase()}</code> <code>{path}</code> —{' '}
                      {op.summary}
                      {op.parameters?.length ? (
                        <div class="muted small">
                          parameters: {op.parameters.map((p) => `${p.name} (${p.in})`).join(', ')}
                        </div>
                      ) : null}
                      {op.requestBody && !schemaName ? (
                        <div class="muted small">body: {Object.keys(op.requestBody.content).join(', ')}</div>
                      ) : null}
                      {schemaName ? (
                        <details>
                          <summary>Body: {schemaName}</summary>
                          <pre>{JSON.stringify(data.components.schemas[schemaName], null, 2)}</pre>
                        </details>
                      ) : null}
                    </li>
                  );
                }),
            )}
          </ul>
        </details>
      ))}
    </section>
  );
}

const REFRESH_MS = 5000;

export function Server() {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  // One answer for the cards and the table: both describe the process that served it.
  const status = useLoad(() => management<ServerStatus>('server/status'), [tick]);
  const s = status.data;
  const self = s?.Processes.find((p) => p.Self);
  const all = s ? allProcesses(s.Processes) : undefined;
  return (
    <Page title="Server">
      <ErrorAlert error={status.error} />
      {s && self && all ? (
        <>
          <h2>This process</h2>
          <p class="muted" aria-label="Served by">
            The process that served this page: {processName(self)}, marked in the table below.
          </p>
          <dl class="stats" aria-label="This process">
            <Stat label="Version">{s.Version}</Stat>
            <Stat label="Started">
              <Time iso={s.StartedAt} />
            </Stat>
            <Stat label="Uptime">{formatDuration(s.UptimeSeconds)}</Stat>
            <Stat label="Requests served">
              <Num value={s.RequestsTotal} />
            </Stat>
            <Stat label="Refused authentications">
              <Num value={s.AuthFailures} />
            </Stat>
            <Stat label="Waiting long-polls">
              <Num value={s.WaitingLongPolls} />
            </Stat>
            <Stat label="Dropped messages">
              <Num value={s.DroppedMessages} />
            </Stat>
          </dl>
          <h2>The whole hub</h2>
          <p class="muted">
            Processes and long-polls summed over the processes answering; the rest is the database's, the same from
            every process.
          </p>
          <dl class="stats" aria-label="The whole hub">
            <Stat label="Processes answering">
              <Num value={all.alive} />
              {all.listed > all.alive ? <span class="muted small"> of {all.listed}</span> : null}
            </Stat>
            <Stat label="Waiting long-polls, all processes">
              <Num value={all.waitingLongPolls} />
            </Stat>
            <Stat label="StateObjects">
              <Num value={s.StateObjects} />
            </Stat>
            <Stat label="Queued messages">
              <Num value={s.QueuedMessages} />
            </Stat>
            <Stat label="Message subscriptions">
              <Num value={s.MessageSubscriptions} />
            </Stat>
            <Stat label="StateObject subscriptions">
              <Num value={s.StateObjectSubscriptions} />
            </Stat>
          </dl>
          <ServerProcesses processes={s.Processes} />
          <ServerConnections connections={s.Connections} />
          <h2>License</h2>
          <p>
            {s.License.Edition} for {s.License.Licensee}
            {s.License.ExpirationDate ? `, until ${s.License.ExpirationDate}` : ', no expiry'}
            {s.License.IsExpired ? ' (expired)' : ''}; sentinels: {s.License.MaxSentinels ?? 'no limit'}, package
            instances: {s.License.MaxPackageInstances ?? 'no limit'}.
          </p>
          <details>
            <summary>Change the license</summary>
            <LicenseForm license={s.License} onSaved={status.reload} />
          </details>
          <h2>Metrics</h2>
          <Metrics />
        </>
      ) : null}
      <ApiReference />
    </Page>
  );
}
