import { useEffect, useState } from 'preact/hooks';
import { authenticationHeaders, management, upload, urlOf } from '../api';
import { ErrorAlert, Num, Page, Time, useAction, useLoad } from '../components';
import type { RepositoryPackage } from '../types';

const enc = encodeURIComponent;

/** The icon needs the management headers, which an <img> cannot send: fetched, then shown from a blob. */
function Icon({ name }: { name: string }) {
  const [src, setSrc] = useState<string | undefined>(undefined);
  useEffect(() => {
    let url: string | undefined;
    let current = true;
    void fetch(urlOf('management', `packages/${enc(name)}/icon`), { headers: authenticationHeaders('management') })
      .then((r) => (r.ok ? r.blob() : undefined))
      .then((blob) => {
        if (!blob || !current) return;
        url = URL.createObjectURL(blob);
        setSrc(url);
      })
      .catch(() => undefined);
    return () => {
      current = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [name]);
  return src ? (
    <img class="icon" src={src} alt={`Icon of ${name}`} width={40} height={40} />
  ) : (
    <span class="icon placeholder" aria-hidden="true">
      📦
    </span>
  );
}

function Xsd({ name, setting }: { name: string; setting: string }) {
  const [text, setText] = useState<string | undefined>(undefined);
  const action = useAction();
  return (
    <>
      <button
        type="button"
        class="small"
        onClick={() =>
          void action.run(async () =>
            setText(await management<string>(`packages/${enc(name)}/settings/${enc(setting)}/xsd`)),
          )
        }
      >
        Show the XSD of {setting}
      </button>
      <ErrorAlert error={action.error} />
      {text ? <pre class="xsd">{text}</pre> : null}
    </>
  );
}

function PackageCard({ pkg, onChange }: { pkg: RepositoryPackage; onChange: () => void }) {
  const [newName, setNewName] = useState(pkg.Name);
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  return (
    <article class="card package" aria-label={`Package ${pkg.Name}`}>
      <div class="package-head">
        {pkg.HasIcon ? (
          <Icon name={pkg.Name} />
        ) : (
          <span class="icon placeholder" aria-hidden="true">
            📦
          </span>
        )}
        <div>
          <h3>
            {pkg.Name} <span class="muted">{pkg.Version ?? ''}</span>
          </h3>
          <p>
            {pkg.Description ?? ''} {pkg.Author ? <span class="muted">by {pkg.Author}</span> : null}
          </p>
          <p class="muted small">
            {pkg.FileName} · <Num value={pkg.Size} /> bytes · uploaded <Time iso={pkg.UploadedAt} /> · SHA-256{' '}
            <code>{pkg.Sha256.slice(0, 16)}…</code>
          </p>
        </div>
      </div>
      {pkg.Settings.length > 0 ? (
        <details>
          <summary>Settings ({pkg.Settings.length})</summary>
          <dl class="settings">
            {pkg.Settings.map((s) => (
              <div key={s.Key}>
                <dt>
                  {s.Key} <span class="muted">{s.Type ?? ''}</span>
                </dt>
                <dd>
                  {s.Description ?? ''}{' '}
                  {s.DefaultValue !== null ? (
                    <span class="muted">
                      default <code>{s.DefaultValue}</code>
                    </span>
                  ) : null}
                  {s.HasXsd ? <Xsd name={pkg.Name} setting={s.Key} /> : null}
                </dd>
              </div>
            ))}
          </dl>
        </details>
      ) : null}
      <form
        class="inline"
        aria-label={`Rename ${pkg.Name}`}
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            await management(`packages/${enc(pkg.Name)}`, { body: { newName } });
            onChange();
          });
        }}
      >
        <label>
          New name for {pkg.Name}
          <input type="text" value={newName} onInput={(e) => setNewName((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="secondary" disabled={action.busy || newName === pkg.Name}>
          Rename
        </button>
        {confirming ? (
          <>
            <button
              type="button"
              class="danger"
              onClick={() =>
                void action.run(async () => {
                  await management(`packages/${enc(pkg.Name)}`, { method: 'DELETE' });
                  onChange();
                })
              }
            >
              Confirm deleting {pkg.Name}
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" class="secondary" onClick={() => setConfirming(true)}>
            Delete {pkg.Name}
          </button>
        )}
      </form>
      <ErrorAlert error={action.error} />
    </article>
  );
}

export function Repository() {
  const list = useLoad(() => management<RepositoryPackage[]>('packages'));
  const [progress, setProgress] = useState<number | undefined>(undefined);
  const [dragging, setDragging] = useState(false);
  const [uploaded, setUploaded] = useState<string | undefined>(undefined);
  const [url, setUrl] = useState('');
  const action = useAction();

  const send = (files: FileList | File[]) => {
    const chosen = [...files];
    if (chosen.length === 0) return;
    const form = new FormData();
    for (const file of chosen) form.append('package', file, file.name);
    setUploaded(undefined);
    setProgress(0);
    void action
      .run(async () => {
        const stored = await upload<RepositoryPackage[]>('upload-package', form, setProgress);
        setUploaded(`Uploaded ${stored.map((p) => p.Name).join(', ')}.`);
        list.reload();
      })
      .finally(() => setProgress(undefined));
  };

  return (
    <Page title="Repository">
      <div
        class={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          if (e.dataTransfer?.files) send(e.dataTransfer.files);
        }}
      >
        <p>Drop package archives (.zip) here, or</p>
        <label class="button">
          Choose package files
          <input
            type="file"
            class="visually-hidden"
            accept=".zip,application/zip"
            multiple
            onChange={(e) => {
              const input = e.target as HTMLInputElement;
              if (input.files) send(input.files);
              input.value = '';
            }}
          />
        </label>
        {progress !== undefined ? (
          <label class="progress">
            Uploading
            <progress max={1} value={progress}>
              {Math.round(progress * 100)} %
            </progress>
          </label>
        ) : null}
      </div>
      <form
        class="inline"
        aria-label="Download a package"
        onSubmit={(e) => {
          e.preventDefault();
          setUploaded(undefined);
          void action.run(async () => {
            const stored = await management<RepositoryPackage>('download-package', { body: { url } });
            setUploaded(`Downloaded ${stored.Name}.`);
            setUrl('');
            list.reload();
          });
        }}
      >
        <label>
          Package address (http or https)
          <input type="url" required value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Download package
        </button>
      </form>
      <ErrorAlert error={action.error ?? list.error} />
      {uploaded ? <p role="status">{uploaded}</p> : null}
      {list.data?.length === 0 ? <p>The repository is empty.</p> : null}
      {list.data?.map((pkg) => (
        <PackageCard key={pkg.Name} pkg={pkg} onChange={list.reload} />
      ))}
    </Page>
  );
}
