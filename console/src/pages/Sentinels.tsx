import { useState } from 'preact/hooks';
import { management } from '../api';
import { ErrorAlert, JsonEditor, Page, useAction, useLoad } from '../components';
import type { Credential, Instance, RepositoryPackage, Sentinel } from '../types';

const enc = encodeURIComponent;
const instancePath = (i: Instance) => `sentinels/${enc(i.Sentinel)}/packages/${enc(i.Name)}`;

interface Recovery {
  RestartAfterFailure: boolean;
  NumberOfRetry: number;
  ResetCounterAfterMinutes: number;
  RestartPackageAfterSeconds: number;
}

/** Recovery options at `path` (an instance's, or the global ones at configuration/recoveryoptions). */
export function RecoveryForm({ path, name }: { path: string; name: string }) {
  const loaded = useLoad(() => management<Recovery>(path), [path]);
  const [draft, setDraft] = useState<Recovery | undefined>(undefined);
  const action = useAction();
  const current = draft ?? loaded.data;
  if (!current) return <ErrorAlert error={loaded.error} />;
  const number = (key: Exclude<keyof Recovery, 'RestartAfterFailure'>, label: string) => (
    <label>
      {label}
      <input
        type="number"
        min={0}
        step={1}
        value={current[key]}
        onInput={(e) => setDraft({ ...current, [key]: Number((e.target as HTMLInputElement).value) })}
      />
    </label>
  );
  return (
    <form
      aria-label={`Recovery options of ${name}`}
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => loaded.setData(await management<Recovery>(path, { body: current })));
      }}
    >
      <fieldset>
        <legend>Recovery options</legend>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={current.RestartAfterFailure}
            onChange={(e) => setDraft({ ...current, RestartAfterFailure: (e.target as HTMLInputElement).checked })}
          />
          Restart after a failure
        </label>
        {number('NumberOfRetry', 'Number of retries')}
        {number('ResetCounterAfterMinutes', 'Reset the counter after (minutes)')}
        {number('RestartPackageAfterSeconds', 'Restart after (seconds)')}
        <button type="submit" disabled={action.busy}>
          Save recovery options
        </button>
      </fieldset>
      <ErrorAlert error={action.error} />
    </form>
  );
}

/** Enable, auto-start, package file and credential of an instance: saved with the same add-or-modify call. */
function InstanceProperties({
  instance,
  sentinelCredential,
  credentials,
  packages,
  onSaved,
}: {
  instance: Instance;
  sentinelCredential: string;
  credentials: string[];
  packages: string[];
  onSaved: () => void;
}) {
  const [draft, setDraft] = useState({
    Enable: instance.Enable,
    AutoStart: instance.AutoStart,
    PackageFile: instance.PackageFile ?? '',
    Credential: instance.Credential ?? sentinelCredential,
  });
  const action = useAction();
  const label = `${instance.Sentinel}/${instance.Name}`;
  return (
    <form
      aria-label={`Properties of ${label}`}
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          // Naming the sentinel's own credential stores no override; an empty package file makes it virtual.
          await management(`sentinels/${enc(instance.Sentinel)}/packages`, { body: { Name: instance.Name, ...draft } });
          onSaved();
        });
      }}
    >
      <fieldset>
        <legend>Properties</legend>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={draft.Enable}
            onChange={(e) => setDraft({ ...draft, Enable: (e.target as HTMLInputElement).checked })}
          />
          Enabled
        </label>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={draft.AutoStart}
            onChange={(e) => setDraft({ ...draft, AutoStart: (e.target as HTMLInputElement).checked })}
          />
          Start automatically
        </label>
        <label>
          Package file
          <select
            value={draft.PackageFile}
            onChange={(e) => setDraft({ ...draft, PackageFile: (e.target as HTMLSelectElement).value })}
          >
            <option value="">(none: a virtual package)</option>
            {[...new Set([...packages, ...(draft.PackageFile ? [draft.PackageFile] : [])])].map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          Credential
          <select
            value={draft.Credential}
            onChange={(e) => setDraft({ ...draft, Credential: (e.target as HTMLSelectElement).value })}
          >
            {credentials.map((c) => (
              <option key={c} value={c}>
                {c}
                {c === sentinelCredential ? ' (the sentinel’s)' : ''}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={action.busy}>
          Save properties of {label}
        </button>
      </fieldset>
      <ErrorAlert error={action.error} />
    </form>
  );
}

function InstanceRow({
  instance,
  onChange,
  sentinelCredential,
  credentials,
  packages,
}: {
  instance: Instance;
  onChange: () => void;
  sentinelCredential: string;
  credentials: string[];
  packages: string[];
}) {
  const action = useAction();
  const [confirming, setConfirming] = useState(false);
  const [editing, setEditing] = useState(false);
  const label = `${instance.Sentinel}/${instance.Name}`;
  return (
    <li class="instance">
      <div class="instance-head">
        <strong>{instance.Name}</strong>
        <span class="muted">
          {instance.IsVirtual
            ? 'virtual package'
            : `package file ${instance.PackageFile}${instance.PackageFileMissing ? ' (not in the repository)' : ''}`}{' '}
          · credential {instance.Credential ?? '(the sentinel’s)'}
          {instance.Enable ? '' : ' · disabled'}
          {instance.AutoStart ? '' : ' · no auto-start'}
        </span>
        {confirming ? (
          <>
            <button
              type="button"
              class="small danger"
              onClick={() =>
                void action.run(async () => {
                  await management(instancePath(instance), { method: 'DELETE' });
                  onChange();
                })
              }
            >
              Confirm deleting {label}
            </button>
            <button type="button" class="small" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" class="small" onClick={() => setConfirming(true)}>
            Delete {label}
          </button>
        )}
      </div>
      <ErrorAlert error={action.error} />
      <details onToggle={(e) => setEditing((e.target as HTMLDetailsElement).open)}>
        <summary>Edit {label}</summary>
        {/* Loaded when opened: a closed editor costs no request. */}
        {editing ? (
          <>
            <InstanceProperties
              instance={instance}
              sentinelCredential={sentinelCredential}
              credentials={credentials}
              packages={packages}
              onSaved={onChange}
            />
            <JsonEditor
              label={`groups of ${label}`}
              load={() => management(`${instancePath(instance)}/groups`)}
              save={(v) => management(`${instancePath(instance)}/groups`, { body: v })}
            />
            <JsonEditor
              label={`settings of ${label}`}
              load={() => management(`${instancePath(instance)}/settings`)}
              save={(v) => management(`${instancePath(instance)}/settings`, { body: v })}
            />
            <RecoveryForm path={`${instancePath(instance)}/recoveryoptions`} name={label} />
          </>
        ) : null}
      </details>
    </li>
  );
}

function NewInstance({
  sentinel,
  credentials,
  packages,
  onAdded,
}: {
  sentinel: Sentinel;
  credentials: string[];
  packages: string[];
  onAdded: () => void;
}) {
  const [draft, setDraft] = useState({ Name: '', PackageFile: '', Credential: '', Enable: true, AutoStart: true });
  const action = useAction();
  const id = `new-instance-${sentinel.Name}`.replace(/[^\w-]/g, '_');
  return (
    <form
      class="inline"
      aria-label={`New package instance on ${sentinel.Name}`}
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          // Unchosen fields are left out: the hub then uses its defaults (virtual package, the sentinel's credential).
          const { PackageFile, Credential, ...rest } = draft;
          await management(`sentinels/${enc(sentinel.Name)}/packages`, {
            body: { ...rest, ...(PackageFile ? { PackageFile } : {}), ...(Credential ? { Credential } : {}) },
          });
          setDraft({ ...draft, Name: '' });
          onAdded();
        });
      }}
    >
      <label>
        Package instance name
        <input
          type="text"
          required
          value={draft.Name}
          onInput={(e) => setDraft({ ...draft, Name: (e.target as HTMLInputElement).value })}
        />
      </label>
      <label>
        Package file
        <select
          id={`${id}-file`}
          value={draft.PackageFile}
          onChange={(e) => setDraft({ ...draft, PackageFile: (e.target as HTMLSelectElement).value })}
        >
          <option value="">(none: a virtual package)</option>
          {packages.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <label>
        Credential
        <select
          value={draft.Credential}
          onChange={(e) => setDraft({ ...draft, Credential: (e.target as HTMLSelectElement).value })}
        >
          <option value="">(the sentinel’s: {sentinel.Credential})</option>
          {credentials.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={action.busy}>
        Add package instance to {sentinel.Name}
      </button>
      <ErrorAlert error={action.error} />
    </form>
  );
}

function SentinelCard({
  sentinel,
  credentials,
  packages,
  onChanged,
}: {
  sentinel: Sentinel;
  credentials: string[];
  packages: string[];
  onChanged: () => void;
}) {
  const instances = useLoad(
    () => management<Instance[]>(`sentinels/${enc(sentinel.Name)}/packages`),
    [sentinel.Packages.join('/')],
  );
  const remove = useAction();
  const edit = useAction();
  const [confirming, setConfirming] = useState(false);
  return (
    <article class="card" aria-label={`Sentinel ${sentinel.Name}`}>
      <h2>{sentinel.Name}</h2>
      <label class="inline-label">
        Credential of {sentinel.Name}
        <select
          value={sentinel.Credential}
          disabled={edit.busy}
          onChange={(e) => {
            const credential = (e.target as HTMLSelectElement).value;
            void edit.run(async () => {
              await management('sentinels', { body: { Name: sentinel.Name, Credential: credential } });
              onChanged();
            });
          }}
        >
          {credentials.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      <ErrorAlert error={edit.error} />
      <ErrorAlert error={instances.error ?? remove.error} />
      <ul class="instances">
        {instances.data?.map((instance) => (
          <InstanceRow
            key={instance.Name}
            instance={instance}
            onChange={instances.reload}
            sentinelCredential={sentinel.Credential}
            credentials={credentials}
            packages={packages}
          />
        ))}
      </ul>
      <NewInstance sentinel={sentinel} credentials={credentials} packages={packages} onAdded={instances.reload} />
      {confirming ? (
        <p>
          <button
            type="button"
            class="danger"
            onClick={() =>
              void remove.run(async () => {
                await management(`sentinels/${enc(sentinel.Name)}`, { method: 'DELETE' });
                onChanged();
              })
            }
          >
            Confirm deleting {sentinel.Name} and its instances
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </p>
      ) : (
        <button type="button" class="small" onClick={() => setConfirming(true)}>
          Delete sentinel {sentinel.Name}
        </button>
      )}
    </article>
  );
}

export function Sentinels() {
  const sentinels = useLoad(() => management<Sentinel[]>('sentinels'));
  const credentials = useLoad(() => management<Credential[]>('credentials'));
  const packages = useLoad(() => management<RepositoryPackage[]>('packages'));
  const credentialNames = (credentials.data ?? []).map((c) => c.Name);
  const packageNames = (packages.data ?? []).map((p) => p.Name);
  const [draft, setDraft] = useState({ Name: '', Credential: '' });
  const add = useAction();
  return (
    <Page title="Sentinels">
      <ErrorAlert error={sentinels.error ?? credentials.error} />
      <form
        class="card inline"
        aria-label="New sentinel"
        onSubmit={(e) => {
          e.preventDefault();
          void add.run(async () => {
            await management('sentinels', {
              body: { Name: draft.Name, Credential: draft.Credential || credentialNames[0] },
            });
            setDraft({ ...draft, Name: '' });
            sentinels.reload();
          });
        }}
      >
        <label>
          Sentinel name
          <input
            type="text"
            required
            value={draft.Name}
            onInput={(e) => setDraft({ ...draft, Name: (e.target as HTMLInputElement).value })}
          />
        </label>
        <label>
          Credential
          <select
            value={draft.Credential || credentialNames[0]}
            onChange={(e) => setDraft({ ...draft, Credential: (e.target as HTMLSelectElement).value })}
          >
            {credentialNames.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={add.busy}>
          Add sentinel
        </button>
        <ErrorAlert error={add.error} />
      </form>
      {sentinels.data?.map((sentinel) => (
        <SentinelCard
          key={sentinel.Name}
          sentinel={sentinel}
          credentials={credentialNames}
          packages={packageNames}
          onChanged={sentinels.reload}
        />
      ))}
    </Page>
  );
}
