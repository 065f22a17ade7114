import { useState } from 'preact/hooks';
import { management } from '../api';
import { ErrorAlert, JsonEditor, Page, useAction, useLoad } from '../components';
import { newAccessKey } from '../ids';
import type { Credential } from '../types';

const RIGHTS = [
  ['Enable', 'Enabled'],
  ['EnableManagementAPI', 'Management API'],
  ['EnableControlHub', 'Control hub'],
  ['EnableDeveloperAccess', 'Developer access'],
] as const;

type Right = (typeof RIGHTS)[number][0];

const save = (credential: Credential) => management<Credential>('credentials', { body: credential });
const path = (name: string) => `credentials/${encodeURIComponent(name)}`;

function Authorizations({ name }: { name: string }) {
  return (
    <JsonEditor
      label={`Authorizations of ${name} (StateObjects, Messages, Groups: a default and rules tried by Id; * wildcards)`}
      submit={`Save authorizations of ${name}`}
      rows={14}
      deps={[name]}
      load={() => management<unknown>(`${path(name)}/authorizations`)}
      save={(value) => management(`${path(name)}/authorizations`, { body: value })}
    />
  );
}

function CredentialRow({ credential, onChange }: { credential: Credential; onChange: (c?: Credential) => void }) {
  const action = useAction();
  const [shown, setShown] = useState(false);
  const [newKey, setNewKey] = useState<string | undefined>(undefined);
  const [confirming, setConfirming] = useState(false);
  const update = (change: Partial<Credential>) =>
    action.run(async () => {
      const next = { ...credential, ...change };
      await save(next);
      onChange(next);
    });
  return (
    <article class="card" aria-label={`Credential ${credential.Name}`}>
      <h3>{credential.Name}</h3>
      <div class="checks">
        {RIGHTS.map(([right, label]) => (
          <label key={right} class="checkbox">
            <input
              type="checkbox"
              checked={credential[right]}
              disabled={action.busy}
              onChange={(e) => void update({ [right]: (e.target as HTMLInputElement).checked })}
            />
            {label}
          </label>
        ))}
      </div>
      <p>
        Access key: <code>{shown ? credential.AccessKey : '••••••••'}</code>{' '}
        <button type="button" class="small" onClick={() => setShown(!shown)} aria-pressed={shown}>
          {shown ? 'Hide key' : 'Show key'}
        </button>{' '}
        <button
          type="button"
          class="small"
          onClick={() => {
            const key = newAccessKey();
            void update({ AccessKey: key }).then((ok) => ok && setNewKey(key));
          }}
        >
          Rotate key of {credential.Name}
        </button>{' '}
        {confirming ? (
          <>
            <button
              type="button"
              class="small danger"
              onClick={() =>
                void action.run(async () => {
                  await management(path(credential.Name), { method: 'DELETE' });
                  onChange(undefined);
                })
              }
            >
              Confirm deleting {credential.Name}
            </button>{' '}
            <button type="button" class="small" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" class="small" onClick={() => setConfirming(true)}>
            Delete {credential.Name}
          </button>
        )}
      </p>
      {newKey ? (
        <p role="status">
          New access key (copy it now): <code>{newKey}</code>
        </p>
      ) : null}
      <ErrorAlert error={action.error} />
      <details>
        <summary>Authorizations</summary>
        <Authorizations name={credential.Name} />
      </details>
    </article>
  );
}

function NewCredential({ onCreated }: { onCreated: (c: Credential) => void }) {
  const empty = {
    Name: '',
    AccessKey: newAccessKey(),
    Enable: true,
    EnableManagementAPI: false,
    EnableControlHub: false,
    EnableDeveloperAccess: false,
  };
  const [draft, setDraft] = useState<Credential>(empty);
  const [created, setCreated] = useState<Credential | undefined>(undefined);
  const action = useAction();
  return (
    <form
      class="card"
      aria-label="New credential"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          await save(draft);
          onCreated(draft);
          setCreated(draft);
          setDraft({ ...empty, AccessKey: newAccessKey() });
        });
      }}
    >
      <h2>New credential</h2>
      <div class="row">
        <label>
          Name
          <input
            type="text"
            required
            value={draft.Name}
            onInput={(e) => setDraft({ ...draft, Name: (e.target as HTMLInputElement).value })}
          />
        </label>
        <label>
          Access key (at least 8 characters)
          <input
            type="text"
            required
            spellcheck={false}
            value={draft.AccessKey}
            onInput={(e) => setDraft({ ...draft, AccessKey: (e.target as HTMLInputElement).value })}
          />
        </label>
        <button type="button" class="small" onClick={() => setDraft({ ...draft, AccessKey: newAccessKey() })}>
          Generate a key
        </button>
      </div>
      <div class="checks">
        {RIGHTS.map(([right, label]) => (
          <label key={right} class="checkbox">
            <input
              type="checkbox"
              checked={draft[right as Right]}
              onChange={(e) => setDraft({ ...draft, [right]: (e.target as HTMLInputElement).checked })}
            />
            {label}
          </label>
        ))}
      </div>
      <button type="submit" disabled={action.busy}>
        Create credential
      </button>
      <ErrorAlert error={action.error} />
      {created ? (
        <p role="status">
          Created {created.Name}; its access key: <code>{created.AccessKey}</code>
        </p>
      ) : null}
    </form>
  );
}

export function Credentials() {
  const { data, error, reload } = useLoad(() =>
    management<Credential[]>('credentials', { query: { includeAccessKeys: true } }),
  );
  return (
    <Page title="Credentials">
      <ErrorAlert error={error} />
      <NewCredential onCreated={reload} />
      {data?.map((credential) => (
        <CredentialRow key={credential.Name} credential={credential} onChange={reload} />
      ))}
    </Page>
  );
}
