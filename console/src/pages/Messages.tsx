import { useState } from 'preact/hooks';
import { CONSOLE_NAME } from '../api';
import { ErrorAlert, JsonValue, Page, Time, useAction } from '../components';
import { wildcard } from '../format';
import { joinedGroups, joinGroup, received } from '../live';
import { useStore } from '../store';

const SCOPES: Record<number, string> = { 1: 'Group', 2: 'Package', 3: 'Sentinel', 4: 'Others', 5: 'All' };

export function Messages() {
  const messages = useStore(received);
  const groups = useStore(joinedGroups);
  const [group, setGroup] = useState('');
  const [keyFilter, setKeyFilter] = useState('');
  const join = useAction();
  const matches = wildcard(keyFilter);
  const shown = messages.filter((m) => matches(m.Key));
  return (
    <Page title="Messages">
      <p class="muted">
        Live: what arrives for the console's own subscription (as Consumer/{CONSOLE_NAME}): messages to All and Others,
        to Consumer/
        {CONSOLE_NAME}, saga responses, and the groups joined here.
      </p>
      <form
        class="inline"
        aria-label="Join a group"
        onSubmit={(e) => {
          e.preventDefault();
          const name = group.trim();
          if (name) void join.run(() => joinGroup(name)).then((ok) => ok && setGroup(''));
        }}
      >
        <label>
          Group name
          <input type="text" value={group} onInput={(e) => setGroup((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={join.busy}>
          Join group
        </button>
      </form>
      <ErrorAlert error={join.error} />
      <p>
        Groups joined:{' '}
        {groups.length === 0 ? (
          <span class="muted">none</span>
        ) : (
          groups.map((g) => (
            <span class="badge" key={g}>
              {g}
            </span>
          ))
        )}
      </p>
      <label class="filter">
        Filter by key
        <input
          type="search"
          placeholder="*"
          value={keyFilter}
          onInput={(e) => setKeyFilter((e.target as HTMLInputElement).value)}
        />
      </label>
      <p aria-live="polite" class="muted">
        {shown.length} of {messages.length} messages received (newest first)
      </p>
      <div class="table-wrap">
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Sender</th>
              <th scope="col">Scope</th>
              <th scope="col">Key</th>
              <th scope="col">Data</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((m, i) => (
              <tr key={`${m.receivedAt}-${i}`}>
                <td data-label="Received">
                  <Time iso={new Date(m.receivedAt).toISOString()} />
                </td>
                <td data-label="Sender">{m.Sender.FriendlyName}</td>
                <td data-label="Scope">
                  {SCOPES[m.Scope.Scope] ?? m.Scope.Scope} {m.Scope.Args.join(', ')}
                  {m.Scope.SagaId ? <div class="muted small">saga {m.Scope.SagaId}</div> : null}
                </td>
                <th scope="row">{m.Key}</th>
                <td data-label="Data">
                  <JsonValue value={m.Data} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}
