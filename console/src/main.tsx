/** The hub's web console: sign-in, navigation, and the page chosen by the address's hash. */
import { render } from 'preact';
import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { accessKey, connection, HubFailure, keyRefused, management, signIn, signOut } from './api';
import { ErrorAlert } from './components';
import { startLive, stopLive } from './live';
import { Configuration } from './pages/Configuration';
import { Credentials } from './pages/Credentials';
import { Logs } from './pages/Logs';
import { MessageCallbacks } from './pages/MessageCallbacks';
import { Messages } from './pages/Messages';
import { Overview } from './pages/Overview';
import { Repository } from './pages/Repository';
import { Sentinels } from './pages/Sentinels';
import { StateObjects } from './pages/StateObjects';
import { Server } from './pages/Server';
import { Store, useStore } from './store';
import './style.css';

const PAGES: [slug: string, title: string, page: FunctionComponent][] = [
  ['overview', 'Overview', Overview],
  ['stateobjects', 'StateObjects', StateObjects],
  ['messagecallbacks', 'MessageCallbacks', MessageCallbacks],
  ['messages', 'Messages', Messages],
  ['logs', 'Logs', Logs],
  ['credentials', 'Credentials', Credentials],
  ['sentinels', 'Sentinels', Sentinels],
  ['configuration', 'Configuration', Configuration],
  ['repository', 'Repository', Repository],
  ['server', 'Server', Server],
];

const slugOfHash = () => location.hash.replace(/^#\/?/, '').toLowerCase() || 'overview';

function useHash(): string {
  const [slug, setSlug] = useState(slugOfHash);
  useEffect(() => {
    const changed = () => setSlug(slugOfHash());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return slug;
}

function SignIn({ refusal }: { refusal: unknown }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(refusal);
  const [busy, setBusy] = useState(false);
  return (
    <main class="signin">
      <h1>Hub console</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(undefined);
          keyRefused.set(undefined);
          signIn(key.trim());
          try {
            await management('CheckAccess');
            startLive();
            signedIn.set(true);
          } catch (failure) {
            signOut();
            setError(failure);
          } finally {
            setBusy(false);
          }
        }}
      >
        {/* Password managers (and Chrome) expect a user name beside a password: the console's is fixed. */}
        <input type="text" name="username" autocomplete="username" value="Management" readOnly hidden />
        <label for="access-key">Access key</label>
        <input
          id="access-key"
          type="password"
          autocomplete="current-password"
          required
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
        />
        <p class="muted small">
          The key of a credential with the management right. It is kept in this tab only (session storage) and sent in
          headers.
        </p>
        <button type="submit" disabled={busy || key.trim() === ''}>
          Sign in
        </button>
        {error ? <SignInError error={error} /> : null}
      </form>
    </main>
  );
}

function SignInError({ error }: { error: unknown }) {
  if (error instanceof HubFailure && error.code === 'AccessDenied') {
    return (
      <ErrorAlert
        error={
          new HubFailure(
            403,
            `Wrong access key: ${error.message}`,
            error.detail ?? 'Use the key of a credential that is enabled and has the management right.',
          )
        }
      />
    );
  }
  return <ErrorAlert error={error} />;
}

const signedIn = new Store(false);

function Shell() {
  const slug = useHash();
  const state = useStore(connection);
  const page = PAGES.find(([s]) => s === slug) ?? PAGES[0];
  const Current = page[2];
  useEffect(() => {
    document.title = `${page[1]} · Hub console`;
  }, [page]);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <header class="top">
        <span class="brand">Hub console</span>
        <nav aria-label="Pages">
          <ul>
            {PAGES.map(([s, title]) => (
              <li key={s}>
                <a href={`#/${s}`} aria-current={s === page[0] ? 'page' : undefined}>
                  {title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button
          type="button"
          class="small"
          onClick={() => {
            stopLive();
            signOut();
            signedIn.set(false);
          }}
        >
          Sign out
        </button>
      </header>
      {state === 'reconnecting' ? (
        <p role="status" class="reconnecting">
          The hub cannot be reached: reconnecting…
        </p>
      ) : null}
      <main id="main" tabIndex={-1}>
        <Current key={page[0]} />
      </main>
    </div>
  );
}

function App() {
  const isSignedIn = useStore(signedIn);
  const key = useStore(accessKey);
  const refusedKey = useStore(keyRefused);
  const [checking, setChecking] = useState(Boolean(key) && !signedIn.value);
  const [refusal, setRefusal] = useState<unknown>(undefined);
  useEffect(() => {
    if (!refusedKey || !signedIn.value) return;
    stopLive();
    signOut();
    signedIn.set(false);
    setRefusal(
      new HubFailure(
        403,
        refusedKey.message,
        'The hub no longer accepts this access key (changed, disabled, or without the management right): sign in again.',
      ),
    );
    keyRefused.set(undefined);
  }, [refusedKey]);
  useEffect(() => {
    // A key kept from earlier in this tab: check it once before showing the pages.
    if (!checking || !key) return;
    management('CheckAccess').then(
      () => {
        startLive();
        signedIn.set(true);
        setChecking(false);
      },
      (failure: unknown) => {
        if (failure instanceof HubFailure) signOut();
        setRefusal(failure);
        setChecking(false);
      },
    );
  }, [checking, key]);
  if (checking)
    return (
      <p role="status" class="notice">
        Signing in…
      </p>
    );
  return isSignedIn && key ? <Shell /> : <SignIn refusal={refusal} />;
}

render(<App />, document.getElementById('app')!);
